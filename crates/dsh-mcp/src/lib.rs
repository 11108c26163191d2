//! # dsh-mcp
//!
//! An MCP server for a [`ToolRegistry`]: every `tools/call` goes through the
//! registry's whole pipeline (permission rules, and every other middleware
//! the registry has), and every outcome the pipeline produces — invalid
//! arguments, an unknown tool, a denial, a tool failure — is an `isError`
//! result the model reads, never a protocol error it cannot see.
//!
//! Built on `rmcp`, the official Rust SDK, which speaks both protocol
//! generations: the `initialize` handshake (2025-06-18, 2025-11-25) and the
//! stateless 2026-07-28 revision (`server/discover`, per-request `_meta`).
//! It serves on stdio ([`serve_stdio`]) or over streamable HTTP behind bearer
//! tokens ([`serve_http`], `dsh mcp --http`; see the `http` module) or, as
//! an OAuth resource server, JWT access tokens ([`OAuth`], the [`oauth`]
//! module).
//!
//! | MCP | the pipeline |
//! |---|---|
//! | `tools/list` | [`ToolRegistry::tool_declarations`] in the MCP format: `schemas(mcp)` plus `title` and the annotations (`readOnlyHint`, …), in registration order |
//! | `tools/call` | [`ToolRegistry::execute`] with the JSON-RPC request id as the call id; a failure of the pipeline also carries `_meta: {"dsh/error": {"name", "code"}}` (`INVALID_ARGS`, `PERMISSION_DENIED`, …) |
//! | `notifications/cancelled` | the call's cancellation token: the call is aborted and a command's whole process tree killed |
//! | a request's `progressToken` | `notifications/progress` every second once a call has run for a second (seconds elapsed; bytes of output so far in the message), so clients do not time out on a long build |
//! | an *ask* verdict | a form (allow once / allow always / reject / reject always, the command shown) when the client declared elicitation: an `elicitation/create` request in a session that began with `initialize`, an `input_required` result the client answers by retrying in the stateless revision, with a `requestState` sealed for the caller and the exact call that is accepted once, within ten minutes (anything else: `invalid_params`, nothing run); when the client cannot answer (no elicitation, a `decline` or `cancel`), the fallback approver if one is set ([`McpServer::with_fallback_approver`]: the approval page); else `APPROVAL_UNAVAILABLE`, naming the rule that would allow the call |
//! | registry changes | `notifications/tools/list_changed` |
//! | stdin end-of-file, SIGTERM, SIGINT | the session ends; the caller drops the pipeline, whose executor kills what it started |
//!
//! ```no_run
//! # async fn serve(registry: dsh_tools::ToolRegistry) -> Result<(), dsh_mcp::ServeError> {
//! // Serve until the client closes stdin.
//! dsh_mcp::serve_stdio(dsh_mcp::McpServer::new(registry)).await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod upstream;

mod approval_state;
mod http;
pub mod oauth;
pub use crate::http::{serve_http, Caller, HttpAccess, HttpLimits, Principal, Tls};
pub use crate::oauth::{KeySource, OAuth, OAuthError, OAuthSettings};
pub use upstream::{
    Proxy, ProxyError, ProxyOptions, UpstreamConfig, UpstreamSandbox, UpstreamTransport,
};

use crate::approval_state::{ApprovalSeal, StateRefusal, APPROVAL_TTL};
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver, PermissionMiddleware};
use dsh_tools::{
    ContentBlock, RegistryChange, ToolExecution, ToolFormat, ToolProgress, ToolRegistry,
};
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, InputRequest, InputRequests, InputRequiredResult,
    InputResponses, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProgressToken, RequestId, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, Peer, ServerHandler, ServiceExt};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Serves a registry's tools over MCP. Cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    registry: ToolRegistry,
    instructions: Option<String>,
    permissions: Option<PermissionMiddleware>,
    proxy: Option<Arc<Proxy>>,
    /// Seals the `requestState` of approval rounds in the stateless revision.
    seal: Option<Arc<ApprovalSeal>>,
    /// Calls each caller has running, and how many it may.
    calls: Arc<CallCounts>,
    /// Who is asked when the client cannot answer (the approval page).
    fallback: Option<Arc<dyn Approver>>,
}

