//! `session/request_permission` between an agent using [`AcpApprover`] and
//! a client built on the official `agent-client-protocol` crate, over the
//! crate's in-memory duplex transport: every answer, a cancelled request,
//! an unknown option, and a client that never answers.

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, ToolCallStatus,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Channel, Client};
use dsh_acp::AcpApprover;
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn request(call: &str, command: &str) -> ApprovalRequest {
    ApprovalRequest {
        call_id: call.into(),
        tool: "bash".into(),
        tool_aliases: vec![],
        arguments: json!({ "command": command }),
        agent: None,
        reason: "no rule matches".into(),
        rule: None,
        allow_always_rules: vec![],
        reject_always_rules: vec![],
    }
}

/// The client answers by the command: the option whose id the command
/// names, `cancel`, `bogus` (an id it was not offered), or `never`.
async fn client(transport: Channel, seen: Arc<Mutex<Vec<RequestPermissionRequest>>>) {
    let _ = Client
        .v1()
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, _cx| {
                seen.lock().unwrap().push(req.clone());
                let title = req.tool_call.fields.title.clone().unwrap_or_default();
                let command = title
                    .trim_start_matches("run `")
                    .trim_end_matches('`')
                    .to_owned();
                let outcome = match command.as_str() {
                    "cancel" => RequestPermissionOutcome::Cancelled,
                    "never" => {
                        // Keep the request unanswered; the agent must not wait forever.
                        std::mem::forget(responder);
                        return Ok(());
                    }
                    id => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                        id.to_owned(),
                    )),
                };
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_to(transport)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_maps_back_and_silence_fails_closed() {
    let (agent_side, client_side) = Channel::duplex();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client_task = tokio::spawn(client(client_side, seen.clone()));
    let answers = Arc::new(Mutex::new(Vec::new()));
    let got = answers.clone();
    Agent
        .v1()
        .connect_with(agent_side, async move |cx: ConnectionTo<Client>| {
            let approver = AcpApprover::new(cx, "s1").with_timeout(Duration::from_millis(500));
            for (i, command) in [
                "allow_once",
                "allow_always",
                "reject_once",
                "reject_always",
                "cancel",
                "bogus",
                "never",
            ]
            .iter()
            .enumerate()
            {
                let answer = approver.ask(request(&format!("c{i}"), command)).await;
                got.lock().unwrap().push(answer);
            }
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(
        *answers.lock().unwrap(),
        [
            ApprovalAnswer::AllowOnce,
            ApprovalAnswer::AllowAlways,
            ApprovalAnswer::RejectOnce,
            ApprovalAnswer::RejectAlways,
            ApprovalAnswer::RejectOnce,  // cancelled
            ApprovalAnswer::RejectOnce,  // an option it was not offered
            ApprovalAnswer::Unavailable, // no answer in time: fails closed
        ]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 7);
    // Each request as sent is valid by the schema crate's JSON schema.
    let schema = serde_json::to_value(schemars::schema_for!(RequestPermissionRequest)).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for r in seen.iter() {
        let wire = serde_json::to_value(r).unwrap();
        assert!(validator.is_valid(&wire), "{wire}");
    }
    let first = &seen[0];
    assert_eq!(first.session_id.0.as_ref(), "s1");
    assert_eq!(first.tool_call.tool_call_id.0.as_ref(), "c0");
    assert_eq!(first.tool_call.fields.status, Some(ToolCallStatus::Pending));
    assert_eq!(
        first.tool_call.fields.raw_input,
        Some(json!({"command": "allow_once"}))
    );
    let kinds: Vec<PermissionOptionKind> = first.options.iter().map(|o| o.kind).collect();
    assert_eq!(
        kinds,
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways
        ]
    );
    client_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_goes_away_leaves_the_call_unapproved() {
    let (agent_side, client_side) = Channel::duplex();
    drop(client_side);
    let answer = Arc::new(Mutex::new(None));
    let got = answer.clone();
    let _ = Agent
        .v1()
        .connect_with(agent_side, async move |cx: ConnectionTo<Client>| {
            let approver = AcpApprover::new(cx, "s1").with_timeout(Duration::from_secs(5));
            *got.lock().unwrap() = Some(approver.ask(request("c1", "allow_once")).await);
            Ok(())
        })
        .await;
    assert_eq!(*answer.lock().unwrap(), Some(ApprovalAnswer::Unavailable));
}
