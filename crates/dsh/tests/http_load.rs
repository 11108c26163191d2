//! `dsh mcp --http` under load: 50 concurrent rmcp streamable-HTTP clients,
//! 20 `tools/call` of `bash` each, against the real binary on loopback,
//! each its own principal of a token file (the per-principal limits hold
//! each agent to its share, not the server to one). Every call runs a real command and reads back its
//! own output; then SIGTERM stops the server, which exits 0 and leaves no
//! process it started behind.

use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod common;
use common::alive;

const CLIENTS: usize = 50;
const CALLS: usize = 20;
/// The whole load (sessions opened, every call answered) must end within this.
const LOAD_DEADLINE: Duration = Duration::from_secs(45);
/// Client `n`'s token (and principal `client-n`).
fn token(n: usize) -> String {
    format!("load-token-{n:02}-0123456789abcdef")
}
/// Set in the server's environment only: every process it starts inherits
/// it (commands keep variables whose names hold no KEY/SECRET/TOKEN/PASSWORD),
/// so `/proc/*/environ` finds them even once reparented.
const MARKER_VAR: &str = "DSH_HTTP_LOAD_MARKER";

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-http-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Live processes (not ours) whose environment carries `MARKER_VAR=marker`.
fn marked_processes(marker: &str) -> Vec<(u32, String)> {
    let wanted = format!("{MARKER_VAR}={marker}");
    let own = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|b| *b == 0)
                    .any(|var| var == wanted.as_bytes())
            })
        })
        .filter(|pid| alive(*pid))
        .map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .unwrap_or_default();
            (pid, cmdline)
        })
        .collect()
}

/// The parent of `pid`, from `/proc/PID/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Live processes whose parent chain reaches `ancestor`.
fn descendants_of(ancestor: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let mut at = *pid;
            for _ in 0..64 {
                match parent_of(at) {
                    Some(parent) if parent == ancestor => return true,
                    Some(parent) if parent > 1 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .filter(|pid| alive(*pid))
        .collect()
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

async fn connect(url: &str, n: usize) -> Result<RunningService<RoleClient, ()>, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token(n));
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|e| format!("cannot open a session: {e}"))
}

