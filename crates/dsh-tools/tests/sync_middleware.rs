//! Sync layers: no future of their own, yet in the onion like any layer,
//! and they see every outcome of the layers inside.

use dsh_tools::{
    define_tool, ContentBlock, ErrorCode, SyncMiddleware, ToolArgs, ToolError, ToolExecution,
    ToolExecutionResult, ToolRegistry,
};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(ToolArgs, Deserialize)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

type Log = Arc<Mutex<Vec<String>>>;

fn echo_registry(log: &Log) -> ToolRegistry {
    let registry = ToolRegistry::new();
    let log = log.clone();
    registry
        .register(define_tool("echo", "Echoes.", move |args: EchoArgs, _| {
            let log = log.clone();
            async move {
                log.lock().unwrap().push(format!("tool:{}", args.text));
                Ok(vec![ContentBlock::text(args.text)])
            }
        }))
        .unwrap();
    registry
}

/// Logs around the call; vetoes text "veto", panics on "panic-before" or
/// "panic-after", and tags results with its label.
struct Labelled {
    label: &'static str,
    log: Log,
}

impl SyncMiddleware for Labelled {
    fn before(&self, exec: &mut ToolExecution) -> Result<(), ToolError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("{}:before", self.label));
        let text = exec.arguments.as_value().map(|v| v["text"].clone());
        match text.as_ref().and_then(|t| t.as_str()) {
            Some("veto") if self.label == "inner" => Err(ToolError::new(
                ErrorCode::PermissionDenied,
                "vetoed by the inner layer",
            )),
            Some("panic-before") if self.label == "inner" => panic!("before exploded"),
            Some("rewrite") => {
                exec.arguments = json!({"text": "rewritten"}).into();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn after(&self, result: &mut ToolExecutionResult) {
        self.log.lock().unwrap().push(format!(
            "{}:after:{}",
            self.label,
            result.code().map_or("ok", |c| c.as_str())
        ));
        if self.label == "inner" && result.text() == "panic-after" {
            panic!("after exploded");
        }
    }
}

fn layered(log: &Log) -> ToolRegistry {
    let registry = echo_registry(log);
    registry.use_sync_middleware(Labelled {
        label: "outer",
        log: log.clone(),
    });
    let async_log = log.clone();
    registry.use_fn(move |exec, next| {
        let log = async_log.clone();
        async move {
            log.lock().unwrap().push("async:before".into());
            let result = next.run(exec).await;
            log.lock().unwrap().push("async:after".into());
            Ok(result)
        }
    });
    registry.use_sync_middleware(Labelled {
        label: "inner",
        log: log.clone(),
    });
    registry
}

async fn call(registry: &ToolRegistry, text: &str) -> ToolExecutionResult {
    registry
        .execute(ToolExecution::new("c1", "echo", json!({ "text": text })))
        .await
}

#[tokio::test]
async fn sync_layers_take_their_place_in_the_onion() {
    let log = Log::default();
    let registry = layered(&log);
    let result = call(&registry, "hi").await;
    assert_eq!(result.text(), "hi");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer:before",
            "async:before",
            "inner:before",
            "tool:hi",
            "inner:after:ok",
            "async:after",
            "outer:after:ok",
        ]
    );
}

#[tokio::test]
async fn a_sync_veto_skips_the_inside_and_the_outside_sees_it() {
    let log = Log::default();
    let registry = layered(&log);
    let result = call(&registry, "veto").await;
    assert_eq!(result.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(result.text(), "Error: vetoed by the inner layer");
    assert_eq!(result.call_id, "c1");
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer:before",
            "async:before",
            "inner:before",
            "async:after",
            "outer:after:PERMISSION_DENIED",
        ]
    );
}

#[tokio::test]
async fn panics_in_sync_layers_are_outcomes_the_outside_sees() {
    let log = Log::default();
    let registry = layered(&log);
    let result = call(&registry, "panic-before").await;
    assert_eq!(result.code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: before exploded"
    );
    assert!(log
        .lock()
        .unwrap()
        .contains(&"outer:after:TOOL_PANICKED".to_owned()));

    log.lock().unwrap().clear();
    let result = call(&registry, "panic-after").await;
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: after exploded"
    );
    assert_eq!(
        log.lock().unwrap().last().map(String::as_str),
        Some("outer:after:TOOL_PANICKED")
    );
}

#[tokio::test]
async fn a_sync_layer_rewrites_the_call_and_sees_every_outcome() {
    let log = Log::default();
    let registry = layered(&log);
    assert_eq!(call(&registry, "rewrite").await.text(), "rewritten");
    log.lock().unwrap().clear();
    let unknown = registry
        .execute(ToolExecution::new("c1", "nope", json!({})))
        .await;
    assert_eq!(unknown.code(), Some(ErrorCode::UnknownTool));
    assert_eq!(
        log.lock().unwrap().last().map(String::as_str),
        Some("outer:after:UNKNOWN_TOOL")
    );
}

#[tokio::test]
async fn a_scoped_sync_layer_goes_with_its_handle() {
    struct Refuse;
    impl SyncMiddleware for Refuse {
        fn before(&self, _exec: &mut ToolExecution) -> Result<(), ToolError> {
            Err(ToolError::new(ErrorCode::PlanMode, "plan first"))
        }
    }
    let registry = echo_registry(&Log::default());
    let handle = registry.use_sync_middleware_scoped(Refuse);
    assert_eq!(call(&registry, "x").await.code(), Some(ErrorCode::PlanMode));
    drop(handle);
    assert_eq!(call(&registry, "x").await.text(), "x");
}
