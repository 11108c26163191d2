//! The sandbox from the settings around the assembled pipeline: a command
//! the rules allow is still confined, and escalation out of the sandbox is
//! an *ask* the approver answers.

use dsh_harness::{Pipeline, PipelineOptions};
use dsh_policy::{ApprovalAnswer, FnApprover, Mode};
use dsh_tools::{ErrorCode, ToolExecution, ToolExecutionResult};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir =
            std::env::temp_dir().join(format!("dsh-harness-sbx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proj/src")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn pipeline(dir: &TempDir, settings: Value, mode: Option<Mode>) -> Pipeline {
    let file = dir.0.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let mut options = PipelineOptions::default()
        .no_user_settings(true)
        .settings_only(true)
        .settings(&file)
        .cwd(dir.0.join("proj"));
    if let Some(mode) = mode {
        options = options.mode(mode);
    }
    Pipeline::build(&options).unwrap()
}

async fn call(p: &Pipeline, args: Value) -> ToolExecutionResult {
    p.registry()
        .execute(ToolExecution::new("c", "bash", args))
        .await
}

fn writer(dir: &TempDir, name: &str) -> String {
    format!(
        "python3 -c \"open('{}/outside/{name}', 'w').write('x')\"",
        dir.0.display()
    )
}

#[tokio::test]
async fn allowed_commands_are_confined_and_escalation_asks() {
    let dir = TempDir::new("escalate");
    let settings = json!({
        "permissions": {"allow": ["Bash(python3:*)"]},
        "sandbox": {"enabled": true}
    });
    let p = pipeline(&dir, settings, None);
    // Allowed by the rule, refused by the sandbox, and the result says why.
    let r = call(&p, json!({"command": writer(&dir, "a")})).await;
    assert!(r.text().contains("[sandbox: write to "), "{}", r.text());
    assert!(r.text().contains("require_escalated"), "{}", r.text());
    assert!(!dir.0.join("outside/a").exists());
    // Escalation is an ask: without an approver it fails closed.
    let escalated = json!({"command": writer(&dir, "b"), "sandbox_permissions": "require_escalated", "justification": "write the report outside the project"});
    let r = call(&p, escalated.clone()).await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(
        r.text().contains("write the report outside the project"),
        "{}",
        r.text()
    );
    // Rejected: nothing runs.
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::RejectOnce
    }))));
    assert_eq!(
        call(&p, escalated.clone()).await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert!(!dir.0.join("outside/b").exists());
    // Approved: it runs unconfined.
    p.set_approver(Some(Arc::new(FnApprover(
        |r: dsh_policy::ApprovalRequest| async move {
            assert!(r.reason.contains("outside the sandbox"), "{}", r.reason);
            ApprovalAnswer::AllowOnce
        },
    ))));
    let r = call(&p, escalated).await;
    assert!(!r.is_error, "{}", r.text());
    assert!(dir.0.join("outside/b").exists());
    // Inside the working directory no escalation is needed.
    let r = call(
        &p,
        json!({"command": "python3 -c \"open('src/made', 'w')\" && echo ok"}),
    )
    .await;
    assert!(r.text().starts_with("ok"), "{}", r.text());
}

#[tokio::test]
async fn escalation_is_denied_in_dont_ask_and_when_the_settings_forbid_it() {
    let dir = TempDir::new("no-escalate");
    let escalated = json!({"command": writer(&dir, "c"), "sandbox_permissions": "require_escalated", "justification": "x"});
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(python3:*)"]}, "sandbox": {"enabled": true}}),
        Some(Mode::DontAsk),
    );
    assert_eq!(
        call(&p, escalated.clone()).await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(python3:*)"]}, "sandbox": {"enabled": true, "allowUnsandboxedCommands": false}}),
        None,
    );
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    let r = call(&p, escalated).await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert!(
        r.text().contains("allowUnsandboxedCommands"),
        "{}",
        r.text()
    );
    assert!(!dir.0.join("outside/c").exists());
    // Without a sandbox the argument changes nothing.
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(python3:*)"]}}),
        None,
    );
    let r = call(
        &p,
        json!({"command": writer(&dir, "d"), "sandbox_permissions": "require_escalated"}),
    )
    .await;
    assert!(!r.is_error, "{}", r.text());
    assert!(dir.0.join("outside/d").exists());
}

#[tokio::test]
async fn a_hooks_allow_does_not_answer_an_escalation() {
    let dir = TempDir::new("hook-escalate");
    let allow = r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#;
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(python3:*)"]}, "sandbox": {"enabled": true},
               "hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": allow}]}]}}),
        None,
    );
    let r = call(&p, json!({"command": writer(&dir, "e"), "sandbox_permissions": "require_escalated", "justification": "x"})).await;
    assert_eq!(
        r.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        r.text()
    );
    assert!(!dir.0.join("outside/e").exists());
}
