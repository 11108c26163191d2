//! The `dsh` binary, run as a person would run it.

use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Output, Stdio};

fn dsh(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("dsh runs")
}

/// `dsh ARGS` with `input` on its standard input.
fn dsh_with_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("dsh runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
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

fn schemas(format: &str) -> Value {
    let output = dsh(&["schemas", "--format", format]);
    assert!(
        output.status.success(),
        "{format}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    json_out(&output)
}

/// The first-party tools, in the order `tools/list` gives them.
const BUILTIN_TOOLS: [&str; 10] = [
    "bash",
    "bash_output",
    "bash_write",
    "bash_kill",
    "read",
    "write",
    "edit",
    "glob",
    "grep",
    "apply_patch",
];

fn names(declarations: &Value, name: impl Fn(&Value) -> &Value) -> Vec<Value> {
    declarations
        .as_array()
        .unwrap()
        .iter()
        .map(|d| name(d).clone())
        .collect()
}

#[test]
fn schemas_default_to_mcp_tools_list_entries() {
    let output = dsh(&["schemas"]);
    assert!(output.status.success());
    let tools = json_out(&output);
    assert_eq!(tools, schemas("mcp"));
    assert_eq!(
        names(&tools, |d| &d["name"]),
        BUILTIN_TOOLS.map(|n| json!(n))
    );
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["command"]));
    assert!(tools[0].get("parameters").is_none());
    // MCP hosts read the hints; bash_output only reads.
    assert_eq!(tools[1]["annotations"]["readOnlyHint"], json!(true));
}

#[test]
fn schemas_in_each_providers_envelope() {
    let expected = BUILTIN_TOOLS.map(|n| json!(n));

    let plain = schemas("plain");
    assert_eq!(names(&plain, |d| &d["name"]), expected);
    assert_eq!(plain[0]["parameters"]["required"], json!(["command"]));
    assert!(plain[0].get("type").is_none() && plain[0].get("annotations").is_none());

    let anthropic = schemas("anthropic");
    assert_eq!(names(&anthropic, |d| &d["name"]), expected);
    assert_eq!(anthropic[0]["input_schema"], plain[0]["parameters"]);

    for format in ["openai", "openai-strict"] {
        let chat = schemas(format);
        assert_eq!(
            names(&chat, |d| &d["function"]["name"]),
            expected,
            "{format}"
        );
        assert_eq!(chat[0]["type"], json!("function"));
        assert_eq!(
            chat[0]["function"]["strict"],
            json!(format == "openai-strict")
        );
    }
    let strict = schemas("openai-strict");
    assert_eq!(
        strict[0]["function"]["parameters"]["additionalProperties"],
        json!(false)
    );

    for format in ["openai-responses", "openai-responses-strict"] {
        let responses = schemas(format);
        assert_eq!(names(&responses, |d| &d["name"]), expected, "{format}");
        assert_eq!(responses[0]["type"], json!("function"));
        assert_eq!(
            responses[0]["strict"],
            json!(format == "openai-responses-strict")
        );
        assert!(responses[0].get("function").is_none());
    }

    let gemini = schemas("gemini");
    assert_eq!(gemini.as_array().unwrap().len(), 1);
    assert_eq!(
        names(&gemini[0]["functionDeclarations"], |d| &d["name"]),
        expected
    );
    assert!(gemini[0]["functionDeclarations"][0]["parameters"]
        .get("additionalProperties")
        .is_none());
}

