//! The audit log, written by real `dsh` processes (`dsh call`, `dsh mcp`)
//! and read back by `dsh audit`.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

/// A child process killed (and reaped) when the test ends, passed or not.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Reaped {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-audit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn log(&self) -> PathBuf {
        self.0.join("log")
    }

    /// Writes the settings file: `audit` on, in `log()`, plus `extra` keys
    /// of the `audit` section.
    fn settings(&self, extra: Value) -> PathBuf {
        let mut audit = json!({"enabled": true, "path": self.log()});
        for (k, v) in extra.as_object().unwrap() {
            audit[k] = v.clone();
        }
        let settings = json!({
            "permissions": {
                "allow": ["Bash(echo:*)", "Bash(ls:*)", "Bash(sleep:*)", "Bash(touch:*)"],
                "ask": ["Bash(make:*)"],
                "deny": ["Bash(rm:*)"]
            },
            "audit": audit,
        });
        let path = self.0.join("settings.json");
        std::fs::write(&path, settings.to_string()).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `dsh` with no user settings and a state directory of the test's own.
fn dsh(dir: &TempDir) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dsh"));
    command
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .env("XDG_STATE_HOME", dir.0.join("state"))
        .current_dir(&dir.0);
    command
}

/// `dsh call TOOL ARGS --settings FILE`, under `wrapper` (e.g. prlimit) if given.
fn call_with(dir: &TempDir, settings: &Path, tool: &str, args: Value, wrapper: &[&str]) -> Output {
    let mut command = if let Some((program, rest)) = wrapper.split_first() {
        let mut c = Command::new(program);
        c.args(rest).arg(env!("CARGO_BIN_EXE_dsh"));
        c.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
            .env("XDG_STATE_HOME", dir.0.join("state"))
            .current_dir(&dir.0);
        c
    } else {
        dsh(dir)
    };
    command
        .arg("call")
        .arg(tool)
        .arg(args.to_string())
        .arg("--settings")
        .arg(settings)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn call(dir: &TempDir, settings: &Path, tool: &str, args: Value) -> Output {
    call_with(dir, settings, tool, args, &[])
}

/// Every record of the log in `dir`, oldest first, read by `dsh audit --json`.
fn records(dir: &TempDir, filters: &[&str]) -> Vec<Value> {
    let out = dsh(dir)
        .args(["audit", "--json", "--path"])
        .arg(dir.log())
        .args(filters)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The whole log as bytes, every file.
fn raw_log(dir: &TempDir) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir.log()).unwrap() {
        all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
    }
    all
}

