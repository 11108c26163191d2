//! Behaviour of the registry, the middleware chain, cancellation, timeouts and batches.

use dsh_tools::{
    define_tool, CancellationToken, ContentBlock, Dialect, ErrorCode, RegistryChange,
    ToolAnnotations, ToolArgs, ToolError, ToolExecution, ToolRegistry,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{echo_registry, EchoArgs, NoArgs};

fn call(name: &str, args: Value) -> ToolExecution {
    ToolExecution::new("call-1", name, args)
}

type Log = Arc<Mutex<Vec<String>>>;

fn logging(registry: &ToolRegistry, log: &Log, label: &'static str, first: bool) {
    let log = log.clone();
    let layer = dsh_tools::FnMiddleware(move |exec: ToolExecution, next: dsh_tools::Next| {
        let log = log.clone();
        async move {
            log.lock()
                .unwrap()
                .push(format!("{label}:before:{}", exec.name));
            let result = next.run(exec).await;
            log.lock().unwrap().push(format!("{label}:after"));
            Ok(result)
        }
    });
    if first {
        registry.use_middleware_first(layer);
    } else {
        registry.use_middleware(layer);
    }
}

#[tokio::test]
async fn success_result_and_wire_shape() {
    let registry = echo_registry();
    let result = registry.execute(call("echo", json!({"text": "hi"}))).await;
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"callId": "call-1", "content": [{"type": "text", "text": "hi"}], "isError": false})
    );
}

#[tokio::test]
async fn middleware_order_is_onion() {
    let registry = echo_registry();
    let log = Log::default();
    logging(&registry, &log, "first", false);
    logging(&registry, &log, "second", false);
    registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "first:before:echo",
            "second:before:echo",
            "second:after",
            "first:after"
        ]
    );
}

#[tokio::test]
async fn use_middleware_first_goes_outermost() {
    let registry = echo_registry();
    let log = Log::default();
    logging(&registry, &log, "inner", false);
    logging(&registry, &log, "outer", true);
    registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "outer:before:echo",
            "inner:before:echo",
            "inner:after",
            "outer:after"
        ]
    );
}

#[tokio::test]
async fn veto_skips_the_tool_and_inner_middleware() {
    let registry = ToolRegistry::new();
    let ran = Arc::new(AtomicBool::new(false));
    let ran2 = ran.clone();
    registry
        .register(define_tool("rm", "Removes.", move |_: NoArgs, _| {
            let ran = ran2.clone();
            async move {
                ran.store(true, Ordering::SeqCst);
                Ok(vec![])
            }
        }))
        .unwrap();
    registry.use_fn(|exec, _next| async move {
        Ok(dsh_tools::ToolExecutionResult::failure(
            exec.call_id,
            ErrorCode::PermissionDenied,
            format!("{} is not allowed", exec.name),
        ))
    });
    let log = Log::default();
    logging(&registry, &log, "inner", false);
    let result = registry.execute(call("rm", json!({}))).await;
    assert!(result.is_error);
    assert_eq!(result.text(), "Error: rm is not allowed");
    assert_eq!(result.code(), Some(ErrorCode::PermissionDenied));
    assert!(!ran.load(Ordering::SeqCst));
    assert!(log.lock().unwrap().is_empty());
}

#[tokio::test]
async fn middleware_can_rewrite_arguments() {
    let registry = echo_registry();
    registry.use_fn(|mut exec, next| async move {
        exec.arguments = json!({"text": "rewritten"}).into();
        Ok(next.run(exec).await)
    });
    let result = registry
        .execute(call("echo", json!({"text": "original"})))
        .await;
    assert_eq!(result.text(), "rewritten");
}

#[tokio::test]
async fn middleware_error_becomes_a_result_the_outer_layer_sees() {
    let registry = echo_registry();
    let seen = Arc::new(Mutex::new(None));
    let seen2 = seen.clone();
    registry.use_fn(move |exec, next| {
        let seen = seen2.clone();
        async move {
            let result = next.run(exec).await;
            *seen.lock().unwrap() = result.code();
            Ok(result)
        }
    });
    registry.use_fn(|_exec, _next| async move {
        Err(ToolError::new(ErrorCode::HookBlocked, "hook said no"))
    });
    let result = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(result.call_id, "call-1");
    assert_eq!(result.text(), "Error: hook said no");
    assert_eq!(
        serde_json::to_value(&result.error).unwrap(),
        json!({"name": "HookBlockedError", "code": "HOOK_BLOCKED"})
    );
    assert_eq!(*seen.lock().unwrap(), Some(ErrorCode::HookBlocked));
}

