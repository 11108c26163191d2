//! Every outcome reaches every layer, the model's call id always comes back,
//! registration refuses names providers reject, and the conveniences a tool
//! or middleware author needs (`?`, `BoxFuture`, runtime schemas) work.

use dsh_tools::{
    define_tool, BoxFuture, CancellationToken, ContentBlock, Dialect, DynamicTool, ErrorCode,
    FnMiddleware, Middleware, MiddlewareResult, Next, SchemaProp, SchemaSpec, TimeoutMiddleware,
    ToolArgs, ToolArguments, ToolCallKind, ToolCallPresentation, ToolContext, ToolDefinition,
    ToolError, ToolExecution, ToolExecutionResult, ToolFuture, ToolRegistry, ToolSchema,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod common;
use common::{echo_registry, NoArgs};

/// A layer that records the outcome its `next.run` yielded.
fn recording(registry: &ToolRegistry) -> Arc<Mutex<Vec<ToolExecutionResult>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    registry.use_fn(move |exec, next| {
        let log = log.clone();
        async move {
            let result = next.run(exec).await;
            log.lock().unwrap().push(result.clone());
            Ok(result)
        }
    });
    seen
}

struct PanicsInHandle;

impl Middleware for PanicsInHandle {
    fn handle(&self, _exec: ToolExecution, _next: Next) -> BoxFuture<'static, MiddlewareResult> {
        panic!("sync part exploded")
    }
}

#[tokio::test]
async fn an_outer_layer_sees_an_inner_panic_in_the_synchronous_part() {
    let registry = echo_registry();
    let seen = recording(&registry);
    registry.use_middleware(PanicsInHandle);
    let result = registry
        .execute(ToolExecution::new("c1", "echo", json!({"text": "x"})))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: sync part exploded"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "the outer layer got a result from next.run");
    assert_eq!(seen[0].code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(seen[0].call_id, "c1");
}

#[tokio::test]
async fn an_outer_layer_sees_an_inner_panic_in_the_future() {
    let registry = echo_registry();
    let seen = recording(&registry);
    registry.use_fn(|exec, next| async move {
        if exec.name == "echo" {
            panic!("future exploded");
        }
        Ok(next.run(exec).await)
    });
    let result = registry
        .execute(ToolExecution::new("c1", "echo", json!({"text": "x"})))
        .await;
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: future exploded"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].code(), Some(ErrorCode::ToolPanicked));
}

#[tokio::test]
async fn an_outer_layer_sees_a_tool_panic() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("boom", "Panics.", |_: NoArgs, _| async move {
            if true {
                panic!("tool exploded");
            }
            Ok(vec![])
        }))
        .unwrap();
    let seen = recording(&registry);
    let result = registry
        .execute(ToolExecution::new("c1", "boom", json!({})))
        .await;
    assert_eq!(result.text(), "Error: tool panicked: tool exploded");
    assert_eq!(
        seen.lock().unwrap()[0].code(),
        Some(ErrorCode::ToolPanicked)
    );
}

/// A raw definition whose synchronous part (before its future) panics.
struct PanicsBeforeItsFuture;

impl ToolDefinition for PanicsBeforeItsFuture {
    fn name(&self) -> &str {
        "early"
    }
    fn description(&self) -> &str {
        "Panics before returning a future."
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        panic!("no future for you")
    }
}

#[tokio::test]
async fn a_panic_before_the_tools_future_is_the_tools_panic() {
    let registry = ToolRegistry::new();
    registry.register(PanicsBeforeItsFuture).unwrap();
    let seen = recording(&registry);
    let result = registry
        .execute(ToolExecution::new("c1", "early", json!({})))
        .await;
    assert_eq!(result.text(), "Error: tool panicked: no future for you");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_call_cancelled_before_execute_still_runs_the_chain() {
    let registry = echo_registry();
    let seen = recording(&registry);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = registry
        .execute(ToolExecution::new("c1", "echo", json!({"text": "x"})).with_cancel(cancel))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::AbortedBeforeDispatch));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "the logging layer saw the aborted call");
    assert_eq!(seen[0].code(), Some(ErrorCode::AbortedBeforeDispatch));
}

