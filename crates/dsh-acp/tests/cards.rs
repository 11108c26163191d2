//! Cards for real calls of the bash tool: terminal cards with and without
//! client terminal support, failures, unknown results, replay equality,
//! and every message checked against the ACP JSON schema of the schema
//! crate (`schemars` output of `SessionNotification`).

use dsh_acp::schema::SessionNotification;
use dsh_acp::Cards;
use dsh_tool_bash::{register_bash_tools, Executor, ExecutorConfig};
use dsh_tools::{ToolExecution, ToolExecutionResult, ToolRegistry};
use serde_json::{json, Value};

fn registry() -> (ToolRegistry, Executor) {
    let registry = ToolRegistry::new();
    let executor = Executor::new(ExecutorConfig {
        cwd: std::env::temp_dir(),
        ..ExecutorConfig::default()
    })
    .unwrap();
    register_bash_tools(&registry, &executor).unwrap();
    (registry, executor)
}

/// Every message against the schema the schema crate publishes.
fn check(messages: &[SessionNotification]) -> Vec<Value> {
    let schema = serde_json::to_value(schemars::schema_for!(SessionNotification)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    messages
        .iter()
        .map(|m| {
            let wire = serde_json::to_value(m).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&wire)
                .map(|e| e.to_string())
                .collect();
            assert!(errors.is_empty(), "{wire}: {errors:?}");
            wire
        })
        .collect()
}

async fn run(registry: &ToolRegistry, id: &str, args: Value) -> ToolExecutionResult {
    registry.execute(ToolExecution::new(id, "bash", args)).await
}

/// The call's card, its result, each through the registry's presenters.
fn cards_for(
    cards: &mut Cards,
    registry: &ToolRegistry,
    id: &str,
    args: &Value,
    result: &ToolExecutionResult,
) -> Vec<SessionNotification> {
    let call = registry.present_call("bash", args);
    let done = registry.present_result("bash", args, result);
    vec![
        cards.call(id, &call, args, false),
        cards.result(id, result, &done),
    ]
}

