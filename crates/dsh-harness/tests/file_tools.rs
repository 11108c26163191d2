//! The file tools through the whole pipeline: rules by path, modes, the
//! protected directories, `Read` deny rules, the sandbox's writable
//! directories and hooks, as for any tool.

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
            std::env::temp_dir().join(format!("dsh-harness-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proj/.git")).unwrap();
        std::fs::create_dir_all(dir.join("proj/src")).unwrap();
        std::fs::write(dir.join("proj/.git/config"), "[core]\n").unwrap();
        std::fs::write(dir.join("proj/.env"), "TOKEN=hunter2-secret\n").unwrap();
        std::fs::write(dir.join("proj/src/main.rs"), "fn main() {}\n").unwrap();
        std::fs::write(dir.join("outside.txt"), "outside\n").unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn proj(&self) -> PathBuf {
        self.0.join("proj")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn pipeline(dir: &TempDir, settings: Value, mode: Mode) -> Pipeline {
    let file = dir.0.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    let options = PipelineOptions::default()
        .no_user_settings(true)
        .settings_only(true)
        .settings(&file)
        .cwd(dir.proj())
        .mode(mode);
    Pipeline::build(&options).unwrap()
}

async fn call(p: &Pipeline, tool: &str, args: Value) -> ToolExecutionResult {
    p.registry()
        .execute(ToolExecution::new("c", tool, args).with_agent("a"))
        .await
}

fn text(r: &ToolExecutionResult) -> String {
    r.content
        .iter()
        .filter_map(|b| b.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn in_default_mode_reads_run_and_edits_ask() {
    let dir = TempDir::new("default");
    let p = pipeline(&dir, json!({}), Mode::Default);
    let read = call(&p, "read", json!({"file_path": "src/main.rs"})).await;
    assert!(!read.is_error, "{}", text(&read));
    let edit = call(
        &p,
        "edit",
        json!({"file_path": "src/main.rs", "old_string": "main", "new_string": "start"}),
    )
    .await;
    assert_eq!(
        edit.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&edit)
    );
    assert!(
        text(&edit).contains("add \"Edit(src/main.rs)\" to permissions.allow"),
        "{}",
        text(&edit)
    );
    let patch = call(
        &p,
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: src/new.rs\n+x\n*** End Patch\n"}),
    )
    .await;
    assert_eq!(
        patch.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&patch)
    );
    assert!(
        text(&patch).contains("\"Edit(src/new.rs)\""),
        "{}",
        text(&patch)
    );
    assert!(!dir.proj().join("src/new.rs").exists());
    assert_eq!(
        std::fs::read_to_string(dir.proj().join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );

    // An approval lets the edit through.
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    let edit = call(
        &p,
        "edit",
        json!({"file_path": "src/main.rs", "old_string": "main", "new_string": "start"}),
    )
    .await;
    assert!(!edit.is_error, "{}", text(&edit));
    assert_eq!(
        std::fs::read_to_string(dir.proj().join("src/main.rs")).unwrap(),
        "fn start() {}\n"
    );
}

#[tokio::test]
async fn accept_edits_allows_edits_inside_but_not_protected_or_outside() {
    let dir = TempDir::new("accept");
    let p = pipeline(&dir, json!({}), Mode::AcceptEdits);
    call(&p, "read", json!({"file_path": "src/main.rs"})).await;
    let edit = call(
        &p,
        "edit",
        json!({"file_path": "src/main.rs", "old_string": "main", "new_string": "start"}),
    )
    .await;
    assert!(!edit.is_error, "{}", text(&edit));

    let patch = "*** Begin Patch\n*** Add File: src/lib.rs\n+pub fn f() {}\n*** End Patch\n";
    let added = call(&p, "apply_patch", json!({ "patch": patch })).await;
    assert!(!added.is_error, "{}", text(&added));
    assert!(dir.proj().join("src/lib.rs").exists());

    call(&p, "read", json!({"file_path": ".git/config"})).await;
    let protected = call(
        &p,
        "write",
        json!({"file_path": ".git/config", "content": "[core]\nfsmonitor = evil\n"}),
    )
    .await;
    assert_eq!(
        protected.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&protected)
    );
    assert!(
        text(&protected).contains("protected directory"),
        "{}",
        text(&protected)
    );

    let outside = call(
        &p,
        "write",
        json!({"file_path": "../elsewhere.txt", "content": "x\n"}),
    )
    .await;
    assert_eq!(
        outside.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&outside)
    );
    assert!(!dir.0.join("elsewhere.txt").exists());

    // A patch touching one protected path asks for the whole patch.
    let mixed = "*** Begin Patch\n*** Add File: src/ok.rs\n+ok\n*** Add File: .git/hooks/pre-commit\n+evil\n*** End Patch\n";
    let refused = call(&p, "apply_patch", json!({ "patch": mixed })).await;
    assert_eq!(
        refused.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&refused)
    );
    assert!(!dir.proj().join("src/ok.rs").exists());
}

#[tokio::test]
async fn plan_mode_reads_and_refuses_every_change() {
    let dir = TempDir::new("plan");
    let p = pipeline(&dir, json!({}), Mode::Plan);
    let read = call(&p, "read", json!({"file_path": "src/main.rs"})).await;
    assert!(!read.is_error, "{}", text(&read));
    for (tool, args) in [
        ("write", json!({"file_path": "x.txt", "content": "x"})),
        (
            "edit",
            json!({"file_path": "src/main.rs", "old_string": "main", "new_string": "m"}),
        ),
        (
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Delete File: src/main.rs\n*** End Patch\n"}),
        ),
    ] {
        let refused = call(&p, tool, args).await;
        assert_eq!(
            refused.code(),
            Some(ErrorCode::PlanMode),
            "{tool}: {}",
            text(&refused)
        );
    }
    assert!(dir.proj().join("src/main.rs").exists());
}