/// Calls running: in all (so shutting down can wait for them), and per
/// caller (the principal over HTTP; everyone alike on stdio) against a limit.
#[derive(Default)]
struct CallCounts {
    limit: Option<usize>,
    per_caller: Mutex<std::collections::HashMap<Option<String>, usize>>,
    total: std::sync::atomic::AtomicUsize,
    idle: tokio::sync::Notify,
    closing: std::sync::atomic::AtomicBool,
}

/// Why a call may not start.
enum NoSlot {
    /// The caller runs this many already, its limit.
    Full(usize),
    /// The server is shutting down.
    Closing,
}

/// One running call; ends its count when dropped.
struct CallSlot {
    counts: Arc<CallCounts>,
    /// The caller whose count it holds, when callers are limited.
    caller: Option<Option<String>>,
}

impl CallCounts {
    fn enter(self: &Arc<Self>, caller: Option<&str>) -> Result<CallSlot, NoSlot> {
        use std::sync::atomic::Ordering;
        if self.closing.load(Ordering::Acquire) {
            return Err(NoSlot::Closing);
        }
        let caller = match self.limit {
            None => None,
            Some(limit) => {
                let mut running = self
                    .per_caller
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let count = running.entry(caller.map(str::to_owned)).or_default();
                if *count >= limit {
                    return Err(NoSlot::Full(*count));
                }
                *count += 1;
                Some(caller.map(str::to_owned))
            }
        };
        self.total.fetch_add(1, Ordering::AcqRel);
        Ok(CallSlot {
            counts: Arc::clone(self),
            caller,
        })
    }

    /// Refuses new calls, then waits up to `grace` for the running ones;
    /// whether they all ended.
    async fn drain(&self, grace: Duration) -> bool {
        use std::sync::atomic::Ordering;
        self.closing.store(true, Ordering::Release);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            let notified = self.idle.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.total.load(Ordering::Acquire) == 0 {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.total.load(Ordering::Acquire) == 0;
            }
        }
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        use std::sync::atomic::Ordering;
        if let Some(caller) = &self.caller {
            let mut running = self
                .counts
                .per_caller
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(count) = running.get_mut(caller) {
                *count -= 1;
                if *count == 0 {
                    running.remove(caller);
                }
            }
        }
        if self.counts.total.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.counts.idle.notify_waiters();
        }
    }
}

impl McpServer {
    /// A server for `registry`.
    pub fn new(registry: ToolRegistry) -> Self {
        McpServer {
            registry,
            instructions: None,
            permissions: None,
            proxy: None,
            // Without randomness no round can be sealed: stateless clients
            // are then told approval is unavailable (fail closed).
            seal: ApprovalSeal::new(APPROVAL_TTL).ok().map(Arc::new),
            calls: Arc::default(),
            fallback: None,
        }
    }

    /// Asks `fallback` (a person's approval page) when the client cannot
    /// answer an *ask*: it declared no elicitation, or it answered
    /// `decline` or `cancel` instead of one of the form's options. In the
    /// stateless revision the `input_required` round stays the first
    /// choice. When the fallback gets no answer either, the call fails
    /// closed as without it, and its message adds that nobody answered on
    /// the fallback (its [`Approver::answered_by`]) within the time waited.
    pub fn with_fallback_approver(mut self, fallback: Arc<dyn Approver>) -> Self {
        self.fallback = Some(fallback);
        self
    }

    /// At most `limit` calls of one caller run at once; one more is refused
    /// with `LIMIT_EXCEEDED` before it starts. Over HTTP the caller is the
    /// principal, so one agent cannot take every worker from the others.
    pub fn with_calls_per_caller(mut self, limit: usize) -> Self {
        self.calls = Arc::new(CallCounts {
            limit: Some(limit),
            ..CallCounts::default()
        });
        self
    }

    /// Refuses new calls and waits up to `grace` for the running ones to
    /// end; whether they all did. Shutting down calls it before it stops
    /// the sessions (which cancels what is left).
    pub async fn drain(&self, grace: Duration) -> bool {
        self.calls.drain(grace).await
    }