#[tokio::test]
async fn an_inner_veto_with_a_rewritten_id_comes_back_with_the_models_id() {
    let registry = echo_registry();
    registry.use_fn(|mut exec, next| async move {
        exec.call_id = "rewritten".into();
        Ok(next.run(exec).await)
    });
    registry.use_fn(|exec, _next| async move {
        Ok(ToolExecutionResult::failure(
            exec.call_id,
            ErrorCode::PermissionDenied,
            "no",
        ))
    });
    let result = registry
        .execute(ToolExecution::new("model-id", "echo", json!({"text": "x"})))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(result.call_id, "model-id");
}

#[tokio::test]
async fn a_layer_that_rewrites_the_results_id_does_not_change_what_the_caller_gets() {
    let registry = echo_registry();
    registry.use_fn(|exec, next| async move {
        let mut result = next.run(exec).await;
        result.call_id = "wrong".into();
        Ok(result)
    });
    let result = registry
        .execute(ToolExecution::new("model-id", "echo", json!({"text": "x"})))
        .await;
    assert_eq!(result.text(), "x");
    assert_eq!(result.call_id, "model-id");
}

/// A definition whose schema names another tool than it is registered under.
struct Impostor;

impl ToolDefinition for Impostor {
    fn name(&self) -> &str {
        "real"
    }
    fn description(&self) -> &str {
        "Claims another name in its schema."
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async { Ok(vec![]) })
    }
    fn schema(&self, dialect: Dialect) -> ToolSchema {
        ToolSchema {
            name: "fake".into(),
            description: self.description().into(),
            parameters: self.parameters(dialect),
            strict: None,
        }
    }
}

#[test]
fn a_schema_that_names_another_tool_is_a_registration_error() {
    let err = ToolRegistry::new().register(Impostor).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidSchema);
    assert_eq!(
        err.message(),
        "tool \"real\" reports the name \"fake\" in its schema: the model would call a name that dispatch does not know"
    );
}

#[test]
fn tool_names_are_what_providers_accept() {
    let registry = ToolRegistry::new();
    let long = "a".repeat(65);
    for bad in [
        "",
        "has space",
        "dots.are.out",
        "ünïcode",
        "slash/name",
        long.as_str(),
    ] {
        let err = registry
            .register(define_tool(bad, "Bad.", |_: NoArgs, _| async move {
                Ok(vec![])
            }))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidToolName, "{bad:?}");
        assert!(
            err.message().contains("^[a-zA-Z0-9_-]{1,64}$"),
            "the error names the rule: {}",
            err.message()
        );
    }
    let longest = "b".repeat(64);
    for good in ["a", "Read_File-2", longest.as_str()] {
        registry
            .register(define_tool(good, "Good.", |_: NoArgs, _| async move {
                Ok(vec![])
            }))
            .unwrap();
    }
    assert_eq!(registry.names().len(), 3);
}

#[tokio::test]
async fn register_keeps_the_tool_even_when_its_result_is_ignored() {
    let registry = ToolRegistry::new();
    let _ = registry.register(define_tool("kept", "Kept.", |_: NoArgs, _| async move {
        Ok(vec![ContentBlock::text("still here")])
    }));
    let result = registry
        .execute(ToolExecution::new("c1", "kept", json!({})))
        .await;
    assert_eq!(result.text(), "still here");

    let scoped = registry
        .register_scoped(define_tool(
            "scoped",
            "Scoped.",
            |_: NoArgs, _| async move { Ok(vec![]) },
        ))
        .unwrap();
    assert!(registry.get("scoped").is_some());
    drop(scoped);
    assert!(registry.get("scoped").is_none());
    assert!(registry.unregister("kept"));
    assert!(!registry.unregister("kept"));
}

#[derive(ToolArgs, Deserialize)]
struct PathArgs {
    /// A file.
    path: String,
}

