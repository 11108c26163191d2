//! The assembled pipeline: the tools, the policy from the settings file,
//! the mode override, approval, and errors that name what to fix.

use dsh_harness::{HarnessError, Pipeline, PipelineOptions};
use dsh_policy::{ApproveAll, Decision, Mode};
use dsh_tools::{Dialect, ErrorCode, ToolExecution};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-harness-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_first_party_tools_are_registered_in_order() {
    let dir = TempDir::new("tools");
    let pipeline = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .cwd(&dir.0),
    )
    .unwrap();
    let names: Vec<String> = pipeline
        .registry()
        .schemas(Dialect::Mcp)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "bash_output",
            "bash_write",
            "bash_kill",
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "apply_patch"
        ]
    );
    assert_eq!(pipeline.cwd(), dir.0);
}

#[tokio::test]
async fn the_settings_rules_and_the_mode_override_apply_to_calls() {
    let dir = TempDir::new("rules");
    let settings = dir.0.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let pipeline = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings(&settings)
            .cwd(&dir.0),
    )
    .unwrap();
    let allowed = pipeline
        .registry()
        .execute(ToolExecution::new(
            "c1",
            "bash",
            json!({"command": "echo hi"}),
        ))
        .await;
    assert_eq!(allowed.text(), "hi\n[exit code: 0]");
    let denied = pipeline
        .registry()
        .execute(ToolExecution::new(
            "c2",
            "bash",
            json!({"command": "rm -rf x"}),
        ))
        .await;
    assert_eq!(denied.code(), Some(ErrorCode::PermissionDenied));
    assert_eq!(
        pipeline.check("bash", &json!({"command": "rm x"})).decision,
        Decision::Deny
    );
    // Read-only tools are allowed by their annotations, as a call would be.
    assert_eq!(
        pipeline
            .check("bash_output", &json!({"task_id": "bash-1"}))
            .decision,
        Decision::Allow
    );

    let plan = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings(&settings)
            .cwd(&dir.0)
            .mode(Mode::Plan),
    )
    .unwrap();
    let vetoed = plan
        .registry()
        .execute(ToolExecution::new(
            "c3",
            "bash",
            json!({"command": "touch f"}),
        ))
        .await;
    assert_eq!(vetoed.code(), Some(ErrorCode::PlanMode));
}

#[tokio::test]
async fn ask_fails_closed_until_an_approver_is_set() {
    let dir = TempDir::new("ask");
    let pipeline = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .cwd(&dir.0),
    )
    .unwrap();
    let call = || ToolExecution::new("c1", "bash", json!({"command": "touch made"}));
    let closed = pipeline.registry().execute(call()).await;
    assert_eq!(closed.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(!dir.0.join("made").exists());
    pipeline.set_approver(Some(Arc::new(ApproveAll)));
    let approved = pipeline.registry().execute(call()).await;
    assert!(!approved.is_error, "{}", approved.text());
    assert!(dir.0.join("made").exists());
}

#[test]
fn errors_name_what_to_fix() {
    let dir = TempDir::new("errors");
    let missing = dir.0.join("nope");
    let err = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .cwd(&missing),
    )
    .err()
    .unwrap();
    assert!(matches!(err, HarnessError::Cwd { .. }));
    assert!(err.to_string().contains("nope"), "{err}");

    let settings = dir.0.join("bad.json");
    std::fs::write(&settings, r#"{"permisions": {}}"#).unwrap();
    let err = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings(&settings)
            .cwd(&dir.0),
    )
    .err()
    .unwrap();
    assert!(err.to_string().contains("permisions"), "{err}");

    let err = PipelineOptions::default()
        .no_user_settings(true)
        .mode_name("yolo")
        .err()
        .unwrap();
    assert!(err.to_string().contains("yolo"), "{err}");
}

#[tokio::test]
async fn an_always_answer_is_saved_to_the_projects_local_settings_and_honoured_next_run() {
    use dsh_policy::{ApprovalAnswer, FnApprover};
    let dir = TempDir::new("remember");
    std::fs::create_dir_all(dir.0.join(".git")).unwrap();
    let options = || {
        PipelineOptions::default()
            .no_user_settings(true)
            .cwd(&dir.0)
    };
    let first = Pipeline::build(&options().remember_always(true)).unwrap();
    first.set_approver(Some(Arc::new(FnApprover(|_| async {
        ApprovalAnswer::AllowAlways
    }))));
    // Not read-only, so asked; the grant for the command covers its write.
    let args = json!({"command": "touch made"});
    assert_eq!(first.check("bash", &args).decision, Decision::Ask);
    let result = first
        .registry()
        .execute(ToolExecution::new("1", "bash", args.clone()))
        .await;
    assert!(!result.is_error, "{result:?}");
    let local = dir.0.join(".claude/settings.local.json");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(saved["permissions"]["allow"], json!(["Bash(touch made)"]));
    assert!(dir.0.join("made").exists());
    // The next run reads it: no question.
    let next = Pipeline::build(&options()).unwrap();
    assert_eq!(next.check("bash", &args).decision, Decision::Allow);
    // Without remembering, an answer lasts the session only.
    let dir2 = TempDir::new("remember-not");
    let session = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .cwd(&dir2.0),
    )
    .unwrap();
    session.set_approver(Some(Arc::new(FnApprover(|_| async {
        ApprovalAnswer::AllowAlways
    }))));
    let result = session
        .registry()
        .execute(ToolExecution::new("2", "bash", args.clone()))
        .await;
    assert!(!result.is_error);
    assert!(!dir2.0.join(".claude").exists());
}