    /// Serves the tools of `proxy` (registered in this server's registry)
    /// with their upstreams' own progress instead of ours.
    pub fn with_proxy(mut self, proxy: Arc<Proxy>) -> Self {
        self.proxy = Some(proxy);
        self
    }

    /// Asks the client's user about *ask* verdicts of this permission layer
    /// (the one installed in the registry), by elicitation, when the client
    /// declares that it supports it.
    pub fn with_approval(mut self, permissions: PermissionMiddleware) -> Self {
        permissions.set_approver(Some(Arc::new(ClientApprover)));
        self.permissions = Some(permissions);
        self
    }

    /// Instructions the client may show the model.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The `tools/list` entries: every tool but those a deny rule refuses
    /// whatever their arguments (what the model cannot use, it is not shown).
    ///
    /// # Errors
    /// An internal error if a declaration does not read as an MCP tool
    /// (which would be a bug in the envelope).
    pub fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        let denied = |declaration: &Value| {
            let Some(permissions) = &self.permissions else {
                return false;
            };
            declaration
                .get("name")
                .and_then(Value::as_str)
                .and_then(|name| self.registry.get(name))
                .is_some_and(|tool| permissions.denies_every_call(tool.as_ref()))
        };
        self.registry
            .tool_declarations(ToolFormat::Mcp)
            .into_iter()
            .filter(|declaration| !denied(declaration))
            .map(|declaration| {
                serde_json::from_value::<Tool>(declaration).map_err(|err| {
                    ErrorData::internal_error(
                        format!("a tool declaration is not an MCP tool: {err}"),
                        None,
                    )
                })
            })
            .collect()
    }
}

/// The call id a result echoes: the JSON-RPC request id as text.
fn call_id(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) => s.to_string(),
    }
}

