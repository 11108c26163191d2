//! The layer over a registry with the permission layer inside it, the
//! writer's files, and the reader.

use dsh_audit::reader::{read_all, Reader};
use dsh_audit::{AuditConfig, AuditLog, AuditMiddleware, CallRecord, Masking};
use dsh_policy::{Mode, PermissionMiddleware, PermissionPolicy, PermissionRules, RuleSource};
use dsh_tools::{
    CallOrigin, ContentBlock, Dialect, ToolContext, ToolDefinition, ToolExecution, ToolFuture,
    ToolRegistry,
};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

struct Echo;

impl ToolDefinition for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "says its text"
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object"})
    }
    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        Box::pin(async move { Ok(vec![ContentBlock::text(text)]) })
    }
}

struct Wait;

impl ToolDefinition for Wait {
    fn name(&self) -> &str {
        "wait"
    }
    fn description(&self) -> &str {
        "never ends"
    }
    fn parameters(&self, _dialect: Dialect) -> Value {
        json!({"type": "object"})
    }
    fn execute(&self, _args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(std::future::pending())
    }
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-audit-lib-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn registry(rules: PermissionRules, layer: AuditMiddleware) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry.use_middleware(PermissionMiddleware::new(PermissionPolicy::new(
        rules,
        Mode::Default,
        "/work",
    )));
    registry.use_middleware_first(layer);
    registry
}

#[tokio::test]
async fn observers_get_the_record_of_every_call_with_its_origin() {
    let seen: Arc<Mutex<Vec<CallRecord>>> = Arc::default();
    let sink = seen.clone();
    let rules = PermissionRules {
        allow: vec!["echo".parse().unwrap()],
        ask: vec![],
        deny: vec![],
    };
    let layer = AuditMiddleware::new(None, Masking::new(["TOKEN"], Vec::<String>::new()))
        .with_rule_sources(vec![RuleSource {
            list: "allow",
            rule: "echo".into(),
            file: PathBuf::from("/etc/dsh.json"),
        }])
        .with_sandbox("workspace-write")
        .with_session("s-1")
        .with_observer(Arc::new(move |r: &CallRecord| {
            sink.lock().unwrap().push(r.clone())
        }));
    let registry = registry(rules, layer);
    let mut exec = ToolExecution::new("c1", "echo", r#"{"text":"hello","api_token":"t0k"}"#)
        .with_agent("alice");
    exec.extensions.insert(CallOrigin {
        client: Some("ed/1".into()),
        session: None,
    });
    let result = registry.execute(exec).await;
    assert!(!result.is_error);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let r = &seen[0];
    assert_eq!((r.call_id.as_str(), r.tool.as_str()), ("c1", "echo"));
    assert_eq!(r.agent.as_deref(), Some("alice"));
    assert_eq!(r.client.as_deref(), Some("ed/1"));
    assert_eq!(r.session.as_deref(), Some("s-1"));
    assert_eq!(
        r.arguments,
        json!({"text": "hello", "api_token": "[masked]"})
    );
    let d = r.decision.as_ref().unwrap();
    assert_eq!(d.verdict, "allow");
    assert_eq!(d.rule.as_deref(), Some("echo"));
    assert_eq!(d.rule_file.as_deref(), Some("/etc/dsh.json"));
    assert_eq!(r.output_bytes, 5);
    assert_eq!(r.sandbox, "workspace-write");
    assert!(r.outcome.exit_code.is_none(), "not a command");
}

#[tokio::test]
async fn an_abandoned_call_is_recorded_too() {
    let seen: Arc<Mutex<Vec<CallRecord>>> = Arc::default();
    let sink = seen.clone();
    let layer = AuditMiddleware::new(None, Masking::default()).with_observer(Arc::new(
        move |r: &CallRecord| sink.lock().unwrap().push(r.clone()),
    ));
    let registry = ToolRegistry::new();
    registry.register(Wait).unwrap();
    registry.use_middleware_first(layer);
    let call = registry.execute(ToolExecution::new("c9", "wait", "{}"));
    assert!(tokio::time::timeout(Duration::from_millis(50), call)
        .await
        .is_err());
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].outcome.error_code.as_deref(), Some("ABORTED"));
}

#[test]
fn files_rotate_keep_at_most_max_files_and_read_in_order() {
    let dir = temp("rotate");
    let mut config = AuditConfig::new(&dir);
    config.max_file_bytes = 1000;
    config.max_files = 2;
    let log = AuditLog::open(config).unwrap();
    for i in 0..40 {
        log.submit(format!("{{\"n\":{i},\"pad\":\"{}\"}}\n", "x".repeat(180)).into_bytes());
    }
    assert!(log.flush(Duration::from_secs(10)));
    assert_eq!(log.stats().written, 40);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".lock", "audit.1.jsonl", "audit.2.jsonl", "audit.jsonl"]
    );
    let ns: Vec<u64> = read_all(&dir)
        .unwrap()
        .iter()
        .map(|l| {
            serde_json::from_str::<Value>(&l.text).unwrap()["n"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let first = ns[0];
    assert_eq!(
        ns,
        (first..40).collect::<Vec<_>>(),
        "consecutive, oldest first, up to the last"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_line_being_written_is_read_once_it_is_whole() {
    let dir = temp("partial");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("audit.jsonl");
    std::fs::write(&file, "{\"a\":1}\n{\"b\":").unwrap();
    let mut reader = Reader::new(&dir).unwrap();
    let first = reader.poll().unwrap();
    assert_eq!(first.len(), 1);
    assert!(first[0].record.is_none(), "not a call record, but a line");
    assert!(reader.poll().unwrap().is_empty());
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    f.write_all(b"2}\n").unwrap();
    let next = reader.poll().unwrap();
    assert_eq!(next.len(), 1);
    assert_eq!(next[0].text, "{\"b\":2}");
    std::fs::remove_dir_all(&dir).unwrap();
}
