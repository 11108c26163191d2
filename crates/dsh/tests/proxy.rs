//! `dsh mcp` as a proxy: rmcp's client drives `dsh mcp`, which fronts the
//! test upstream (`examples/mcp_upstream.rs`) over stdio and over
//! streamable HTTP on loopback.

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, JsonObject,
    ProgressNotificationParam, ServerResult,
};
use rmcp::service::{
    ClientServiceExt, NotificationContext, PeerRequestOptions, RequestContext, RunningService,
};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

mod common;
use common::alive;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-proxy-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The test upstream, built by `cargo test` beside this test's binary.
fn upstream_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let fixture = profile_dir.join("examples").join("mcp_upstream");
    assert!(
        fixture.exists(),
        "{} is missing: `cargo test` builds it (or `cargo build -p dsh --example mcp_upstream`)",
        fixture.display()
    );
    fixture
}

/// One progress notification: progress, total, message.
type Progress = (f64, Option<f64>, Option<String>);

/// Records what the proxy sends us; answers approval forms with `decision`.
#[derive(Clone, Default)]
struct Client {
    progress: Arc<Mutex<Vec<Progress>>>,
    list_changed: Arc<tokio::sync::Notify>,
    decision: Option<&'static str>,
}

impl ClientHandler for Client {
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
        self.progress
            .lock()
            .unwrap()
            .push((params.progress, params.total, params.message));
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.notify_one();
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let mut result = ElicitResult::new(ElicitationAction::Accept);
        result.content = self.decision.map(|d| json!({ "decision": d }));
        Ok(result)
    }
}

/// `dsh mcp` with these settings and arguments, and its stderr as it comes.
struct Proxy {
    client: RunningService<RoleClient, Client>,
    pid: u32,
    stderr: Arc<Mutex<String>>,
}

impl Proxy {
    async fn start(dir: &TempDir, settings: Value, args: &[&str], handler: Client) -> Proxy {
        Self::start_with_env(dir, settings, args, handler, &[]).await
    }