#[tokio::test]
async fn deny_rules_hold_for_reads_edits_and_every_path_of_a_patch() {
    let dir = TempDir::new("deny");
    let settings = json!({"permissions": {
        "allow": ["Edit(src/**)"],
        "deny": ["Read(./.env)", "Edit(src/secret.rs)"],
    }});
    let p = pipeline(&dir, settings, Mode::AcceptEdits);
    let read = call(&p, "read", json!({"file_path": ".env"})).await;
    assert_eq!(
        read.code(),
        Some(ErrorCode::PermissionDenied),
        "{}",
        text(&read)
    );
    assert!(!text(&read).contains("hunter2"));

    let patch = "*** Begin Patch\n*** Add File: src/fine.rs\n+fine\n*** Add File: src/secret.rs\n+no\n*** End Patch\n";
    let refused = call(&p, "apply_patch", json!({ "patch": patch })).await;
    assert_eq!(
        refused.code(),
        Some(ErrorCode::PermissionDenied),
        "{}",
        text(&refused)
    );
    assert!(
        text(&refused).contains("Edit(src/secret.rs)"),
        "{}",
        text(&refused)
    );
    assert!(!dir.proj().join("src/fine.rs").exists());

    // Rules compare names case-insensitively: Claude Code's `Read` rule
    // is our `read` tool's; grep and glob never show the denied file.
    let found = call(
        &p,
        "grep",
        json!({"pattern": "hunter2", "output_mode": "content"}),
    )
    .await;
    assert!(!text(&found).contains("hunter2"), "{}", text(&found));
    let listed = call(&p, "glob", json!({"pattern": "**/*", "path": "."})).await;
    assert!(!text(&listed).contains(".env"), "{}", text(&listed));
}

#[tokio::test]
async fn the_sandbox_bounds_what_the_file_tools_write() {
    let dir = TempDir::new("sandbox");
    let settings = json!({"sandbox": {"enabled": true}});
    let p = pipeline(&dir, settings, Mode::BypassPermissions);
    // Whatever the policy asks is approved: the sandbox alone refuses.
    p.set_approver(Some(Arc::new(FnApprover(|_r| async {
        ApprovalAnswer::AllowOnce
    }))));
    let outside = dir.0.join("outside.txt");
    call(
        &p,
        "read",
        json!({"file_path": outside.display().to_string()}),
    )
    .await;
    let refused = call(
        &p,
        "write",
        json!({"file_path": outside.display().to_string(), "content": "changed\n"}),
    )
    .await;
    assert!(refused.is_error);
    assert!(
        text(&refused).contains("[sandbox: writing"),
        "{}",
        text(&refused)
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");

    call(&p, "read", json!({"file_path": ".git/config"})).await;
    let refused = call(
        &p,
        "write",
        json!({"file_path": ".git/config", "content": "x"}),
    )
    .await;
    assert!(
        text(&refused).contains(".git stays read-only in the sandbox"),
        "{}",
        text(&refused)
    );

    let inside = call(
        &p,
        "write",
        json!({"file_path": "src/new.rs", "content": "ok\n"}),
    )
    .await;
    assert!(!inside.is_error, "{}", text(&inside));
}

#[tokio::test]
async fn hooks_see_claude_codes_names_and_input_shapes() {
    let dir = TempDir::new("hooks");
    let seen = dir.0.join("seen.jsonl");
    let settings = json!({"hooks": {"PreToolUse": [{
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": format!("cat >> {}", seen.display())}],
    }]}});
    let p = pipeline(&dir, settings, Mode::AcceptEdits);
    call(&p, "read", json!({"file_path": "src/main.rs"})).await;
    let edit = call(
        &p,
        "edit",
        json!({"file_path": "src/main.rs", "old_string": "main", "new_string": "start"}),
    )
    .await;
    assert!(!edit.is_error, "{}", text(&edit));
    let lines = std::fs::read_to_string(&seen).unwrap();
    let input: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(input["tool_name"], json!("Edit"), "{input}");
    assert_eq!(
        input["tool_input"]["file_path"],
        json!("src/main.rs"),
        "{input}"
    );
    assert_eq!(input["tool_input"]["old_string"], json!("main"), "{input}");
    // The read did not match the hook.
    assert_eq!(lines.lines().count(), 1, "{lines}");
}

#[tokio::test]
async fn accept_edits_does_not_follow_a_link_out_of_the_working_directory() {
    // The policy places the path where it lands on disk: a link inside the
    // project to a file outside it is an edit outside, and asks; with
    // nobody to ask, nothing is written.
    let dir = TempDir::new("link-out");
    std::os::unix::fs::symlink(dir.0.join("outside.txt"), dir.proj().join("inside.txt")).unwrap();
    let p = pipeline(&dir, json!({}), Mode::AcceptEdits);
    call(&p, "read", json!({"file_path": "inside.txt"})).await;
    let refused = call(
        &p,
        "write",
        json!({"file_path": "inside.txt", "content": "changed\n"}),
    )
    .await;
    assert_eq!(
        refused.code(),
        Some(ErrorCode::ApprovalUnavailable),
        "{}",
        text(&refused)
    );
    assert_eq!(
        std::fs::read_to_string(dir.0.join("outside.txt")).unwrap(),
        "outside\n"
    );
}