/// Our block as rmcp's: the two share MCP's wire shape, so every field
/// (annotations and `_meta` included) passes through. A block rmcp cannot
/// read (which would be a bug in ours) becomes a text block saying so.
fn mcp_content(block: ContentBlock) -> rmcp::model::ContentBlock {
    serde_json::to_value(&block)
        .ok()
        .and_then(|wire| serde_json::from_value(wire).ok())
        .unwrap_or_else(|| {
            rmcp::model::ContentBlock::text("Error: a content block is not in MCP's shape")
        })
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info.name = "dsh".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        if let Some(instructions) = &self.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    /// The stateless revision asks for list changes with
    /// `subscriptions/listen`: tool-list changes are what this server has.
    fn accepted_subscription_filter(
        &self,
        _requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.tools_list_changed = Some(true);
        Some(accepted)
    }

    /// Sends `notifications/tools/list_changed` on the subscription whenever
    /// the registry changes, until the client cancels it.
    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let mut changes = self.registry.subscribe();
        loop {
            tokio::select! {
                () = subscription.cancelled() => return Ok(()),
                change = changes.recv() => match change {
                    Ok(RegistryChange::Added(_) | RegistryChange::Removed(_))
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if subscription.sink().notify_tool_list_changed().await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // With its `resultType`, which the stateless revision requires.
        Ok(ListToolsResult::with_all_items(self.tools()?))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        // Over HTTP, the authenticated principal is the call's agent: what
        // it starts is its own.
        let caller = context
            .extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<crate::http::Caller>())
            .map(|caller| caller.0.clone());
        let _slot = match self.calls.enter(caller.as_deref()) {
            Ok(slot) => slot,
            Err(refused) => {
                let message = match refused {
                    NoSlot::Full(running) => format!(
                        "too many calls at once: {running} calls of this caller are running, the most it may run at a time; wait for one to finish, or run long commands in the background"
                    ),
                    NoSlot::Closing => {
                        "the server is shutting down and starts no new call".to_owned()
                    }
                };
                let refused = dsh_tools::ToolExecutionResult::from_error(
                    call_id(&context.id),
                    &dsh_tools::ToolError::new(dsh_tools::ErrorCode::LimitExceeded, message),
                );
                return Ok(mcp_result(refused).into());
            }
        };
        // The stateless revision, which has no server-to-client requests: by
        // the request's revision (over HTTP rmcp gives even a stateless
        // request a peer), or no `initialize` came.
        let stateless = context
            .protocol_version()
            .is_none_or(|version| !version.has_initialize());
        // A stateless client can be asked only with a sealed round.
        let elicits = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some())
            && (!stateless || self.seal.is_some());
        let responses = request.input_responses.unwrap_or_default();
        if !responses.is_empty() {
            // Answers count only with the state this server sealed for this
            // caller and this call; nothing runs otherwise.
            let redeemed = match &self.seal {
                Some(seal) => seal.redeem(
                    request.request_state.as_deref(),
                    caller.as_deref(),
                    &request.name,
                    &arguments,
                ),
                None => Err(StateRefusal::NotThisCall),
            };
            if let Err(refusal) = redeemed {
                return Err(ErrorData::invalid_params(
                    format!("approval answer not accepted: {refusal}"),
                    None,
                ));
            }
        }
        // Kept to seal a question about this call, should one be needed.
        let asked_about = (stateless && elicits).then(|| arguments.clone());
        let mut exec =
            ToolExecution::new(call_id(&context.id), request.name.to_string(), arguments)
                .with_cancel(context.ct.clone());
        if let Some(caller) = &caller {
            exec = exec.with_agent(caller.clone());
        }
        // The client's W3C trace context, for the trace exporter to parent on.
        let (traceparent, tracestate) = (
            context.meta.get_traceparent(),
            context.meta.get_tracestate(),
        );
        if traceparent.is_some() || tracestate.is_some() {
            exec.extensions.insert(dsh_tools::TraceContext {
                traceparent: traceparent.map(str::to_owned),
                tracestate: tracestate.map(str::to_owned),
            });
        }
        // Who sent it, for an audit trail: the client as it named itself,
        // and over HTTP the session it belongs to.
        exec.extensions.insert(dsh_tools::CallOrigin {
            client: context
                .client_info()
                .map(|c| format!("{}/{}", c.name, c.version)),
            session: context
                .extensions
                .get::<::http::request::Parts>()
                .and_then(|parts| parts.headers.get("mcp-session-id"))
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
        });
        let token = context.meta.get_progress_token();
        let progress = token.as_ref().map(|_| ToolProgress::new());
        if let Some(progress) = &progress {
            exec = exec.with_progress(progress.clone());
        }
        let client = context.client_info().map(|info| {
            let client = info.name.to_string();
            match &*info.version {
                "" => client,
                version => format!("{client} {version}"),
            }
        });
        let approval = Arc::new(CallApproval {
            peer: context.peer.clone(),
            elicits,
            stateless,
            responses,
            needed: Mutex::new(None),
            progress_token: token.clone(),
            client,
            fallback: self.fallback.clone(),
            unanswered: Mutex::new(None),
        });
        // A proxied tool forwards its upstream's progress; ours would mix in.
        let token = token.filter(|_| {
            !self
                .proxy
                .as_ref()
                .is_some_and(|proxy| proxy.owns(&request.name))
        });
        let mut run = std::pin::pin!(CALL.scope(approval.clone(), self.registry.execute(exec)));
        let result = match token.zip(progress) {
            None => run.await,
            // Most calls end within the first second: they cost one timer,
            // and only a longer one gets a task that reports its progress.
            Some((token, progress)) => match tokio::time::timeout(PROGRESS_EVERY, &mut run).await {
                Ok(result) => result,
                Err(_) => {
                    let started = Instant::now() - PROGRESS_EVERY;
                    let ticker = tokio::spawn(report_progress(
                        context.peer.clone(),
                        token,
                        started,
                        progress,
                    ));
                    let result = run.await;
                    ticker.abort();
                    result
                }
            },
        };
        if let Some(form) = approval.take_needed() {
            // Nothing ran: the permission layer asked before dispatch. The
            // client asks its user and retries with the answer and the
            // sealed state.
            let question: ElicitRequest = serde_json::from_value(serde_json::json!({
                "method": "elicitation/create",
                "params": form,
            }))
            .map_err(|err| ErrorData::internal_error(format!("cannot ask: {err}"), None))?;
            let mut requests = InputRequests::new();
            requests.insert(APPROVAL_KEY.to_owned(), InputRequest::Elicitation(question));
            // `elicits` held for a stateless call only with a seal.
            let sealed = self
                .seal
                .as_ref()
                .zip(asked_about.as_ref())
                .map(|(seal, arguments)| seal.seal(caller.as_deref(), &request.name, arguments));
            return Ok(CallToolResponse::InputRequired(InputRequiredResult::new(
                Some(requests),
                sealed,
            )));
        }
        let mut result = result;
        if let Some((by, waited)) = approval.take_unanswered() {
            let unavailable = result
                .error
                .as_ref()
                .is_some_and(|e| e.code == dsh_tools::ErrorCode::ApprovalUnavailable);
            if let (true, Some(ContentBlock::Text { text, .. })) =
                (unavailable, result.content.first_mut())
            {
                text.push_str(&format!(
                    "; nobody answered on the {by} within {} s",
                    waited.as_secs()
                ));
            }
        }
        Ok(mcp_result(result).into())
    }
}