/// Polls until the log holds `n` records.
fn wait_for_records(dir: &TempDir, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = if dir.log().is_dir() {
            records(dir, &[])
        } else {
            Vec::new()
        };
        if got.len() >= n || Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn allowed_denied_and_failed_calls_are_recorded_field_by_field() {
    let dir = TempDir::new("fields");
    let settings = dir.settings(json!({}));
    let before = now_ms();

    let ok = call(&dir, &settings, "bash", json!({"command": "echo hi"}));
    assert!(ok.status.success());
    let denied = call(&dir, &settings, "bash", json!({"command": "rm -rf x"}));
    assert_eq!(denied.status.code(), Some(1));
    let failed = call(
        &dir,
        &settings,
        "bash",
        json!({"command": "ls /nonexistent-dsh-audit"}),
    );
    assert!(
        failed.status.success(),
        "a non-zero exit is a normal result"
    );
    let timed_out = call(
        &dir,
        &settings,
        "bash",
        json!({"command": "sleep 5", "timeout_ms": 300}),
    );
    let unknown = call(&dir, &settings, "nope", json!({}));
    assert_eq!(unknown.status.code(), Some(1));
    let asked = call(&dir, &settings, "bash", json!({"command": "make all"}));
    assert_eq!(asked.status.code(), Some(1));
    let _ = timed_out;

    let r = records(&dir, &[]);
    assert_eq!(r.len(), 6, "{r:#?}");
    let after = now_ms();
    for record in &r {
        assert_eq!(record["v"], 1);
        assert_eq!(record["callId"], "call-1");
        assert_eq!(record["agent"], "dsh");
        assert_eq!(record["sandbox"], "none");
        let time = record["time"].as_str().unwrap();
        assert!(time.ends_with('Z') && time.len() == 24, "{time}");
        let t = dsh_audit_time(time);
        assert!(before - 1000 <= t && t <= after, "{time}");
        assert!(record["durationMs"].as_u64().is_some());
    }
    let settings_file = settings.display().to_string();

    // Allowed by a rule of the settings file.
    let a = &r[0];
    assert_eq!(a["tool"], "bash");
    assert_eq!(a["arguments"], json!({"command": "echo hi"}));
    assert_eq!(a["decision"]["verdict"], "allow");
    assert_eq!(a["decision"]["origin"], "rule");
    assert_eq!(a["decision"]["rule"], "Bash(echo:*)");
    assert_eq!(a["decision"]["ruleFile"], settings_file.as_str());
    assert!(a["decision"].get("approval").is_none());
    assert_eq!(a["outcome"], json!({"isError": false, "exitCode": 0}));
    assert_eq!(a["outputBytes"], "hi\n[exit code: 0]".len());

    // Denied by a deny rule, with its file.
    let d = &r[1];
    assert_eq!(d["decision"]["verdict"], "deny");
    assert_eq!(d["decision"]["origin"], "rule");
    assert_eq!(d["decision"]["rule"], "Bash(rm:*)");
    assert_eq!(d["decision"]["ruleFile"], settings_file.as_str());
    assert_eq!(
        d["outcome"],
        json!({"isError": true, "errorCode": "PERMISSION_DENIED"})
    );

    // A command that failed: its exit status, the call not an error.
    let f = &r[2];
    assert_eq!(f["decision"]["verdict"], "allow");
    assert_eq!(f["decision"]["rule"], "Bash(ls:*)");
    assert_eq!(f["outcome"]["isError"], false);
    assert_eq!(f["outcome"]["exitCode"], 2);

    // Killed at its timeout.
    let t = &r[3];
    assert_eq!(t["outcome"]["timedOut"], true, "{t}");
    assert!(
        t["outcome"].get("signal").is_some() || t["outcome"]["exitCode"] != 0,
        "{t}"
    );
    assert!(t["durationMs"].as_u64().unwrap() >= 300);

    // An error code and no decision: nothing decided about an unknown tool.
    let u = &r[4];
    assert_eq!(u["tool"], "nope");
    assert!(u.get("decision").is_none(), "{u}");
    assert_eq!(
        u["outcome"],
        json!({"isError": true, "errorCode": "UNKNOWN_TOOL"})
    );

    // Asked, and nobody to answer (arguments from a pipe): failed closed.
    let k = &r[5];
    assert_eq!(k["decision"]["verdict"], "ask");
    assert_eq!(k["decision"]["rule"], "Bash(make:*)");
    assert_eq!(k["decision"]["approval"]["answeredBy"], "nobody");
    assert_eq!(k["decision"]["approval"]["answer"], "unavailable");
    assert_eq!(k["outcome"]["errorCode"], "APPROVAL_UNAVAILABLE");

    // The files: 0700 and 0600.
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.log()), 0o700);
    assert_eq!(mode(&dir.log().join("audit.jsonl")), 0o600);

    // `dsh audit` filters.
    let deny = records(&dir, &["--decision", "deny"]);
    assert_eq!(deny.len(), 1);
    assert_eq!(deny[0]["decision"]["rule"], "Bash(rm:*)");
    assert_eq!(records(&dir, &["--tool", "NOPE"]).len(), 1);
    assert_eq!(records(&dir, &["--decision", "ask"]).len(), 1);
    assert_eq!(records(&dir, &["--since", "1h"]).len(), 6);
    assert_eq!(records(&dir, &["--since", "2000-01-01"]).len(), 6);
    assert_eq!(records(&dir, &["--since", "2999-01-01T00:00:00Z"]).len(), 0);
    let bad = dsh(&dir)
        .args(["audit", "--since", "yesterday", "--path"])
        .arg(dir.log())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    // The human lines: one per call, with the decision, rule and outcome.
    let human = dsh(&dir)
        .args(["audit", "--settings"])
        .arg(&settings)
        .output()
        .unwrap();
    let text = String::from_utf8(human.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(
        lines[0].contains("allow Bash(echo:*)")
            && lines[0].contains("exit 0")
            && lines[0].contains("echo hi"),
        "{text}"
    );
    assert!(
        lines[1].contains("deny Bash(rm:*)") && lines[1].contains("PERMISSION_DENIED"),
        "{text}"
    );
    assert!(lines[2].contains("exit 2"), "{text}");
    assert!(lines[5].contains("unavailable by nobody"), "{text}");
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// Milliseconds of a `YYYY-MM-DDTHH:MM:SS.mmmZ` time.
fn dsh_audit_time(t: &str) -> i64 {
    let n = |r: std::ops::Range<usize>| t[r].parse::<i64>().unwrap();
    let (y, m, d) = (n(0..4), n(5..7), n(8..10));
    // Days from the civil date (Howard Hinnant).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    ((days * 24 + n(11..13)) * 60 + n(14..16)) * 60_000 + n(17..19) * 1000 + n(20..23)
}

#[test]
fn secrets_never_reach_the_file() {
    let dir = TempDir::new("mask");
    let settings = dir.settings(json!({
        "maskArguments": ["description"],
        "maskPatterns": ["CREDENTIAL"],
    }));
    let secrets = [
        "ghp_S3cretValue1",
        "hunter2-pass",
        "k3y-VALUE-99",
        "d3scr-v4lue",
        "cr3d-file-x",
        "b3arer-t0k3n",
    ];
    let ok = call(
        &dir,
        &settings,
        "bash",
        json!({
            "command": "GH_TOKEN=ghp_S3cretValue1 echo hi --password hunter2-pass; echo 'Authorization: Bearer b3arer-t0k3n'",
            "description": "d3scr-v4lue",
        }),
    );
    // No rule allows a command with an assignment: asked, nobody to answer;
    // the reason quotes the command, and is masked too.
    assert_eq!(ok.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("ghp_S3cretValue1"));
    // Arguments the tool refuses are recorded too, masked the same way.
    call(
        &dir,
        &settings,
        "bash",
        json!({
            "command": "echo x",
            "env": {"MY_API_KEY": "k3y-VALUE-99", "HOME": "/home/x"},
            "CREDENTIALS_FILE": "cr3d-file-x",
        }),
    );
    let r = records(&dir, &[]);
    assert_eq!(r.len(), 2);
    let all = raw_log(&dir);
    for secret in secrets {
        assert!(!all.contains(secret), "{secret} is in the log:\n{all}");
        // Not even escaped or in part.
        assert!(!all.contains(&secret[..secret.len() - 1]), "{secret}");
    }
    assert_eq!(
        r[0]["arguments"]["command"],
        "GH_TOKEN=[masked] echo hi --password [masked]; echo 'Authorization: Bearer [masked]'"
    );
    assert_eq!(r[0]["arguments"]["description"], "[masked]");
    assert_eq!(
        r[1]["arguments"]["env"],
        json!({"MY_API_KEY": "[masked]", "HOME": "/home/x"})
    );
    assert_eq!(r[1]["arguments"]["CREDENTIALS_FILE"], "[masked]");
    assert_eq!(r[1]["outcome"]["errorCode"], "INVALID_ARGS");
}

#[test]
fn the_log_rotates_by_size_and_is_read_across_files_in_order() {
    let dir = TempDir::new("rotate");
    let settings = dir.settings(json!({"maxFileBytes": 1024, "maxFiles": 3}));
    let calls = 12;
    for i in 0..calls {
        let out = call(
            &dir,
            &settings,
            "bash",
            json!({"command": format!("echo call-{i:02}")}),
        );
        assert!(out.status.success());
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.log())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "audit.1.jsonl",
            "audit.2.jsonl",
            "audit.3.jsonl",
            "audit.jsonl"
        ],
        "three rotated files kept besides the current one"
    );
    for name in &names {
        let path = dir.log().join(name);
        let len = std::fs::metadata(&path).unwrap().len();
        assert!(len <= 1024, "{name}: {len} bytes");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let r = records(&dir, &[]);
    let seen: Vec<String> = r
        .iter()
        .map(|x| x["arguments"]["command"].as_str().unwrap().to_owned())
        .collect();
    // The oldest went with the files rotated away; the rest in order, to the last.
    assert!(seen.len() >= 4 && seen.len() < calls, "{seen:?}");
    let first = calls - seen.len();
    let expected: Vec<String> = (first..calls)
        .map(|i| format!("echo call-{i:02}"))
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn follow_prints_new_records_across_rotations_and_stops_on_sigint() {
    let dir = TempDir::new("follow");
    let settings = dir.settings(json!({"maxFileBytes": 1024, "maxFiles": 10}));
    call(&dir, &settings, "bash", json!({"command": "echo before"}));
    let mut follower = Reaped(
        dsh(&dir)
            .args(["audit", "--follow", "--json", "--tool", "bash", "--path"])
            .arg(dir.log())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = follower.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let next = |what: &str| -> Value {
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no record for {what}"));
        serde_json::from_str(&line).unwrap()
    };
    assert_eq!(next("before")["arguments"]["command"], "echo before");
    // Enough calls to rotate several times; each shows up once, in order.
    for i in 0..6 {
        call(
            &dir,
            &settings,
            "bash",
            json!({"command": format!("echo after-{i}")}),
        );
        call(&dir, &settings, "nope", json!({}));
        assert_eq!(
            next(&format!("after-{i}"))["arguments"]["command"],
            format!("echo after-{i}")
        );
    }
    assert!(dir.log().join("audit.2.jsonl").exists(), "rotated");
    let status = Command::new("kill")
        .args(["-INT", &follower.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exited = wait_exit(&mut follower, Duration::from_secs(10));
    assert_eq!(exited.and_then(|s| s.code()), Some(0));
}

fn wait_exit(child: &mut Child, within: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A log already past the file size limit every later write meets.
fn full_log(dir: &TempDir) {
    std::fs::create_dir_all(dir.log()).unwrap();
    let old = format!("{}\n", json!({"v": 1, "note": "x".repeat(3000)}));
    std::fs::write(dir.log().join("audit.jsonl"), old).unwrap();
}

/// Runs `dsh` with writes limited to files of at most 2000 bytes.
const LIMITED: [&str; 3] = ["prlimit", "--fsize=2000", "--"];

#[test]
fn a_full_disk_does_not_stop_calls_and_is_reported() {
    let dir = TempDir::new("full");
    let settings = dir.settings(json!({}));
    full_log(&dir);
    let before = std::fs::read(dir.log().join("audit.jsonl")).unwrap();
    let out = call_with(
        &dir,
        &settings,
        "bash",
        json!({"command": "echo still-runs"}),
        &LIMITED,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "SIGXFSZ must not kill dsh: {out:?}"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["isError"], false);
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("still-runs"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write the audit log"), "{stderr}");
    assert!(stderr.contains("File too large"), "{stderr}");
    // Nothing half-written left behind.
    assert_eq!(
        std::fs::read(dir.log().join("audit.jsonl")).unwrap(),
        before
    );

    // A session: every call goes on, and the failure is said once.
    let (mut server, mut stdin, mut lines) = mcp_server(&dir, &settings, &LIMITED, false);
    for id in 2..6 {
        let result = tools_call(
            &mut stdin,
            &mut lines,
            id,
            json!({"command": format!("echo s{id}")}),
        );
        assert_eq!(result["isError"], false, "{result}");
    }
    drop(stdin);
    let status = wait_exit(&mut server, Duration::from_secs(20));
    assert_eq!(status.and_then(|s| s.code()), Some(0));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut server.stderr.take().unwrap(), &mut stderr).unwrap();
    assert_eq!(
        stderr.matches("cannot write the audit log").count(),
        1,
        "reported once, not per call: {stderr}"
    );
}

#[test]
fn with_fail_closed_calls_fail_when_records_cannot_be_written() {
    let dir = TempDir::new("failclosed");
    let settings = dir.settings(json!({"failClosed": true}));
    full_log(&dir);
    let (mut server, mut stdin, mut lines) = mcp_server(&dir, &settings, &LIMITED, false);
    // The first call runs before the log is found full: it is reported failed.
    let first = tools_call(&mut stdin, &mut lines, 2, json!({"command": "touch first"}));
    assert_eq!(first["isError"], true, "{first}");
    let said = first["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("the call ran, but its audit record could not be written")
            && said.contains("audit.failClosed"),
        "{said}"
    );
    assert_eq!(first["_meta"]["dsh/error"]["code"], "AUDIT_UNAVAILABLE");
    assert!(
        dir.0.join("first").exists(),
        "it did run: the error says so"
    );
    // The next is refused before it runs.
    let second = tools_call(
        &mut stdin,
        &mut lines,
        3,
        json!({"command": "touch second"}),
    );
    assert_eq!(second["isError"], true);
    let said = second["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("not run: the audit log") && said.contains("cannot be written"),
        "{said}"
    );
    assert!(
        !dir.0.join("second").exists(),
        "a refused call must not run"
    );
    drop(stdin);
    let _ = wait_exit(&mut server, Duration::from_secs(20));
}

#[test]
fn an_asked_and_approved_call_records_who_answered() {
    let dir = TempDir::new("approved");
    let settings = dir.settings(json!({}));
    let (mut server, mut stdin, mut lines) = mcp_server(&dir, &settings, &[], true);
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "bash", "arguments": {"command": "make --version"}}}),
    );
    // The form comes first: answer "allow once".
    let asked = next_message(&mut lines);
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": {"decision": "allow once"}}}),
    );
    let result = loop {
        let message = next_message(&mut lines);
        if message["id"] == 2 {
            break message["result"].clone();
        }
    };
    assert!(result.get("content").is_some(), "{result}");
    let r = wait_for_records(&dir, 1);
    assert_eq!(r.len(), 1, "{r:?}");
    let rec = &r[0];
    assert_eq!(rec["tool"], "bash");
    assert_eq!(rec["callId"], "2");
    assert!(rec.get("agent").is_none(), "no principal on stdio: {rec}");
    assert_eq!(rec["client"], "audit-test/1.2.3");
    let session = rec["session"].as_str().unwrap();
    assert!(
        session.starts_with(&format!("{}-", server.id())),
        "{session}"
    );
    assert_eq!(rec["decision"]["verdict"], "ask");
    assert_eq!(rec["decision"]["rule"], "Bash(make:*)");
    assert_eq!(
        rec["decision"]["ruleFile"],
        settings.display().to_string().as_str()
    );
    let approval = &rec["decision"]["approval"];
    assert_eq!(approval["answeredBy"], "client form");
    assert_eq!(approval["answer"], "allowOnce");
    assert!(approval["waitedMs"].as_u64().is_some());
    assert!(rec["outcome"].get("errorCode").is_none(), "{rec}");
    drop(stdin);
    let _ = wait_exit(&mut server, Duration::from_secs(20));
}

