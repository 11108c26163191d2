//! One call in flight ([`ToolExecution`]) and its outcome ([`ToolExecutionResult`]).

use crate::content::ContentBlock;
use crate::error::{ErrorCode, ToolError};
use crate::validate::{parse_arguments, Violation};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::OnceLock;
use tokio_util::sync::CancellationToken;

/// The arguments of a call, as the model sent them: a parsed JSON value, or
/// the model's argument text, parsed the first time someone looks.
///
/// Text is parsed at most once, and only when needed: a middleware that reads
/// [`ToolArguments::as_value`] parses it (see [`parse_arguments`] for what is
/// accepted); a typed tool whose arguments serde checks exactly (see
/// [`ToolArgs::SERDE_EXACT`](crate::ToolArgs::SERDE_EXACT)) reads its struct
/// straight from the text when nobody did.
///
/// ```
/// use dsh_tools::ToolArguments;
///
/// let args = ToolArguments::from("{\"path\": \"a.txt\"}");
/// assert_eq!(args.as_value().unwrap()["path"], "a.txt");
///
/// let bad = ToolArguments::from("{\"path\": ");
/// assert!(bad.as_value().is_none());
/// assert_eq!(bad.raw_text(), Some("{\"path\": "));
/// assert_eq!(
///     bad.violation().unwrap().message(),
///     "\"arguments\" is not valid JSON: EOF while parsing a value at line 1 column 9"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct ToolArguments {
    /// Boxed: a [`ToolExecution`] is moved into and out of every middleware
    /// layer, and with the arguments behind a pointer it is small enough to
    /// be moved inline rather than by a `memcpy` call.
    repr: Box<Repr>,
}

#[derive(Debug, Clone)]
enum Repr {
    Json(Value),
    Text {
        text: String,
        parsed: OnceLock<Result<Value, Box<Violation>>>,
    },
}

impl ToolArguments {
    /// The model's raw argument text, parsed when first needed.
    pub fn from_raw(raw: impl Into<String>) -> Self {
        ToolArguments {
            repr: Box::new(Repr::Text {
                text: raw.into(),
                parsed: OnceLock::new(),
            }),
        }
    }

    /// Already parsed arguments.
    pub fn from_value(value: Value) -> Self {
        ToolArguments {
            repr: Box::new(Repr::Json(value)),
        }
    }

    fn parsed(&self) -> Result<&Value, &Violation> {
        match &*self.repr {
            Repr::Json(value) => Ok(value),
            Repr::Text { text, parsed } => parsed
                .get_or_init(|| parse_arguments(text).map_err(Box::new))
                .as_ref()
                .map_err(|v| &**v),
        }
    }

    /// The parsed arguments, or `None` when the text is not JSON.
    pub fn as_value(&self) -> Option<&Value> {
        self.parsed().ok()
    }

    /// Why the text is not JSON (`"arguments" is not valid JSON: …`), or
    /// `None` when the arguments parse.
    pub fn violation(&self) -> Option<&Violation> {
        self.parsed().err()
    }

    /// The text the model sent, when the arguments came as text.
    pub fn raw_text(&self) -> Option<&str> {
        match &*self.repr {
            Repr::Json(_) => None,
            Repr::Text { text, .. } => Some(text),
        }
    }

    /// The text, when it came as text and nobody has parsed it yet.
    pub(crate) fn unparsed_text(&self) -> Option<&str> {
        match &*self.repr {
            Repr::Text { text, parsed } if parsed.get().is_none() => Some(text),
            _ => None,
        }
    }

    /// The arguments as JSON for display: the parsed value, or the raw text
    /// as a JSON string when it is not JSON.
    pub fn to_value(&self) -> Value {
        match self.parsed() {
            Ok(value) => value.clone(),
            Err(_) => Value::String(self.raw_text().unwrap_or_default().to_owned()),
        }
    }

    /// The parsed arguments, or the parse error.
    ///
    /// # Errors
    /// The violation of text that is not JSON.
    pub fn into_value(self) -> Result<Value, Violation> {
        match *self.repr {
            Repr::Json(value) => Ok(value),
            Repr::Text { text, parsed } => match parsed.into_inner() {
                Some(Ok(value)) => Ok(value),
                Some(Err(violation)) => Err(*violation),
                None => parse_arguments(&text),
            },
        }
    }
}

impl PartialEq for ToolArguments {
    /// Equal when both parse to the same value, or both are the same text
    /// that does not parse.
    fn eq(&self, other: &Self) -> bool {
        match (self.parsed(), other.parsed()) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => self.raw_text() == other.raw_text(),
            _ => false,
        }
    }
}

