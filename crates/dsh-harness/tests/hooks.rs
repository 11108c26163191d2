//! Hooks from the settings, run for real (`sh` and `python3` scripts)
//! around calls of the assembled pipeline: exit codes, JSON decisions,
//! rewritten input, context, post hooks, permission requests, matchers,
//! parallel runs, de-duplication, timeouts and big outputs.

use dsh_harness::{Pipeline, PipelineOptions};
use dsh_policy::{ApprovalAnswer, FnApprover};
use dsh_tools::{ErrorCode, ToolExecution, ToolExecutionResult};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-hooks-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A pipeline in a fresh directory holding `scripts` (executable), with
/// `settings` as its only settings file.
fn fx(name: &str, settings: Value, scripts: &[(&str, &str)]) -> (TempDir, Pipeline) {
    use std::os::unix::fs::PermissionsExt;
    let dir = TempDir::new(name);
    for (file, text) in scripts {
        let path = dir.path(file);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let file = dir.path("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let pipeline = Pipeline::build(
        &PipelineOptions::default()
            .no_user_settings(true)
            .settings_only(true)
            .settings(&file)
            .cwd(&dir.0),
    )
    .unwrap();
    (dir, pipeline)
}

fn hook(event: &str, matcher: &str, command: &str) -> Value {
    json!({ event: [{"matcher": matcher, "hooks": [{"type": "command", "command": command}]}] })
}

fn settings(allow: &[&str], hooks: Value) -> Value {
    json!({"permissions": {"allow": allow}, "hooks": hooks})
}

async fn bash(p: &Pipeline, command: &str) -> ToolExecutionResult {
    p.registry()
        .execute(ToolExecution::new(
            "call-1",
            "bash",
            json!({ "command": command }),
        ))
        .await
}

/// Polls `check` until it holds or the deadline passes.
fn eventually(what: &str, deadline: Duration, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < deadline, "{what} within {deadline:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn gone(pid: &str) -> bool {
    let pid = pid.trim();
    assert!(!pid.is_empty(), "the hook wrote its pid");
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // A zombie is dead; only its parent has not read its status yet.
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z')),
    }
}

#[tokio::test]
async fn the_input_is_claude_codes_json_and_exit_0_lets_the_call_run() {
    let (dir, p) = fx(
        "input",
        settings(
            &["Bash(echo:*)"],
            hook("PreToolUse", "Bash", "cat > input.json; env > env.txt"),
        ),
        &[],
    );
    let r = p
        .registry()
        .execute(ToolExecution::new(
            "toolu_01",
            "bash",
            json!({"command": "echo hi", "timeout_ms": 5000, "description": "greet"}),
        ))
        .await;
    assert_eq!(r.text(), "hi\n[exit code: 0]");
    let input: Value = serde_json::from_str(&dir.read("input.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_use_id"], "toolu_01");
    assert_eq!(input["cwd"], dir.0.display().to_string());
    assert_eq!(input["permission_mode"], "default");
    assert_eq!(input["transcript_path"], "");
    assert!(input["session_id"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(input["tool_input"]["command"], "echo hi");
    assert_eq!(input["tool_input"]["description"], "greet");
    assert_eq!(input["tool_input"]["timeout"], 5000);
    assert_eq!(input["tool_input"]["timeout_ms"], 5000);
    let env = dir.read("env.txt");
    let project = format!("CLAUDE_PROJECT_DIR={}", dir.0.display());
    assert!(env.lines().any(|l| l == project), "{env}");
    assert!(
        env.lines().any(|l| l.starts_with("DSH_PROJECT_DIR=")),
        "{env}"
    );
}

#[tokio::test]
async fn exit_2_blocks_with_stderr_or_the_json_reason_and_overrides_an_allow() {
    let (_dir, p) = fx(
        "exit2",
        settings(
            &["Bash(echo:*)"],
            json!({"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
            ]}),
        ),
        &[(
            "guard.sh",
            r#"#!/bin/sh
cmd=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tool_input"]["command"])')
case "$cmd" in
  *stderr*) echo "no $cmd here" >&2; exit 2 ;;
  *quiet*) exit 2 ;;
  *json*) echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "json says no"}}'; echo ignored >&2; exit 2 ;;
  *allow*) echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'; echo "exit 2 wins" >&2; exit 2 ;;
