//! The scripted agent driven by a client of the official
//! `agent-client-protocol` crate over its duplex transport: terminal cards
//! with and without client terminals, a failed call, a denied call,
//! approval answers, `session/cancel` mid-command (no process left), and
//! every update checked against the schema crate's JSON schema.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, InitializeRequest, NewSessionRequest, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, StopReason,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Channel, Client};
use dsh_acp::{AgentSetup, Script};
use dsh_harness::{Pipeline, PipelineOptions};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-acp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("work")).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn pipeline(dir: &TempDir, settings: Value) -> Arc<Pipeline> {
    let file = dir.0.join("settings.json");
    std::fs::write(&file, settings.to_string()).unwrap();
    Arc::new(
        Pipeline::build(
            &PipelineOptions::default()
                .no_user_settings(true)
                .settings_only(true)
                .settings(&file)
                .cwd(&dir.0),
        )
        .unwrap(),
    )
}

fn setup(p: &Arc<Pipeline>, turns: Value) -> AgentSetup {
    let script: Script = serde_json::from_value(json!({ "turns": turns })).unwrap();
    let holder = p.clone();
    AgentSetup {
        registry: p.registry().clone(),
        set_approver: Arc::new(move |a| holder.set_approver(a)),
        script,
        permission_timeout: Duration::from_secs(10),
    }
}