/// A call's arguments as presenters read them: a parsed [`Value`], or the
/// [`ToolArguments`] of a call as they are (no clone either way).
pub trait CallArguments {
    /// The parsed arguments, or `None` when the model's text was not JSON.
    fn as_json(&self) -> Option<&Value>;
    /// The arguments for a generic display: the value, or the raw text.
    fn to_display(&self) -> Value;
}

impl CallArguments for Value {
    fn as_json(&self) -> Option<&Value> {
        Some(self)
    }

    fn to_display(&self) -> Value {
        self.clone()
    }
}

impl CallArguments for ToolArguments {
    fn as_json(&self) -> Option<&Value> {
        self.as_value()
    }

    fn to_display(&self) -> Value {
        self.to_value()
    }
}

impl From<Value> for ToolArguments {
    fn from(value: Value) -> Self {
        ToolArguments::from_value(value)
    }
}

impl From<&str> for ToolArguments {
    fn from(raw: &str) -> Self {
        ToolArguments::from_raw(raw)
    }
}

impl From<String> for ToolArguments {
    fn from(raw: String) -> Self {
        ToolArguments::from_raw(raw)
    }
}

/// How far a running call has got, in its tool's own unit (the bash tool
/// counts bytes of output): the tool adds to it, a front-end reads it to
/// report progress. Cheap to clone; clones share the count.
///
/// ```
/// use dsh_tools::ToolProgress;
///
/// let progress = ToolProgress::new();
/// let seen_by_the_tool = progress.clone();
/// seen_by_the_tool.add(512);
/// assert_eq!(progress.value(), 512);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolProgress(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl ToolProgress {
    /// A count at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `amount` to the count.
    pub fn add(&self, amount: u64) {
        self.0
            .fetch_add(amount, std::sync::atomic::Ordering::Relaxed);
    }

    /// The count so far.
    pub fn value(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// One pending call: what the model asked for, on whose behalf, and how to stop it.
///
/// Middleware receives it by value and may rewrite it (e.g. its arguments)
/// before passing it on.
#[derive(Debug, Clone)]
pub struct ToolExecution {
    /// The model's id for the call; echoed in the result.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub arguments: ToolArguments,
    /// The agent on whose behalf the call runs.
    pub agent: Option<String>,
    /// Fires to abort the call; `None` when nobody can abort it (then the
    /// call costs no token and no cancellation race).
    pub cancel: Option<CancellationToken>,
    /// Where the tool reports how far it got, when someone reads it.
    pub progress: Option<ToolProgress>,
    /// What an outer middleware hands to inner ones about this call (a
    /// hook's permission decision for the permission layer, say).
    pub extensions: Extensions,
}

/// Values of any type, one per type, carried with a call from one
/// middleware to the next. Cheap to clone (values are shared).
///
/// ```
/// use dsh_tools::Extensions;
///
/// #[derive(Debug, PartialEq)]
/// struct Approved(bool);
///
/// let mut ext = Extensions::default();
/// ext.insert(Approved(true));
/// assert_eq!(ext.get::<Approved>(), Some(&Approved(true)));
/// assert_eq!(ext.get::<String>(), None);
/// ```
#[derive(Clone, Default)]
pub struct Extensions {
    values: Vec<(
        std::any::TypeId,
        std::sync::Arc<dyn std::any::Any + Send + Sync>,
    )>,
}

impl Extensions {
    /// Sets the value of type `T`, replacing one set before.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        let id = std::any::TypeId::of::<T>();
        self.values.retain(|(t, _)| *t != id);
        self.values.push((id, std::sync::Arc::new(value)));
    }

    /// The value of type `T`, if one was set.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        let id = std::any::TypeId::of::<T>();
        self.values
            .iter()
            .find(|(t, _)| *t == id)
            .and_then(|(_, v)| v.downcast_ref::<T>())
    }

    /// Removes the value of type `T`.
    pub fn remove<T: Send + Sync + 'static>(&mut self) {
        let id = std::any::TypeId::of::<T>();
        self.values.retain(|(t, _)| *t != id);
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Extensions({} values)", self.values.len())
    }
}

impl ToolExecution {
    /// A call with no agent and no cancellation token.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<ToolArguments>,
    ) -> Self {
        ToolExecution {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            agent: None,
            cancel: None,
            progress: None,
            extensions: Extensions::default(),
        }
    }

    /// Sets where the tool reports how far it got.
    pub fn with_progress(mut self, progress: ToolProgress) -> Self {
        self.progress = Some(progress);
        self
    }

    /// Sets the agent.
    pub fn with_agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Sets the cancellation token: firing it aborts the call.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    /// The call's token, created if it has none (for a middleware that
    /// must be able to stop the call it passes on).
    pub fn cancel_token(&mut self) -> &CancellationToken {
        self.cancel.get_or_insert_with(CancellationToken::new)
    }
}