esac
exit 0
"#,
        )],
    );
    let r = bash(&p, "echo stderr").await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert_eq!(r.text(), "Error: no echo stderr here");
    let r = bash(&p, "echo quiet").await;
    assert_eq!(r.text(), "Error: blocked by PreToolUse hook");
    let r = bash(&p, "echo json").await;
    assert_eq!(r.text(), "Error: json says no");
    let r = bash(&p, "echo allow").await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert_eq!(r.text(), "Error: exit 2 wins");
    assert_eq!(bash(&p, "echo fine").await.text(), "fine\n[exit code: 0]");
}

#[tokio::test]
async fn other_exit_codes_crashes_and_bad_json_do_not_block() {
    for (name, command) in [
        ("exit1", "echo oops >&2; exit 1"),
        ("signal", "kill -9 $$"),
        ("badjson", "echo '{not json'"),
        ("missing", "./no-such-hook.sh"),
    ] {
        let (_dir, p) = fx(
            name,
            settings(&["Bash(echo:*)"], hook("PreToolUse", "", command)),
            &[],
        );
        assert_eq!(
            bash(&p, "echo ran").await.text(),
            "ran\n[exit code: 0]",
            "{name}"
        );
    }
}

#[tokio::test]
async fn json_decisions_merge_and_weigh_with_the_rules() {
    let decide = |d: &str| {
        format!(
            r#"echo '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "{d}", "permissionDecisionReason": "hook {d}"}}}}'"#
        )
    };
    let allow_hook =
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": decide("allow")}]}]});
    let (dir, p) = fx(
        "allow",
        json!({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]}, "hooks": allow_hook}),
        &[],
    );
    // The mode would ask (no rule allows `touch`): the hook's allow skips that.
    assert_eq!(
        bash(&p, "touch made").await.text(),
        "(no output)\n[exit code: 0]"
    );
    assert!(dir.path("made").exists());
    // A deny rule and an ask rule still hold, and so does what cannot be analysed.
    assert_eq!(
        bash(&p, "rm made").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert_eq!(
        bash(&p, "git push origin main").await.code(),
        Some(ErrorCode::ApprovalUnavailable)
    );
    assert_eq!(
        bash(&p, "eval \"$X\"").await.code(),
        Some(ErrorCode::ApprovalUnavailable)
    );

    // deny > defer > ask > allow across hooks.
    let many = |ds: &[&str]| {
        let hooks: Vec<Value> = ds
            .iter()
            .map(|d| json!({"type": "command", "command": decide(d)}))
            .collect();
        json!({"PreToolUse": [{"hooks": hooks}]})
    };
    let (_d, p) = fx(
        "deny",
        settings(&["Bash(echo:*)"], many(&["allow", "deny", "ask"])),
        &[],
    );
    let r = bash(&p, "echo x").await;
    assert_eq!(r.code(), Some(ErrorCode::PermissionDenied));
    assert!(r.text().contains("hook deny"), "{}", r.text());
    // ask sends an allowed call to the approver; without one it fails closed.
    let (_d, p) = fx(
        "ask",
        settings(&["Bash(echo:*)"], many(&["allow", "ask"])),
        &[],
    );
    let r = bash(&p, "echo x").await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(r.text().contains("hook ask"), "{}", r.text());
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    assert_eq!(bash(&p, "echo x").await.text(), "x\n[exit code: 0]");
    // defer outranks ask and allow, and hands the call to the approver
    // (whoever drives the agent), so another hook's ask is not lost.
    let (_d, p) = fx(
        "defer",
        settings(&["Bash(echo:*)"], many(&["ask", "defer", "allow"])),
        &[],
    );
    let r = bash(&p, "echo x").await;
    assert_eq!(r.code(), Some(ErrorCode::ApprovalUnavailable));
    assert!(
        r.text()
            .contains("deferred by a PreToolUse hook: hook defer"),
        "{}",
        r.text()
    );
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    assert_eq!(bash(&p, "echo x").await.text(), "x\n[exit code: 0]");
}