#[tokio::test]
async fn tool_error_without_code_is_tool_error() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("fail", "Fails.", |_: NoArgs, _| async move {
            Err(ToolError::msg("disk full"))
        }))
        .unwrap();
    let result = registry.execute(call("fail", json!({}))).await;
    assert_eq!(result.text(), "Error: disk full");
    assert_eq!(result.code(), Some(ErrorCode::ToolError));
}

#[tokio::test]
async fn unknown_tool_passes_through_middleware() {
    let registry = ToolRegistry::new();
    let log = Log::default();
    logging(&registry, &log, "mw", false);
    let result = registry.execute(call("nope", json!({}))).await;
    assert_eq!(result.text(), "Error: unknown tool \"nope\"");
    assert_eq!(result.code(), Some(ErrorCode::UnknownTool));
    assert_eq!(result.error.unwrap().name, "ToolNotFoundError");
    assert_eq!(*log.lock().unwrap(), ["mw:before:nope", "mw:after"]);
}

#[tokio::test]
async fn invalid_arguments_list_every_violation() {
    let registry = echo_registry();
    let result = registry
        .execute(call("echo", json!({"text": 5, "x": 1})))
        .await;
    assert_eq!(
        result.text(),
        r#"Error: invalid arguments: "text" must be a string"#
    );
    assert_eq!(result.code(), Some(ErrorCode::InvalidArgs));
    let result = registry.execute(call("echo", json!([]))).await;
    assert_eq!(
        result.text(),
        r#"Error: invalid arguments: "arguments" must be an object"#
    );
}