/// A pipeline result as MCP's: a failure carries its machine-routable
/// `{name, code}` in `_meta` beside the message the model reads.
fn mcp_result(result: dsh_tools::ToolExecutionResult) -> CallToolResult {
    let content = result.content.into_iter().map(mcp_content).collect();
    let mut answer = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    answer.structured_content = result.structured_content;
    if let Some(error) = &result.error {
        answer.meta = serde_json::from_value(serde_json::json!({ "dsh/error": error })).ok();
    }
    answer
}

/// Resolves when the process gets SIGTERM or SIGINT (never, when the
/// handlers cannot be installed).
pub(crate) async fn terminated() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}

/// How often a running call reports progress: well inside the timeouts
/// clients apply to requests that report none.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Sends `notifications/progress` for a call running since `started`, now
/// and then every [`PROGRESS_EVERY`], until aborted: the seconds elapsed,
/// and what the tool counted (bytes of output for `bash`).
async fn report_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    started: Instant,
    counted: ToolProgress,
) {
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    loop {
        ticks.tick().await;
        let elapsed = started.elapsed().as_secs_f64();
        let param = serde_json::json!({
            "progressToken": token,
            "progress": elapsed.floor(),
            "message": format!(
                "running for {}s, {} bytes of output so far",
                elapsed.floor(),
                counted.value()
            ),
        });
        let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(param) else {
            return;
        };
        if peer.notify_progress(param).await.is_err() {
            return;
        }
    }
}

/// The key of the approval question in an `input_required` round.
const APPROVAL_KEY: &str = "dsh_approval";

/// What one call's approval can use: who the client is and what it can do.
struct CallApproval {
    peer: Peer<RoleServer>,
    /// The client declared elicitation (in `initialize`, or in this
    /// request's `_meta` in the stateless revision).
    elicits: bool,
    /// The stateless revision: questions go back as `input_required`.
    stateless: bool,
    /// Answers the client sent with this (retried) request.
    responses: InputResponses,
    /// The question to send back, when one is needed.
    needed: Mutex<Option<Value>>,
    /// The client's progress token for this call, if it sent one.
    progress_token: Option<ProgressToken>,
    /// The client's name and version, when it said them.
    client: Option<String>,
    /// Who is asked when the client cannot answer.
    fallback: Option<Arc<dyn Approver>>,
    /// The fallback that was asked and did not answer, and how long it was waited for.
    unanswered: Mutex<Option<(String, Duration)>>,
}

impl CallApproval {
    fn take_needed(&self) -> Option<Value> {
        self.needed.lock().ok()?.take()
    }

    fn take_unanswered(&self) -> Option<(String, Duration)> {
        self.unanswered.lock().ok()?.take()
    }

    /// Where a proxied tool sends its upstream's progress, if the client asked.
    fn downstream(&self) -> Option<upstream::Downstream> {
        Some(upstream::Downstream {
            peer: self.peer.clone(),
            token: self.progress_token.clone()?,
        })
    }
}

tokio::task_local! {
    /// The approval context of the call this task is serving.
    static CALL: Arc<CallApproval>;
}

/// The client (`name version`, as it said in `initialize` or in the
/// request's `_meta`) of the MCP call this task is serving, if any: for a
/// fallback approver that shows who asks.
pub fn calling_client() -> Option<String> {
    CALL.try_with(|call| call.client.clone()).ok().flatten()
}