#[tokio::test]
async fn updated_input_replaces_the_call_and_is_validated_again() {
    let rewrite = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
cmd = data["tool_input"]["command"]
if cmd == "bad":
    new = {"command": 5}
else:
    new = dict(data["tool_input"], command=cmd.replace("world", "hooks"), timeout=3000)
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": new}}))
"#;
    let (_dir, p) = fx(
        "update",
        settings(
            &["Bash(echo:*)"],
            hook("PreToolUse", "Bash", "./rewrite.py"),
        ),
        &[("rewrite.py", rewrite)],
    );
    assert_eq!(
        bash(&p, "echo hello world").await.text(),
        "hello hooks\n[exit code: 0]"
    );
    let r = bash(&p, "bad").await;
    assert_eq!(r.code(), Some(ErrorCode::InvalidArgs));
    assert!(r.text().contains("updatedInput"), "{}", r.text());
    // The rewritten command is decided by the rules like any other.
    let (_dir, p) = fx(
        "update-denied",
        json!({"permissions": {"deny": ["Bash(rm:*)"]}, "hooks": hook("PreToolUse", "Bash",
            r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "rm -rf x"}}}'"#)}),
        &[],
    );
    assert_eq!(
        bash(&p, "echo harmless").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
}

#[tokio::test]
async fn additional_context_reaches_the_model() {
    let (_dir, p) = fx(
        "context",
        settings(
            &["Bash(echo:*)"],
            json!({
                "PreToolUse": [{"hooks": [{"type": "command", "command": r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": "branch is main"}}'"#}]}],
                "PostToolUse": [{"hooks": [{"type": "command", "command": r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "lint: clean"}}'"#}]}]
            }),
        ),
        &[],
    );
    let r = bash(&p, "echo hi").await;
    assert!(!r.is_error);
    assert_eq!(
        r.text(),
        "hi\n[exit code: 0]\n[hook context] branch is main\n[hook context] lint: clean"
    );
}

#[tokio::test]
async fn post_hooks_block_results_and_failures_have_their_own_event() {
    let post = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
open("post-" + data["hook_event_name"] + ".json", "w").write(json.dumps(data))
if "secret" in json.dumps(data["tool_response"]):
    print(json.dumps({"decision": "block", "reason": "the output holds a secret"}))
"#;
    let (dir, p) = fx(
        "post",
        settings(
            &["Bash(echo:*)", "Bash(exit:*)", "Bash(sleep:*)"],
            json!({
                "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./post.py"}]}],
                "PostToolUseFailure": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./post.py"}]}]
            }),
        ),
        &[("post.py", post)],
    );
    let r = bash(&p, "echo secret=1").await;
    assert!(r.is_error);
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert!(
        r.text()
            .starts_with("Error: PostToolUse hook: the output holds a secret"),
        "{}",
        r.text()
    );
    let input: Value = serde_json::from_str(&dir.read("post-PostToolUse.json")).unwrap();
    assert_eq!(input["tool_name"], "Bash");
    assert!(input["duration_ms"].is_u64());
    assert_eq!(input["tool_response"]["isError"], false);

    // A command's exit code and a timeout are part of a result; a call that
    // fails (here: a working directory that does not exist) is an error.
    assert!(!bash(&p, "echo x; exit 3").await.is_error);
    assert!(!dir.path("post-PostToolUseFailure.json").exists());
    let r = p
        .registry()
        .execute(ToolExecution::new(
            "c",
            "bash",
            json!({"command": "echo x", "workdir": "no-such-dir"}),
        ))
        .await;
    assert!(r.is_error, "{}", r.text());
    let input: Value = serde_json::from_str(&dir.read("post-PostToolUseFailure.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(input["is_interrupt"], false);
    assert_eq!(input["error"], r.text());
    assert_eq!(input["tool_response"]["isError"], true);

    // A call refused before it ran has no post event.
    std::fs::remove_file(dir.path("post-PostToolUseFailure.json")).unwrap();
    assert_eq!(
        bash(&p, "touch x").await.code(),
        Some(ErrorCode::ApprovalUnavailable)
    );
    assert!(!dir.path("post-PostToolUseFailure.json").exists());
}

#[tokio::test]
async fn permission_request_hooks_answer_before_the_approver() {
    let answer = r#"#!/bin/sh
input=$(cat)
case "$input" in
  *'"yes'*) echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}' ;;
  *'"no'*) echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "not today"}}}' ;;
  *'"block'*) echo "blocked" >&2; exit 2 ;;
