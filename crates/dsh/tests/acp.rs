//! `dsh acp` as an editor runs it: the binary on stdio, driven by a client
//! of the official `agent-client-protocol` crate over the child's pipes.

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    Implementation, InitializeRequest, NewSessionRequest, PromptRequest, SessionNotification,
    StopReason,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, ByteStreams, Client};
use serde_json::{json, Value};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_a_scripted_turn_over_its_pipes() {
    let dir = std::env::temp_dir().join(format!("dsh-acp-bin-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    let log = dir.join("audit");
    std::fs::write(
        &settings,
        json!({"permissions": {"allow": ["Bash(echo:*)"]}, "audit": {"path": log}}).to_string(),
    )
    .unwrap();
    let script = dir.join("turns.json");
    std::fs::write(
        &script,
        json!({"turns": [[{"tool": "bash", "arguments": {"command": "echo over-pipes"}}]]})
            .to_string(),
    )
    .unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"))
        .env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
        .arg("acp")
        .arg("--script")
        .arg(&script)
        .arg("--settings")
        .arg(&settings)
        .arg("--settings-only")
        .arg("--cwd")
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let transport = ByteStreams::new(
        child.stdin.take().unwrap().compat_write(),
        child.stdout.take().unwrap().compat(),
    );
    let updates = Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = updates.clone();
    let stop = Arc::new(Mutex::new(None));
    let got = stop.clone();
    Client
        .v1()
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                seen.lock()
                    .unwrap()
                    .push(serde_json::to_value(&n.update).unwrap());
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            cx.send_request(
                InitializeRequest::new(ProtocolVersion::V1)
                    .client_info(Implementation::new("test-editor", "0.9")),
            )
            .block_task()
            .await?;
            let session = cx
                .send_request(NewSessionRequest::new(std::env::temp_dir()))
                .block_task()
                .await?
                .session_id;
            let response = cx
                .send_request(PromptRequest::new(session, vec![]))
                .block_task()
                .await?;
            *got.lock().unwrap() = Some(response.stop_reason);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(*stop.lock().unwrap(), Some(StopReason::EndTurn));
    let updates = updates.lock().unwrap().clone();
    assert_eq!(updates[0]["sessionUpdate"], "tool_call");
    assert_eq!(updates[0]["title"], "echo over-pipes");
    let end = updates.last().unwrap();
    assert_eq!(end["status"], "completed");
    assert!(
        end["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("over-pipes"),
        "{end}"
    );
    // The client closed the pipes: the agent exits by itself.
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(
        status.is_ok_and(|s| s.is_ok()),
        "dsh acp did not exit after its client left"
    );
    // The call is in the audit log (on by default for dsh acp), with the
    // editor and the session it came in.
    let text = std::fs::read_to_string(log.join("audit.jsonl")).unwrap();
    let record: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(record["callId"], "call-0-0");
    assert_eq!(record["client"], "test-editor/0.9");
    assert_eq!(record["session"], "dsh-session-1");
    assert_eq!(record["decision"]["rule"], "Bash(echo:*)");
    assert_eq!(record["outcome"]["exitCode"], 0);
    let _ = std::fs::remove_dir_all(&dir);
}