/// Answers *ask* verdicts by asking the client's user: an elicitation
/// request in a session that began with `initialize`, an `input_required`
/// round in the stateless revision, and `Unavailable` when the client
/// cannot show a form.
struct ClientApprover;

/// The choices of the approval form, and what each answers.
const CHOICES: [(&str, ApprovalAnswer); 4] = [
    ("allow once", ApprovalAnswer::AllowOnce),
    ("allow always (this session)", ApprovalAnswer::AllowAlways),
    ("reject", ApprovalAnswer::RejectOnce),
    ("reject always (this session)", ApprovalAnswer::RejectAlways),
];

fn approval_message(request: &ApprovalRequest) -> String {
    format!(
        "The agent wants to {}. ({})",
        request.action(),
        request.reason
    )
}

/// The form: one required choice.
fn approval_form(request: &ApprovalRequest) -> Value {
    let names: Vec<&str> = CHOICES.iter().map(|(name, _)| *name).collect();
    serde_json::json!({
        "mode": "form",
        "message": approval_message(request),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": {"type": "string", "title": "Decision", "enum": names}
            },
            "required": ["decision"]
        }
    })
}

/// What the user chose. A decline or a cancel is not one of the form's
/// options (headless clients answer so by themselves): the call is not
/// approved, and says which rule would allow it. An accepted form without
/// a known choice refuses the call.
fn decision(answer: &ElicitResult) -> ApprovalAnswer {
    match answer.action {
        ElicitationAction::Accept => {}
        ElicitationAction::Decline => return ApprovalAnswer::Declined,
        ElicitationAction::Cancel => return ApprovalAnswer::Cancelled,
        _ => return ApprovalAnswer::RejectOnce,
    }
    let chosen = answer
        .content
        .as_ref()
        .and_then(|c| c.get("decision"))
        .and_then(Value::as_str);
    CHOICES
        .iter()
        .find(|(name, _)| Some(*name) == chosen)
        .map_or(ApprovalAnswer::RejectOnce, |(_, answer)| *answer)
}

/// Whether an answer leaves the call unanswered (no person chose an option).
fn unanswered(answer: ApprovalAnswer) -> bool {
    matches!(
        answer,
        ApprovalAnswer::Unavailable | ApprovalAnswer::Declined | ApprovalAnswer::Cancelled
    )
}

/// [`ClientApprover`] bound to one call: asks that call's client from
/// any task (its form goes to the session the call came on).
struct BoundToCall(Arc<CallApproval>);

impl Approver for BoundToCall {
    fn answered_by(&self) -> String {
        ClientApprover.answered_by()
    }

    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        CALL.sync_scope(self.0.clone(), || ClientApprover.ask(request))
    }

    fn ask_noted(&self, request: ApprovalRequest) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        CALL.sync_scope(self.0.clone(), || ClientApprover.ask_noted(request))
    }
}

impl Approver for ClientApprover {
    fn answered_by(&self) -> String {
        "client form".to_owned()
    }