#[tokio::test]
async fn raw_string_arguments() {
    let registry = echo_registry();
    let ok = registry
        .execute(ToolExecution::new("c", "echo", r#"{"text":"raw"}"#))
        .await;
    assert_eq!(ok.text(), "raw");
    let bad = registry
        .execute(ToolExecution::new("c", "echo", r#"{"text": "#))
        .await;
    assert_eq!(bad.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        bad.text(),
        r#"Error: invalid arguments: "arguments" is not valid JSON: EOF while parsing a value at line 1 column 9"#
    );
}

#[tokio::test]
async fn panics_become_results_and_the_registry_keeps_working() {
    let registry = echo_registry();
    registry
        .register(define_tool("boom", "Panics.", |_: NoArgs, _| async move {
            if true {
                panic!("tool exploded");
            }
            Ok(vec![])
        }))
        .unwrap();
    let result = registry.execute(call("boom", json!({}))).await;
    assert_eq!(result.code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(result.text(), "Error: tool panicked: tool exploded");

    let handle = registry.use_middleware_scoped(dsh_tools::FnMiddleware(
        |exec: ToolExecution, next: dsh_tools::Next| async move {
            if exec.name == "echo" {
                panic!("middleware exploded");
            }
            Ok(next.run(exec).await)
        },
    ));
    let result = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(result.code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: middleware exploded"
    );
    drop(handle);
    let result = registry
        .execute(call("echo", json!({"text": "still here"})))
        .await;
    assert_eq!(result.text(), "still here");
}

#[test]
fn duplicate_registration_is_an_error() {
    let registry = echo_registry();
    let err = registry
        .register(define_tool("echo", "Again.", |_: NoArgs, _| async move {
            Ok(vec![])
        }))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert_eq!(err.message(), "tool \"echo\" is already registered");
}

#[test]
fn invalid_schema_is_a_registration_error() {
    #[derive(ToolArgs, Deserialize)]
    #[allow(dead_code)]
    struct Bad {
        #[tool(default = "ten")]
        count: u32,
    }
    let err = ToolRegistry::new()
        .register(define_tool("bad", "Bad default.", |_: Bad, _| async move {
            Ok(vec![])
        }))
        .err()
        .unwrap();
    assert_eq!(err.code(), ErrorCode::InvalidSchema);
    assert_eq!(
        err.message(),
        "tool \"bad\" has an invalid schema: \"count\" must be an integer"
    );
}

#[tokio::test]
async fn handles_unregister_on_drop_and_on_unregister() {
    let registry = ToolRegistry::new();
    let mut changes = registry.subscribe();
    let handle = registry
        .register_scoped(define_tool(
            "a",
            "A.",
            |_: NoArgs, _| async move { Ok(vec![]) },
        ))
        .unwrap();
    assert!(registry.get("a").is_some());
    drop(handle);
    assert!(registry.get("a").is_none());
    let result = registry.execute(call("a", json!({}))).await;
    assert_eq!(result.code(), Some(ErrorCode::UnknownTool));

    let handle = registry
        .register_scoped(define_tool(
            "b",
            "B.",
            |_: NoArgs, _| async move { Ok(vec![]) },
        ))
        .unwrap();
    handle.unregister();
    assert!(registry.get("b").is_none());

    assert_eq!(
        changes.try_recv().unwrap(),
        RegistryChange::Added("a".into())
    );
    assert_eq!(
        changes.try_recv().unwrap(),
        RegistryChange::Removed("a".into())
    );
    assert_eq!(
        changes.try_recv().unwrap(),
        RegistryChange::Added("b".into())
    );
    assert_eq!(
        changes.try_recv().unwrap(),
        RegistryChange::Removed("b".into())
    );
    assert!(changes.try_recv().is_err());
}

#[test]
fn a_stale_handle_does_not_remove_a_newer_tool_of_the_same_name() {
    let registry = ToolRegistry::new();
    let first = registry
        .register_scoped(define_tool("a", "First.", |_: NoArgs, _| async move {
            Ok(vec![])
        }))
        .unwrap();
    first.unregister();
    let _second = registry
        .register_scoped(define_tool("a", "Second.", |_: NoArgs, _| async move {
            Ok(vec![])
        }))
        .unwrap();
    assert_eq!(registry.get("a").unwrap().description(), "Second.");
}

#[tokio::test]
async fn middleware_removed_at_run_time() {
    let registry = echo_registry();
    let handle = registry.use_middleware_scoped(dsh_tools::FnMiddleware(
        |exec: ToolExecution, _next| async move {
            Ok(dsh_tools::ToolExecutionResult::failure(
                exec.call_id,
                ErrorCode::PlanMode,
                "plan first",
            ))
        },
    ));
    let vetoed = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(vetoed.code(), Some(ErrorCode::PlanMode));
    handle.remove();
    let passed = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert!(!passed.is_error);
}

#[test]
fn schemas_are_an_ordered_snapshot_without_host_fields() {
    let registry = ToolRegistry::new();
    for name in ["zeta", "alpha", "mid"] {
        registry
            .register(
                define_tool(
                    name,
                    format!("The {name} tool."),
                    |_: EchoArgs, _| async move { Ok(vec![]) },
                )
                .with_annotations(ToolAnnotations {
                    title: Some("Secret title".into()),
                    read_only: Some(true),
                    destructive: Some(true),
                    idempotent: Some(true),
                    open_world: Some(true),
                })
                .with_timeout(Duration::from_secs(9))
                .concurrency_safe(),
            )
            .unwrap();
    }
    let snapshot = registry.schemas(Dialect::Mcp);
    registry
        .register(define_tool("later", "Later.", |_: NoArgs, _| async move {
            Ok(vec![])
        }))
        .unwrap();
    let names: Vec<_> = snapshot.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "mid"]);
    assert_eq!(registry.schemas(Dialect::Mcp).len(), 4);

    for dialect in Dialect::ALL {
        for schema in registry.schemas(dialect) {
            let value = serde_json::to_value(&schema).unwrap();
            let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
            if dialect == Dialect::OpenAiStrict {
                assert_eq!(keys, ["name", "description", "parameters", "strict"]);
            } else {
                assert_eq!(keys, ["name", "description", "parameters"]);
            }
            let text = value.to_string();
            for host_only in [
                "Secret title",
                "readOnly",
                "read_only",
                "destructive",
                "timeout",
                "concurrency",
            ] {
                assert!(
                    !text.contains(host_only),
                    "{dialect}: {host_only} leaked: {text}"
                );
            }
        }
    }
    assert_eq!(
        serde_json::to_value(&snapshot[0]).unwrap(),
        json!({
            "name": "zeta",
            "description": "The zeta tool.",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string", "description": "Text to echo."}},
                "required": ["text"]
            }
        })
    );
}

/// A tool whose body never completes and never looks at its cancellation token.
fn stuck_registry(started: Arc<AtomicBool>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "stuck",
            "Never returns.",
            move |_: NoArgs, _| {
                let started = started.clone();
                async move {
                    started.store(true, Ordering::SeqCst);
                    std::future::pending::<()>().await;
                    Ok(vec![])
                }
            },
        ))
        .unwrap();
    registry
}

