//! `dsh mcp` driven as a child process by rmcp's client, as an MCP client
//! (Claude Code, Cursor, …) would run it.

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, JsonObject, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::{alive, pids_running};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-mcp-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(echo:*)", "Bash(sleep:*)", "Bash(wait)", "Bash(seq:*)", "bash_kill"],
    "deny": ["Bash(rm:*)"]
  }
}"#;

async fn start(dir: &Path) -> (RunningService<RoleClient, ()>, u32) {
    start_with(dir, ()).await
}

async fn start_with<C: ClientHandler>(
    dir: &Path,
    handler: C,
) -> (RunningService<RoleClient, C>, u32) {
    let settings = dir.join("settings.json");
    std::fs::write(&settings, SETTINGS).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    // Never the real home: no user settings.
    command.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
    command
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(dir);
    let transport = TokioChildProcess::new(command).unwrap();
    let pid = transport.id().unwrap();
    let client = handler
        .serve(transport)
        .await
        .expect("MCP session with dsh mcp");
    (client, pid)
}

async fn call<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args as JsonObject);
    client.call_tool(params).await.expect("a tools/call result")
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

async fn gone_within(pid: u32, deadline: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !alive(pid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_lists_calls_and_refuses_as_the_pipeline_says() {
    let dir = TempDir::new("session");
    let (client, _pid) = start(&dir.0).await;

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
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
    let output = &tools[1];
    assert_eq!(output.title.as_deref(), Some("Read background task output"));
    let hints = serde_json::to_value(output.annotations.as_ref().unwrap()).unwrap();
    assert_eq!(hints["readOnlyHint"], json!(true));
    assert_eq!(tools[0].input_schema["required"], json!(["command"]));

    let ok = call(&client, "bash", json!({"command": "echo hi"})).await;
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(text(&ok), "hi\n[exit code: 0]");

    let invalid = call(&client, "bash", json!({"timeout_ms": -5})).await;
    assert_eq!(invalid.is_error, Some(true));
    assert_eq!(
        text(&invalid),
        r#"Error: invalid arguments: missing required property "command"; "timeout_ms" must be at least 0"#
    );

    // Output sized for clients: a whole result stays under 30 000 characters.
    let long = call(&client, "bash", json!({"command": "seq 1 100000"})).await;
    let long_text = text(&long);
    assert!(
        long_text.chars().count() < 30_000,
        "{} chars",
        long_text.chars().count()
    );
    assert!(long_text.contains("bytes omitted"), "{long_text:.200}");
    assert!(long_text.starts_with("1\n2\n3\n"), "the head is kept");
    assert!(
        long_text.contains("\n100000\n[stdout truncated; full output: "),
        "the tail is kept"
    );

    let unknown = call(&client, "nope", json!({})).await;
    assert_eq!(unknown.is_error, Some(true));
    assert_eq!(text(&unknown), r#"Error: unknown tool "nope""#);

    let denied = call(&client, "bash", json!({"command": "rm -rf /tmp/x"})).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(
        text(&denied).contains("permission denied"),
        "{}",
        text(&denied)
    );

    // Nobody to ask: an *ask* fails closed, and nothing runs.
    let asked = call(&client, "bash", json!({"command": "touch made"})).await;
    assert_eq!(asked.is_error, Some(true));
    assert!(
        text(&asked).contains(r#"to allow it, add "Bash(touch made)" to permissions.allow"#),
        "{}",
        text(&asked)
    );
    assert!(!dir.0.join("made").exists());

    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tasks_live_across_calls_and_die_with_the_session() {
    let dir = TempDir::new("background");
    let (client, server_pid) = start(&dir.0).await;

    let started = call(
        &client,
        "bash",
        json!({"command": "sleep 30 & echo $!; wait", "run_in_background": true}),
    )
    .await;
    assert_eq!(text(&started), "started background task bash-1");

    // The task prints the PID of its `sleep`; wait for it.
    let deadline = Instant::now() + Duration::from_secs(10);
    let sleeper: u32 = loop {
        let output = call(&client, "bash_output", json!({"task_id": "bash-1"})).await;
        let first = text(&output).lines().next().unwrap_or_default().to_owned();
        if let Ok(pid) = first.trim().parse() {
            break pid;
        }
        assert!(Instant::now() < deadline, "no PID in {:?}", text(&output));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(alive(sleeper));

    let status = call(&client, "bash_output", json!({"task_id": "bash-1"})).await;
    assert!(
        text(&status).contains("[status: running]"),
        "{}",
        text(&status)
    );

    // Closing the session (stdin end-of-file) ends the server and the task.
    client.cancel().await.unwrap();
    assert!(
        gone_within(server_pid, Duration::from_secs(10)).await,
        "dsh mcp still running"
    );
    assert!(
        gone_within(sleeper, Duration::from_secs(10)).await,
        "the background sleep survived the session"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_kill_stops_a_background_task() {
    let dir = TempDir::new("kill");
    let (client, _pid) = start(&dir.0).await;
    let started = call(
        &client,
        "bash",
        json!({"command": "sleep 30", "run_in_background": true}),
    )
    .await;
    assert_eq!(text(&started), "started background task bash-1");
    let killed = call(&client, "bash_kill", json!({"task_id": "bash-1"})).await;
    assert_eq!(text(&killed), "killed background task bash-1");
    let unknown = call(&client, "bash_output", json!({"task_id": "bash-9"})).await;
    assert_eq!(unknown.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_kills_its_process_tree() {
    let dir = TempDir::new("cancel");
    let (client, _pid) = start(&dir.0).await;
    // A marker only this test's sleep carries.
    let marker = format!("31.{}", std::process::id());
    let command = format!("sleep {marker}");
    let running = {
        let peer = client.peer().clone();
        let args = json!({ "command": command });
        tokio::spawn(async move {
            let Value::Object(args) = args else {
                unreachable!()
            };
            peer.call_tool(CallToolRequestParams::new("bash").with_arguments(args))
                .await
        })
    };
    let sleeper = sleep_pid(&marker).await;
    // Dropping the request's future sends notifications/cancelled.
    running.abort();
    assert!(
        gone_within(sleeper, Duration::from_secs(10)).await,
        "the cancelled command is still running"
    );
    // The session goes on.
    let ok = call(&client, "bash", json!({"command": "echo after"})).await;
    assert_eq!(text(&ok), "after\n[exit code: 0]");
    client.cancel().await.unwrap();
}

/// Records progress notifications; answers elicitations with `decision`.
#[derive(Clone, Default)]
struct Recording {
    progress: Arc<Mutex<Vec<f64>>>,
    messages: Arc<Mutex<Vec<String>>>,
    asked: Arc<Mutex<Vec<String>>>,
    /// The `_meta` of each `elicitation/create` the server sent.
    asked_meta: Arc<Mutex<Vec<Value>>>,
    decision: Option<&'static str>,
}

impl ClientHandler for Recording {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.decision.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, rmcp::model::Implementation::from_build_env())
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params.progress);
        self.messages.lock().unwrap().extend(params.message.clone());
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.asked_meta
            .lock()
            .unwrap()
            .push(serde_json::to_value(&context.meta).unwrap());
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        // `!decline` and `!cancel` answer as headless clients do, without
        // one of the form's options.
        Ok(match self.decision {
            Some("!decline") => ElicitResult::new(ElicitationAction::Decline),
            Some("!cancel") => ElicitResult::new(ElicitationAction::Cancel),
            choice => {
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = choice.map(|d| json!({ "decision": d }));
                result
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_call_reports_progress() {
    let dir = TempDir::new("progress");
    let handler = Recording::default();
    let (client, _pid) = start_with(&dir.0, handler.clone()).await;
    let done = call(
        &client,
        "bash",
        json!({"command": "echo started; sleep 3.5; echo done"}),
    )
    .await;
    assert_eq!(done.is_error, Some(false), "{}", text(&done));
    let progress = handler.progress.lock().unwrap().clone();
    assert!(progress.len() >= 2, "progress notifications: {progress:?}");
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    let messages = handler.messages.lock().unwrap().clone();
    // "started\n" was read while the call ran.
    assert!(
        messages
            .iter()
            .any(|m| m.ends_with(", 8 bytes of output so far")),
        "{messages:?}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_becomes_an_elicitation_when_the_client_offers_one() {
    let dir = TempDir::new("elicit-allow");
    let allow = Recording {
        decision: Some("allow once"),
        ..Recording::default()
    };
    let (client, _pid) = start_with(&dir.0, allow.clone()).await;
    let ran = call(&client, "bash", json!({"command": "touch made"})).await;
    assert_eq!(ran.is_error, Some(false), "{}", text(&ran));
    assert!(dir.0.join("made").exists());
    let asked = allow.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].contains("touch made"), "{asked:?}");
    // The form asks for no progress: no token a client would log or show.
    let meta = allow.asked_meta.lock().unwrap().clone();
    assert!(
        meta.iter().all(|m| m.get("progressToken").is_none()),
        "{meta:?}"
    );
    client.cancel().await.unwrap();

    let dir = TempDir::new("elicit-reject");
    let reject = Recording {
        decision: Some("reject"),
        ..Recording::default()
    };
    let (client, _pid) = start_with(&dir.0, reject.clone()).await;
    let refused = call(&client, "bash", json!({"command": "touch made"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(!dir.0.join("made").exists());
    assert_eq!(reject.asked.lock().unwrap().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decline_or_cancel_is_not_a_rejection_and_names_the_rule() {
    for (answer, word) in [("!decline", "decline"), ("!cancel", "cancel")] {
        let dir = TempDir::new(&format!("elicit-{word}"));
        let client_answers = Recording {
            decision: Some(answer),
            ..Recording::default()
        };
        let (client, _pid) = start_with(&dir.0, client_answers.clone()).await;
        let refused = call(&client, "bash", json!({"command": "touch made"})).await;
        assert_eq!(refused.is_error, Some(true));
        let said = text(&refused);
        assert!(
            said.contains(&format!("not approved: the client answered `{word}`")),
            "{said}"
        );
        assert!(!said.contains("rejected"), "{said}");
        assert!(
            said.contains("add \"Bash(touch made)\" to permissions.allow"),
            "{said}"
        );
        assert!(!dir.0.join("made").exists());
        client.cancel().await.unwrap();
    }
}

/// Starts a background `sleep` with a unique marker and returns its PID.
async fn background_sleep<C: ClientHandler>(
    client: &RunningService<RoleClient, C>,
    marker: &str,
) -> u32 {
    let started = call(
        client,
        "bash",
        json!({"command": format!("sleep {marker}"), "run_in_background": true}),
    )
    .await;
    assert_eq!(text(&started), "started background task bash-1");
    sleep_pid(marker).await
}

/// The PID of the `sleep` marked `marker`, once it runs.
async fn sleep_pid(marker: &str) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(pid) = pids_running(&["sleep", marker]).first() {
            return *pid;
        }
        assert!(
            Instant::now() < deadline,
            "the background sleep never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Opens a session by hand (initialize at 2025-06-18) and starts a
/// background `sleep {marker} & wait`; the sleep's PID.
async fn session_with_a_background_sleep(
    input: &mut std::process::ChildStdin,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    marker: &str,
) -> u32 {
    send(
        input,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "by-hand", "version": "0"}}}),
    );
    assert_eq!(
        answer(lines, 1)["result"]["serverInfo"]["name"],
        json!("dsh")
    );
    send(
        input,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    send(
        input,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "bash",
            "arguments": {"command": format!("sleep {marker} & wait"), "run_in_background": true}}}),
    );
    assert_eq!(
        answer(lines, 2)["result"]["content"][0]["text"],
        json!("started background task bash-1")
    );
    sleep_pid(marker).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_server_and_everything_it_started() {
    let dir = TempDir::new("sigterm");
    let (client, server) = start(&dir.0).await;
    let marker = format!("32.{}", std::process::id());
    let sleeper = background_sleep(&client, &marker).await;
    let status = std::process::Command::new("kill")
        .arg("-TERM")
        .arg(server.to_string())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        gone_within(server, Duration::from_secs(10)).await,
        "dsh mcp ignored SIGTERM"
    );
    assert!(
        gone_within(sleeper, Duration::from_secs(10)).await,
        "the background sleep survived SIGTERM of the server"
    );
    drop(client);
}

/// `dsh mcp` on `dir` as a plain child process, its stdout piped, its
/// stdin from `stdin`.
fn plain_server(dir: &Path, stdin: std::process::Stdio) -> std::process::Child {
    let settings = dir.join("settings.json");
    std::fs::write(&settings, SETTINGS).unwrap();
    std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(dir)
        .stdin(stdin)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// One JSON-RPC line to the server, through the relay.
fn send(relay: &mut std::process::ChildStdin, message: Value) {
    use std::io::Write;
    writeln!(relay, "{message}").unwrap();
    relay.flush().unwrap();
}

/// The next message from the server that answers request `id`.
fn answer(lines: &mut impl Iterator<Item = std::io::Result<String>>, id: u64) -> Value {
    for line in lines {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        if message["id"] == json!(id) {
            return message;
        }
    }
    panic!("the server closed stdout before answering request {id}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_killed_with_sigkill_leaves_nothing_behind() {
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = TempDir::new("client-kill");
    // The "client": a process that holds the only write end of the server's
    // stdin. Killing it with SIGKILL is what a crashing client does.
    let mut client = std::process::Command::new("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = plain_server(&dir.0, client.stdout.take().unwrap().into());
    let mut relay = client.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let marker = format!("33.{}", std::process::id());
    let sleeper = session_with_a_background_sleep(&mut relay, &mut lines, &marker).await;
    client.kill().unwrap();
    client.wait().unwrap();
    drop(relay);
    let server_pid = server.id();
    let exited = tokio::task::spawn_blocking(move || server.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(exited.success(), "dsh mcp ended with {exited}");
    assert!(!alive(server_pid));
    assert!(
        gone_within(sleeper, Duration::from_secs(10)).await,
        "the background sleep survived the client"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_with_sigkill_leaves_nothing_behind() {
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = TempDir::new("server-kill");
    // A plain child process: nothing but dsh's own watchdog may clean up
    // after it (rmcp's client transport would kill the server's process group).
    let mut server = plain_server(&dir.0, Stdio::piped());
    let mut input = server.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let marker = format!("34.{}", std::process::id());
    let sleeper = session_with_a_background_sleep(&mut input, &mut lines, &marker).await;
    server.kill().unwrap();
    server.wait().unwrap();
    let survived = !gone_within(sleeper, Duration::from_secs(10)).await;
    if survived {
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(sleeper.to_string())
            .status();
    }
    assert!(
        !survived,
        "the background sleep survived SIGKILL of dsh mcp"
    );
    drop(input);
}

/// A stateless (2026-07-28) `tools/call` of `bash` on `command`, with the
/// client's capabilities and, on a retry, its answers and the state the
/// server sealed.
fn stateless_call(
    id: u64,
    command: &str,
    capabilities: Value,
    answers: Option<(Value, Option<&Value>)>,
) -> Value {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "by-hand", "version": "0"},
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
        "name": "bash",
        "arguments": {"command": command},
    });
    if let Some((answers, state)) = answers {
        params["inputResponses"] = answers;
        if let Some(state) = state {
            params["requestState"] = state.clone();
        }
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

#[test]
fn in_the_stateless_revision_an_ask_is_an_input_required_round() {
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = TempDir::new("stateless-ask");
    let mut server = plain_server(&dir.0, Stdio::piped());
    let mut input = server.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let elicits = json!({"elicitation": {}});
    let mut ask = |id: u64, command: &str| {
        send(
            &mut input,
            stateless_call(id, command, elicits.clone(), None),
        );
        answer(&mut lines, id)["result"].clone()
    };

    // No answer yet: the server asks, and nothing runs.
    let asked = ask(1, "touch made");
    assert_eq!(asked["resultType"], json!("input_required"), "{asked}");
    let question = &asked["inputRequests"]["dsh_approval"];
    assert_eq!(question["method"], json!("elicitation/create"), "{asked}");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("touch made")),
        "{asked}"
    );
    let state = asked["requestState"].clone();
    assert!(state.is_string(), "no requestState: {asked}");
    assert!(!dir.0.join("made").exists());
    let second = ask(2, "touch made")["requestState"].clone();
    let other_call = ask(3, "touch other")["requestState"].clone();

    let allow =
        json!({"dsh_approval": {"action": "accept", "content": {"decision": "allow once"}}});
    let reject = json!({"dsh_approval": {"action": "accept", "content": {"decision": "reject"}}});
    let mut retry = |id: u64, command: &str, answers: &Value, state: Option<&Value>| {
        send(
            &mut input,
            stateless_call(id, command, elicits.clone(), Some((answers.clone(), state))),
        );
        answer(&mut lines, id)
    };
    let refused_with = |reply: &Value, why: &str| {
        assert_eq!(reply["error"]["code"], json!(-32602), "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(why)),
            "{reply}"
        );
    };

    // Answers without the state, with an altered one, or with the state of
    // another call: refused, nothing runs.
    refused_with(
        &retry(4, "touch made", &allow, None),
        "without the requestState",
    );
    let altered = json!(format!("{}x", state.as_str().unwrap()));
    refused_with(
        &retry(5, "touch made", &allow, Some(&altered)),
        "not sealed by this server",
    );
    refused_with(
        &retry(6, "touch made", &allow, Some(&other_call)),
        "this exact call",
    );
    assert!(!dir.0.join("made").exists());

    // The retry carries a rejection: refused, nothing runs.
    let refused = retry(7, "touch made", &reject, Some(&state))["result"].clone();
    assert_eq!(refused["isError"], json!(true), "{refused}");
    assert!(!dir.0.join("made").exists());

    // The retry carries an approval: the call runs.
    let ran = retry(8, "touch made", &allow, Some(&second))["result"].clone();
    assert_eq!(ran["isError"], json!(false), "{ran}");
    assert!(dir.0.join("made").exists());

    // The same approval again: replayed, refused, nothing runs.
    std::fs::remove_file(dir.0.join("made")).unwrap();
    refused_with(
        &retry(9, "touch made", &allow, Some(&second)),
        "already used",
    );
    assert!(!dir.0.join("made").exists());

    // A client that cannot show a form: fails closed, naming the rule.
    send(
        &mut input,
        stateless_call(10, "touch other", json!({}), None),
    );
    let closed = answer(&mut lines, 10)["result"].clone();
    assert_eq!(closed["isError"], json!(true), "{closed}");
    assert!(
        closed["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("to allow it, add")),
        "{closed}"
    );
    drop(input);
    assert!(server.wait().unwrap().success());
}

#[test]
fn a_client_that_leaves_before_its_first_request_ends_the_server_cleanly() {
    let dir = TempDir::new("no-request");
    let mut server = plain_server(&dir.0, std::process::Stdio::null());
    let status = server.wait().unwrap();
    assert!(status.success(), "dsh mcp ended with {status}");
}
