//! Asking the user: [`Approver`], [`ApprovalRequest`], [`ApprovalAnswer`].

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;

/// A call that needs the user's approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalRequest {
    /// The model's id for the call.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The other names rules and hook matchers know the tool by
    /// (`mcp__SERVER__tool` for a proxied tool).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_aliases: Vec<String>,
    /// The call's arguments.
    pub arguments: Value,
    /// The agent on whose behalf the call runs.
    pub agent: Option<String>,
    /// Why approval is needed (e.g. `no rule matches "make"; mode default asks about unmatched calls`).
    pub reason: String,
    /// The ask rule that matched, if one did.
    pub rule: Option<String>,
    /// The rules *allow always* adds for the rest of the session (empty when
    /// it cannot add any: then it acts as *allow once*).
    pub allow_always_rules: Vec<String>,
    /// The rules *reject always* adds for the rest of the session.
    pub reject_always_rules: Vec<String>,
}

impl ApprovalRequest {
    /// What the call would do, as a prompt says it: ``run `make test` `` for
    /// a bash command, else `call TOOL ARGUMENTS`.
    ///
    /// ```
    /// use dsh_policy::ApprovalRequest;
    /// let request = ApprovalRequest {
    ///     call_id: "c1".into(),
    ///     tool: "bash".into(),
    ///     tool_aliases: vec![],
    ///     arguments: serde_json::json!({"command": "make test"}),
    ///     agent: None,
    ///     reason: String::new(),
    ///     rule: None,
    ///     allow_always_rules: vec![],
    ///     reject_always_rules: vec![],
    /// };
    /// assert_eq!(request.action(), "run `make test`");
    /// ```
    pub fn action(&self) -> String {
        match (self.tool.as_str(), self.arguments.get("command")) {
            ("bash", Some(Value::String(command))) => format!("run `{command}`"),
            (tool, _) => format!("call {tool} {}", self.arguments),
        }
    }
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ApprovalAnswer {
    /// Run this call.
    AllowOnce,
    /// Run this call, and add allow rules so that the same command (for
    /// bash: each simple command that was asked about, exactly; the file for
    /// a write; otherwise the whole tool) runs without asking for the rest of
    /// the session. They outrank ask rules, never deny rules.
    AllowAlways,
    /// Refuse this call (`PERMISSION_DENIED`).
    RejectOnce,
    /// Refuse this call and add deny rules for the same command for the rest of the session.
    RejectAlways,
    /// Nobody could be asked this time (e.g. the client of this request
    /// cannot show a prompt): the call fails closed with
    /// `APPROVAL_UNAVAILABLE`, as with no approver at all.
    Unavailable,
    /// The client answered "decline" instead of one of the question's
    /// options. Headless clients (`codex exec`) answer so by themselves,
    /// so it is not reported as a person's rejection: the call fails with
    /// `APPROVAL_UNAVAILABLE` and the rule that would allow it.
    Declined,
    /// The client answered "cancel" instead of one of the options (what
    /// `claude -p` answers by itself); as [`ApprovalAnswer::Declined`].
    Cancelled,
}

/// Answers *ask* verdicts: a terminal prompt, an ACP permission request, a test script.
///
/// Without an approver, *ask* fails closed with `APPROVAL_UNAVAILABLE`.
///
/// # Cancel safety
/// The returned future is dropped if the call is cancelled while waiting.
pub trait Approver: Send + Sync + 'static {
    /// Asks about one call.
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer>;

    /// Who answers, as an audit record names it (`terminal`, `client form`,
    /// `hook`, …).
    fn answered_by(&self) -> String {
        "approver".to_owned()
    }

    /// Asks about one call; the answer and who gave it. An approver that
    /// passes questions on (to a person's page when the client cannot
    /// answer) says which one answered.
    fn ask_noted(&self, request: ApprovalRequest) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        let by = self.answered_by();
        let answer = self.ask(request);
        Box::pin(async move { (answer.await, by) })
    }

    /// This approver bound to the call being served now, for a question
    /// asked later from another task on that call's behalf (a sandboxed
    /// command connecting to a domain no list names): `None` (the default)
    /// when asking needs nothing of the call, or when the call cannot be
    /// asked mid-way (then use the approver itself).
    fn for_this_call(&self) -> Option<std::sync::Arc<dyn Approver>> {
        None
    }
}

/// An async closure as an [`Approver`].
///
/// ```
/// use dsh_policy::{ApprovalAnswer, FnApprover};
/// let approver = FnApprover(|req: dsh_policy::ApprovalRequest| async move {
///     if req.tool == "bash" { ApprovalAnswer::RejectOnce } else { ApprovalAnswer::AllowOnce }
/// });
/// # let _ = approver;
/// ```
pub struct FnApprover<F>(pub F);

impl<F, Fut> Approver for FnApprover<F>
where
    F: Fn(ApprovalRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ApprovalAnswer> + Send + 'static,
{
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        Box::pin((self.0)(request))
    }
}

/// Approves every ask once (`dsh call --yes`). Deny rules and plan mode still apply.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn ask(&self, _request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        Box::pin(std::future::ready(ApprovalAnswer::AllowOnce))
    }

    fn answered_by(&self) -> String {
        "approve all (--yes)".to_owned()
    }
}