#[tokio::test]
async fn cancelled_before_execute_is_aborted_before_dispatch() {
    let started = Arc::new(AtomicBool::new(false));
    let registry = stuck_registry(started.clone());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = registry
        .execute(call("stuck", json!({})).with_cancel(cancel))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::AbortedBeforeDispatch));
    assert_eq!(result.text(), "Error: tool call aborted before dispatch");
    assert!(!started.load(Ordering::SeqCst));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_while_a_middleware_waits_is_aborted_before_dispatch() {
    let started = Arc::new(AtomicBool::new(false));
    let registry = stuck_registry(started.clone());
    // A middleware that waits forever (say, for an approval nobody gives).
    registry.use_fn(|exec, next| async move {
        std::future::pending::<()>().await;
        Ok(next.run(exec).await)
    });
    let cancel = CancellationToken::new();
    let fired = fire_after(cancel.clone(), Duration::from_millis(20));
    let result = registry
        .execute(call("stuck", json!({})).with_cancel(cancel))
        .await;
    assert_prompt(fired);
    assert_eq!(result.code(), Some(ErrorCode::AbortedBeforeDispatch));
    assert!(!started.load(Ordering::SeqCst));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_during_an_uncooperative_body_is_aborted_promptly() {
    let started = Arc::new(AtomicBool::new(false));
    let registry = stuck_registry(started.clone());
    let log = Log::default();
    logging(&registry, &log, "mw", false);
    let cancel = CancellationToken::new();
    let fired = fire_after(cancel.clone(), Duration::from_millis(20));
    let result = registry
        .execute(call("stuck", json!({})).with_cancel(cancel))
        .await;
    assert_prompt(fired);
    assert!(started.load(Ordering::SeqCst));
    assert_eq!(result.code(), Some(ErrorCode::Aborted));
    assert_eq!(result.text(), "Error: tool call aborted");
    // The middleware saw the aborted result on its way out.
    assert_eq!(*log.lock().unwrap(), ["mw:before:stuck", "mw:after"]);
}

/// Fires `cancel` after `delay` and records when.
fn fire_after(cancel: CancellationToken, delay: Duration) -> Arc<Mutex<Option<Instant>>> {
    let fired = Arc::new(Mutex::new(None));
    let fired2 = fired.clone();
    tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        *fired2.lock().unwrap() = Some(Instant::now());
        cancel.cancel();
    });
    fired
}

fn assert_prompt(fired: Arc<Mutex<Option<Instant>>>) {
    let fired = fired.lock().unwrap().expect("the token fired");
    let latency = fired.elapsed();
    assert!(
        latency < Duration::from_millis(50),
        "result came {latency:?} after the token fired"
    );
}

#[tokio::test]
async fn timeout_middleware_uses_the_tools_deadline_and_cancels_the_body() {
    let registry = ToolRegistry::new();
    let body_cancelled = Arc::new(AtomicBool::new(false));
    let flag = body_cancelled.clone();
    registry
        .register(
            define_tool("slow", "Slow.", move |_: NoArgs, ctx| {
                let flag = flag.clone();
                async move {
                    // Record the cancellation from a task that outlives this future.
                    let token = ctx.cancel_token();
                    tokio::spawn(async move {
                        token.cancelled().await;
                        flag.store(true, Ordering::SeqCst);
                    });
                    std::future::pending::<()>().await;
                    Ok(vec![])
                }
            })
            .with_timeout(Duration::from_millis(30)),
        )
        .unwrap();
    registry.use_middleware(dsh_tools::TimeoutMiddleware::new(Duration::from_secs(60)));
    let result = registry.execute(call("slow", json!({}))).await;
    assert_eq!(result.code(), Some(ErrorCode::ToolTimeout));
    assert_eq!(result.text(), "Error: tool call timed out after 30ms");
    wait_until(|| body_cancelled.load(Ordering::SeqCst)).await;
}