fn check(updates: &[SessionNotification]) -> Vec<Value> {
    let schema = serde_json::to_value(schemars::schema_for!(SessionNotification)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    updates
        .iter()
        .map(|u| {
            let wire = serde_json::to_value(u).unwrap();
            assert!(validator.is_valid(&wire), "{wire}");
            wire["update"].clone()
        })
        .collect()
}

/// What the client saw.
#[derive(Default)]
struct Seen {
    updates: Vec<SessionNotification>,
    asked: Vec<String>,
}

/// Runs `prompts` turns against the agent; the client answers permission
/// requests with `answer` and, when `cancel_after_card` is set, cancels
/// the turn once the first card of that turn arrived.
async fn drive(
    setup: AgentSetup,
    terminal_output: bool,
    prompts: usize,
    answer: &'static str,
    cancel_after_card: bool,
) -> (Vec<StopReason>, Arc<Mutex<Seen>>) {
    let (agent_side, client_side) = Channel::duplex();
    let agent = tokio::spawn(dsh_acp::serve(setup, agent_side));
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (s1, s2, s3) = (seen.clone(), seen.clone(), seen.clone());
    let stops = Arc::new(Mutex::new(Vec::new()));
    let got = stops.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                s1.lock().unwrap().updates.push(n);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, _cx| {
                s2.lock()
                    .unwrap()
                    .asked
                    .push(req.tool_call.fields.title.clone().unwrap_or_default());
                let outcome = if answer == "cancel" {
                    RequestPermissionOutcome::Cancelled
                } else {
                    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(answer))
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(client_side, async move |cx: ConnectionTo<Agent>| {
            let mut caps = ClientCapabilities::new();
            if terminal_output {
                let mut meta = serde_json::Map::new();
                meta.insert("terminal_output".into(), json!(true));
                caps = caps.meta(meta);
            }
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
                .block_task()
                .await?;
            let session = cx
                .send_request(NewSessionRequest::new(std::env::temp_dir()))
                .block_task()
                .await?
                .session_id;
            for _ in 0..prompts {
                let before = s3.lock().unwrap().updates.len();
                let sent = cx.send_request(PromptRequest::new(session.clone(), vec![]));
                if cancel_after_card {
                    let start = Instant::now();
                    while s3.lock().unwrap().updates.len() == before {
                        assert!(start.elapsed() < Duration::from_secs(20), "no card arrived");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    cx.send_notification(CancelNotification::new(session.clone()))?;
                }
                let response = sent.block_task().await?;
                got.lock().unwrap().push(response.stop_reason);
            }
            Ok(())
        })
        .await
        .unwrap();
    agent.abort();
    let stops = stops.lock().unwrap().clone();
    (stops, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_of_calls_draws_terminal_cards_and_asks_the_editor() {
    let dir = TempDir::new("turn");
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}),
    );
    let turns = json!([[
        {"tool": "bash", "arguments": {"command": "echo hello"}},
        {"tool": "bash", "arguments": {"command": "echo x", "workdir": "/no/such/dir"}},
        {"tool": "bash", "arguments": {"command": "rm -rf work"}},
        {"tool": "bash", "arguments": {"command": "touch work/made"}}
    ]]);
    let (stops, seen) = drive(setup(&p, turns), true, 1, "allow_once", false).await;
    assert_eq!(stops, [StopReason::EndTurn]);
    let seen = seen.lock().unwrap();
    let u = check(&seen.updates);
    // echo hello: a terminal card, its output, its exit.
    assert_eq!(u[0]["sessionUpdate"], "tool_call");
    assert_eq!(u[0]["toolCallId"], "call-0-0");
    assert!(u[0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["type"] == "terminal"));
    assert_eq!(
        u[1]["_meta"]["terminal_output"]["data"]
            .as_str()
            .unwrap()
            .trim(),
        "hello"
    );
    assert_eq!(u[2]["status"], "completed");
    assert_eq!(u[2]["_meta"]["terminal_exit"]["exit_code"], 0);
    // A failed call and a denied one end as failed cards, with the reason.
    let failed: Vec<&Value> = u.iter().filter(|x| x["status"] == "failed").collect();
    assert_eq!(failed.len(), 2, "{u:?}");
    assert!(failed[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("Bash(rm:*)"));
    assert!(dir.0.join("work").exists(), "the denied rm did not run");
    // touch asked the editor, which allowed it once.
    assert_eq!(seen.asked, ["run `touch work/made`"]);
    assert!(dir.0.join("work/made").exists());
    // An update never precedes its call.
    let mut announced = std::collections::HashSet::new();
    for x in &u {
        let id = x["toolCallId"].as_str().unwrap();
        if x["sessionUpdate"] == "tool_call" {
            announced.insert(id.to_owned());
        } else {
            assert!(announced.contains(id), "update before its call: {x}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_client_terminals_cards_are_text_and_a_rejection_is_a_failed_card() {
    let dir = TempDir::new("text");
    let p = pipeline(&dir, json!({"permissions": {"allow": ["Bash(echo:*)"]}}));
    let turns = json!([
        [{"tool": "bash", "arguments": {"command": "echo plain"}}],
        [{"tool": "bash", "arguments": {"command": "touch work/nope"}}]
    ]);
    let (stops, seen) = drive(setup(&p, turns), false, 2, "reject_once", false).await;
    assert_eq!(stops, [StopReason::EndTurn, StopReason::EndTurn]);
    let seen = seen.lock().unwrap();
    let u = check(&seen.updates);
    assert_eq!(u[0]["content"][0]["content"]["text"], "$ echo plain");
    assert!(u[1]["content"][0]["content"]["text"]
        .as_str()
        .unwrap()
        .contains("plain"));
    assert_eq!(u[3]["status"], "failed");
    assert!(
        u[3]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("rejected"),
        "{}",
        u[3]
    );
    assert!(!dir.0.join("work/nope").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cancel_stops_the_running_command_and_its_processes() {
    let dir = TempDir::new("cancel");
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(sleep:*)", "Bash(echo:*)"]}}),
    );
    let pidfile = dir.0.join("work/pid");
    let command = format!("echo $$ > {} && sleep 30", pidfile.display());
    let turns = json!([[{"tool": "bash", "arguments": {"command": command}}, {"tool": "bash", "arguments": {"command": "echo never"}}]]);
    let started = Instant::now();
    let (stops, seen) = drive(setup(&p, turns), true, 1, "allow_once", true).await;
    assert_eq!(stops, [StopReason::Cancelled]);
    assert!(started.elapsed() < Duration::from_secs(20));
    let seen = seen.lock().unwrap();
    let u = check(&seen.updates);
    assert!(
        u.iter().all(|x| x["toolCallId"] != "call-0-1"),
        "the next call never started"
    );
    // The shell of the cancelled command is gone.
    let pid = std::fs::read_to_string(&pidfile).unwrap_or_default();
    let start = Instant::now();
    while !pid.trim().is_empty() && std::path::Path::new(&format!("/proc/{}", pid.trim())).exists()
    {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
        if stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
        {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "process {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_always_from_the_editor_lasts_the_session() {
    let dir = TempDir::new("always");
    let p = pipeline(&dir, json!({}));
    let turns = json!([
        [{"tool": "bash", "arguments": {"command": "touch work/a"}}],
        [{"tool": "bash", "arguments": {"command": "touch work/a"}}]
    ]);
    let (stops, seen) = drive(setup(&p, turns), false, 2, "allow_always", false).await;
    assert_eq!(stops, [StopReason::EndTurn, StopReason::EndTurn]);
    // Asked once: the second identical call is allowed by the session rule.
    assert_eq!(seen.lock().unwrap().asked, ["run `touch work/a`"]);
    assert!(dir.0.join("work/a").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_output_streams_while_the_command_runs() {
    let dir = TempDir::new("stream");
    let p = pipeline(
        &dir,
        json!({"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)"]}}),
    );
    let turns =
        json!([[{"tool": "bash", "arguments": {"command": "echo first; sleep 0.5; echo second"}}]]);
    let (_stops, seen) = drive(setup(&p, turns), true, 1, "allow_once", false).await;
    let seen = seen.lock().unwrap();
    let u = check(&seen.updates);
    let chunks: Vec<&str> = u
        .iter()
        .filter_map(|x| x["_meta"]["terminal_output"]["data"].as_str())
        .collect();
    // Two chunks, the first before the command printed its second line.
    assert!(chunks.len() >= 2, "{chunks:?}");
    assert!(
        chunks[0].contains("first") && !chunks[0].contains("second"),
        "{chunks:?}"
    );
    assert!(chunks.concat().contains("second"));
    assert_eq!(u.last().unwrap()["_meta"]["terminal_exit"]["exit_code"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_for_an_unknown_session_is_an_error_and_a_finished_script_ends_turns() {
    let dir = TempDir::new("unknown");
    let p = pipeline(&dir, json!({}));
    let (agent_side, client_side) = Channel::duplex();
    let agent = tokio::spawn(dsh_acp::serve(setup(&p, json!([])), agent_side));
    Client
        .v1()
        .connect_with(client_side, async move |cx: ConnectionTo<Agent>| {
            cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                .block_task()
                .await?;
            let unknown = cx
                .send_request(PromptRequest::new("no-such-session".to_owned(), vec![]))
                .block_task()
                .await;
            let err = unknown.expect_err("an unknown session is refused");
            assert!(format!("{err:?}").contains("no-such-session"), "{err:?}");
            let session = cx
                .send_request(NewSessionRequest::new(std::env::temp_dir()))
                .block_task()
                .await?
                .session_id;
            // The script has no turns: the prompt ends at once.
            let done = cx
                .send_request(PromptRequest::new(session, vec![]))
                .block_task()
                .await?;
            assert_eq!(done.stop_reason, StopReason::EndTurn);
            Ok(())
        })
        .await
        .unwrap();
    agent.abort();
}