type Lines = std::io::Lines<BufReader<std::process::ChildStdout>>;

/// `dsh mcp` initialised (declaring elicitation when `elicits`), its stdin and stdout lines.
fn mcp_server(
    dir: &TempDir,
    settings: &Path,
    wrapper: &[&str],
    elicits: bool,
) -> (Reaped, std::process::ChildStdin, Lines) {
    let mut command = if let Some((program, rest)) = wrapper.split_first() {
        let mut c = Command::new(program);
        c.args(rest).arg(env!("CARGO_BIN_EXE_dsh"));
        c.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
            .env("XDG_STATE_HOME", dir.0.join("state"))
            .current_dir(&dir.0);
        c
    } else {
        dsh(dir)
    };
    let mut server = Reaped(
        command
            .arg("mcp")
            .arg("--settings")
            .arg(settings)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stdin = server.stdin.take().unwrap();
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    let capabilities = if elicits {
        json!({"elicitation": {}})
    } else {
        json!({})
    };
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "clientInfo": {"name": "audit-test", "version": "1.2.3"}
        }}),
    );
    let init = next_message(&mut lines);
    assert_eq!(init["id"], 1, "{init}");
    send(
        &mut stdin,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    (server, stdin, lines)
}

fn tools_call(
    stdin: &mut std::process::ChildStdin,
    lines: &mut Lines,
    id: u64,
    args: Value,
) -> Value {
    send(
        stdin,
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "bash", "arguments": args}}),
    );
    loop {
        let message = next_message(lines);
        if message["id"] == id {
            return message["result"].clone();
        }
    }
}

