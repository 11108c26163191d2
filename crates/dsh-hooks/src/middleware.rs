//! [`HooksMiddleware`]: the hooks of the settings around every tool call,
//! and [`HookApprover`]: `PermissionRequest` hooks before the user is asked.

use crate::answer::{interpret, Answer, Permission};
use crate::config::{claude_name, tool_names, HookSpec, Hooks};
use crate::run::run_hook;
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver, HookEvent, HookPermission};
use dsh_tools::{
    ContentBlock, ErrorCode, Middleware, MiddlewareResult, Next, ToolArguments, ToolError,
    ToolExecution, ToolExecutionResult,
};
use futures::future::BoxFuture;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Text a hook gives the model beyond this many characters goes to a file;
/// the model gets a preview and the path (Claude Code's limit).
pub const MODEL_TEXT_LIMIT: usize = 10_000;

/// Characters of such text shown in the preview.
const PREVIEW: usize = 2_000;

/// Where hooks log what the user should know (non-blocking errors,
/// `systemMessage`): standard error unless the host says otherwise.
pub type HookLog = Arc<dyn Fn(&str) + Send + Sync>;

/// Reads the permission mode for a hook's input (`permission_mode`).
pub type ModeSource = Arc<dyn Fn() -> String + Send + Sync>;

/// What every hook's input says about the session.
#[derive(Debug, Clone)]
pub struct Session {
    /// `session_id`.
    pub session_id: String,
    /// `transcript_path`: empty when there is none.
    pub transcript_path: String,
    /// `cwd`, and where hooks run.
    pub cwd: PathBuf,
    /// `CLAUDE_PROJECT_DIR` and `DSH_PROJECT_DIR`.
    pub project_dir: PathBuf,
}

/// Nanoseconds since the epoch: what makes this process's names unique.
fn nonce() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

impl Session {
    /// A session in `cwd` (also the project directory), with a fresh id.
    pub fn new(cwd: impl Into<PathBuf>) -> Session {
        let cwd = cwd.into();
        Session {
            session_id: format!("dsh-{}-{:x}", std::process::id(), nonce()),
            transcript_path: String::new(),
            project_dir: cwd.clone(),
            cwd,
        }
    }
}

struct Inner {
    hooks: Hooks,
    session: Session,
    log: HookLog,
    mode: ModeSource,
    spill_dir: PathBuf,
    spilled: AtomicU64,
}

/// Runs the settings' hooks around each call; see the [crate docs](crate).
/// Cheap to clone.
#[derive(Clone)]
pub struct HooksMiddleware {
    inner: Arc<Inner>,
}

impl HooksMiddleware {
    /// A middleware for `hooks` in `session`, logging to standard error,
    /// with mode `default` in the hooks' input until [`Self::with_mode`].
    pub fn new(hooks: Hooks, session: Session) -> Self {
        // Named so nobody can plant it first in the shared temp directory.
        let spill_dir =
            std::env::temp_dir().join(format!("dsh-hooks-{}-{:x}", std::process::id(), nonce()));
        HooksMiddleware {
            inner: Arc::new(Inner {
                hooks,
                session,
                log: Arc::new(|line| eprintln!("{line}")),
                mode: Arc::new(|| "default".to_owned()),
                spill_dir,
                spilled: AtomicU64::new(0),
            }),
        }
    }

    fn rebuild(self, f: impl FnOnce(&mut Inner)) -> Self {
        let inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            hooks: shared.hooks.clone(),
            session: shared.session.clone(),
            log: shared.log.clone(),
            mode: shared.mode.clone(),
            spill_dir: shared.spill_dir.clone(),
            spilled: AtomicU64::new(shared.spilled.load(Ordering::Relaxed)),
        });
        let mut inner = inner;
        f(&mut inner);
        HooksMiddleware {
            inner: Arc::new(inner),
        }
    }

    /// Where the `permission_mode` of the input comes from.
    pub fn with_mode(self, mode: ModeSource) -> Self {
        self.rebuild(|i| i.mode = mode)
    }

    /// Where non-blocking errors and `systemMessage`s go.
    pub fn with_log(self, log: HookLog) -> Self {
        self.rebuild(|i| i.log = log)
    }

    /// Where text too long for the model is written (default: a directory
    /// of this process under the system's temp directory).
    pub fn with_spill_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.rebuild(|i| i.spill_dir = dir)
    }

    /// An approver that runs the `PermissionRequest` hooks first and asks
    /// `inner` (if any) only when none of them decides.
    pub fn approver(&self, inner: Option<Arc<dyn Approver>>) -> HookApprover {
        HookApprover {
            hooks: self.clone(),
            inner,
        }
    }

    /// Whether any hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.inner.hooks.has(event)
    }
}