/// What the body of a tool sees of its call besides the arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The model's id for the call.
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The agent on whose behalf the call runs.
    pub agent: Option<String>,
    /// Fires when the call is aborted or times out; `None` when nothing can
    /// abort it. Read it through [`ToolContext::cancelled`] and friends.
    pub cancel: Option<CancellationToken>,
    /// Where to report how far the call got, when the caller reads it.
    pub progress: Option<ToolProgress>,
    /// What the middleware handed along with the call (e.g. a [`LiveOutput`]).
    pub extensions: Extensions,
}

/// Where a tool shows its output while it runs, for a UI that draws it
/// live (an editor's terminal card): called with each chunk as it comes,
/// before the result. Put it in the call's [`Extensions`].
#[derive(Clone)]
pub struct LiveOutput(std::sync::Arc<ChunkSink>);

/// What a [`LiveOutput`] calls with each chunk.
type ChunkSink = dyn Fn(&[u8]) + Send + Sync;

impl LiveOutput {
    /// A sink calling `f` with each chunk.
    pub fn new(f: impl Fn(&[u8]) + Send + Sync + 'static) -> Self {
        LiveOutput(std::sync::Arc::new(f))
    }

    /// Hands over one chunk.
    pub fn emit(&self, bytes: &[u8]) {
        (self.0)(bytes)
    }
}

/// Who sent a call, as the front-end that received it knows: put in the
/// call's [`Extensions`] by the protocol layer (MCP, ACP) for whoever keeps
/// an audit trail. The principal is [`ToolExecution::agent`]; this is the
/// rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallOrigin {
    /// The client program, as it named itself (MCP `clientInfo`, ACP
    /// `clientInfo`): `name` or `name/version`.
    pub client: Option<String>,
    /// The protocol session the call came in (the MCP session id over
    /// HTTP, the ACP session id), when there is one.
    pub session: Option<String>,
}

/// What the permission layer asks the kernel to hold for one call, put in
/// the call's [`Extensions`] for the tool that runs commands.
///
/// A call that runs only because the analysis of its text judged it
/// read-only (no rule, no person, no hook allowed it) must not depend on
/// that analysis being right: the tool runs it unable to write outside its
/// private temp directory and with the network off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelHold {
    /// Run confined read-only, network off, whatever sandbox the settings ask for.
    ReadOnly,
}

/// The W3C trace context a call came with (the MCP request's `_meta`
/// `traceparent` and `tracestate`), put in the call's [`Extensions`] by the
/// protocol layer for whoever exports traces. Kept as the client sent it:
/// the exporter checks it, and an invalid one makes no parent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`: `00-<trace id>-<parent span id>-<flags>`.
    pub traceparent: Option<String>,
    /// `tracestate`: vendor entries that travel with the trace.
    pub tracestate: Option<String>,
}

impl std::fmt::Debug for LiveOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveOutput")
    }
}

impl ToolContext {
    /// A context for calling a body directly (tests, benches): no agent, no token.
    pub fn new(call_id: impl Into<String>, name: impl Into<String>) -> Self {
        ToolContext {
            call_id: call_id.into(),
            name: name.into(),
            agent: None,
            cancel: None,
            progress: None,
            extensions: Extensions::default(),
        }
    }

    /// Whether the call has been aborted (or timed out).
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Completes when the call is aborted; never, when nothing can abort it.
    ///
    /// # Cancel safety
    /// Cancel safe, as [`CancellationToken::cancelled`] is.
    pub async fn cancelled(&self) {
        match &self.cancel {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// A token that fires when the call is aborted, to hand to code that
    /// takes one (an executor, a child task); one that never fires when
    /// nothing can abort the call.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone().unwrap_or_default()
    }
}

/// Machine-routable error structure on a failed result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolErrorInfo {
    /// The error class name (e.g. `ToolArgsError`).
    pub name: String,
    /// The code.
    pub code: ErrorCode,
}

/// The outcome of one call. Every failure is one of these, never an `Err`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolExecutionResult {
    /// The call's id.
    pub call_id: String,
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// Whether the call failed.
    pub is_error: bool,
    /// The failure's code, when it failed with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolErrorInfo>,
    /// A JSON value matching the tool's output schema (MCP's
    /// `structuredContent`), when the tool gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
}

/// What a body returns when content blocks alone do not say it: a JSON
/// value beside them (MCP's `structuredContent`), or a failure whose
/// content is the tool's own (an upstream MCP server's `isError` result),
/// which the model reads as the tool wrote it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolOutput {
    /// What the model sees.
    pub content: Vec<ContentBlock>,
    /// The structured value, if any.
    pub structured_content: Option<Value>,
    /// The tool reports a failure (code `TOOL_ERROR`).
    pub is_error: bool,
}