fn send(stdin: &mut std::process::ChildStdin, message: Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

fn next_message(lines: &mut Lines) -> Value {
    let line = lines.next().expect("the server closed stdout").unwrap();
    serde_json::from_str(&line).unwrap()
}

#[test]
fn a_call_a_hook_blocks_is_recorded_as_the_hooks_denial() {
    let dir = TempDir::new("hook");
    let settings = dir.0.join("settings.json");
    let text = json!({
        "permissions": {"allow": ["Bash(echo:*)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "grep -q forbidden && { echo 'not that' >&2; exit 2; }; exit 0"}
        ]}]},
        "audit": {"enabled": true, "path": dir.log()},
    });
    std::fs::write(&settings, text.to_string()).unwrap();
    let out = call(
        &dir,
        &settings,
        "bash",
        json!({"command": "echo forbidden"}),
    );
    assert_eq!(out.status.code(), Some(1));
    let r = records(&dir, &["--decision", "deny"]);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0]["decision"]["origin"], "hook");
    assert_eq!(r[0]["decision"]["hook"], "deny: Error: not that");
    assert_eq!(
        r[0]["outcome"],
        json!({"isError": true, "errorCode": "HOOK_BLOCKED"})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_principal_is_recorded_with_the_session() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::ServiceExt;
    let dir = TempDir::new("http");
    let settings = dir.settings(json!({}));
    let tokens = dir.0.join("tokens");
    std::fs::write(&tokens, "alice:alice-token-0123456789\n").unwrap();
    let mut server = Reaped(
        dsh(&dir)
            .args(["mcp", "--http", "127.0.0.1:0", "--token-file"])
            .arg(&tokens)
            .arg("--settings")
            .arg(&settings)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut stderr = BufReader::new(server.stderr.take().unwrap()).lines();
    let url = loop {
        let line = stderr
            .next()
            .expect("dsh mcp --http says where it serves")
            .unwrap();
        if let Some(url) = line.strip_prefix("dsh mcp: serving MCP at ") {
            break url.to_owned();
        }
    };
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header("alice-token-0123456789"),
    );
    let client = ().serve(transport).await.expect("an MCP session over HTTP");
    let Value::Object(args) = json!({"command": "echo over-http"}) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("bash").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let r = tokio::task::spawn_blocking({
        let log = dir.log();
        move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                let text = std::fs::read_to_string(log.join("audit.jsonl")).unwrap_or_default();
                if let Some(line) = text.lines().next() {
                    return serde_json::from_str::<Value>(line).unwrap();
                }
                assert!(Instant::now() < deadline, "no record");
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(r["agent"], "alice", "{r}");
    assert_eq!(r["arguments"]["command"], "echo over-http");
    assert!(
        r["client"].as_str().is_some_and(|c| c.starts_with("rmcp/")),
        "{r}"
    );
    // The MCP session id, not the process's.
    let session = r["session"].as_str().unwrap();
    assert!(
        !session.starts_with(&format!("{}-", server.id())),
        "{session}"
    );
    let _ = client.cancel().await;
    drop(server);
}