#[tokio::test]
async fn a_bash_call_is_a_terminal_card_when_the_client_renders_terminals() {
    let (registry, _ex) = registry();
    let args = json!({"command": "echo hi", "description": "greet"});
    let result = run(&registry, "c1", args.clone()).await;
    let mut cards = Cards::new("s1", true);
    let call = registry.present_call("bash", &args);
    let mut messages = vec![cards.call("c1", &call, &args, true)];
    messages.push(cards.started("c1"));
    messages.extend(cards.output("c1", "hi\n"));
    messages.push(cards.result(
        "c1",
        &result,
        &registry.present_result("bash", &args, &result),
    ));
    let wire = check(&messages);
    let announced = &wire[0]["update"];
    assert_eq!(announced["sessionUpdate"], "tool_call");
    assert_eq!(announced["toolCallId"], "c1");
    assert_eq!(announced["kind"], "execute");
    // `pending` is the protocol's default status, which the schema type
    // leaves off the wire.
    assert!(announced.get("status").is_none(), "{announced}");
    let parsed: SessionNotification = serde_json::from_value(wire[0].clone()).unwrap();
    match parsed.update {
        dsh_acp::schema::SessionUpdate::ToolCall(c) => {
            assert_eq!(c.status, dsh_acp::schema::ToolCallStatus::Pending)
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(announced["title"], "echo hi");
    assert_eq!(announced["rawInput"], "echo hi");
    assert!(
        announced["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c == &json!({"type": "terminal", "terminalId": "c1"})),
        "{announced}"
    );
    assert_eq!(announced["_meta"]["terminal_info"]["terminal_id"], "c1");
    assert!(announced["_meta"]["terminal_info"]["cwd"].is_string());
    assert_eq!(wire[1]["update"]["status"], "in_progress");
    assert_eq!(
        wire[2]["update"]["_meta"]["terminal_output"],
        json!({"terminal_id": "c1", "data": "hi\n"})
    );
    let end = &wire[3]["update"];
    assert_eq!(end["sessionUpdate"], "tool_call_update");
    assert_eq!(end["status"], "completed");
    assert_eq!(
        end["_meta"]["terminal_exit"],
        json!({"terminal_id": "c1", "exit_code": 0, "signal": null})
    );
    // The terminal is never replaced by text.
    assert!(end.get("content").is_none(), "{end}");
    assert_eq!(end["rawOutput"]["isError"], false);
}

#[tokio::test]
async fn without_client_terminals_the_command_and_output_are_text() {
    let (registry, _ex) = registry();
    let args = json!({"command": "echo hi"});
    let result = run(&registry, "c1", args.clone()).await;
    let mut cards = Cards::new("s1", false);
    let messages = cards_for(&mut cards, &registry, "c1", &args, &result);
    assert!(cards.output("c1", "hi\n").is_none());
    let wire = check(&messages);
    assert_eq!(
        wire[0]["update"]["content"][0]["content"]["text"],
        "$ echo hi"
    );
    assert_eq!(wire[0]["update"]["status"], "in_progress");
    assert!(wire[0]["update"].get("_meta").is_none());
    let text = wire[1]["update"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("hi"), "{text}");
}

#[tokio::test]
async fn failures_and_results_of_unknown_calls_are_well_formed() {
    let (registry, _ex) = registry();
    let args = json!({"command": "echo x", "workdir": "/no/such/dir"});
    let result = run(&registry, "c2", args.clone()).await;
    assert!(result.is_error);
    let mut cards = Cards::new("s1", true);
    let messages = cards_for(&mut cards, &registry, "c2", &args, &result);
    // Never announced: still a well-formed update.
    let stray = ToolExecutionResult::ok("c9", vec![dsh_tools::ContentBlock::text("late")]);
    let orphan = cards.result(
        "c9",
        &stray,
        &dsh_tools::ToolResultPresentation::generic(&stray.content),
    );
    let wire = check(&[messages, vec![orphan]].concat());
    assert_eq!(wire[1]["update"]["status"], "failed");
    let text = wire[1]["update"]["content"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("/no/such/dir"), "{text}");
    assert_eq!(wire[2]["update"]["toolCallId"], "c9");
    assert_eq!(wire[2]["update"]["status"], "completed");
}

#[tokio::test]
async fn a_recorded_session_replays_to_the_same_updates_byte_for_byte() {
    let (registry, _ex) = registry();
    // A session log: each call's id, arguments and result, as recorded.
    let mut log = Vec::new();
    for (i, command) in [
        "echo one",
        "printf 'a\\nb\\n'",
        "exit 3",
        "ls /no/such/file",
    ]
    .iter()
    .enumerate()
    {
        let id = format!("c{i}");
        let args = json!({"command": command});
        let result = run(&registry, &id, args.clone()).await;
        log.push(json!({"id": id, "args": args, "result": result}));
    }
    let log_text = serde_json::to_string(&log).unwrap();
    let translate = |terminal: bool| -> String {
        let log: Vec<Value> = serde_json::from_str(&log_text).unwrap();
        let mut cards = Cards::new("replayed", terminal);
        let mut out = String::new();
        for entry in log {
            let id = entry["id"].as_str().unwrap();
            let result: ToolExecutionResult =
                serde_json::from_value(entry["result"].clone()).unwrap();
            for m in cards_for(&mut cards, &registry, id, &entry["args"], &result) {
                out.push_str(&serde_json::to_string(&m).unwrap());
                out.push('\n');
            }
        }
        out
    };
    for terminal in [true, false] {
        let first = translate(terminal);
        assert_eq!(first, translate(terminal));
        assert_eq!(first.lines().count(), 8);
        let parsed: Vec<SessionNotification> = first
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        check(&parsed);
    }
}

#[test]
fn locations_come_from_path_arguments() {
    let locs =
        dsh_acp::locations_of(&json!({"file_path": "/a", "paths": ["/b", "/c"], "other": "/d"}));
    let paths: Vec<String> = locs.iter().map(|l| l.path.display().to_string()).collect();
    assert_eq!(paths, ["/a", "/b", "/c"]);
}

#[test]
fn the_schema_check_can_fail() {
    let schema = serde_json::to_value(schemars::schema_for!(SessionNotification)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let bad = json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call", "toolCallId": "c", "title": 5}});
    assert!(!validator.is_valid(&bad));
    let bad_status = json!({"sessionId": "s", "update": {"sessionUpdate": "tool_call_update", "toolCallId": "c", "status": "exploded"}});
    assert!(!validator.is_valid(&bad_status));
}

/// An edit by the file tools: an `edit` card with the file's location,
/// and when it is done a `diff` of the replaced text and the line it
/// landed on.
#[tokio::test]
async fn an_edit_is_a_diff_card_at_its_line() {
    let dir = std::env::temp_dir().join(format!("dsh-acp-cards-edit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.rs"), "fn one() {}\nfn two() {}\n").unwrap();
    let registry = ToolRegistry::new();
    let tools = dsh_tool_fs::FileTools::new(dsh_tool_fs::FsConfig::new(&dir));
    dsh_tool_fs::register_fs_tools(&registry, &tools).unwrap();
    let read = json!({"file_path": "a.rs"});
    let done = registry
        .execute(ToolExecution::new("r", "read", read))
        .await;
    assert!(!done.is_error);
    let args = json!({"file_path": "a.rs", "old_string": "two", "new_string": "three"});
    let result = registry
        .execute(ToolExecution::new("e", "edit", args.clone()))
        .await;
    assert!(!result.is_error, "{:?}", result.content);
    let mut cards = Cards::new("s1", true);
    let call = registry.present_call("edit", &args);
    let end = registry.present_result("edit", &args, &result);
    let wire = check(&[
        cards.call("e", &call, &args, false),
        cards.result("e", &result, &end),
    ]);
    assert_eq!(wire[0]["update"]["kind"], json!("edit"), "{}", wire[0]);
    assert_eq!(
        wire[0]["update"]["locations"],
        json!([{"path": "a.rs"}]),
        "{}",
        wire[0]
    );
    let update = &wire[1]["update"];
    assert_eq!(
        update["locations"],
        json!([{"path": "a.rs", "line": 2}]),
        "{update}"
    );
    assert_eq!(
        update["content"][0],
        json!({"type": "diff", "path": "a.rs", "oldText": "two", "newText": "three"}),
        "{update}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