esac
echo "$input" > request.json
"#;
    let (dir, p) = fx(
        "permreq",
        settings(&[], hook("PermissionRequest", "Bash", "./answer.sh")),
        &[("answer.sh", answer)],
    );
    // Asked (no rule allows it): the hook allows, with no approver at all.
    assert_eq!(bash(&p, "yes | head -1").await.text(), "y\n[exit code: 0]");
    assert_eq!(
        bash(&p, "no thanks").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    assert_eq!(
        bash(&p, "blocked").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
    // No decision: the approver is asked; without one, it fails closed.
    assert_eq!(
        bash(&p, "touch x").await.code(),
        Some(ErrorCode::ApprovalUnavailable)
    );
    let input: Value = serde_json::from_str(&dir.read("request.json")).unwrap();
    assert_eq!(input["hook_event_name"], "PermissionRequest");
    assert_eq!(input["tool_input"]["command"], "touch x");
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    assert_eq!(
        bash(&p, "touch x").await.text(),
        "(no output)\n[exit code: 0]"
    );
    assert_eq!(
        bash(&p, "no thanks").await.code(),
        Some(ErrorCode::PermissionDenied)
    );
}

#[tokio::test]
async fn every_matcher_form() {
    for (matcher, fires) in [
        ("", true),
        ("*", true),
        ("Bash", true),
        ("bash", true),
        ("BASH", true),
        ("Edit|Write|Bash", true),
        ("Edit, Bash", true),
        ("Edit|Write", false),
        ("Bas", false),
        ("^Ba.*h$", true),
        ("B.sh", true),
        ("^bash_", false),
        ("mcp__.*", false),
    ] {
        let (dir, p) = fx(
            "matcher",
            settings(
                &["Bash(echo:*)"],
                hook("PreToolUse", matcher, "touch fired"),
            ),
            &[],
        );
        bash(&p, "echo x").await;
        assert_eq!(dir.path("fired").exists(), fires, "matcher {matcher:?}");
    }
}

#[tokio::test]
async fn matching_hooks_run_in_parallel_and_identical_ones_once() {
    // Each waits for the other's marker: run one after the other, the first
    // would time out and, failing closed, block the call.
    let waiter = |me: &str, other: &str| {
        format!(
            "touch {me}; i=0; while [ ! -e {other} ]; do i=$((i+1)); [ $i -gt 500 ] && exit 1; sleep 0.01; done; exit 0"
        )
    };
    let (dir, p) = fx(
        "parallel",
        settings(
            &["Bash(echo:*)"],
            json!({"PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": waiter("a.mark", "b.mark"), "timeout": 10, "failClosed": true}]},
                {"matcher": "*", "hooks": [{"type": "command", "command": waiter("b.mark", "a.mark"), "timeout": 10, "failClosed": true}]},
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo run >> count.txt"}]},
                {"matcher": "bash", "hooks": [{"type": "command", "command": "echo run >> count.txt"}]}
            ]}),
        ),
        &[],
    );
    assert_eq!(bash(&p, "echo both").await.text(), "both\n[exit code: 0]");
    assert!(dir.path("a.mark").exists() && dir.path("b.mark").exists());
    assert_eq!(dir.read("count.txt"), "run\n");
}