    /// A stateless call is asked by answering it (`input_required`): not
    /// possible while it runs, so it is not bound (such asks are refused).
    fn for_this_call(&self) -> Option<Arc<dyn Approver>> {
        let call = CALL.try_with(Arc::clone).ok()?;
        if call.stateless {
            return None;
        }
        Some(Arc::new(BoundToCall(call)))
    }

    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        let asked = self.ask_noted(request);
        Box::pin(async move { asked.await.0 })
    }

    /// The client's answer; when it cannot give one (no elicitation, a
    /// `decline` or a `cancel`), the fallback's, if there is a fallback.
    fn ask_noted(&self, request: ApprovalRequest) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        let by = self.answered_by();
        let Ok(call) = CALL.try_with(Arc::clone) else {
            return Box::pin(std::future::ready((ApprovalAnswer::Unavailable, by)));
        };
        let from_client: BoxFuture<'static, ApprovalAnswer> = if !call.elicits {
            Box::pin(std::future::ready(ApprovalAnswer::Unavailable))
        } else if call.stateless {
            let form = approval_form(&request);
            match call.responses.get(APPROVAL_KEY) {
                Some(response) => Box::pin(std::future::ready(
                    serde_json::from_value::<ElicitResult>(response.clone())
                        .map_or(ApprovalAnswer::RejectOnce, |answer| decision(&answer)),
                )),
                None => {
                    // The question goes back as an `input_required` round:
                    // the client's own way of asking comes first.
                    if let Ok(mut needed) = call.needed.lock() {
                        *needed = Some(form);
                    }
                    return Box::pin(std::future::ready((ApprovalAnswer::Unavailable, by)));
                }
            }
        } else {
            let peer = call.peer.clone();
            let form = approval_form(&request);
            Box::pin(async move {
                let Ok(params) = serde_json::from_value::<ElicitRequestParams>(form) else {
                    return ApprovalAnswer::RejectOnce;
                };
                match peer.create_elicitation(params).await {
                    Ok(answer) => decision(&answer),
                    Err(_) => ApprovalAnswer::RejectOnce,
                }
            })
        };
        Box::pin(async move {
            let answer = from_client.await;
            let Some(fallback) = call.fallback.clone().filter(|_| unanswered(answer)) else {
                return (answer, by);
            };
            let asked = Instant::now();
            let (second, second_by) = fallback.ask_noted(request).await;
            if unanswered(second) {
                // Fails closed as without the fallback, saying it was tried.
                if let Ok(mut note) = call.unanswered.lock() {
                    *note = Some((fallback.answered_by(), asked.elapsed()));
                }
                return (answer, format!("{by}, then {second_by}"));
            }
            (second, second_by)
        })
    }
}

/// Why serving stopped with an error.
#[derive(Debug)]
pub struct ServeError(String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// Serves `server` on this process's stdin and stdout until the client
/// closes stdin, the process gets SIGTERM or SIGINT, or the connection
/// fails. Sends `notifications/tools/list_changed` whenever the registry
/// changes.
///
/// # Errors
/// A [`ServeError`] when the session cannot start or ends abnormally.
pub async fn serve_stdio(server: McpServer) -> Result<(), ServeError> {
    serve_until(server, rmcp::transport::io::stdio_pipes(), true).await
}

/// Serves `server` on any rmcp transport (an in-memory duplex, a socket)
/// until the client goes away; [`serve_stdio`] for the process's own stdio.
///
/// # Errors
/// A [`ServeError`] when the session cannot start or ends abnormally.
pub async fn serve<T, E, A>(server: McpServer, transport: T) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    serve_until(server, transport, false).await
}

/// rmcp puts a fresh `_meta.progressToken` on every request it sends. On a
/// request of ours (an approval form, a ping) it would ask the client for
/// progress notifications nobody reads, and clients log or show the stray
/// token; so this transport takes it off whatever the server asks.
struct NoProgressTokenOnOurRequests<T>(T);

impl<T> rmcp::transport::Transport<RoleServer> for NoProgressTokenOnOurRequests<T>
where
    T: rmcp::transport::Transport<RoleServer>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: rmcp::service::TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let rmcp::model::JsonRpcMessage::Request(sent) = &mut item {
            use rmcp::model::GetMeta;
            sent.request.get_meta_mut().remove("progressToken");
        }
        self.0.send(item)
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<rmcp::service::RxJsonRpcMessage<RoleServer>>> + Send
    {
        self.0.receive()
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}

async fn serve_until<T, E, A>(
    server: McpServer,
    transport: T,
    on_signals: bool,
) -> Result<(), ServeError>
where
    T: rmcp::transport::IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut changes = server.registry.subscribe();
    let transport = NoProgressTokenOnOurRequests(transport.into_transport());
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // A client that leaves before its first request ended the session
        // it never began: nothing failed.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(err) => return Err(ServeError(format!("cannot start the MCP session: {err}"))),
    };
    let peer = running.peer().clone();
    // SIGTERM and SIGINT end the session like end-of-file does.
    let stop = running.cancellation_token();
    let signals = tokio::spawn(async move {
        if on_signals {
            terminated().await;
            stop.cancel();
        }
    });
    let notifier = tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(RegistryChange::Added(_) | RegistryChange::Removed(_))
                | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let outcome = running.waiting().await;
    notifier.abort();
    signals.abort();
    outcome
        .map(|_| ())
        .map_err(|err| ServeError(format!("the MCP session ended abnormally: {err}")))
}