#[tokio::test]
async fn question_mark_works_on_common_errors_in_bodies() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "read",
            "Reads a file.",
            |args: PathArgs, _| async move {
                let text = std::fs::read_to_string(&args.path)?;
                let value: Value = serde_json::from_str(&text)?;
                let n: i64 = value["n"].to_string().parse()?;
                if n < 0 {
                    Err("negative numbers are not allowed")?;
                }
                if n == 0 {
                    Err(format!("zero in {}", args.path))?;
                }
                let boxed: Result<(), Box<dyn std::error::Error + Send + Sync>> =
                    Err("a boxed error".into());
                boxed?;
                Ok(vec![])
            },
        ))
        .unwrap();
    let dir = std::env::temp_dir().join(format!("dsh-tools-hardening-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            "missing.json",
            None,
            "Error: No such file or directory (os error 2)",
        ),
        (
            "bad.json",
            Some("{"),
            "Error: EOF while parsing an object at line 1 column 1",
        ),
        (
            "nan.json",
            Some(r#"{"n": "x"}"#),
            "Error: invalid digit found in string",
        ),
        (
            "neg.json",
            Some(r#"{"n": -1}"#),
            "Error: negative numbers are not allowed",
        ),
        ("zero.json", Some(r#"{"n": 0}"#), ""),
        ("one.json", Some(r#"{"n": 1}"#), "Error: a boxed error"),
    ];
    for (file, content, expected) in cases {
        let path = dir.join(file);
        if let Some(content) = content {
            std::fs::write(&path, content).unwrap();
        }
        let path = path.to_str().unwrap().to_owned();
        let result = registry
            .execute(ToolExecution::new("c1", "read", json!({ "path": path })))
            .await;
        assert_eq!(result.code(), Some(ErrorCode::ToolError), "{file}");
        let expected = if expected.is_empty() {
            format!("Error: zero in {path}")
        } else {
            expected.to_owned()
        };
        assert_eq!(result.text(), expected, "{file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_error_keeps_its_causes() {
    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("cannot load the index")
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }
    let inner = std::io::Error::new(std::io::ErrorKind::PermissionDenied, "permission denied");
    let err: ToolError =
        (Box::new(Outer(inner)) as Box<dyn std::error::Error + Send + Sync>).into();
    assert_eq!(err.code(), ErrorCode::ToolError);
    assert_eq!(err.message(), "cannot load the index: permission denied");
}

#[tokio::test]
async fn question_mark_works_in_middleware() {
    let registry = echo_registry();
    registry.use_fn(|exec, next| async move {
        let text = exec.arguments.as_value().map(|v| v["text"].clone());
        if text == Some(json!("bad")) {
            let value: Value = serde_json::from_str("not json")?;
            drop(value);
        }
        Ok(next.run(exec).await)
    });
    let result = registry
        .execute(ToolExecution::new("c1", "echo", json!({"text": "bad"})))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::ToolError));
    assert_eq!(result.text(), "Error: expected ident at line 1 column 2");
}

#[test]
fn presentations_default_and_take_the_calls_arguments_as_they_are() {
    let empty = ToolCallPresentation::default();
    assert_eq!(empty.title, "");
    assert_eq!(empty.kind, ToolCallKind::Other);

    let registry = echo_registry();
    let parsed = ToolArguments::from_raw(r#"{"text": "hi"}"#);
    let shown = registry.present_call("echo", &parsed);
    assert_eq!(shown.raw_input, Some(json!({"text": "hi"})));
    let malformed = ToolArguments::from_raw("{not json");
    let shown = registry.present_call("echo", &malformed);
    assert_eq!(shown.title, "echo");
    assert_eq!(shown.raw_input, Some(json!("{not json")));
    // A parsed value works as well.
    let shown = registry.present_call("echo", &json!({"text": "v"}));
    assert_eq!(shown.raw_input, Some(json!({"text": "v"})));
}

fn slow_registry(timeout: Duration) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(
            define_tool("slow", "Never ends.", |_: NoArgs, _| async move {
                std::future::pending::<()>().await;
                Ok(vec![])
            })
            .with_timeout(timeout),
        )
        .unwrap();
    registry.use_middleware(TimeoutMiddleware::tool_declared_only());
    registry
}

#[tokio::test]
async fn a_sub_millisecond_timeout_is_reported_as_it_is() {
    let registry = slow_registry(Duration::from_micros(1500));
    let result = registry
        .execute(ToolExecution::new("c1", "slow", json!({})))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::ToolTimeout));
    assert_eq!(result.text(), "Error: tool call timed out after 1.5ms");
}

#[test]
fn the_timeout_middleware_outside_a_runtime_says_why() {
    let registry = slow_registry(Duration::from_millis(5));
    let result =
        futures::executor::block_on(registry.execute(ToolExecution::new("c1", "slow", json!({}))));
    assert_eq!(result.code(), Some(ErrorCode::ToolError));
    assert!(
        result
            .text()
            .contains("there is no Tokio runtime on this thread"),
        "{}",
        result.text()
    );
}

#[test]
fn the_timeout_middleware_without_timers_says_why() {
    let registry = slow_registry(Duration::from_millis(5));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.execute(ToolExecution::new("c1", "slow", json!({}))));
    assert_eq!(result.code(), Some(ErrorCode::ToolError));
    assert!(result.text().contains("enable_time"), "{}", result.text());
}

#[tokio::test]
async fn a_runtime_spec_tool_validates_like_a_typed_tool() {
    let spec = SchemaSpec::new()
        .prop("path", SchemaProp::string().required())
        .prop(
            "mode",
            SchemaProp::string()
                .one_of(["text", "bytes"])
                .default_value("text"),
        );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let registry = ToolRegistry::new();
    registry
        .register(DynamicTool::new(
            "read",
            "Reads.",
            spec,
            move |args, _ctx| {
                log.lock().unwrap().push(args);
                async { Ok(vec![ContentBlock::text("ok")]) }
            },
        ))
        .unwrap();
    let bad = registry
        .execute(ToolExecution::new("c1", "read", json!({"mode": "lines"})))
        .await;
    assert_eq!(bad.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        bad.text(),
        r#"Error: invalid arguments: missing required property "path"; "mode" must be one of ["text","bytes"]"#
    );
    assert!(seen.lock().unwrap().is_empty(), "the body never ran");
    let good = registry
        .execute(ToolExecution::new(
            "c2",
            "read",
            json!({"path": "a", "mode": null}),
        ))
        .await;
    assert_eq!(good.text(), "ok");
    // Passed on as sent: validated, not normalised.
    assert_eq!(seen.lock().unwrap()[0], json!({"path": "a", "mode": null}));
    let schema = &registry.schemas(Dialect::Mcp)[0];
    assert_eq!(schema.parameters["required"], json!(["path"]));
}

#[test]
fn a_middleware_written_by_hand_needs_only_the_crates_exports() {
    struct Passthrough;
    impl Middleware for Passthrough {
        fn handle(&self, exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult> {
            Box::pin(async move { Ok(next.run(exec).await) })
        }
    }
    let registry = echo_registry();
    registry.use_middleware(Passthrough);
    registry.use_middleware(FnMiddleware(|exec, next: Next| async move {
        Ok(next.run(exec).await)
    }));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime.block_on(registry.execute(ToolExecution::new(
        "c1",
        "echo",
        r#"{"text":"through"}"#,
    )));
    assert_eq!(result.text(), "through");
}

#[tokio::test]
async fn a_json_schema_tool_checks_calls_and_shows_the_model_the_schema() {
    let schema = json!({
        "type": "object",
        "properties": {
            "owner": {"type": "string"},
            "labels": {"type": "array", "items": {"type": "string"}},
            "state": {"type": "string", "enum": ["open", "closed"]},
            "due": {"type": "string", "format": "date"}
        },
        "required": ["owner"]
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let tool = DynamicTool::from_json_schema(
        "create_issue",
        "Creates an issue.",
        schema.clone(),
        move |args, _| {
            log.lock().unwrap().push(args);
            async { Ok(vec![ContentBlock::text("created")]) }
        },
    )
    .unwrap();
    let registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    // `format` is beyond the spec: the model gets the schema as the server wrote it.
    assert_eq!(registry.schemas(Dialect::Mcp)[0].parameters, schema);
    assert_eq!(registry.schemas(Dialect::Anthropic)[0].parameters, schema);
    let bad = registry
        .execute(ToolExecution::new(
            "c1",
            "create_issue",
            json!({"labels": ["a", 2], "state": "merged"}),
        ))
        .await;
    assert_eq!(
        bad.text(),
        r#"Error: invalid arguments: missing required property "owner"; "labels[1]" must be a string; "state" must be one of ["open","closed"]"#
    );
    assert!(seen.lock().unwrap().is_empty());
    let good = registry
        .execute(ToolExecution::new(
            "c2",
            "create_issue",
            json!({"owner": "me", "due": "soon"}),
        ))
        .await;
    assert_eq!(good.text(), "created");

    let err = DynamicTool::from_json_schema(
        "broken",
        "Broken.",
        json!({"type": "array"}),
        |_, _| async { Ok(vec![]) },
    )
    .err()
    .unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidSchema);
    assert!(
        err.message()
            .starts_with("tool \"broken\" has a JSON Schema that cannot be read: "),
        "{}",
        err.message()
    );
}