#[tokio::test]
async fn a_timed_out_hook_is_killed_with_its_children_and_blocks_only_when_failing_closed() {
    let slow = "echo $$ > sh.pid; sleep 60 & echo $! > child.pid; wait";
    for fail_closed in [false, true] {
        let (dir, p) = fx(
            "timeout",
            settings(
                &["Bash(echo:*)"],
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": slow, "timeout": 0.5, "failClosed": fail_closed}]}]}),
            ),
            &[],
        );
        let started = Instant::now();
        let r = bash(&p, "echo after").await;
        assert!(started.elapsed() < Duration::from_secs(20));
        if fail_closed {
            assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
            assert!(r.text().contains("timed out after 0.5 s"), "{}", r.text());
        } else {
            assert_eq!(r.text(), "after\n[exit code: 0]");
        }
        let (sh, child) = (dir.read("sh.pid"), dir.read("child.pid"));
        eventually("the hook's processes gone", Duration::from_secs(5), || {
            gone(&sh) && gone(&child)
        });
    }
}

#[tokio::test]
async fn big_outputs_and_hooks_that_read_nothing() {
    let (dir, p) = fx(
        "big",
        settings(
            &["Bash(echo:*)"],
            json!({"PreToolUse": [
                {"hooks": [{"type": "command", "command": "exit 0"}]},
                {"hooks": [{"type": "command", "command": "python3 -c \"import sys; sys.stderr.write('x' * 10_000_000); sys.exit(2)\""}]}
            ]}),
        ),
        &[],
    );
    // A call far bigger than a pipe's buffer; one hook never reads it.
    let long = format!("echo ok # {}", "y".repeat(300_000));
    let r = bash(&p, &long).await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    let text = r.text();
    assert!(text.len() < 20_000, "{} characters", text.len());
    assert!(
        text.contains("[hook output of 10000000 characters; all of it is in "),
        "{}",
        &text[text.len() - 300..]
    );
    let path = text
        .rsplit("all of it is in ")
        .next()
        .unwrap()
        .trim_end_matches(']');
    assert_eq!(
        std::fs::metadata(Path::new(path)).unwrap().len(),
        10_000_000
    );
    let _ = std::fs::remove_file(path);
    drop(dir);
}

#[tokio::test]
async fn disable_all_hooks_turns_them_off() {
    let mut s = settings(&["Bash(echo:*)"], hook("PreToolUse", "", "exit 2"));
    s["disableAllHooks"] = json!(true);
    let (_dir, p) = fx("disabled", s, &[]);
    assert_eq!(bash(&p, "echo on").await.text(), "on\n[exit code: 0]");
}