#[tokio::test]
async fn timeout_middleware_default_applies_to_tools_without_one() {
    let started = Arc::new(AtomicBool::new(false));
    let registry = stuck_registry(started);
    registry.use_middleware(dsh_tools::TimeoutMiddleware::new(Duration::from_millis(20)));
    let result = registry.execute(call("stuck", json!({}))).await;
    assert_eq!(result.text(), "Error: tool call timed out after 20ms");
    // Fast calls are untouched.
    let fast = echo_registry();
    fast.use_middleware(dsh_tools::TimeoutMiddleware::new(Duration::from_millis(20)));
    assert_eq!(
        fast.execute(call("echo", json!({"text": "ok"})))
            .await
            .text(),
        "ok"
    );
}

async fn wait_until(mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "condition not reached within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[derive(ToolArgs, Deserialize)]
struct StepArgs {
    id: String,
}

/// `safe` calls may run together; `exclusive` calls must run alone.
fn batch_registry(events: Log, active: Arc<AtomicUsize>, peak: Arc<AtomicUsize>) -> ToolRegistry {
    let registry = ToolRegistry::new();
    for (name, safe) in [("safe", true), ("exclusive", false)] {
        let events = events.clone();
        let active = active.clone();
        let peak = peak.clone();
        let tool = define_tool(name, "Step.", move |args: StepArgs, _| {
            let events = events.clone();
            let active = active.clone();
            let peak = peak.clone();
            async move {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                events.lock().unwrap().push(format!("start {}", args.id));
                // Later ids finish first, so completion order differs from model order.
                let delay = 40u64.saturating_sub(args.id[1..].parse::<u64>().unwrap_or(0) * 4);
                tokio::time::sleep(Duration::from_millis(delay)).await;
                events.lock().unwrap().push(format!("end {}", args.id));
                active.fetch_sub(1, Ordering::SeqCst);
                Ok(vec![ContentBlock::text(args.id)])
            }
        });
        let tool = if safe { tool.concurrency_safe() } else { tool };
        registry.register(tool).unwrap();
    }
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_keeps_model_order_and_barriers() {
    let events = Log::default();
    let registry = batch_registry(events.clone(), Arc::default(), Arc::default());
    let calls = vec![
        ToolExecution::new("1", "safe", json!({"id": "s1"})),
        ToolExecution::new("2", "safe", json!({"id": "s2"})),
        ToolExecution::new("3", "exclusive", json!({"id": "x3"})),
        ToolExecution::new("4", "safe", json!({"id": "s4"})),
        ToolExecution::new("5", "nope", json!({})),
        ToolExecution::new("6", "safe", json!({"id": "s6"})),
        ToolExecution::new("7", "safe", json!({"id": "s7"})),
    ];
    let results = registry.execute_batch(calls).await;
    let ids: Vec<_> = results.iter().map(|r| r.call_id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6", "7"]);
    assert_eq!(results[1].text(), "s2");
    assert_eq!(results[4].code(), Some(ErrorCode::UnknownTool));
    let events = events.lock().unwrap().clone();
    let pos = |e: &str| events.iter().position(|x| x == e).unwrap();
    // s1 and s2 overlap; the exclusive call starts after both ended and ends before s4 starts.
    assert!(pos("start s2") < pos("end s1"));
    assert!(pos("end s1") < pos("start x3") && pos("end s2") < pos("start x3"));
    assert!(pos("end x3") < pos("start s4"));
    assert!(pos("end s4") < pos("start s6"));
    assert!(pos("start s7") < pos("end s6"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_concurrency_cap() {
    let active = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let registry = batch_registry(Log::default(), active, peak.clone());
    registry.set_batch_concurrency(3);
    let calls = (0..9)
        .map(|i| ToolExecution::new(i.to_string(), "safe", json!({"id": format!("s{i}")})))
        .collect();
    let results = registry.execute_batch(calls).await;
    assert_eq!(results.len(), 9);
    assert_eq!(peak.load(Ordering::SeqCst), 3);

    let peak = Arc::new(AtomicUsize::new(0));
    let registry = batch_registry(Log::default(), Arc::default(), peak.clone());
    let calls = (0..15)
        .map(|i| ToolExecution::new(i.to_string(), "safe", json!({"id": format!("s{i}")})))
        .collect();
    registry.execute_batch(calls).await;
    assert_eq!(
        peak.load(Ordering::SeqCst),
        dsh_tools::DEFAULT_BATCH_CONCURRENCY
    );
}

#[tokio::test]
async fn exclusive_calls_never_overlap() {
    let peak = Arc::new(AtomicUsize::new(0));
    let registry = batch_registry(Log::default(), Arc::default(), peak.clone());
    let calls = (0..4)
        .map(|i| ToolExecution::new(i.to_string(), "exclusive", json!({"id": format!("x{i}")})))
        .collect();
    registry.execute_batch(calls).await;
    assert_eq!(peak.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_body_sees_call_context() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "who",
            "Who am I.",
            |_: NoArgs, ctx| async move {
                Ok(vec![ContentBlock::text(format!(
                    "{} {} {}",
                    ctx.call_id,
                    ctx.name,
                    ctx.agent.unwrap_or_default()
                ))])
            },
        ))
        .unwrap();
    let result = registry
        .execute(ToolExecution::new("c9", "who", json!({})).with_agent("main"))
        .await;
    assert_eq!(result.text(), "c9 who main");
}

struct SyncPanic;

impl dsh_tools::Middleware for SyncPanic {
    fn handle(
        &self,
        _exec: ToolExecution,
        _next: dsh_tools::Next,
    ) -> futures::future::BoxFuture<'static, dsh_tools::MiddlewareResult> {
        panic!("panicked before returning a future")
    }
}

#[tokio::test]
async fn a_middleware_panicking_before_its_future_is_caught() {
    let registry = echo_registry();
    registry.use_middleware(SyncPanic);
    let result = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(result.code(), Some(ErrorCode::ToolPanicked));
    assert_eq!(
        result.text(),
        "Error: a middleware panicked: panicked before returning a future"
    );
}

#[tokio::test]
async fn a_body_that_returns_on_cancellation_is_still_aborted() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "polite",
            "Stops when asked.",
            |_: NoArgs, ctx| async move {
                ctx.cancelled().await;
                Err(ToolError::msg("stopped early"))
            },
        ))
        .unwrap();
    let cancel = CancellationToken::new();
    let exec = call("polite", json!({})).with_cancel(cancel.clone());
    let pending = tokio::spawn({
        let registry = registry.clone();
        async move { registry.execute(exec).await }
    });
    tokio::task::yield_now().await;
    cancel.cancel();
    let result = pending.await.unwrap();
    assert_eq!(result.code(), Some(ErrorCode::Aborted));
    assert_eq!(result.text(), "Error: tool call aborted");
}

#[tokio::test]
async fn on_timeout_a_cooperative_body_sees_its_token_before_being_dropped() {
    let registry = ToolRegistry::new();
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let flag = saw_cancel.clone();
    registry
        .register(
            define_tool("slow", "Slow.", move |_: NoArgs, ctx| {
                let flag = flag.clone();
                async move {
                    ctx.cancelled().await;
                    flag.store(true, Ordering::SeqCst);
                    Ok(vec![])
                }
            })
            .with_timeout(Duration::from_millis(10)),
        )
        .unwrap();
    registry.use_middleware(dsh_tools::TimeoutMiddleware::tool_declared_only());
    let result = registry.execute(call("slow", json!({}))).await;
    assert_eq!(result.code(), Some(ErrorCode::ToolTimeout));
    // No waiting: the body ran its cancellation path before the result came back.
    assert!(saw_cancel.load(Ordering::SeqCst));
}

#[tokio::test]
async fn tool_declared_only_leaves_other_tools_unbounded() {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("nap", "Naps.", |_: NoArgs, _| async move {
            tokio::time::sleep(Duration::from_millis(30)).await;
            Ok(vec![ContentBlock::text("rested")])
        }))
        .unwrap();
    registry.use_middleware(dsh_tools::TimeoutMiddleware::tool_declared_only());
    assert_eq!(
        registry.execute(call("nap", json!({}))).await.text(),
        "rested"
    );
}

