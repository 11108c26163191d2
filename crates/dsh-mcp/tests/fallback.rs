//! The fallback approver: asked when the client cannot answer an *ask*
//! (no elicitation, or a `decline`), never when it chose an option.

use dsh_policy::{
    ApprovalAnswer, FnApprover, Mode, PermissionMiddleware, PermissionPolicy, PermissionRules,
    Rule, RuleList,
};
use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};

#[derive(ToolArgs, Deserialize)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

/// A client that may declare elicitation and answers every form with `action`.
#[derive(Clone)]
struct Client {
    elicits: Option<ElicitationAction>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicits.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("fallback-test", "1.2"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let action = self.elicits.clone().unwrap_or(ElicitationAction::Cancel);
        let accept = action == ElicitationAction::Accept;
        let mut result = ElicitResult::new(action);
        result.content = accept.then(|| json!({"decision": "reject"}));
        Ok(result)
    }
}

/// Serves an `echo` tool every call of which asks, with a fallback that
/// answers `answer` and records who it was told asks.
async fn call_with(
    client: Client,
    answer: ApprovalAnswer,
) -> (CallToolResult, Vec<Option<String>>) {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool(
            "echo",
            "Echoes.",
            |args: EchoArgs, _| async move { Ok(vec![ContentBlock::text(args.text)]) },
        ))
        .unwrap();
    let mut rules = PermissionRules::default();
    rules.add(RuleList::Ask, Rule::parse("echo").unwrap());
    let permissions = PermissionMiddleware::new(PermissionPolicy::new(rules, Mode::Default, "/"));
    registry.use_middleware(permissions.clone());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let fallback = FnApprover(move |_request| {
        record.lock().unwrap().push(dsh_mcp::calling_client());
        async move { answer }
    });
    let server = dsh_mcp::McpServer::new(registry)
        .with_approval(permissions)
        .with_fallback_approver(Arc::new(fallback));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(dsh_mcp::serve(server, server_io));
    let client = client.serve(client_io).await.unwrap();
    let serde_json::Value::Object(args) = json!({"text": "ran"}) else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    (result, seen)
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| t.text.clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_is_answered_by_the_fallback() {
    let (result, seen) = call_with(Client { elicits: None }, ApprovalAnswer::AllowOnce).await;
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(text(&result), "ran");
    assert_eq!(seen, [Some("fallback-test 1.2".to_owned())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declined_form_goes_to_the_fallback() {
    let client = Client {
        elicits: Some(ElicitationAction::Decline),
    };
    let (result, seen) = call_with(client, ApprovalAnswer::RejectOnce).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("the user rejected this call"),
        "{}",
        text(&result)
    );
    assert_eq!(seen.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_choice_on_the_form_is_final() {
    let client = Client {
        elicits: Some(ElicitationAction::Accept),
    };
    let (result, seen) = call_with(client, ApprovalAnswer::AllowOnce).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("rejected"), "{}", text(&result));
    assert!(seen.is_empty(), "the fallback was asked after a choice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_from_the_fallback_fails_closed_as_before_and_says_so() {
    let client = Client {
        elicits: Some(ElicitationAction::Cancel),
    };
    let (result, seen) = call_with(client, ApprovalAnswer::Unavailable).await;
    assert_eq!(result.is_error, Some(true));
    let said = text(&result);
    assert!(
        said.starts_with("Error: not approved: the client answered `cancel`"),
        "{said}"
    );
    assert!(
        said.ends_with("; nobody answered on the approver within 0 s"),
        "{said}"
    );
    assert_eq!(seen.len(), 1);
    let meta = serde_json::to_value(&result.meta).unwrap();
    assert_eq!(meta["dsh/error"]["code"], "APPROVAL_UNAVAILABLE");
}