/// One client: a session, `CALLS` calls in turn, each checked; the slowest call.
async fn one_client(url: String, n: usize) -> Result<Duration, String> {
    let client = connect(&url, n)
        .await
        .map_err(|e| format!("client {n}: {e}"))?;
    let mut slowest = Duration::ZERO;
    for m in 0..CALLS {
        let said = format!("client-{n}-call-{m}");
        let Value::Object(args) = json!({ "command": format!("echo {said}") }) else {
            unreachable!()
        };
        let started = Instant::now();
        let result = client
            .call_tool(CallToolRequestParams::new("bash").with_arguments(args as JsonObject))
            .await
            .map_err(|e| format!("client {n} call {m}: {e}"))?;
        slowest = slowest.max(started.elapsed());
        let got = text(&result);
        if result.is_error != Some(false) || got != format!("{said}\n[exit code: 0]") {
            return Err(format!(
                "client {n} call {m}: isError {:?}, output {got:?}",
                result.is_error
            ));
        }
    }
    client
        .cancel()
        .await
        .map_err(|e| format!("client {n}: closing the session: {e}"))?;
    Ok(slowest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clients_twenty_calls_each_then_sigterm_leaves_nothing() {
    let dir = TempDir::new("load");
    let tokens = dir.0.join("tokens");
    let lines: String = (0..CLIENTS)
        .map(|n| format!("client-{n}:{}\n", token(n)))
        .collect();
    std::fs::write(&tokens, format!("# the load test\n{lines}")).unwrap();
    let settings = dir.0.join("settings.json");
    std::fs::write(&settings, r#"{"permissions": {"allow": ["Bash(echo:*)"]}}"#).unwrap();
    let work = dir.0.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let marker = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );

    let mut server = Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings, no state written there.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .env("HOME", &dir.0)
        .env_remove("DSH_MCP_TOKEN")
        .env(MARKER_VAR, &marker)
        .arg("mcp")
        .arg("--http")
        .arg("127.0.0.1:0")
        .arg("--token-file")
        .arg(&tokens)
        .arg("--settings")
        .arg(&settings)
        .arg("--settings-only")
        .arg("--cwd")
        .arg(&work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let server_pid = server.id();
    // The address is the first line on stderr; the rest is kept for a failure's message.
    let mut stderr = BufReader::new(server.stderr.take().unwrap());
    let mut first = String::new();
    stderr.read_line(&mut first).unwrap();
    let url = first
        .split_whitespace()
        .find(|word| word.starts_with("http://127.0.0.1:") && word.ends_with("/mcp"))
        .unwrap_or_else(|| panic!("no address on stderr: {first:?}"))
        .to_owned();
    let said = Arc::new(Mutex::new(String::new()));
    let drain = {
        let said = said.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                let mut said = said.lock().unwrap();
                said.push_str(&line);
                said.push('\n');
            }
        })
    };

    // The marker scan sees the server itself: it would see what it starts.
    assert!(
        marked_processes(&marker)
            .iter()
            .any(|(pid, _)| *pid == server_pid),
        "the marker scan does not find the server"
    );

    let started = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| tokio::spawn(one_client(url.clone(), n)))
        .collect();
    // While the load runs, the most processes seen under the server
    // (through parent links), sampled: a figure for the report.
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        tokio::task::spawn_blocking(move || {
            let mut most = 0;
            while sampling.load(Ordering::Relaxed) {
                most = most.max(descendants_of(server_pid).len());
                std::thread::sleep(Duration::from_millis(100));
            }
            most
        })
    };
    let load = async {
        let mut results = Vec::new();
        for client in clients {
            results.push(client.await.map_err(|e| format!("a client panicked: {e}")));
        }
        results
    };
    let results = tokio::time::timeout(LOAD_DEADLINE, load).await;
    let elapsed = started.elapsed();
    sampling.store(false, Ordering::Relaxed);
    let seen_children = sampler.await.unwrap();

    // Whatever happened, stop the server before judging.
    let signalled = Command::new("kill")
        .arg("-TERM")
        .arg(server_pid.to_string())
        .status()
        .unwrap();
    assert!(signalled.success());
    let exited = {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = server.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                let _ = server.kill();
                let _ = server.wait();
                break None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let _ = drain.join();
    let stderr_text = said.lock().unwrap().clone();

    let results = results.unwrap_or_else(|_| {
        panic!(
            "{CLIENTS} clients x {CALLS} calls did not finish within {LOAD_DEADLINE:?}; server stderr:\n{stderr_text}"
        )
    });
    let mut failures = Vec::new();
    let mut slowest = Duration::ZERO;
    for result in results {
        match result.and_then(|r| r) {
            Ok(client_slowest) => slowest = slowest.max(client_slowest),
            Err(err) => failures.push(err),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {CLIENTS} clients failed, first: {:?}; server stderr:\n{stderr_text}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    eprintln!(
        "{} calls from {CLIENTS} clients in {elapsed:?} ({:.0} calls/s), slowest call {slowest:?}, \
         at most {seen_children} processes under the server at a sample",
        CLIENTS * CALLS,
        (CLIENTS * CALLS) as f64 / elapsed.as_secs_f64()
    );

    let status = exited.expect("dsh mcp --http did not stop within 15 s of SIGTERM");
    assert!(
        status.success(),
        "dsh mcp --http ended with {status} after SIGTERM; stderr:\n{stderr_text}"
    );
    // Everything it started goes with it (poll: a killed process takes a moment).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut left = marked_processes(&marker);
    while !left.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        left = marked_processes(&marker);
    }
    assert!(
        left.is_empty(),
        "processes the server started outlived it: {left:?}"
    );
}