impl Inner {
    fn input(
        &self,
        event: HookEvent,
        tool: &str,
        tool_input: Value,
        call_id: &str,
    ) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session_id".into(), self.session.session_id.clone().into());
        m.insert(
            "transcript_path".into(),
            self.session.transcript_path.clone().into(),
        );
        m.insert("cwd".into(), self.session.cwd.display().to_string().into());
        m.insert("permission_mode".into(), (self.mode)().into());
        m.insert("hook_event_name".into(), format!("{event:?}").into());
        m.insert("tool_name".into(), tool.into());
        m.insert("tool_input".into(), tool_input);
        m.insert("tool_use_id".into(), call_id.into());
        m
    }

    /// Runs `specs` in parallel on one input; each answer with its hook.
    async fn run_all(
        &self,
        event: HookEvent,
        specs: &[HookSpec],
        input: &Map<String, Value>,
    ) -> Vec<(HookSpec, Answer)> {
        let bytes = serde_json::to_vec(input).unwrap_or_default();
        let project = self.session.project_dir.as_path();
        let env: [(&str, &Path); 2] = [
            ("CLAUDE_PROJECT_DIR", project),
            ("DSH_PROJECT_DIR", project),
        ];
        let runs = futures::future::join_all(
            specs
                .iter()
                .map(|s| run_hook(s, &bytes, &self.session.cwd, &env)),
        )
        .await;
        specs
            .iter()
            .zip(runs)
            .map(|(spec, run)| {
                let answer = interpret(event, spec, &run);
                if let Some(e) = &answer.error {
                    (self.log)(&format!(
                        "[dsh] {event:?} hook `{}`: {e}; the call goes on",
                        spec.command
                    ));
                }
                if let Some(m) = &answer.message {
                    (self.log)(&format!("[dsh] {event:?} hook `{}`: {m}", spec.command));
                }
                (spec.clone(), answer)
            })
            .collect()
    }

    /// Text for the model: as it is, or over the limit a preview and the
    /// file holding all of it.
    fn for_model(&self, text: &str) -> String {
        if text.chars().count() <= MODEL_TEXT_LIMIT {
            return text.to_owned();
        }
        let n = self.spilled.fetch_add(1, Ordering::Relaxed);
        let file = self.spill_dir.join(format!("hook-output-{n}.txt"));
        let written =
            dsh_sandbox::private_dir(&self.spill_dir).and_then(|()| std::fs::write(&file, text));
        let preview: String = text.chars().take(PREVIEW).collect();
        match written {
            Ok(()) => format!(
                "{preview}…\n[hook output of {} characters; all of it is in {}]",
                text.chars().count(),
                file.display()
            ),
            Err(e) => format!(
                "{preview}…\n[hook output of {} characters, cut: it could not be written to {}: {e}]",
                text.chars().count(),
                file.display()
            ),
        }
    }
}

/// Our arguments as Claude Code's tool input: bash's `timeout_ms` also as
/// Claude Code's `timeout` (milliseconds too).
fn claude_input(tool: &str, args: &Value) -> Value {
    let mut v = args.clone();
    if tool == "bash" {
        if let Some(obj) = v.as_object_mut() {
            if let Some(ms) = obj.get("timeout_ms").cloned() {
                obj.entry("timeout").or_insert(ms);
            }
        }
    }
    v
}

/// An `updatedInput` back as our arguments: Claude Code's `timeout` is
/// bash's `timeout_ms`.
fn from_claude_input(tool: &str, mut v: Value) -> Value {
    if tool == "bash" {
        if let Some(obj) = v.as_object_mut() {
            if let Some(ms) = obj.remove("timeout") {
                obj.entry("timeout_ms").or_insert(ms);
            }
        }
    }
    v
}

