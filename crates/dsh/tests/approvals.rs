//! `dsh mcp --approvals-page` with a client that declares no elicitation:
//! the ask waits on the page, `dsh approvals` lists and answers it from a
//! terminal, and an unanswered ask fails closed when its wait runs out.

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

mod common;
use common::gone_within;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-approvals-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn work(&self) -> PathBuf {
        self.0.join("work")
    }

    fn state(&self) -> PathBuf {
        self.0.join("state")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SETTINGS: &str = r#"{"permissions": {"allow": ["Bash(echo:*)"]}}"#;

/// A client of `dsh mcp --approvals-page` that declares no elicitation (`()`).
async fn start(dir: &TempDir, wait_secs: u64) -> (RunningService<RoleClient, ()>, u32) {
    let settings = dir.0.join("settings.json");
    std::fs::write(&settings, SETTINGS).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    command
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .env("XDG_STATE_HOME", dir.state())
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--settings-only")
        .arg("--cwd")
        .arg(dir.work())
        .arg("--approvals-page")
        .arg("--approvals-wait")
        .arg(wait_secs.to_string());
    let transport = TokioChildProcess::new(command).unwrap();
    let pid = transport.id().unwrap();
    let client = ().serve(transport).await.expect("an MCP session");
    (client, pid)
}

/// `dsh approvals ARGS…` against `dir`'s state directory.
fn approvals(dir: &TempDir, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("XDG_STATE_HOME", dir.state())
        .arg("approvals")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Polls `dsh approvals list --json` until an ask waits; the asks.
fn wait_for_asks(dir: &TempDir, args: &[&str]) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    loop {
        let listed = approvals(dir, &all);
        if listed.status.success() {
            let asks: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
            if !asks.is_empty() {
                return asks;
            }
        }
        assert!(Instant::now() < deadline, "no ask appeared: {listed:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn call(
    client: &RunningService<RoleClient, ()>,
    command: &str,
) -> impl std::future::Future<Output = CallToolResult> + Send + 'static {
    let Value::Object(args) = json!({ "command": command }) else {
        unreachable!()
    };
    let params = CallToolRequestParams::new("bash").with_arguments(args as JsonObject);
    let peer = client.peer().clone();
    async move { peer.call_tool(params).await.expect("a tools/call result") }
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect::<Vec<_>>()
        .join("\n")
}

fn code(result: &CallToolResult) -> Value {
    serde_json::to_value(&result.meta).unwrap()["dsh/error"]["code"].clone()
}

fn state_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_wait_on_the_page_and_the_terminal_answers_them() {
    let dir = TempDir::new("answers");
    let (client, pid) = start(&dir, 120).await;

    // An allowed call does not wait.
    let echoed = call(&client, "echo hi").await;
    assert_eq!(echoed.is_error, Some(false), "{echoed:?}");

    let asked = tokio::spawn(call(&client, "touch approved"));
    let asks = wait_for_asks(&dir, &[]);
    assert_eq!(asks.len(), 1, "{asks:?}");
    let ask = &asks[0];
    assert_eq!(ask["tool"], "bash");
    assert_eq!(ask["command"], "touch approved");
    assert_eq!(ask["cwd"], dir.work().display().to_string());
    assert!(ask["reason"].as_str().unwrap().contains("touch"), "{ask}");
    assert_eq!(ask["allowAlwaysRules"], json!(["Bash(touch approved)"]));
    assert!(
        ask["client"].as_str().is_some_and(|c| !c.is_empty()),
        "{ask}"
    );
    let id = ask["id"].as_str().unwrap().to_owned();
    assert!(!asked.is_finished(), "the call did not wait");
    assert!(!dir.work().join("approved").exists());

    let listed = approvals(&dir, &["list"]);
    assert!(listed.status.success());
    let table = stdout(&listed);
    assert!(table.starts_with("ID\tTOOL\tCOMMAND\tREASON\n"), "{table}");
    assert!(
        table.contains(&format!("{id}\tbash\ttouch approved\t")),
        "{table}"
    );

    let allowed = approvals(&dir, &["allow", &id]);
    assert!(allowed.status.success(), "{allowed:?}");
    let done = asked.await.unwrap();
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    assert!(dir.work().join("approved").exists());
    // Answered once: a second answer finds nothing.
    let again = approvals(&dir, &["allow", &id]);
    assert_eq!(again.status.code(), Some(1), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("404"));
    assert_eq!(stdout(&approvals(&dir, &["list"])), "no ask is waiting\n");

    let asked = tokio::spawn(call(&client, "touch refused"));
    let id = wait_for_asks(&dir, &[])[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let denied = approvals(&dir, &["deny", &id]);
    assert!(denied.status.success(), "{denied:?}");
    let done = asked.await.unwrap();
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&done), "PERMISSION_DENIED", "{}", text(&done));
    assert!(!dir.work().join("refused").exists());

    // Allow always: the same command runs unasked afterwards.
    let asked = tokio::spawn(call(&client, "touch twice"));
    let id = wait_for_asks(&dir, &[])[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(approvals(&dir, &["allow", "--always", &id])
        .status
        .success());
    assert_eq!(asked.await.unwrap().is_error, Some(false));
    std::fs::remove_file(dir.work().join("twice")).unwrap();
    let unasked = call(&client, "touch twice").await;
    assert_eq!(unasked.is_error, Some(false), "{}", text(&unasked));
    assert!(dir.work().join("twice").exists());

    // A link for a browser, fresh each time.
    let first = stdout(&approvals(&dir, &["url"]));
    let second = stdout(&approvals(&dir, &["url"]));
    assert!(
        first.starts_with("http://127.0.0.1:") && first.contains("/?token="),
        "{first}"
    );
    assert_ne!(first, second);

    // The state file is private, and goes with the server.
    let files = state_files(&dir.state().join("dsh/approvals"));
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&files[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    client.cancel().await.unwrap();
    assert!(
        gone_within(pid, Duration::from_secs(10)),
        "dsh mcp still runs"
    );
    assert!(state_files(&dir.state().join("dsh/approvals")).is_empty());
    let none = approvals(&dir, &["list"]);
    assert_eq!(none.status.code(), Some(1), "{none:?}");
    assert!(String::from_utf8_lossy(&none.stderr).contains("no dsh serves an approval page"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_ask_fails_closed_when_the_wait_runs_out() {
    let dir = TempDir::new("expiry");
    let (client, _pid) = start(&dir, 2).await;
    let started = Instant::now();
    let done = call(&client, "touch late").await;
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(done.is_error, Some(true));
    assert_eq!(code(&done), "APPROVAL_UNAVAILABLE");
    let said = text(&done);
    assert!(
        said.starts_with("Error: approval required but no approver is available: "),
        "{said}"
    );
    assert!(
        said.contains("to allow it, add \"Bash(touch late)\" to permissions.allow"),
        "{said}"
    );
    assert!(
        said.ends_with("; nobody answered on the approval page within 2 s"),
        "{said}"
    );
    assert!(!dir.work().join("late").exists());
    assert_eq!(stdout(&approvals(&dir, &["list"])), "no ask is waiting\n");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_servers_need_a_pid_and_stale_files_are_ignored() {
    let dir = TempDir::new("several");
    let (first, first_pid) = start(&dir, 120).await;
    let (second, second_pid) = start(&dir, 120).await;
    let states = dir.state().join("dsh/approvals");
    // A server that died without removing its file.
    let stale = states.join("4194305.json");
    std::fs::write(
        &stale,
        r#"{"pid":4194305,"started":"1","url":"http://127.0.0.1:9","token":"t"}"#,
    )
    .unwrap();
    let ambiguous = approvals(&dir, &["list"]);
    assert_eq!(ambiguous.status.code(), Some(2), "{ambiguous:?}");
    let said = String::from_utf8_lossy(&ambiguous.stderr);
    assert!(said.contains("--pid"), "{said}");
    assert!(said.contains(&first_pid.to_string()) && said.contains(&second_pid.to_string()));
    assert!(!said.contains("4194305"), "{said}");
    assert!(!stale.exists(), "the stale state file was kept");

    let asked = tokio::spawn(call(&second, "touch second"));
    let pid = second_pid.to_string();
    let asks = wait_for_asks(&dir, &["--pid", &pid]);
    let first_list = approvals(&dir, &["list", "--json", "--pid", &first_pid.to_string()]);
    assert_eq!(stdout(&first_list).trim(), "[]");
    let id = asks[0]["id"].as_str().unwrap();
    assert!(approvals(&dir, &["--pid", &pid, "allow", id])
        .status
        .success());
    assert_eq!(asked.await.unwrap().is_error, Some(false));
    let not_an_id = approvals(&dir, &["--pid", &pid, "allow", "../browser-url"]);
    assert_eq!(not_an_id.status.code(), Some(2), "{not_an_id:?}");
    let unknown = approvals(&dir, &["list", "--pid", "4194305"]);
    assert_eq!(unknown.status.code(), Some(1));
    first.cancel().await.unwrap();
    second.cancel().await.unwrap();
}

#[test]
fn a_page_beyond_loopback_is_refused() {
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args(["mcp", "--settings-only", "--approvals-page", "0.0.0.0:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("loopback address only"), "{said}");
}