impl From<Vec<ContentBlock>> for ToolOutput {
    fn from(content: Vec<ContentBlock>) -> Self {
        ToolOutput {
            content,
            ..ToolOutput::default()
        }
    }
}

impl ToolExecutionResult {
    /// A successful result.
    pub fn ok(call_id: impl Into<String>, content: Vec<ContentBlock>) -> Self {
        ToolExecutionResult {
            call_id: call_id.into(),
            content,
            is_error: false,
            error: None,
            structured_content: None,
        }
    }

    /// The result of a body's [`ToolOutput`].
    pub fn from_output(call_id: impl Into<String>, output: ToolOutput) -> Self {
        let error = output.is_error.then(|| ToolErrorInfo {
            name: ErrorCode::ToolError.error_name().to_owned(),
            code: ErrorCode::ToolError,
        });
        ToolExecutionResult {
            call_id: call_id.into(),
            content: output.content,
            is_error: output.is_error,
            error,
            structured_content: output.structured_content,
        }
    }

    /// A failed result: one text block `Error: <message>` and `{name, code}`.
    pub fn from_error(call_id: impl Into<String>, error: &ToolError) -> Self {
        ToolExecutionResult {
            call_id: call_id.into(),
            content: vec![ContentBlock::text(format!("Error: {}", error.message()))],
            is_error: true,
            error: Some(ToolErrorInfo {
                name: error.code().error_name().to_owned(),
                code: error.code(),
            }),
            structured_content: None,
        }
    }

    /// A failed result with an explicit code and message.
    pub fn failure(
        call_id: impl Into<String>,
        code: ErrorCode,
        message: impl Into<String>,
    ) -> Self {
        Self::from_error(call_id, &ToolError::new(code, message))
    }

    /// The error code, if the call failed with one.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().map(|e| e.code)
    }

    /// All text blocks joined with newlines.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for block in &self.content {
            if let Some(text) = block.as_text() {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(text);
            }
        }
        out
    }
}

/// Hints about a tool's behaviour, for the host and its policy: never part of
/// a model request. The fields and their wire names are MCP's tool
/// annotations (`readOnlyHint`, …), so an MCP server or proxy maps them
/// exactly, absent included.
///
/// An absent hint means what MCP says it means: not read-only, **destructive**
/// (when not read-only), not idempotent, and **open-world**. Read them through
/// the accessors ([`ToolAnnotations::is_destructive`], …), which apply those
/// defaults. Like MCP clients, treat hints from a tool you do not trust as
/// untrusted.
///
/// ```
/// use dsh_tools::ToolAnnotations;
///
/// let hints = ToolAnnotations::default();
/// assert!(!hints.is_read_only());
/// assert!(hints.is_destructive());
/// assert!(hints.is_open_world());
/// assert_eq!(serde_json::to_value(&hints).unwrap(), serde_json::json!({}));
///
/// let reader = ToolAnnotations::read_only().with_title("Read a file");
/// assert_eq!(
///     serde_json::to_value(&reader).unwrap(),
///     serde_json::json!({"title": "Read a file", "readOnlyHint": true})
/// );
/// assert!(!reader.is_destructive());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not change its environment. Absent: `false`.
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub read_only: Option<bool>,
    /// The tool may destroy or overwrite data; meaningful only when it is not
    /// read-only. Absent: `true`.
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub destructive: Option<bool>,
    /// Calling it twice with the same arguments has no further effect;
    /// meaningful only when it is not read-only. Absent: `false`.
    #[serde(
        rename = "idempotentHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub idempotent: Option<bool>,
    /// The tool reaches an open world (the network, other people's systems)
    /// rather than a closed one (a local store). Absent: `true`.
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// Hints for a tool that changes nothing: `readOnlyHint: true`.
    pub fn read_only() -> Self {
        ToolAnnotations {
            read_only: Some(true),
            ..ToolAnnotations::default()
        }
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Whether the tool changes nothing (absent: `false`).
    pub fn is_read_only(&self) -> bool {
        self.read_only.unwrap_or(false)
    }

    /// Whether the tool may destroy data: never for a read-only tool, else
    /// the hint (absent: `true`).
    pub fn is_destructive(&self) -> bool {
        !self.is_read_only() && self.destructive.unwrap_or(true)
    }

    /// Whether repeating a call has no further effect (absent: `false`).
    pub fn is_idempotent(&self) -> bool {
        self.idempotent.unwrap_or(false)
    }

    /// Whether the tool reaches an open world (absent: `true`).
    pub fn is_open_world(&self) -> bool {
        self.open_world.unwrap_or(true)
    }
}