fn blocked(reason: String) -> ToolError {
    ToolError::new(ErrorCode::HookBlocked, reason)
}

impl Middleware for HooksMiddleware {
    fn handle(&self, mut exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult> {
        let inner = self.inner.clone();
        let Some(tool) = next.tool(&exec.name) else {
            return Box::pin(async move { Ok(next.run(exec).await) });
        };
        let names = tool_names(&exec.name, tool.aliases());
        let pre = inner.hooks.matching(HookEvent::PreToolUse, &names);
        let post = inner.hooks.matching(HookEvent::PostToolUse, &names);
        let failure = inner.hooks.matching(HookEvent::PostToolUseFailure, &names);
        let Some(args) = exec.arguments.as_value().cloned() else {
            // Not JSON: dispatch refuses it and nothing runs.
            return Box::pin(async move { Ok(next.run(exec).await) });
        };
        if pre.is_empty() && post.is_empty() && failure.is_empty() {
            return Box::pin(async move { Ok(next.run(exec).await) });
        }
        let claude = claude_name(&exec.name, tool.aliases());
        let schema_check = {
            let tool = tool.clone();
            move |v: &Value| tool.check_arguments(v)
        };
        Box::pin(async move {
            let mut context = Vec::new();
            let mut args = args;
            if !pre.is_empty() {
                let input = inner.input(
                    HookEvent::PreToolUse,
                    &claude,
                    claude_input(&exec.name, &args),
                    &exec.call_id,
                );
                let answers = inner.run_all(HookEvent::PreToolUse, &pre, &input).await;
                if let Some(reason) = answers.iter().find_map(|(_, a)| a.block.clone()) {
                    return Err(blocked(inner.for_model(&reason)));
                }
                if let Some(reason) = answers.iter().find_map(|(_, a)| a.stop.clone()) {
                    return Err(blocked(format!(
                        "stopped by a PreToolUse hook: {}",
                        inner.for_model(&reason)
                    )));
                }
                let decision = answers
                    .iter()
                    .filter_map(|(_, a)| a.permission.clone())
                    .max_by_key(|(p, _)| *p);
                context.extend(answers.iter().filter_map(|(_, a)| a.context.clone()));
                match decision {
                    Some((Permission::Deny, why)) => {
                        let why = if why.is_empty() {
                            "no reason given".to_owned()
                        } else {
                            inner.for_model(&why)
                        };
                        return Err(ToolError::new(
                            ErrorCode::PermissionDenied,
                            format!("permission denied by a PreToolUse hook: {why}"),
                        ));
                    }
                    Some((Permission::Ask, why)) => {
                        exec.extensions.insert(HookPermission::Ask(why))
                    }
                    Some((Permission::Allow, why)) => {
                        exec.extensions.insert(HookPermission::Allow(why))
                    }
                    // Claude Code hands a deferred call to whoever drives
                    // it (the SDK's caller): here, the approver.
                    Some((Permission::Defer, why)) => {
                        exec.extensions
                            .insert(HookPermission::Ask(if why.is_empty() {
                                "deferred by a PreToolUse hook".to_owned()
                            } else {
                                format!("deferred by a PreToolUse hook: {why}")
                            }))
                    }
                    None => {}
                }
                if let Some(updated) = answers.iter().find_map(|(_, a)| a.updated_input.clone()) {
                    let updated = from_claude_input(&exec.name, updated);
                    if let Err(e) = schema_check(&updated) {
                        return Err(ToolError::new(
                            ErrorCode::InvalidArgs,
                            format!(
                                "a PreToolUse hook's updatedInput is not valid for {}: {}",
                                exec.name,
                                e.message()
                            ),
                        ));
                    }
                    exec.arguments = ToolArguments::from_value(updated.clone());
                    args = updated;
                }
            }
            let call_id = exec.call_id.clone();
            let name = exec.name.clone();
            let started = Instant::now();
            let mut result = next.run(exec).await;
            let (event, specs) = if result.is_error {
                (HookEvent::PostToolUseFailure, failure)
            } else {
                (HookEvent::PostToolUse, post)
            };
            // A call refused before it ran has no post event (Claude Code
            // fires PostToolUseFailure for tools that started and failed).
            let never_ran = matches!(
                result.code(),
                Some(
                    ErrorCode::PermissionDenied
                        | ErrorCode::ApprovalUnavailable
                        | ErrorCode::PlanMode
                        | ErrorCode::HookBlocked
                        | ErrorCode::InvalidArgs
                        | ErrorCode::UnknownTool
                        | ErrorCode::AbortedBeforeDispatch
                )
            );
            if !specs.is_empty() && !never_ran {
                let mut input = inner.input(event, &claude, claude_input(&name, &args), &call_id);
                input.insert(
                    "tool_response".into(),
                    serde_json::to_value(&result).unwrap_or(Value::Null),
                );
                input.insert(
                    "duration_ms".into(),
                    json!(started.elapsed().as_millis() as u64),
                );
                if result.is_error {
                    input.insert("error".into(), result.text().into());
                    input.insert(
                        "is_interrupt".into(),
                        json!(matches!(result.code(), Some(ErrorCode::Aborted))),
                    );
                }
                let answers = inner.run_all(event, &specs, &input).await;
                context.extend(answers.iter().filter_map(|(_, a)| a.context.clone()));
                let block = answers.iter().find_map(|(_, a)| {
                    a.block
                        .clone()
                        .or_else(|| a.post_block.clone())
                        .or_else(|| a.stop.clone())
                });
                if let Some(reason) = block {
                    let original = std::mem::take(&mut result.content);
                    result = ToolExecutionResult::from_error(
                        call_id,
                        &blocked(format!("{event:?} hook: {}", inner.for_model(&reason))),
                    );
                    result.content.extend(original);
                }
            }
            for c in context {
                result.content.push(ContentBlock::text(format!(
                    "[hook context] {}",
                    inner.for_model(&c)
                )));
            }
            Ok(result)
        })
    }
}

/// Runs `PermissionRequest` hooks before an *ask* reaches the user: a hook
/// that allows or denies answers it (as *allow once* / *reject once*), one
/// that exits 2 denies, and otherwise the inner approver is asked (or,
/// without one, the ask fails closed as before).
#[derive(Clone)]
pub struct HookApprover {
    hooks: HooksMiddleware,
    inner: Option<Arc<dyn Approver>>,
}

/// Who answered, when a `PermissionRequest` hook did.
const HOOK_ANSWERS: &str = "PermissionRequest hook";

impl Approver for HookApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        let noted = self.ask_noted(request);
        Box::pin(async move { noted.await.0 })
    }

    fn answered_by(&self) -> String {
        HOOK_ANSWERS.to_owned()
    }

    fn ask_noted(&self, request: ApprovalRequest) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        let inner = self.hooks.inner.clone();
        let next = self.inner.clone();
        Box::pin(async move {
            let names = tool_names(&request.tool, &request.tool_aliases);
            let specs = inner.hooks.matching(HookEvent::PermissionRequest, &names);
            if !specs.is_empty() {
                let claude = claude_name(&request.tool, &request.tool_aliases);
                let mut input = inner.input(
                    HookEvent::PermissionRequest,
                    &claude,
                    claude_input(&request.tool, &request.arguments),
                    &request.call_id,
                );
                input.insert("permission_suggestions".into(), json!([]));
                let answers = inner
                    .run_all(HookEvent::PermissionRequest, &specs, &input)
                    .await;
                if answers.iter().any(|(_, a)| a.block.is_some()) {
                    return (ApprovalAnswer::RejectOnce, HOOK_ANSWERS.to_owned());
                }
                match answers
                    .iter()
                    .filter_map(|(_, a)| a.permission.clone())
                    .max_by_key(|(p, _)| *p)
                {
                    Some((Permission::Deny, _)) => {
                        return (ApprovalAnswer::RejectOnce, HOOK_ANSWERS.to_owned())
                    }
                    Some((Permission::Allow, _)) => {
                        return (ApprovalAnswer::AllowOnce, HOOK_ANSWERS.to_owned())
                    }
                    _ => {}
                }
            }
            match next {
                Some(approver) => approver.ask_noted(request).await,
                None => (ApprovalAnswer::Unavailable, "nobody".to_owned()),
            }
        })
    }
}
