//! The `dsh` binary, run as a person would run it.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn dsh(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("dsh runs")
}

fn json_out(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn schemas_lists_the_bash_family_in_each_format() {
    let output = dsh(&["schemas"]);
    assert!(output.status.success());
    let schemas = json_out(&output);
    let names: Vec<_> = schemas
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(
        names,
        [json!("bash"), json!("bash_output"), json!("bash_kill")]
    );
    assert_eq!(schemas[0]["parameters"]["required"], json!(["command"]));
    let strict = json_out(&dsh(&["schemas", "--format", "openai-strict"]));
    assert_eq!(strict[0]["strict"], json!(true));
    assert_eq!(
        strict[0]["parameters"]["additionalProperties"],
        json!(false)
    );
}

#[test]
fn call_runs_a_real_command_and_presents_it() {
    let dir = std::env::temp_dir();
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo hello; echo oops >&2; exit 3", "description": "Say hello"}"#,
        "--present",
        "--yes",
        "--cwd",
        dir.to_str().unwrap(),
    ]);
    // A non-zero exit of the command is a normal result.
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out = json_out(&output);
    assert_eq!(out["isError"], json!(false));
    assert_eq!(
        out["content"][0]["text"],
        json!("hello\n[stderr]\noops\n[exit code: 3]")
    );
    let call = &out["presentation"]["call"];
    assert_eq!(call["title"], json!("echo hello; echo oops >&2; exit 3"));
    assert_eq!(call["kind"], json!("execute"));
    assert_eq!(call["content"][0]["text"], json!("Say hello"));
    let cwd = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(call["terminal"]["cwd"], json!(cwd.display().to_string()));
    let result = &out["presentation"]["result"];
    assert_eq!(result["terminal"]["exitCode"], json!(3));
    assert_eq!(result["terminal"]["output"], json!("hello\n[stderr]\noops"));
    assert_eq!(
        result["content"][0]["text"],
        json!("```console\nhello\n[stderr]\noops\n[exit code: 3]\n```")
    );
}

#[test]
fn arguments_from_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh"))
        .args(["call", "bash", "-", "--yes"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"command": "printf piped"}"#)
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!("piped\n[exit code: 0]")
    );
}

#[test]
fn bad_json_and_unknown_tools_are_results_with_exit_1() {
    let output = dsh(&["call", "bash", r#"{"command": "#]);
    assert_eq!(output.status.code(), Some(1));
    let out = json_out(&output);
    assert_eq!(out["error"]["code"], json!("INVALID_ARGS"));
    assert!(out["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with(r#"Error: invalid arguments: "arguments" is not valid JSON"#));

    let output = dsh(&["call", "nope", "{}"]);
    assert_eq!(output.status.code(), Some(1));
    let out = json_out(&output);
    assert_eq!(out["error"]["code"], json!("UNKNOWN_TOOL"));
    assert_eq!(
        out["content"][0]["text"],
        json!("Error: unknown tool \"nope\"")
    );

    let output = dsh(&["call", "bash", r#"{"command": "   "}"#]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!("Error: invalid arguments: \"command\" must not be blank")
    );
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["frobnicate"],
        &["schemas", "--format", "yaml"],
        &["call"],
        &["call", "bash", "--cwd", "/definitely/not/here"],
    ] {
        let output = dsh(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("usage:"),
            "{args:?}"
        );
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

fn settings_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("dsh-cli-{}-{name}.json", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn asks_fail_closed_without_a_terminal_or_yes() {
    let output = dsh(&["call", "bash", r#"{"command": "make"}"#]);
    assert_eq!(output.status.code(), Some(1));
    let out = json_out(&output);
    assert_eq!(out["error"]["code"], json!("APPROVAL_UNAVAILABLE"));
}

#[test]
fn settings_rules_decide_calls_and_checks() {
    let settings = settings_file(
        "rules",
        r#"{"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm -rf:*)"]}}"#,
    );
    let settings = settings.to_str().unwrap();
    // Allowed by a rule: runs without asking.
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo allowed"}"#,
        "--settings",
        settings,
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!("allowed\n[exit code: 0]")
    );
    // Denied in a non-first segment: nothing runs, even with --yes.
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo ok && rm -rf /tmp/dsh-cli-nothing"}"#,
        "--settings",
        settings,
        "--yes",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let out = json_out(&output);
    assert_eq!(out["error"]["code"], json!("PERMISSION_DENIED"));
    assert!(out["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("Bash(rm -rf:*)"));

    let check = dsh(&[
        "policy",
        "check",
        "bash",
        r#"{"command": "cd x && rm -rf y"}"#,
        "--settings",
        settings,
    ]);
    assert_eq!(check.status.code(), Some(0));
    assert_eq!(
        json_out(&check),
        json!({"decision": "deny", "reason": "\"rm -rf y\" denied by rule deny Bash(rm -rf:*)", "rule": "Bash(rm -rf:*)"})
    );
    let check = json_out(&dsh(&[
        "policy",
        "check",
        "bash",
        r#"{"command": "make"}"#,
        "--mode",
        "dontAsk",
    ]));
    assert_eq!(check["decision"], json!("deny"));
}

#[test]
fn plan_mode_vetoes_changes() {
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "touch /tmp/dsh-cli-plan"}"#,
        "--mode",
        "plan",
        "--yes",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(json_out(&output)["error"]["code"], json!("PLAN_MODE"));
}

#[test]
fn bad_settings_are_usage_errors_naming_the_key() {
    let settings = settings_file("unknown", r#"{"permissions": {"alow": []}}"#);
    let output = dsh(&[
        "call",
        "bash",
        "{}",
        "--settings",
        settings.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("alow"));
    let settings = settings_file("malformed", r#"{"permissions": {"deny": ["Bash(rm"]}}"#);
    let output = dsh(&[
        "policy",
        "check",
        "bash",
        "{}",
        "--settings",
        settings.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("Bash(rm"));
    let output = dsh(&["call", "bash", "{}", "--mode", "yolo"]);
    assert_eq!(output.status.code(), Some(2));
}
