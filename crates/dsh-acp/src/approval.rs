//! [`AcpApprover`]: the pipeline's *ask* as `session/request_permission`.

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::Client;
use agent_client_protocol_schema::v1::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SessionId, ToolCallId, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver};
use futures::future::BoxFuture;
use std::time::Duration;

/// How long a client has to answer by default before the ask fails closed.
pub const DEFAULT_PERMISSION_TIMEOUT: Duration = Duration::from_secs(300);

/// The options every request offers, with the answer each stands for.
const OPTIONS: [(&str, &str, PermissionOptionKind, ApprovalAnswer); 4] = [
    (
        "allow_once",
        "Allow once",
        PermissionOptionKind::AllowOnce,
        ApprovalAnswer::AllowOnce,
    ),
    (
        "allow_always",
        "Allow always",
        PermissionOptionKind::AllowAlways,
        ApprovalAnswer::AllowAlways,
    ),
    (
        "reject_once",
        "Reject",
        PermissionOptionKind::RejectOnce,
        ApprovalAnswer::RejectOnce,
    ),
    (
        "reject_always",
        "Reject always",
        PermissionOptionKind::RejectAlways,
        ApprovalAnswer::RejectAlways,
    ),
];

/// Asks the ACP client (the editor) with `session/request_permission`:
/// allow once / allow always / reject once / reject always. A cancelled
/// request is a rejection; an option id the request did not offer is a
/// rejection too; a client that does not answer within the timeout, or a
/// connection that fails, leaves the call unapproved
/// ([`ApprovalAnswer::Unavailable`]: it fails closed). *Always* answers
/// become session rules in the permission layer, as for every approver.
///
/// Must be called from a task of the connection (not from inside one of
/// its message handlers, where awaiting the client's answer would block
/// the loop that receives it).
#[derive(Clone)]
pub struct AcpApprover {
    connection: ConnectionTo<Client>,
    session: SessionId,
    timeout: Duration,
}

impl AcpApprover {
    /// An approver asking the client of `connection` for `session`.
    pub fn new(connection: ConnectionTo<Client>, session: impl Into<String>) -> Self {
        AcpApprover {
            connection,
            session: SessionId::new(session.into()),
            timeout: DEFAULT_PERMISSION_TIMEOUT,
        }
    }

    /// How long the client has to answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The request for `request`: the card's update (pending, with the
    /// action as its title and the arguments) and the four options.
    pub fn request(&self, request: &ApprovalRequest) -> RequestPermissionRequest {
        let update = ToolCallUpdate::new(
            ToolCallId::new(request.call_id.as_str()),
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::Pending)
                .title(request.action())
                .raw_input(request.arguments.clone()),
        );
        let options = OPTIONS
            .iter()
            .map(|(id, name, kind, _)| PermissionOption::new(*id, *name, *kind))
            .collect();
        RequestPermissionRequest::new(self.session.clone(), update, options)
    }
}

/// The answer an outcome stands for.
pub fn answer_of(outcome: &RequestPermissionOutcome) -> ApprovalAnswer {
    match outcome {
        RequestPermissionOutcome::Selected(selected) => OPTIONS
            .iter()
            .find(|(id, ..)| *id == &*selected.option_id.0)
            .map(|(.., answer)| *answer)
            .unwrap_or(ApprovalAnswer::RejectOnce),
        // Cancelled, or an outcome this version does not know.
        _ => ApprovalAnswer::RejectOnce,
    }
}

impl Approver for AcpApprover {
    fn answered_by(&self) -> String {
        "acp client".to_owned()
    }

    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        let sent = self.connection.send_request(self.request(&request));
        let timeout = self.timeout;
        Box::pin(async move {
            match tokio::time::timeout(timeout, sent.block_task()).await {
                Ok(Ok(response)) => answer_of(&response.outcome),
                // No answer in time, or the connection failed: not approved.
                Ok(Err(_)) | Err(_) => ApprovalAnswer::Unavailable,
            }
        })
    }
}