#[tokio::test]
async fn results_carry_the_models_call_id_even_if_a_middleware_rewrites_it() {
    let registry = echo_registry();
    registry.use_fn(|mut exec, next| async move {
        exec.call_id = "rewritten".into();
        Ok(next.run(exec).await)
    });
    let result = registry.execute(call("echo", json!({"text": "x"}))).await;
    assert_eq!(result.call_id, "call-1");
}

/// Owns a handle of the registry it is registered in.
struct Owner {
    _child: Mutex<Option<dsh_tools::ToolHandle>>,
}

impl dsh_tools::ToolDefinition for Owner {
    fn name(&self) -> &str {
        "owner"
    }
    fn description(&self) -> &str {
        "Owns another tool."
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn execute(&self, _args: Value, _ctx: dsh_tools::ToolContext) -> dsh_tools::ToolFuture<'_> {
        Box::pin(async { Ok(vec![]) })
    }
}

#[test]
fn dropping_a_tool_that_owns_handles_does_not_deadlock() {
    let registry = ToolRegistry::new();
    let child = registry
        .register_scoped(define_tool("child", "Child.", |_: NoArgs, _| async move {
            Ok(vec![])
        }))
        .unwrap();
    let owner = registry
        .register_scoped(Owner {
            _child: Mutex::new(Some(child)),
        })
        .unwrap();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let registry2 = registry.clone();
    std::thread::spawn(move || {
        owner.unregister();
        done_tx.send(registry2.names()).unwrap();
    });
    let names = done_rx
        .recv_timeout(Duration::from_secs(5))
        .expect("unregistering deadlocked");
    assert!(names.is_empty(), "{names:?}");
}