    async fn start_with_env(
        dir: &TempDir,
        settings: Value,
        args: &[&str],
        handler: Client,
        env: &[(&str, &str)],
    ) -> Proxy {
        let settings_file = dir.path("settings.json");
        std::fs::write(&settings_file, settings.to_string()).unwrap();
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
        // Never the real home: no user settings.
        command.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
        command
            .arg("mcp")
            .arg("--settings")
            .arg(&settings_file)
            .arg("--cwd")
            .arg(&dir.0)
            .args(args)
            .envs(env.iter().copied());
        let (transport, stderr) = TokioChildProcess::builder(command)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = transport.id().unwrap();
        let text = Arc::new(Mutex::new(String::new()));
        if let Some(mut stderr) = stderr {
            let text = text.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    text.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let client = handler
            .serve(transport)
            .await
            .expect("an MCP session with dsh mcp");
        Proxy {
            client,
            pid,
            stderr: text,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args as JsonObject);
        self.client
            .call_tool(params)
            .await
            .expect("a tools/call result")
    }

    async fn names(&self) -> Vec<String> {
        let tools = self.client.list_all_tools().await.unwrap();
        tools.iter().map(|t| t.name.to_string()).collect()
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }
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

/// The result's error code (`_meta["dsh/error"].code`), for a failure of the pipeline.
fn code(result: &CallToolResult) -> String {
    let wire = serde_json::to_value(result).unwrap();
    wire["_meta"]["dsh/error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

async fn eventually(what: &str, deadline: Duration, mut check: impl AsyncFnMut() -> bool) {
    let start = Instant::now();
    while start.elapsed() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: not within {deadline:?}");
}

/// Settings that allow every tool of the upstream named `fx`.
fn allow_fx() -> Value {
    json!({"permissions": {"allow": ["mcp__fx"]}})
}

fn fx_args(fixture: &Path) -> Vec<String> {
    vec![
        "--no-builtin".into(),
        "--name".into(),
        "fx".into(),
        "--".into(),
        fixture.display().to_string(),
    ]
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// `dsh mcp --no-builtin --name fx -- mcp_upstream` in a fresh directory.
async fn fx(name: &str, settings: Value, handler: Client) -> (TempDir, Proxy) {
    let dir = TempDir::new(name);
    let args = fx_args(&upstream_binary());
    let proxy = Proxy::start(&dir, settings, &strs(&args), handler).await;
    (dir, proxy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_upstream_is_listed_and_called_under_its_own_names() {
    let (_dir, proxy) = fx("names", allow_fx(), Client::default()).await;
    let tools = proxy.client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"rich"),
        "{names:?}"
    );
    assert!(!names.contains(&"bash"), "--no-builtin: {names:?}");
    // A name providers reject is mapped, and the description says so.
    let dotted = tools
        .iter()
        .find(|t| t.name.starts_with("dotted_name_"))
        .expect("dotted.name, mapped");
    assert!(dotted
        .description
        .as_deref()
        .unwrap()
        .contains("\"dotted.name\""));
    eventually("the mapping logged", Duration::from_secs(10), async || {
        proxy.stderr().contains("\"dotted.name\" is exposed as")
    })
    .await;
    // Which rule names which tool, once at start-up.
    assert!(
        proxy
            .stderr()
            .contains("tool \"echo\" is exposed as \"echo\"; rules name it mcp__fx__echo"),
        "{}",
        proxy.stderr()
    );
    // The upstream's own claims are shown to the client, as its schema is.
    let write = tools.iter().find(|t| t.name == "write_file").unwrap();
    let hints = serde_json::to_value(write.annotations.as_ref().unwrap()).unwrap();
    assert_eq!(hints["readOnlyHint"], json!(true));
    let rich = tools.iter().find(|t| t.name == "rich").unwrap();
    assert_eq!(
        rich.output_schema.as_ref().unwrap()["required"],
        json!(["answer"])
    );

    let echoed = proxy.call("echo", json!({"text": "hi"})).await;
    assert_eq!(echoed.is_error, Some(false));
    assert_eq!(text(&echoed), "hi");
    let mapped = proxy.call(&dotted.name, json!({})).await;
    assert_eq!(text(&mapped), "dotted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_name_upstream_tools_as_claude_code_users_write_them() {
    let settings = json!({"permissions": {
        "allow": ["mcp__fx__echo", "calls"],
        "deny": ["mcp__fx__fail"],
        "ask": ["mcp__FX__rich"]
    }});
    let (_dir, proxy) = fx("rules", settings, Client::default()).await;
    assert_eq!(text(&proxy.call("echo", json!({"text": "a"})).await), "a");
    // By the exposed name too.
    assert_eq!(proxy.call("calls", json!({})).await.is_error, Some(false));
    let denied = proxy.call("fail", json!({})).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(text(&denied).contains("mcp__fx__fail"), "{}", text(&denied));
    // Ask, and nobody to ask: refused, naming the rule that would allow it.
    let asked = proxy.call("rich", json!({})).await;
    assert_eq!(asked.is_error, Some(true));
    assert!(text(&asked).contains("Error:"), "{}", text(&asked));
    // No rule at all: asked too, never allowed by default; the hint names
    // the rule dsh matches, not the name the client shows.
    let unruled = proxy.call("env", json!({"name": "PATH"})).await;
    assert_eq!(unruled.is_error, Some(true));
    assert!(
        text(&unruled).contains("add \"mcp__fx__env\" to permissions.allow"),
        "{}",
        text(&unruled)
    );
    // Only echo and calls reached the upstream.
    assert_eq!(text(&proxy.call("calls", json!({})).await), "2");

    // A tool-wide rule for the server, and the wildcard form.
    let settings = json!({"permissions": {"deny": ["mcp__fx"], "allow": ["mcp__fx__*"]}});
    let (_dir, proxy) = fx("rules-wide", settings, Client::default()).await;
    let denied = proxy.call("echo", json!({"text": "a"})).await;
    assert_eq!(denied.is_error, Some(true));
    assert!(text(&denied).contains("mcp__fx"), "{}", text(&denied));

    let settings = json!({"permissions": {"allow": ["mcp__fx__*"]}});
    let (_dir, proxy) = fx("rules-star", settings, Client::default()).await;
    assert_eq!(text(&proxy.call("echo", json!({"text": "b"})).await), "b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ask_for_an_upstream_tool_is_answered_by_the_client() {
    let settings = json!({"permissions": {"ask": ["mcp__fx__echo"]}});
    let handler = Client {
        decision: Some("allow once"),
        ..Client::default()
    };
    let (_dir, proxy) = fx("ask", settings, handler).await;
    let allowed = proxy.call("echo", json!({"text": "asked"})).await;
    assert_eq!(text(&allowed), "asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_arguments_never_reach_the_upstream() {
    let (_dir, proxy) = fx("invalid", allow_fx(), Client::default()).await;
    let missing = proxy.call("echo", json!({})).await;
    assert_eq!(missing.is_error, Some(true));
    assert_eq!(
        text(&missing),
        "Error: invalid arguments: missing required property \"text\""
    );
    // Every violation, each with its path.
    let wrong = proxy
        .call("echo", json!({"text": 5, "times": 0, "loud": true}))
        .await;
    assert_eq!(
        text(&wrong),
        "Error: invalid arguments: \"text\" must be a string; \"times\" must be at least 1; \"loud\" is not a declared property"
    );
    assert_eq!(code(&wrong), "INVALID_ARGS", "{wrong:?}");
    // The upstream saw none of them.
    assert_eq!(text(&proxy.call("calls", json!({})).await), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_pass_through_whole() {
    let (_dir, proxy) = fx("rich", allow_fx(), Client::default()).await;
    let rich = proxy.call("rich", json!({})).await;
    assert_eq!(rich.is_error, Some(false));
    assert_eq!(
        serde_json::to_value(&rich.content).unwrap(),
        json!([
            {"type": "text", "text": "plain", "annotations": {"audience": ["user"], "priority": 0.5}},
            {"type": "image", "data": "aW1n", "mimeType": "image/png"},
            {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "file:///tmp/x.txt", "name": "x.txt", "mimeType": "text/plain", "size": 3},
            {"type": "resource", "resource": {"uri": "file:///tmp/y.txt", "mimeType": "text/plain", "text": "inside"}, "_meta": {"k": "v"}}
        ])
    );
    assert_eq!(rich.structured_content, Some(json!({"answer": 42})));
    // A tool's own failure is its content, not ours.
    let failed = proxy.call("fail", json!({})).await;
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "it went wrong");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_reaches_the_upstream_and_its_progress_reaches_the_client() {
    let handler = Client::default();
    let progress = handler.progress.clone();
    let (dir, proxy) = fx("cancel", allow_fx(), handler).await;
    let marker = dir.path("slow").display().to_string();
    let Value::Object(arguments) = json!({ "marker": marker }) else {
        unreachable!()
    };
    // rmcp gives every request a progress token.
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("slow").with_arguments(arguments),
    ));
    let handle = proxy
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    let started = PathBuf::from(format!("{marker}.started"));
    eventually(
        "the upstream started the call",
        Duration::from_secs(10),
        async || started.exists(),
    )
    .await;
    // The last step arrives under the client's token. (rmcp's client
    // handles notifications concurrently, so the order they are recorded
    // in here says nothing about the order on the wire.)
    let last = (2.0, Some(3.0), Some("step 2".to_owned()));
    eventually(
        "progress reached the client",
        Duration::from_secs(10),
        async || progress.lock().unwrap().contains(&last),
    )
    .await;
    let seen = progress.lock().unwrap().clone();
    assert!(seen.len() <= 2, "{seen:?}");
    handle
        .cancel(Some("the user pressed stop".into()))
        .await
        .unwrap();
    let cancelled = PathBuf::from(format!("{marker}.cancelled"));
    eventually(
        "the cancellation reached the upstream",
        Duration::from_secs(10),
        async || cancelled.exists(),
    )
    .await;
    assert_eq!(
        text(&proxy.call("echo", json!({"text": "after"})).await),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_mid_call_names_the_server_and_the_next_call_restarts_it() {
    let (_dir, proxy) = fx("crash", allow_fx(), Client::default()).await;
    let first = text(&proxy.call("pid", json!({})).await)
        .parse::<u32>()
        .unwrap();
    let crashed = proxy.call("crash", json!({})).await;
    assert_eq!(crashed.is_error, Some(true));
    let message = text(&crashed);
    assert!(message.contains("upstream \"fx\""), "{message}");
    assert!(
        message.contains("closed its connection during tools/call \"crash\""),
        "{message}"
    );
    assert!(message.contains("exited with status 3"), "{message}");
    assert!(message.contains("crashing on purpose"), "{message}");
    // Its stderr reached ours, prefixed with its name (read here as it comes).
    eventually(
        "the upstream's stderr on ours",
        Duration::from_secs(10),
        async || proxy.stderr().contains("[fx] fixture: crashing on purpose"),
    )
    .await;
    // The next call starts it again.
    let echoed = proxy.call("echo", json!({"text": "back"})).await;
    assert_eq!(text(&echoed), "back");
    let second = text(&proxy.call("pid", json!({})).await);
    let second = second.parse::<u32>().unwrap_or_else(|_| panic!("{second}"));
    assert_ne!(first, second);
    assert!(!alive(first));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_crashes_end_in_a_clear_error() {
    let (_dir, proxy) = fx("crashes", allow_fx(), Client::default()).await;
    let mut seen = Vec::new();
    eventually(
        "the upstream is paused after repeated crashes",
        Duration::from_secs(30),
        async || {
            let message = text(&proxy.call("crash", json!({})).await);
            let done = message.contains("tried again only every 30 s");
            seen.push(message);
            done
        },
    )
    .await;
    let last = seen.last().unwrap();
    assert!(last.contains("failed 5 times in a row"), "{last}");
    // Between crashes, calls inside the back-off are refused without a start.
    assert!(
        seen.iter()
            .any(|m| m.contains("is restarted on a call after")),
        "{seen:?}"
    );
    // Nothing is started for 30 s: an echo is refused at once, with the cause.
    let started = Instant::now();
    let refused = text(&proxy.call("echo", json!({"text": "x"})).await);
    assert!(refused.contains("tried again only every 30 s"), "{refused}");
    assert!(refused.contains("crashing on purpose"), "{refused}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_upstream_times_out() {
    let settings = json!({"permissions": {"allow": ["mcp__fx"]}, "mcp": {"callTimeoutMs": 300}});
    let (_dir, proxy) = fx("hang", settings, Client::default()).await;
    let started = Instant::now();
    let hung = proxy.call("hang", json!({})).await;
    assert_eq!(hung.is_error, Some(true));
    let message = text(&hung);
    assert!(
        message.contains("did not answer tools/call \"hang\" within 300 ms"),
        "{message}"
    );
    assert_eq!(code(&hung), "TOOL_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The server is still there for the next call.
    assert_eq!(
        text(&proxy.call("echo", json!({"text": "still"})).await),
        "still"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_claim_does_not_let_a_write_through_plan_mode() {
    let dir = TempDir::new("plan");
    let fixture = upstream_binary();
    let mut args = vec!["--mode".to_owned(), "plan".to_owned()];
    args.extend(fx_args(&fixture));
    let settings = json!({
        "permissions": {"allow": ["mcp__fx__write_file"]},
        "mcp": {"readOnlyTools": ["mcp__fx__calls"]}
    });
    let proxy = Proxy::start(&dir, settings, &strs(&args), Client::default()).await;
    let target = dir.path("written.txt");
    let refused = proxy
        .call(
            "write_file",
            json!({"path": target.display().to_string(), "text": "x"}),
        )
        .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("plan mode"), "{}", text(&refused));
    assert!(!target.exists());
    // What the settings trust as read-only runs in plan mode without a rule.
    let trusted = proxy.call("calls", json!({})).await;
    assert_eq!(trusted.is_error, Some(false), "{}", text(&trusted));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_upstream_refreshes_the_tools_and_reaches_the_client() {
    let handler = Client::default();
    let changed = handler.list_changed.clone();
    let (_dir, proxy) = fx("grow", allow_fx(), handler).await;
    assert!(!proxy.names().await.contains(&"grown".to_owned()));
    assert_eq!(text(&proxy.call("grow", json!({})).await), "grown");
    tokio::time::timeout(Duration::from_secs(10), changed.notified())
        .await
        .expect("notifications/tools/list_changed");
    eventually(
        "the new tool is listed",
        Duration::from_secs(10),
        async || proxy.names().await.contains(&"grown".to_owned()),
    )
    .await;
    assert_eq!(text(&proxy.call("grown", json!({})).await), "I was added");
}

/// The test upstream serving streamable HTTP; killed on drop.
struct HttpUpstream {
    child: std::process::Child,
    url: String,
}

impl HttpUpstream {
    fn start(dir: &TempDir) -> HttpUpstream {
        let port_file = dir.path("port");
        let child = std::process::Command::new(upstream_binary())
            .arg("--http")
            .arg(&port_file)
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !port_file.exists() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "the HTTP upstream did not listen"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let port = std::fs::read_to_string(&port_file).unwrap();
        HttpUpstream {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_of_a_config_file_over_stdio_and_http_are_prefixed() {
    let dir = TempDir::new("config");
    let http = HttpUpstream::start(&dir);
    let config = dir.path("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {
            "local": {"command": upstream_binary().display().to_string()},
            "web": {"type": "http", "url": http.url, "headers": {"X-Test": "1"}}
        }})
        .to_string(),
    )
    .unwrap();
    let settings = json!({"permissions": {
        "allow": ["mcp__local__echo", "mcp__web__echo", "web__rich"],
        "deny": ["mcp__web__write_file"]
    }});
    let config = config.display().to_string();
    let proxy = Proxy::start(
        &dir,
        settings,
        &["--mcp-config", &config],
        Client::default(),
    )
    .await;
    let names = proxy.names().await;
    for name in ["bash", "local__echo", "web__echo", "web__rich"] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    assert!(
        names.iter().any(|n| n.starts_with("local__dotted_name_")),
        "{names:?}"
    );
    assert_eq!(
        text(&proxy.call("local__echo", json!({"text": "l"})).await),
        "l"
    );
    assert_eq!(
        text(&proxy.call("web__echo", json!({"text": "w"})).await),
        "w"
    );
    let rich = proxy.call("web__rich", json!({})).await;
    assert_eq!(rich.structured_content, Some(json!({"answer": 42})));
    let denied = proxy
        .call(
            "web__write_file",
            json!({"path": "/tmp/never", "text": "x"}),
        )
        .await;
    assert!(
        text(&denied).contains("mcp__web__write_file"),
        "{}",
        text(&denied)
    );

    // The HTTP server goes away: an error naming it, not a hang.
    let http_origin = http.url.trim_end_matches("/mcp").to_owned();
    drop(http);
    let started = Instant::now();
    let gone = tokio::time::timeout(
        Duration::from_secs(60),
        proxy.call("web__echo", json!({"text": "w"})),
    )
    .await
    .expect("an answer, not a hang");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_eq!(gone.is_error, Some(true));
    assert!(
        text(&gone).starts_with("Error: upstream \"web\" "),
        "{}",
        text(&gone)
    );
    assert!(
        text(&gone).contains("error sending request"),
        "{}",
        text(&gone)
    );
    assert!(!text(&gone).contains("rmcp::"), "{}", text(&gone));
    // The restart fails too, and says where it tried.
    let again = proxy.call("web__echo", json!({"text": "w"})).await;
    assert!(text(&again).contains(&http_origin), "{}", text(&again));
    // Only the origin: a path or query may hold a token.
    assert!(!text(&gone).contains("/mcp") && !text(&again).contains("/mcp"));
    // The other server is unaffected.
    assert_eq!(
        text(&proxy.call("local__echo", json!({"text": "l"})).await),
        "l"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_claimed_twice_is_a_start_up_error_naming_both() {
    let fixture = upstream_binary().display().to_string();
    // An upstream tool named like a built-in one.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args([
            "mcp",
            "--name",
            "fx",
            "--",
            "env",
            "MCP_UPSTREAM_EXTRA_TOOL=bash",
            &fixture,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"bash\"") && stderr.contains("\"fx\""),
        "{stderr}"
    );
    assert!(stderr.contains("built-in"), "{stderr}");

    // Two upstream tools: `a__echo` of the command line's server and `echo` of server `a`.
    let dir = TempDir::new("collision");
    let config = dir.path("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"a": {"command": fixture}}}).to_string(),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .arg("mcp")
        .arg("--mcp-config")
        .arg(&config)
        .args([
            "--name",
            "fx",
            "--",
            "env",
            "MCP_UPSTREAM_EXTRA_TOOL=a__echo",
            &fixture,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("two upstream tools claim the name \"a__echo\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("\"a\"") && stderr.contains("\"fx\""),
        "{stderr}"
    );

    // Two servers of one name.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .arg("mcp")
        .arg("--mcp-config")
        .arg(&config)
        .args(["--name", "A", "--", &fixture])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("two upstreams are named \"A\""), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_secrets_reach_an_upstream_only_through_its_config() {
    let dir = TempDir::new("env");
    let config = dir.path("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"s": {
            "command": upstream_binary().display().to_string(),
            "env": {"PASSED_TOKEN": "${HOST_GITHUB_TOKEN}"}
        }}})
        .to_string(),
    )
    .unwrap();
    let config = config.display().to_string();
    let proxy = Proxy::start_with_env(
        &dir,
        json!({"permissions": {"allow": ["mcp__s"]}}),
        &["--mcp-config", &config, "--no-builtin"],
        Client::default(),
        &[
            ("HOST_GITHUB_TOKEN", "ghp_secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
        ],
    )
    .await;
    let env = async |name: &str| text(&proxy.call("s__env", json!({ "name": name })).await);
    assert_eq!(env("HOST_GITHUB_TOKEN").await, "(unset)");
    assert_eq!(env("AWS_SECRET_ACCESS_KEY").await, "(unset)");
    assert_eq!(env("PASSED_TOKEN").await, "ghp_secret");
    assert_ne!(env("PATH").await, "(unset)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_upstream_process_is_gone_when_the_session_ends() {
    let (_dir, proxy) = fx("exit", allow_fx(), Client::default()).await;
    let upstream = text(&proxy.call("pid", json!({})).await)
        .parse::<u32>()
        .unwrap();
    let dsh = proxy.pid;
    proxy.client.cancel().await.unwrap();
    eventually("dsh mcp exits", Duration::from_secs(10), async || {
        !alive(dsh)
    })
    .await;
    eventually(
        "the upstream is gone",
        Duration::from_secs(10),
        async || !alive(upstream),
    )
    .await;

    // SIGTERM too.
    let (_dir, proxy) = fx("exit-term", allow_fx(), Client::default()).await;
    let upstream = text(&proxy.call("pid", json!({})).await)
        .parse::<u32>()
        .unwrap();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &proxy.pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    eventually(
        "dsh mcp exits on SIGTERM",
        Duration::from_secs(10),
        async || !alive(proxy.pid),
    )
    .await;
    eventually(
        "the upstream is gone after SIGTERM",
        Duration::from_secs(10),
        async || !alive(upstream),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_cannot_start_is_a_start_up_error() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args(["mcp", "--name", "nope", "--", "/nonexistent/server"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("upstream \"nope\""), "{stderr}");
    assert!(stderr.contains("/nonexistent/server"), "{stderr}");

    // One that is not an MCP server at all: it prints garbage and exits.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args([
            "mcp",
            "--name",
            "junk",
            "--",
            "sh",
            "-c",
            "echo 'not json'; echo oops >&2",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("upstream \"junk\" did not start"),
        "{stderr}"
    );
    assert!(stderr.contains("[junk] oops"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_reach_a_stateless_client_of_a_legacy_upstream() {
    // The proxy speaks both revisions on both sides: a client that starts
    // with server/discover gets the upstream's tools too.
    let dir = TempDir::new("discover");
    let fixture = upstream_binary();
    let args = fx_args(&fixture);
    let settings_file = dir.path("settings.json");
    std::fs::write(&settings_file, allow_fx().to_string()).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    // Never the real home: no user settings.
    command.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
    command
        .arg("mcp")
        .arg("--settings")
        .arg(&settings_file)
        // Its tools are pinned there, not in the source tree.
        .arg("--cwd")
        .arg(&dir.0)
        .args(&args);
    let transport = TokioChildProcess::new(command).unwrap();
    let client = Client::default()
        .serve_with_lifecycle(
            transport,
            rmcp::service::ClientLifecycleMode::Discover {
                preferred_versions: vec![rmcp::model::ProtocolVersion::LATEST],
            },
        )
        .await
        .unwrap();
    let Value::Object(arguments) = json!({"text": "stateless"}) else {
        unreachable!()
    };
    let result = client
        .peer()
        .send_request(ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new("echo").with_arguments(arguments),
        )))
        .await
        .unwrap();
    let ServerResult::CallToolResult(result) = result else {
        panic!("not a tool result: {result:?}")
    };
    assert_eq!(text(&result), "stateless");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_prints_garbage_never_hangs_the_client() {
    let settings = json!({"permissions": {"allow": ["mcp__fx"]}, "mcp": {"callTimeoutMs": 5000}});
    let (_dir, proxy) = fx("garbage", settings, Client::default()).await;
    let answered = tokio::time::timeout(Duration::from_secs(20), proxy.call("garbage", json!({})))
        .await
        .expect("an answer, not a hang");
    // rmcp's reader skips a line that is not JSON-RPC; the answer after it counts.
    assert_eq!(answered.is_error, Some(false));
    assert_eq!(text(&answered), "after the garbage");
    assert_eq!(
        text(&proxy.call("echo", json!({"text": "next"})).await),
        "next"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_bytes_on_an_upstreams_stderr_are_passed_on_and_drained() {
    let (_dir, proxy) = fx("noise", allow_fx(), Client::default()).await;
    let pid = text(&proxy.call("pid", json!({})).await);
    for _ in 0..3 {
        assert_eq!(text(&proxy.call("noise", json!({})).await), "noisy");
    }
    eventually(
        "every noisy line passed on",
        Duration::from_secs(10),
        async || proxy.stderr().matches("[fx] noise done").count() == 3,
    )
    .await;
    assert!(proxy.stderr().contains("[fx] bad \u{fffd}\u{fffd} bytes"));
    // Long lines come in pieces, each prefixed.
    assert!(proxy.stderr().lines().all(|l| l.len() < 9 * 1024));
    // The same server: nothing broke its stderr pipe.
    assert_eq!(text(&proxy.call("pid", json!({})).await), pid);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_that_would_pass_for_ours_or_another_servers_are_refused() {
    let fixture = upstream_binary().display().to_string();
    let run = |name: &str, extra: &str, builtin: bool| {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
        // Never the real home: no user settings.
        command.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
        command.arg("mcp");
        if !builtin {
            command.arg("--no-builtin");
        }
        let tool = format!("MCP_UPSTREAM_EXTRA_TOOL={extra}");
        let output = command
            .args(["--name", name, "--", "env", &tool, &fixture])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{name} {extra}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    // Our shell, in any case, even with no built-in tool served.
    let stderr = run("fx", "Bash", true);
    assert!(stderr.contains("built-in"), "{stderr}");
    let stderr = run("fx", "BASH", false);
    assert!(stderr.contains("our shell tool"), "{stderr}");
    // Another server's rule name.
    let stderr = run("fx", "mcp__github__list_issues", false);
    assert!(stderr.contains("rule name of another server"), "{stderr}");
    // A server named `mcp` would make every tool one.
    let stderr = run("mcp", "x", false);
    assert!(stderr.contains("may not be named \"mcp\""), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_stops_hearing_is_restarted_after_a_timeout() {
    let settings = json!({"permissions": {"allow": ["mcp__fx"]}, "mcp": {"callTimeoutMs": 300}});
    let (_dir, proxy) = fx("freeze", settings, Client::default()).await;
    let first = text(&proxy.call("pid", json!({})).await);
    let frozen = proxy.call("freeze", json!({})).await;
    assert_eq!(code(&frozen), "TOOL_TIMEOUT", "{}", text(&frozen));
    // No answer to a ping either: it is killed, and a later call starts it again.
    let mut last = String::new();
    eventually(
        "a new server answers",
        Duration::from_secs(30),
        async || {
            last = text(&proxy.call("pid", json!({})).await);
            last.parse::<u32>().is_ok() && last != first
        },
    )
    .await;
    assert!(!alive(first.parse().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_that_hangs_counts_against_the_calls_timeout() {
    let dir = TempDir::new("slow-start");
    let flag = dir.path("crashed").display().to_string();
    let fixture = upstream_binary().display().to_string();
    let hang = format!("MCP_UPSTREAM_HANG_AFTER_CRASH={flag}");
    let settings = json!({"permissions": {"allow": ["mcp__fx"]}, "mcp": {"callTimeoutMs": 500}});
    let args = ["--no-builtin", "--name", "fx", "--", "env", &hang, &fixture];
    let proxy = Proxy::start(&dir, settings, &args, Client::default()).await;
    assert_eq!(proxy.call("crash", json!({})).await.is_error, Some(true));
    let started = Instant::now();
    let waited = proxy.call("echo", json!({"text": "x"})).await;
    assert_eq!(code(&waited), "TOOL_TIMEOUT", "{}", text(&waited));
    assert!(
        text(&waited).contains("did not finish starting within the call's 500 ms"),
        "{}",
        text(&waited)
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_library_user_calls_proxied_tools_through_a_registry() {
    use dsh_tools::{ErrorCode, ToolContext, ToolExecution, ToolRegistry};
    let dir = TempDir::new("library");
    let registry = ToolRegistry::new();
    let fixture = upstream_binary().display().to_string();
    let upstream = dsh_mcp::UpstreamConfig::command(Some("fx"), &fixture, &[]);
    let proxy = dsh_mcp::Proxy::start(
        vec![upstream],
        &registry,
        dsh_mcp::ProxyOptions::new(&dir.0),
    )
    .await
    .unwrap();
    // Through the registry, with no middleware: whole results, checked arguments.
    let rich = registry
        .execute(ToolExecution::new("1", "rich", json!({})))
        .await;
    assert_eq!(rich.structured_content, Some(json!({"answer": 42})));
    let invalid = registry
        .execute(ToolExecution::new("2", "echo", json!({"text": 1})))
        .await;
    assert_eq!(invalid.error.map(|e| e.code), Some(ErrorCode::InvalidArgs));
    // The tool alone, content only: the upstream's failure is an error.
    let echo = registry.get("echo").unwrap();
    let said = echo
        .execute(json!({"text": "hi"}), ToolContext::new("direct", "direct"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&said).unwrap(),
        json!([{"type": "text", "text": "hi"}])
    );
    let fail = registry.get("fail").unwrap();
    let err = fail
        .execute(json!({}), ToolContext::new("direct", "direct"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::ToolError);
    assert_eq!(err.message(), "it went wrong");
    let pid: u32 = match &registry
        .get("pid")
        .unwrap()
        .execute(json!({}), ToolContext::new("direct", "direct"))
        .await
        .unwrap()[0]
    {
        dsh_tools::ContentBlock::Text { text, .. } => text.parse().unwrap(),
        other => panic!("{other:?}"),
    };
    proxy.shutdown().await;
    assert!(!alive(pid), "the upstream outlived shutdown");
}

/// Hooks fire for proxied tools under Claude Code's `mcp__SERVER__TOOL`
/// name, through `dsh mcp`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_run_for_upstream_tools_under_claude_codes_names() {
    let guard = r#"input=$(cat); echo "$input" > pre.json; case "$input" in *forbidden*) echo "no forbidden words" >&2; exit 2;; esac"#;
    let settings = json!({
        "permissions": {"allow": ["mcp__fx"]},
        "hooks": {
            "PreToolUse": [{"matcher": "mcp__fx__.*", "hooks": [{"type": "command", "command": guard}]}],
            "PostToolUse": [{"matcher": "mcp__fx__echo", "hooks": [{"type": "command", "command": r#"echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "seen by the post hook"}}'"#}]}]
        }
    });
    let (dir, proxy) = fx("hooks", settings, Client::default()).await;
    let ok = proxy.call("echo", json!({"text": "hello"})).await;
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(text(&ok), "hello\n[hook context] seen by the post hook");
    let pre: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path("pre.json")).unwrap()).unwrap();
    assert_eq!(pre["tool_name"], "mcp__fx__echo");
    assert_eq!(pre["tool_input"]["text"], "hello");
    let blocked = proxy.call("echo", json!({"text": "forbidden"})).await;
    assert_eq!(blocked.is_error, Some(true));
    assert_eq!(code(&blocked), "HOOK_BLOCKED");
    assert!(
        text(&blocked).contains("no forbidden words"),
        "{}",
        text(&blocked)
    );
}

/// With a `sandbox` section, a third-party server starts confined: it
/// writes under its working directory, never outside, whatever its tool
/// claims; a server's own `sandbox.writableRoots` adds to that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_servers_start_inside_the_sandbox() {
    let dir = TempDir::new("sandboxed");
    // The server's rules are built when it starts, from what is there then.
    std::fs::create_dir_all(dir.path("data")).unwrap();
    let outside = std::env::temp_dir().join(format!("dsh-proxy-outside-{}", std::process::id()));
    let extra = std::env::temp_dir().join(format!("dsh-proxy-extra-{}", std::process::id()));
    for d in [&outside, &extra] {
        std::fs::create_dir_all(d).unwrap();
    }
    let config = dir.path("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fx": {"command": upstream_binary().display().to_string(),
            "sandbox": {"writableRoots": [extra.display().to_string()]}}}})
        .to_string(),
    )
    .unwrap();
    let settings =
        json!({"permissions": {"allow": ["mcp__fx"]}, "sandbox": {"mode": "workspace-write"}});
    let args = ["--no-builtin", "--mcp-config", config.to_str().unwrap()];
    let proxy = Proxy::start(&dir, settings, &args, Client::default()).await;
    let write = |path: PathBuf| {
        let proxy = &proxy;
        async move {
            proxy
                .call(
                    "fx__write_file",
                    json!({"path": path.display().to_string(), "text": "x"}),
                )
                .await
        }
    };
    let inside = write(dir.path("data/inside.txt")).await;
    assert_eq!(inside.is_error, Some(false), "{}", text(&inside));
    assert!(dir.path("data/inside.txt").exists());
    let refused = write(outside.join("escape.txt")).await;
    assert_eq!(refused.is_error, Some(true), "{}", text(&refused));
    assert!(!outside.join("escape.txt").exists());
    let listed = write(extra.join("ok.txt")).await;
    assert_eq!(listed.is_error, Some(false), "{}", text(&listed));
    assert!(extra.join("ok.txt").exists());
    for d in [&outside, &extra] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The stateless revision has no session to send notifications on: a
/// client asks for list changes with `subscriptions/listen`, and gets them
/// on that request.
#[test]
fn in_the_stateless_revision_list_changes_reach_a_listening_client() {
    use std::io::{BufRead, Write};
    let dir = TempDir::new("listen");
    let settings = dir.path("settings.json");
    std::fs::write(&settings, allow_fx().to_string()).unwrap();
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(&dir.0)
        .args(fx_args(&upstream_binary()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let stdout = server.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if let Ok(message) = serde_json::from_str(&line) {
                if lines.send(message).is_err() {
                    return;
                }
            }
        }
    });
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "by-hand", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let mut send = |message: Value| {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
            "_meta": meta, "notifications": {"toolsListChanged": true}
        }}),
    );
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "_meta": meta, "name": "grow", "arguments": {}
        }}),
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut seen = Vec::new();
    let mut changed = false;
    while !changed && Instant::now() < deadline {
        let Ok(message) = received.recv_timeout(Duration::from_millis(200)) else {
            continue;
        };
        changed = message["method"] == json!("notifications/tools/list_changed");
        seen.push(message);
    }
    let _ = server.kill();
    let _ = server.wait();
    assert!(changed, "no list change on the subscription: {seen:#?}");
    assert!(
        !seen
            .iter()
            .any(|m| m["id"] == json!(1) && m["error"]["code"] == json!(-32601)),
        "subscriptions/listen not found: {seen:#?}"
    );
}