#[test]
fn an_unknown_schemas_format_names_the_valid_ones() {
    let output = dsh(&["schemas", "--format", "yaml"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown schemas format \"yaml\""),
        "{stderr}"
    );
    for name in [
        "mcp",
        "anthropic",
        "openai",
        "openai-strict",
        "openai-responses",
        "openai-responses-strict",
        "gemini",
        "plain",
    ] {
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
}

fn help(args: &[&str]) -> String {
    let output = dsh(args);
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    assert!(output.stderr.is_empty(), "{args:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn help_lists_the_commands_and_the_exit_statuses() {
    for args in [&["--help"][..], &["-h"], &["help"]] {
        let help = help(args);
        assert!(help.contains("Usage: dsh <COMMAND>"), "{help}");
        for command in ["mcp", "schemas", "call", "policy"] {
            assert!(
                help.contains(&format!("\n  {command} ")),
                "{command}: {help}"
            );
        }
        assert!(help.contains("2 usage error"), "{help}");
    }
}

#[test]
fn each_command_has_its_own_help() {
    let call = help(&["call", "--help"]);
    assert!(
        call.contains("Usage: dsh call [OPTIONS] <TOOL> [ARGS_JSON]"),
        "{call}"
    );
    for option in [
        "--settings <FILE>",
        "--mode <MODE>",
        "--cwd <DIR>",
        "--present",
        "--yes",
    ] {
        assert!(call.contains(option), "{option}: {call}");
    }
    assert!(call.contains("1 the call failed (isError)"), "{call}");
    assert!(!call.contains("--format"), "{call}");
    assert_eq!(help(&["help", "call"]), call);

    let schemas = help(&["schemas", "--help"]);
    assert!(
        schemas.contains("Usage: dsh schemas [OPTIONS]"),
        "{schemas}"
    );
    assert!(!schemas.contains("--present"), "{schemas}");
    // Every format, with what it prints.
    for (name, meaning) in [
        ("mcp", "MCP tools/list entries"),
        ("anthropic", "Anthropic Messages tools"),
        ("openai", "OpenAI Chat Completions function tools"),
        ("openai-strict", "the same in strict mode"),
        ("openai-responses", "OpenAI Responses function tools"),
        ("openai-responses-strict", "the same in strict mode"),
        ("gemini", "Gemini"),
        ("plain", "the provider-neutral"),
    ] {
        assert!(
            schemas.contains(&format!("- {name}: ")) && schemas.contains(meaning),
            "{name}: {schemas}"
        );
    }

    let check = help(&["policy", "check", "--help"]);
    assert!(
        check.contains("Usage: dsh policy check [OPTIONS] <TOOL> <ARGS_JSON>"),
        "{check}"
    );
    assert!(!check.contains("--present"), "{check}");
    let mcp = help(&["mcp", "--help"]);
    assert!(mcp.contains("Usage: dsh mcp [OPTIONS]"), "{mcp}");
    for mode in [
        "default",
        "acceptEdits",
        "plan",
        "dontAsk",
        "bypassPermissions",
    ] {
        assert!(mcp.contains(&format!("- {mode}: ")), "{mode}: {mcp}");
    }
}

#[test]
fn version() {
    assert_eq!(
        help(&["--version"]),
        format!("dsh {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn options_take_their_value_after_an_equals_sign_too() {
    for format in ["openai", "gemini", "plain"] {
        let output = dsh(&["schemas", &format!("--format={format}")]);
        assert_eq!(output.status.code(), Some(0), "{format}");
        assert_eq!(json_out(&output), schemas(format), "{format}");
    }
    let dir = std::env::temp_dir();
    let output = dsh(&[
        "call",
        "--yes",
        &format!("--cwd={}", dir.display()),
        "--mode=default",
        "bash",
        r#"{"command": "pwd"}"#,
    ]);
    assert_eq!(output.status.code(), Some(0));
    let cwd = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!(format!("{}\n[exit code: 0]", cwd.display()))
    );
}

#[test]
fn a_mistyped_option_or_command_gets_a_suggestion() {
    let output = dsh(&["call", "bash", "{}", "--preset"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("'--preset'"), "{stderr}");
    assert!(stderr.contains("'--present'"), "{stderr}");
    let output = dsh(&["schemsa"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("'schemas'"));
    let output = dsh(&["call", "bash", "{}", "--mode", "yolo"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unknown permission mode \"yolo\"") && stderr.contains("dontAsk"),
        "{stderr}"
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
    let output = dsh_with_stdin(
        &["call", "bash", "-", "--yes"],
        r#"{"command": "printf piped"}"#,
    );
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!("piped\n[exit code: 0]")
    );
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    // `dsh call … | head -c 1`: stdout is closed before dsh writes to it.
    for (args, status) in [
        (
            &[
                "call",
                "bash",
                r#"{"command": "sleep 0.2; seq 1 20000"}"#,
                "--yes",
            ][..],
            0,
        ),
        (&["call", "nope", "{}"], 1),
        (&["schemas"], 0),
        (&["policy", "check", "bash", r#"{"command": "ls"}"#], 0),
        (&["call", "--help"], 0),
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_dsh"))
            // Never the real home: no user settings.
            .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&output.stderr),
            "",
            "{args:?}: nothing on stderr, no panic"
        );
        assert_eq!(output.status.code(), Some(status), "{args:?}");
    }
}

#[test]
fn an_unknown_property_names_the_one_meant() {
    // Claude Code's `timeout` is our `timeout_ms`: refused before any verdict or run.
    for extra in [&[][..], &["--yes"]] {
        let mut args = vec!["call", "bash", r#"{"command": "ls", "timeout": 5000}"#];
        args.extend_from_slice(extra);
        let output = dsh(&args);
        assert_eq!(output.status.code(), Some(1), "{extra:?}");
        let out = json_out(&output);
        assert_eq!(out["error"]["code"], json!("INVALID_ARGS"), "{extra:?}");
        assert_eq!(
            out["content"][0]["text"],
            json!(
                r#"Error: invalid arguments: "timeout" is not a declared property (did you mean "timeout_ms"?)"#
            ),
            "{extra:?}"
        );
    }
    let tools = schemas("mcp");
    for tool in tools.as_array().unwrap() {
        assert_eq!(
            tool["inputSchema"]["additionalProperties"],
            json!(false),
            "{}",
            tool["name"]
        );
    }
}

#[test]
fn a_one_shot_call_refuses_background_tasks() {
    // The task would die with `dsh call` as soon as it printed its result.
    let marker = std::env::temp_dir().join(format!("dsh-cli-background-{}", std::process::id()));
    let _ = std::fs::remove_file(&marker);
    let touch = format!("sleep 0.1; touch {}", marker.display());
    let args = json!({"command": touch, "run_in_background": true}).to_string();
    let output = dsh(&["call", "bash", &args, "--yes"]);
    assert_eq!(output.status.code(), Some(1));
    let out = json_out(&output);
    assert_eq!(out["isError"], json!(true));
    assert_eq!(out["error"]["code"], json!("TOOL_ERROR"));
    let text = out["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Error: background tasks need a long-lived session"),
        "{text}"
    );
    assert!(text.contains("`dsh mcp`"), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(400));
    assert!(!marker.exists(), "nothing was started");

    // In the foreground the same command runs.
    let args = json!({"command": touch, "run_in_background": false}).to_string();
    let output = dsh(&["call", "bash", &args, "--yes"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(marker.exists());
    let _ = std::fs::remove_file(&marker);
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
        &["call", "bash", "{}", "--format", "mcp"],
        &["policy"],
        &["policy", "check", "bash"],
        &["policy", "check", "bash", "{"],
    ] {
        let output = dsh(args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The usage, or at least where to find it.
        assert!(stderr.contains("--help"), "{args:?}: {stderr}");
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

mod common;

/// Starts `dsh call bash` on a command whose `sleep` (marked by `marker`)
/// is a grandchild of the call's shell; returns dsh and the sleep's PID.
// The caller waits for the child it is handed.
#[allow(clippy::zombie_processes)]
fn call_with_a_grandchild(marker: &str) -> (std::process::Child, u32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dsh"))
        // Never the real home: no user settings.
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .args([
            "call",
            "bash",
            &json!({"command": format!("sleep {marker} & wait")}).to_string(),
            "--yes",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(pid) = common::pids_running(&["sleep", marker]).first() {
            return (child, *pid);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command never started");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_signal_aborts_the_call_and_kills_its_tree_before_dsh_exits() {
    for (name, n) in [("INT", 1), ("TERM", 2)] {
        let marker = format!("41.{n}{}", std::process::id());
        let (child, sleeper) = call_with_a_grandchild(&marker);
        signal(child.id(), name);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(1), "SIG{name}");
        let result = json_out(&output);
        assert_eq!(result["error"]["code"], json!("ABORTED"), "SIG{name}");
        // Killed before dsh exited: no waiting needed.
        assert!(!common::alive(sleeper), "SIG{name}: the sleep outlived dsh");
    }
}

#[test]
fn sigkill_of_dsh_call_leaves_nothing_behind() {
    let marker = format!("42.{}", std::process::id());
    let (mut child, sleeper) = call_with_a_grandchild(&marker);
    child.kill().unwrap();
    child.wait().unwrap();
    let gone = common::gone_within(sleeper, std::time::Duration::from_secs(10));
    if !gone {
        signal(sleeper, "KILL");
    }
    assert!(gone, "the sleep survived SIGKILL of dsh call");
}

#[test]
fn the_spill_file_of_a_one_shot_call_outlives_it() {
    let output = dsh(&["call", "bash", r#"{"command":"seq 1 100000"}"#, "--yes"]);
    assert!(output.status.success());
    let text = json_out(&output)["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = text
        .lines()
        .find_map(|line| line.strip_prefix("[stdout truncated; full output: "))
        .and_then(|rest| rest.strip_suffix(']'))
        .unwrap_or_else(|| panic!("no spill path in {text:.300}"));
    let full = std::fs::read_to_string(path).expect("the spill file is still there");
    assert!(full.ends_with("99999\n100000\n"));
    std::fs::remove_dir_all(std::path::Path::new(path).parent().unwrap()).unwrap();
}

#[test]
fn a_claude_code_settings_file_sets_the_commands_environment_and_lists_what_it_ignores() {
    let dir = std::env::temp_dir().join(format!("dsh-cli-cc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"model": "claude-sonnet-5", "includeCoAuthoredBy": false,
            "env": {"DSH_TEST_FROM_SETTINGS": "from the settings", "PAGER": "more"},
            "permissions": {"allow": ["Bash(echo:*)"], "disableBypassPermissionsMode": "disable"}}"#,
    )
    .unwrap();
    let settings = settings.to_str().unwrap();
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo $DSH_TEST_FROM_SETTINGS / $PAGER"}"#,
        "--settings",
        settings,
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(
        json_out(&output)["content"][0]["text"],
        json!("from the settings / more\n[exit code: 0]")
    );
    // Listed once, in the schema's order.
    assert_eq!(
        stderr
            .matches("dsh: settings ignored (not about tools) or not applied: includeCoAuthoredBy, model\n")
            .count(),
        1,
        "{stderr}"
    );
    // The file disables bypassPermissions: asking for it is a usage error.
    let output = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo x"}"#,
        "--settings",
        settings,
        "--mode",
        "bypassPermissions",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("disableBypassPermissionsMode"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn policy_check_reads_stdin_explains_and_answers_in_its_exit_status() {
    let file = settings_file(
        "policy",
        r#"{"permissions": {"allow": ["Bash(echo:*)"], "ask": ["Bash(git push:*)"], "deny": ["Bash(rm:*)"]}}"#,
    );
    let settings = file.to_str().unwrap().to_owned();
    let check = |args: &str, extra: &[&str]| {
        let mut all = vec!["policy", "check", "bash", "-", "--settings", &settings];
        all.extend_from_slice(extra);
        dsh_with_stdin(&all, args)
    };
    // Exit statuses: 0 allow, 3 ask, 4 deny; 0 for all without --exit-code.
    for (command, status) in [("echo hi", 0), ("git push", 3), ("echo a && rm x", 4)] {
        let args = json!({ "command": command }).to_string();
        assert_eq!(
            check(&args, &["--exit-code"]).status.code(),
            Some(status),
            "{command}"
        );
        assert_eq!(check(&args, &[]).status.code(), Some(0), "{command}");
    }
    let explained = check(r#"{"command": "echo a && rm x"}"#, &["--explain"]);
    let out = json_out(&explained);
    assert_eq!(out["decision"], json!("deny"));
    let parts = out["parts"].as_array().unwrap();
    assert_eq!(parts.len(), 3, "{out}");
    assert_eq!(parts[0]["text"], json!("echo a"));
    assert_eq!(parts[0]["decision"], json!("allow"));
    assert_eq!(parts[1]["text"], json!("rm x"));
    assert_eq!(parts[1]["decision"], json!("deny"));
    assert_eq!(parts[1]["rule"], json!("Bash(rm:*)"));
    // What rm removes is a part of its own, an edit.
    assert_eq!(parts[2]["kind"], json!("write"));
    assert_eq!(parts[2]["text"], json!("x"));
    assert!(out.get("unknownTool").is_none());
    // A tool nobody registered is named as such.
    let output = dsh(&[
        "policy",
        "check",
        "nosuchtool",
        "{}",
        "--settings",
        &settings,
    ]);
    let out = json_out(&output);
    assert!(
        out["unknownTool"]
            .as_str()
            .unwrap()
            .contains("\"nosuchtool\""),
        "{out}"
    );
    let _ = std::fs::remove_file(&file);
}

#[test]
fn add_dir_extends_where_accept_edits_allows_edits() {
    let file = settings_file(
        "add-dir",
        r#"{"permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(echo:*)"]}}"#,
    );
    let settings = file.to_str().unwrap().to_owned();
    let decide = |extra: &[&str]| {
        let mut args = vec![
            "policy",
            "check",
            "bash",
            r#"{"command": "echo x > /srv/elsewhere/f.txt"}"#,
            "--settings",
            &settings,
            "--cwd",
            "/tmp",
        ];
        args.extend_from_slice(extra);
        json_out(&dsh(&args))["decision"].clone()
    };
    assert_eq!(decide(&[]), json!("ask"));
    assert_eq!(decide(&["--add-dir", "/srv/elsewhere"]), json!("allow"));
    let _ = std::fs::remove_file(&file);
}

#[test]
fn settings_are_discovered_and_merged_as_claude_code_does() {
    let root = std::env::temp_dir().join(format!("dsh-cli-discover-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let user = root.join("home/.claude");
    let project = root.join("repo");
    let sub = project.join("src/deep");
    for dir in [&user, &project.join(".git"), &project.join(".claude"), &sub] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(
        user.join("settings.json"),
        r#"{"model": "x", "permissions": {"defaultMode": "acceptEdits", "allow": ["Bash(echo:*)", "Bash(ls:*)"]}, "bash": {"defaultTimeoutMs": 1000}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(echo secret:*)"], "allow": ["Bash(ls:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join(".claude/settings.local.json"),
        r#"{"permissions": {"defaultMode": "plan"}}"#,
    )
    .unwrap();
    let extra = root.join("extra.json");
    std::fs::write(&extra, r#"{"bash": {"defaultTimeoutMs": 2000}}"#).unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_dsh"))
            .args(args)
            .args(["--cwd", sub.to_str().unwrap()])
            .env("CLAUDE_CONFIG_DIR", &user)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        json_out(&output)
    };
    let shown = run(&["settings"]);
    let files: Vec<String> = serde_json::from_value(shown["files"].clone()).unwrap();
    let expected = [
        user.join("settings.json"),
        project.join(".claude/settings.json"),
        project.join(".claude/settings.local.json"),
    ];
    assert_eq!(
        files,
        expected
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
    );
    // Lists are joined (a rule twice is kept once, from its first file);
    // scalars take the most specific file.
    let settings = &shown["settings"];
    assert_eq!(settings["permissions"]["defaultMode"], json!("plan"));
    assert_eq!(
        settings["permissions"]["allow"],
        json!(["Bash(echo:*)", "Bash(ls:*)"])
    );
    assert_eq!(
        settings["permissions"]["deny"],
        json!(["Bash(echo secret:*)"])
    );
    assert_eq!(settings["bash"]["defaultTimeoutMs"], json!(1000));
    assert_eq!(shown["ignored"], json!(["model"]));
    let sources = shown["sources"].as_array().unwrap();
    let from = |rule: &str| {
        sources
            .iter()
            .find(|s| s["rule"] == json!(rule))
            .map(|s| s["file"].as_str().unwrap().to_owned())
    };
    assert_eq!(
        from("Bash(echo:*)").unwrap(),
        expected[0].display().to_string()
    );
    assert_eq!(
        from("Bash(echo secret:*)").unwrap(),
        expected[1].display().to_string()
    );
    // A deny anywhere wins over an allow elsewhere.
    let decision = run(&[
        "policy",
        "check",
        "bash",
        r#"{"command": "echo secret stuff"}"#,
        "--mode",
        "default",
    ]);
    assert_eq!(decision["decision"], json!("deny"), "{decision}");
    // --settings goes on top; --no-user-settings and --settings-only leave files out.
    let extra = extra.to_str().unwrap();
    let on_top = run(&["settings", "--settings", extra]);
    assert_eq!(on_top["files"].as_array().unwrap().len(), 4);
    assert_eq!(on_top["settings"]["bash"]["defaultTimeoutMs"], json!(2000));
    let no_user = run(&["settings", "--no-user-settings"]);
    assert_eq!(no_user["files"].as_array().unwrap().len(), 2);
    assert_eq!(
        no_user["settings"]["permissions"]["allow"],
        json!(["Bash(ls:*)"])
    );
    let only = run(&["settings", "--settings-only", "--settings", extra]);
    assert_eq!(only["files"], json!([extra]));
    let _ = std::fs::remove_dir_all(&root);
}

/// Claude Code's PreToolUse JSON, exactly as it sends it, answered from our
/// policy and the project's settings found from the input's `cwd`.
#[test]
fn hook_pre_tool_use_answers_claude_code_from_the_dsh_policy() {
    let dir = std::env::temp_dir().join(format!("dsh-cli-hook-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let dir = std::fs::canonicalize(&dir).unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Bash(rm:*)", "Read(./.env)"]}}"#,
    )
    .unwrap();
    let input = |tool: &str, tool_input: Value| {
        json!({
            "session_id": "abc123",
            "transcript_path": "/home/user/.claude/projects/proj/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
            "cwd": dir.display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "toolu_01ABC123"
        })
        .to_string()
    };
    let answer = |tool: &str, tool_input: Value| {
        let out = dsh_with_stdin(&["hook", "pre-tool-use"], &input(tool, tool_input));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        (!text.trim().is_empty()).then(|| serde_json::from_str::<Value>(&text).unwrap())
    };
    let decision = |a: &Option<Value>| {
        a.as_ref()
            .map(|v| v["hookSpecificOutput"]["permissionDecision"].clone())
    };
    // What Claude Code's prefix rules miss: the denied command after `&&`.
    let a = answer(
        "Bash",
        json!({"command": "npm test && rm -rf build", "description": "Run tests", "timeout": 120000}),
    );
    assert_eq!(decision(&a), Some(json!("deny")));
    assert_eq!(
        a.as_ref().unwrap()["hookSpecificOutput"]["hookEventName"],
        "PreToolUse"
    );
    assert!(a.unwrap()["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("Bash(rm:*)"));
    assert_eq!(
        decision(&answer(
            "Bash",
            json!({"command": "npm test -- --watch=false"})
        )),
        Some(json!("allow"))
    );
    assert_eq!(
        decision(&answer("Bash", json!({"command": "cat .env | base64"}))),
        Some(json!("deny"))
    );
    assert_eq!(
        decision(&answer(
            "Read",
            json!({"file_path": dir.join(".env").display().to_string()})
        )),
        Some(json!("deny"))
    );
    // A read the mode allows is Claude Code's to allow: silent.
    assert_eq!(
        answer(
            "Read",
            json!({"file_path": dir.join("README.md").display().to_string()})
        ),
        None
    );
    assert_eq!(
        decision(&answer("Bash", json!({"command": "eval \"$X\""}))),
        Some(json!("ask"))
    );
    // Only the mode would ask: left to Claude Code.
    assert_eq!(answer("Bash", json!({"command": "make"})), None);
    // Input it cannot read blocks (exit 2), saying why.
    let out = dsh_with_stdin(&["hook", "pre-tool-use"], "{\"tool_name\": 5}");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tool_name"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// What Claude Code's hook prints allows without Claude Code's own prompt,
/// so the hook allows only what an explicit allow rule of the settings
/// names, and prints nothing (exit 0) where only our mode would allow.
#[test]
fn hook_pre_tool_use_never_widens_claude_code_beyond_the_allow_rules() {
    let root = std::env::temp_dir().join(format!("dsh-cli-hook-widen-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    // Two projects: one without rules, one whose settings allow reading
    // /etc/shadow and deny rm. Each has its own `.claude`, found from `cwd`.
    let project = |name: &str, settings: &str| {
        let dir = root.join(name);
        std::fs::create_dir_all(dir.join(".claude")).unwrap();
        std::fs::create_dir_all(dir.join(".git")).unwrap();
        std::fs::write(dir.join(".claude/settings.json"), settings).unwrap();
        std::fs::canonicalize(&dir).unwrap()
    };
    let bare = project("bare", "{}");
    let ruled = project(
        "ruled",
        r#"{"permissions": {"allow": ["Read(//etc/shadow)"], "deny": ["Bash(rm:*)"]}}"#,
    );
    // The hook's stdout and exit code for Claude Code's input, as it sends it.
    let run = |cwd: &std::path::Path, tool: &str, tool_input: Value| {
        let input = json!({
            "session_id": "abc123",
            "transcript_path": "/home/user/.claude/projects/proj/00893aaf-19fa-41d2-8238-13269b9b3ca0.jsonl",
            "cwd": cwd.display().to_string(),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "x"
        });
        let out = dsh_with_stdin(&["hook", "pre-tool-use"], &input.to_string());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shadow = json!({"file_path": "/etc/shadow"});

    // Claude Code's own Read outside the working directory: no allow.
    let read = run(&bare, "Read", shadow.clone());
    assert_eq!(read, "", "a read-only tool is not allowed by the mode");

    // With the explicit allow rule: allow, naming the rule.
    let read = json_out_text(&run(&ruled, "Read", shadow));
    let out = &read["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "allow");
    assert!(out["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("Read(//etc/shadow)"));

    // A deny rule: deny, the rule named once.
    let rm = json_out_text(&run(&ruled, "Bash", json!({"command": "rm -rf x"})));
    let out = &rm["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny");
    let reason = out["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.starts_with("dsh: "), "{reason}");
    assert_eq!(reason.matches("Bash(rm:*)").count(), 1, "{reason}");

    // A read-only command without rules: silent, exit 0, nothing printed.
    assert_eq!(run(&bare, "Bash", json!({"command": "ls"})), "");
    // A tool the policy does not model, without rules: silent too.
    assert_eq!(
        run(
            &bare,
            "WebFetch",
            json!({"url": "https://example.com", "prompt": "x"})
        ),
        ""
    );
    let _ = std::fs::remove_dir_all(&root);
}

/// The JSON a command printed, or a failure quoting it.
fn json_out_text(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
}

#[test]
fn dsh_call_runs_the_settings_hooks() {
    let settings = settings_file(
        "hooks",
        r#"{"permissions": {"allow": ["Bash(echo:*)"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "echo broken >&2; exit 1"},
            {"type": "command", "command": "grep -q secret && { echo 'no secrets' >&2; exit 2; }; exit 0"}
        ]}]}}"#,
    );
    let settings = settings.display().to_string();
    let out = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo fine"}"#,
        "--settings",
        &settings,
        "--no-user-settings",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(json_out(&out)["content"][0]["text"], "fine\n[exit code: 0]");
    // The failing hook is logged with its command, and the call went on.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`echo broken >&2; exit 1`: exited with code 1: broken"),
        "{stderr}"
    );
    let out = dsh(&[
        "call",
        "bash",
        r#"{"command": "echo secret"}"#,
        "--settings",
        &settings,
        "--no-user-settings",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let result = json_out(&out);
    assert_eq!(result["error"]["code"], "HOOK_BLOCKED");
    assert_eq!(result["content"][0]["text"], "Error: no secrets");
}

#[test]
fn sandbox_status_says_what_this_machine_enforces() {
    let out = dsh(&["sandbox", "status", "--json"]);
    assert!(out.status.success());
    let status = json_out(&out);
    // This machine's kernel has Landlock ABI 7 (the newest this build uses is 6).
    assert_eq!(status["abi"], 6, "{status}");
    assert_eq!(status["files"], true);
    assert_eq!(status["tcp"], true);
    assert_eq!(status["scoping"], true);
    assert!(status["modes"]
        .as_array()
        .unwrap()
        .contains(&json!("workspace-write")));
    let out = dsh(&["sandbox", "status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("TCP connect and bind (network: false; ABI 4): enforced"),
        "{text}"
    );
    assert!(text.contains("\nnot blocked by any mode: "), "{text}");
    assert!(
        text.contains("system-call filter (seccomp): enforced: every socket with the network off"),
        "{text}"
    );
    assert!(
        text.contains("writes in the project root: mount namespace"),
        "{text}"
    );
    assert!(text.contains("read-only by verdict: enforced"), "{text}");
    // An older kernel, as DSH_SANDBOX_ABI pretends: said so.
    let out = Command::new(env!("CARGO_BIN_EXE_dsh"))
        .args(["sandbox", "status", "--json"])
        .env("DSH_SANDBOX_ABI", "3")
        .output()
        .unwrap();
    let status = json_out(&out);
    assert_eq!(status["tcp"], false);
    assert!(!status["modes"]
        .as_array()
        .unwrap()
        .contains(&json!("workspace-write")));
}

#[test]
fn a_sandbox_the_kernel_cannot_enforce_fails_the_call() {
    let settings = settings_file(
        "old-kernel",
        r#"{"permissions": {"allow": ["Bash(touch:*)"]}, "sandbox": {"enabled": true}}"#,
    );
    let marker = std::env::temp_dir().join(format!("dsh-cli-old-kernel-{}", std::process::id()));
    let out = Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .env("DSH_SANDBOX_ABI", "2")
        .args([
            "call",
            "bash",
            &json!({"command": format!("touch {}", marker.display())}).to_string(),
            "--settings",
            settings.to_str().unwrap(),
            "--no-user-settings",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result = json_out(&out);
    assert_eq!(result["error"]["code"], "SANDBOX_UNAVAILABLE");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Landlock ABI 2"),
        "{result}"
    );
    assert!(!marker.exists());
}

#[test]
fn acp_names_a_script_it_cannot_use() {
    let out = dsh(&["acp", "--script", "/nonexistent/turns.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("/nonexistent/turns.json: cannot read the script"));
    let bad = settings_file(
        "bad-script",
        r#"{"turns": [[{"tool": "bash", "args": {}}]]}"#,
    );
    let out = dsh(&["acp", "--script", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown field `args`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