/// A raw definition: JSON in, validating its own input.
struct RawUpper;

impl dsh_tools::ToolDefinition for RawUpper {
    fn name(&self) -> &str {
        "upper"
    }
    fn description(&self) -> &str {
        "Upper-cases text."
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    }
    fn execute(&self, args: Value, _ctx: dsh_tools::ToolContext) -> dsh_tools::ToolFuture<'_> {
        Box::pin(async move {
            let text = args["text"].as_str().ok_or_else(|| {
                ToolError::new(
                    ErrorCode::InvalidArgs,
                    "invalid arguments: \"text\" must be a string",
                )
            })?;
            Ok(vec![ContentBlock::text(text.to_uppercase())])
        })
    }
}

#[tokio::test]
async fn a_raw_definition_validates_its_own_input() {
    let registry = ToolRegistry::new();
    registry.register(RawUpper).unwrap();
    assert_eq!(
        registry
            .execute(call("upper", json!({"text": "hi"})))
            .await
            .text(),
        "HI"
    );
    let bad = registry.execute(call("upper", json!({"text": 1}))).await;
    assert_eq!(bad.code(), Some(ErrorCode::InvalidArgs));
    assert_eq!(
        registry.schemas(Dialect::Mcp)[0].parameters["required"],
        json!(["text"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn execute_runs_on_spawned_tasks() {
    let registry = echo_registry();
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let registry = registry.clone();
            tokio::spawn(async move {
                registry
                    .execute(ToolExecution::new(
                        i.to_string(),
                        "echo",
                        json!({"text": i.to_string()}),
                    ))
                    .await
            })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().text(), i.to_string());
    }
}

#[derive(ToolArgs, Deserialize)]
#[allow(dead_code)]
struct Free {
    labels: std::collections::HashMap<String, String>,
}

#[test]
fn strict_mode_falls_back_for_specs_it_cannot_express() {
    let registry = echo_registry();
    registry
        .register(define_tool("free", "Free-form.", |_: Free, _| async move {
            Ok(vec![])
        }))
        .unwrap();
    let schemas = registry.schemas(Dialect::OpenAiStrict);
    assert_eq!(schemas[0].strict, Some(true));
    assert_eq!(schemas[1].strict, Some(false));
    assert_eq!(
        schemas[1].parameters,
        json!({"type": "object", "properties": {"labels": {"type": "object"}}, "required": ["labels"]})
    );
}
