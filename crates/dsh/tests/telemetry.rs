//! OpenTelemetry from a real `dsh mcp`: with `OTEL_EXPORTER_OTLP_ENDPOINT`
//! pointing at a loopback receiver, a `tools/call` that carries a W3C
//! `traceparent` in its `_meta` is exported as a span of that trace, and the
//! call counters reach the metrics endpoint when the server exits. (The
//! exporter's own tests decode every field; this one checks the wiring.)

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT: &str = "00f067aa0ba902b7";

/// What the receiver was sent: (path, body) per request.
type Received = Arc<Mutex<Vec<(String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver on loopback that keeps every request's body and
/// answers 200 with an empty protobuf message.
fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let mut length = 0usize;
                    loop {
                        let mut header = String::new();
                        if reader.read_line(&mut header).unwrap_or(0) == 0 {
                            return;
                        }
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        if let Some((name, value)) = header.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    kept.lock().unwrap().push((path, body));
                    let reply = "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\nContent-Length: 0\r\n\r\n";
                    if reader.get_mut().write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, received)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_call_is_a_span_of_the_clients_trace_and_is_counted() {
    let dir = std::env::temp_dir().join(format!("dsh-telemetry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = std::fs::canonicalize(dir).unwrap();
    let settings: PathBuf = dir.join("settings.json");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash(echo:*)"]}}).to_string(),
    )
    .unwrap();
    let (url, received) = receiver();
    let mut server = Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &url)
        .env("OTEL_SERVICE_NAME", "dsh-under-test")
        .args(["mcp", "--settings-only", "--settings"])
        .arg(&settings)
        .arg("--cwd")
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let mut send = |message: Value| {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "otel-test", "version": "1"}}}),
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "_meta": {"traceparent": format!("00-{TRACE_ID}-{PARENT}-01")},
        "name": "bash", "arguments": {"command": "echo traced"}}}),
    );
    let answer = loop {
        let message: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if message["id"] == json!(2) {
            break message;
        }
    };
    assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    // The session ends: what telemetry holds is sent before the exit.
    drop(input);
    let status = server.wait().unwrap();
    let mut stderr = String::new();
    server
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "dsh mcp: {status}; {stderr}");

    let deadline = Instant::now() + Duration::from_secs(10);
    let (traces, metrics) = loop {
        let got = received.lock().unwrap().clone();
        let of = |path: &str| -> Vec<u8> {
            got.iter()
                .filter(|(p, _)| p == path)
                .flat_map(|(_, body)| body.clone())
                .collect()
        };
        let (traces, metrics) = (of("/v1/traces"), of("/v1/metrics"));
        if (!traces.is_empty() && !metrics.is_empty()) || Instant::now() > deadline {
            break (traces, metrics);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!traces.is_empty(), "no spans exported; stderr: {stderr}");
    assert!(contains(&traces, b"execute_tool bash"), "no call span");
    assert!(
        contains(&traces, &hex(TRACE_ID)),
        "the span is not in the client's trace"
    );
    assert!(
        contains(&traces, &hex(PARENT)),
        "the client's span is not the parent"
    );
    assert!(
        contains(&traces, b"dsh-under-test"),
        "OTEL_SERVICE_NAME not honoured"
    );
    // The command text stays out unless the settings allow it.
    assert!(
        !contains(&traces, b"echo traced"),
        "the command text was exported"
    );
    assert!(
        contains(&metrics, b"dsh.tool.calls"),
        "no call counter exported"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