/// Hook scripts in the shape of widely shared Claude Code ones, unchanged.
#[tokio::test]
async fn widely_shared_hook_scripts_run_unchanged() {
    // A command guard reading tool_input.command with jq.
    let guard = r#"#!/usr/bin/env bash
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -qE '\brm\s+-rf\b'; then
  echo "Blocked: rm -rf is not allowed" >&2
  exit 2
fi
exit 0
"#;
    // An audit logger appending one JSON line per call.
    let audit = r#"#!/usr/bin/env bash
jq -c '{time: now | floor, tool: .tool_name, command: .tool_input.command, session: .session_id}' >> "$CLAUDE_PROJECT_DIR/audit.log"
"#;
    // A formatter after edits: trims trailing blanks of the file written.
    let format = r#"#!/usr/bin/env bash
file=$(jq -r '.tool_input.file_path // empty')
[ -n "$file" ] && [ -f "$file" ] && sed -i 's/[[:space:]]*$//' "$file"
exit 0
"#;
    let (dir, p) = fx(
        "shared",
        json!({
            "permissions": {"allow": ["Bash(echo:*)", "Bash(rm:*)", "Bash(printf:*)"], "defaultMode": "acceptEdits"},
            "hooks": {
                "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/guard.sh"}]}],
                "PostToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": "./audit.sh"}]},
                    {"matcher": "Edit|MultiEdit|Write|Bash", "hooks": [{"type": "command", "command": "./format.sh"}]}
                ]
            }
        }),
        &[
            ("guard.sh", guard),
            ("audit.sh", audit),
            ("format.sh", format),
        ],
    );
    let r = bash(&p, "rm -rf build").await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert_eq!(r.text(), "Error: Blocked: rm -rf is not allowed");
    assert_eq!(
        bash(&p, "echo logged").await.text(),
        "logged\n[exit code: 0]"
    );
    let log = dir.read("audit.log");
    let line: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(line["tool"], "Bash");
    assert_eq!(line["command"], "echo logged");
    // The formatter runs after an edit by our `write` tool, Claude Code's
    // `Write` to the hook.
    let notes = dir.path("notes.txt").display().to_string();
    let r = p
        .registry()
        .execute(ToolExecution::new(
            "c",
            "write",
            json!({"file_path": notes, "content": "a   \nb\t\n"}),
        ))
        .await;
    assert!(r.text().starts_with("created "), "{}", r.text());
    assert_eq!(dir.read("notes.txt"), "a\nb\n");
    let line: Value = serde_json::from_str(dir.read("audit.log").lines().last().unwrap()).unwrap();
    assert_eq!(line["tool"], "Write");
}

#[tokio::test]
async fn fail_closed_hooks_block_on_crashes_and_output_that_is_not_json() {
    for (name, command, why) in [
        (
            "fc-text",
            "echo looks fine",
            "printed output that is not JSON",
        ),
        ("fc-exit", "exit 1", "exited with code 1"),
        ("fc-signal", "kill -9 $$", "was killed by signal 9"),
    ] {
        let (_dir, p) = fx(
            name,
            settings(
                &["Bash(echo:*)"],
                json!({"PreToolUse": [{"hooks": [{"type": "command", "command": command, "failClosed": true}]}]}),
            ),
            &[],
        );
        let r = bash(&p, "echo x").await;
        assert_eq!(r.code(), Some(ErrorCode::HookBlocked), "{name}");
        assert!(r.text().contains(why), "{name}: {}", r.text());
        assert!(r.text().contains("fails closed"), "{name}: {}", r.text());
    }
    // Without failClosed, plain text on exit 0 is for a transcript: the call runs.
    let (_dir, p) = fx(
        "fc-off",
        settings(&["Bash(echo:*)"], hook("PreToolUse", "", "echo looks fine")),
        &[],
    );
    assert_eq!(bash(&p, "echo x").await.text(), "x\n[exit code: 0]");
}

#[tokio::test]
async fn continue_false_stops_the_call_with_its_reason() {
    let stop = r#"echo '{"continue": false, "stopReason": "maintenance window", "suppressOutput": true, "systemMessage": "stopping"}'"#;
    let (dir, p) = fx(
        "stop",
        settings(&["Bash(echo:*)"], hook("PreToolUse", "Bash", stop)),
        &[],
    );
    let r = bash(&p, "echo x > ran.txt").await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert_eq!(
        r.text(),
        "Error: stopped by a PreToolUse hook: maintenance window"
    );
    assert!(!dir.path("ran.txt").exists());
    let mut edits = settings(&["Bash(echo:*)"], hook("PostToolUse", "Bash", stop));
    edits["permissions"]["defaultMode"] = json!("acceptEdits");
    let (dir, p) = fx("stop-post", edits, &[]);
    let r = bash(&p, "echo x > ran.txt").await;
    assert_eq!(r.code(), Some(ErrorCode::HookBlocked));
    assert!(
        r.text()
            .starts_with("Error: PostToolUse hook: maintenance window"),
        "{}",
        r.text()
    );
    // The command did run: a post hook cannot undo it, only tell the model.
    assert!(dir.path("ran.txt").exists());
}