/// Input to an interactive session is checked as what it amounts to: typed
/// into a shell, as the command line it types; typed into a program with no
/// shell around it, as the session's command; and plan mode refuses it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_input_is_checked_as_the_command_it_types() {
    let dir = TempDir::new("session-input");
    std::fs::create_dir(dir.0.join("x")).unwrap();
    let settings = dir.0.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(python3:*)", "Bash(read:*)", "Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let pipeline = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings(&settings)
            .cwd(&dir.0),
    )
    .unwrap();
    let call = |id: &str, tool: &str, args: serde_json::Value| {
        pipeline
            .registry()
            .execute(ToolExecution::new(id, tool, args))
    };
    // A compound command keeps its `bash -c` around: a shell in the session.
    let started = call(
        "s1",
        "bash",
        json!({"command": "read -p 'go: ' answer; echo \"got $answer\"", "tty": true}),
    )
    .await;
    assert!(
        started
            .text()
            .starts_with("started interactive session bash-1"),
        "{}",
        started.text()
    );
    let denied = call(
        "w1",
        "bash_write",
        json!({"session_id": "bash-1", "input": "rm -rf x<Enter>"}),
    )
    .await;
    assert_eq!(
        denied.code(),
        Some(ErrorCode::PermissionDenied),
        "{}",
        denied.text()
    );
    assert!(dir.0.join("x").is_dir());
    // Line editing makes the command unknowable: a call of its own, asked
    // about, and nobody approves here.
    let edited = call(
        "w2",
        "bash_write",
        json!({"session_id": "bash-1", "input": "r<Tab><Enter>"}),
    )
    .await;
    assert!(edited.is_error, "{}", edited.text());
    let answered = call(
        "w3",
        "bash_write",
        json!({"session_id": "bash-1", "input": "echo yes<Enter>"}),
    )
    .await;
    assert!(!answered.is_error, "{}", answered.text());
    assert!(
        answered.text().contains("got echo yes"),
        "{}",
        answered.text()
    );

    // `python3` alone: bash exec'd it, no shell runs; the allow rule of the
    // session's command covers typing into it.
    let repl = call("s2", "bash", json!({"command": "python3 -q", "tty": true})).await;
    assert!(
        repl.text()
            .starts_with("started interactive session bash-2"),
        "{}",
        repl.text()
    );
    let typed = call(
        "w4",
        "bash_write",
        json!({"session_id": "bash-2", "input": "print(6 * 7)<Enter>"}),
    )
    .await;
    assert!(typed.text().contains("42"), "{}", typed.text());

    let plan = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings(&settings)
            .cwd(&dir.0)
            .mode(Mode::Plan),
    )
    .unwrap();
    let refused = plan
        .registry()
        .execute(ToolExecution::new(
            "p1",
            "bash",
            json!({"command": "python3 -q", "tty": true}),
        ))
        .await;
    assert_eq!(
        refused.code(),
        Some(ErrorCode::PlanMode),
        "{}",
        refused.text()
    );
}

/// Stopping a background task one started changes nothing the call that
/// started it could not: no mode asks about it, and a deny rule still holds.
#[tokio::test]
async fn killing_ones_own_background_task_is_never_asked_about() {
    let dir = TempDir::new("own-kill");
    let settings = dir.0.join("settings.json");
    for (mode, deny, want_killed) in [
        (Mode::Default, false, true),
        (Mode::DontAsk, false, true),
        (Mode::Plan, false, true),
        (Mode::Default, true, false),
    ] {
        let rules = if deny {
            json!({"permissions": {"allow": ["Bash(sleep:*)"], "deny": ["bash_kill"]}})
        } else {
            json!({"permissions": {"allow": ["Bash(sleep:*)"]}})
        };
        std::fs::write(&settings, rules.to_string()).unwrap();
        // Started outside plan mode (plan mode would not start it).
        let pipeline = Pipeline::build(
            &PipelineOptions::default()
                .no_user_settings(true)
                .settings_only(true)
                .settings(&settings)
                .cwd(&dir.0),
        )
        .unwrap();
        let started = pipeline
            .registry()
            .execute(ToolExecution::new(
                "s",
                "bash",
                json!({"command": "sleep 30", "run_in_background": true}),
            ))
            .await;
        assert!(!started.is_error, "{}", started.text());
        pipeline.permissions().set_mode(mode);
        let killed = pipeline
            .registry()
            .execute(ToolExecution::new(
                "k",
                "bash_kill",
                json!({"task_id": "bash-1"}),
            ))
            .await;
        if want_killed {
            assert!(!killed.is_error, "{mode}: {}", killed.text());
        } else {
            assert_eq!(
                killed.code(),
                Some(ErrorCode::PermissionDenied),
                "{}",
                killed.text()
            );
        }
    }
}
