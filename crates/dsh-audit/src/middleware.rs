//! [`AuditMiddleware`]: the layer that records every call.

use crate::mask::Masking;
use crate::record::{CallRecord, Outcome, RecordedApproval, RecordedDecision, RECORD_VERSION};
use crate::time::{epoch_ms, format_rfc3339_ms};
use crate::writer::AuditLog;
use dsh_policy::{DecisionNote, DecisionSlot, RuleSource};
use dsh_tools::{
    CallOrigin, ContentBlock, ErrorCode, Middleware, MiddlewareFuture, Next, ToolError,
    ToolExecution, ToolExecutionResult,
};
use serde_json::Value;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// Who else gets each record (telemetry, a page of recent calls): called on
/// the call's task once the record is made, before it is returned.
pub type RecordObserver = Arc<dyn Fn(&CallRecord) + Send + Sync>;

/// Records every call that passes through it: install it **outermost**
/// (`ToolRegistry::use_middleware_first`, after every other layer is in
/// place), so that what a hook blocks, a rule denies or nobody approves is
/// recorded too.
///
/// It puts a [`DecisionSlot`] in the call's extensions for the permission
/// layer to fill (or uses the one already there: layers inside it that want
/// the decision too should likewise reuse it rather than replace it), runs the call, and makes a [`CallRecord`] from the call,
/// the slot, the [`CallOrigin`] a front-end put in the call, and the result.
/// The record goes to the [`AuditLog`] (when there is one) and to each
/// [`RecordObserver`].
#[derive(Clone)]
pub struct AuditMiddleware {
    inner: Arc<Inner>,
}

#[derive(Clone)]
struct Inner {
    log: Option<AuditLog>,
    masking: Masking,
    sources: Vec<RuleSource>,
    sandbox: String,
    session: Option<String>,
    observers: Vec<RecordObserver>,
}

impl AuditMiddleware {
    /// Records to `log` (or to the observers alone, with `None`), masking
    /// with `masking`.
    pub fn new(log: Option<AuditLog>, masking: Masking) -> Self {
        AuditMiddleware {
            inner: Arc::new(Inner {
                log,
                masking,
                sources: Vec::new(),
                sandbox: "none".to_owned(),
                session: None,
                observers: Vec::new(),
            }),
        }
    }

    fn inner_mut(&mut self) -> &mut Inner {
        // Configured before installation; a clone made earlier keeps its own.
        Arc::make_mut(&mut self.inner)
    }

    /// The file each rule came from (`Pipeline::rule_sources`), to name it
    /// beside the rule.
    pub fn with_rule_sources(mut self, sources: Vec<RuleSource>) -> Self {
        self.inner_mut().sources = sources;
        self
    }

    /// The sandbox mode of the settings (`read-only`, `workspace-write`,
    /// `danger-full-access`; `none` without a sandbox, the default).
    pub fn with_sandbox(mut self, mode: impl Into<String>) -> Self {
        self.inner_mut().sandbox = mode.into();
        self
    }

    /// The session of calls whose front-end names none (one `dsh mcp`
    /// process on stdio is one session).
    pub fn with_session(mut self, session: impl Into<String>) -> Self {
        self.inner_mut().session = Some(session.into());
        self
    }

    /// Hands every record to `observer` too.
    pub fn with_observer(mut self, observer: RecordObserver) -> Self {
        self.inner_mut().observers.push(observer);
        self
    }

    /// The log written to, if any.
    pub fn log(&self) -> Option<&AuditLog> {
        self.inner.log.as_ref()
    }
}

/// What is known of a call before it runs.
struct Started {
    time: SystemTime,
    at: Instant,
    call_id: String,
    tool: String,
    agent: Option<String>,
    origin: Option<CallOrigin>,
    trace: Option<dsh_tools::TraceContext>,
    arguments: Value,
    found: Vec<String>,
    escalated: bool,
}

impl Middleware for AuditMiddleware {
    fn handle(&self, mut exec: ToolExecution, next: Next) -> MiddlewareFuture {
        let inner = self.inner.clone();
        // One slot per call: a layer outside this one may have put it there.
        let slot = match exec.extensions.get::<DecisionSlot>() {
            Some(slot) => slot.clone(),
            None => {
                let slot = DecisionSlot::new();
                exec.extensions.insert(slot.clone());
                slot
            }
        };
        let mut found = Vec::new();
        let arguments = match exec.arguments.as_value() {
            Some(args) => inner.masking.arguments(args, &mut found),
            None => inner.masking.arguments(
                &Value::String(exec.arguments.raw_text().unwrap_or_default().to_owned()),
                &mut found,
            ),
        };
        let escalated = exec
            .arguments
            .as_value()
            .and_then(|a| a.get("sandbox_permissions"))
            .and_then(Value::as_str)
            == Some("require_escalated");
        let started = Started {
            time: SystemTime::now(),
            at: Instant::now(),
            call_id: exec.call_id.clone(),
            tool: exec.name.clone(),
            agent: exec.agent.clone(),
            origin: exec.extensions.get::<CallOrigin>().cloned(),
            trace: exec.extensions.get::<dsh_tools::TraceContext>().cloned(),
            arguments,
            found,
            escalated,
        };
        // Should the call's future be dropped before it ends (its caller
        // went away), the guard still records it, as abandoned.
        let mut guard = Abandoned {
            inner: inner.clone(),
            started: Some(started),
            slot: slot.clone(),
        };
        Box::pin(async move {
            let refused = inner
                .log
                .as_ref()
                .filter(|log| log.fail_closed() && !log.healthy())
                .map(|log| {
                    ToolError::new(
                        ErrorCode::AuditUnavailable,
                        format!(
                            "not run: the audit log in {} cannot be written ({}), and the settings say calls must not run unrecorded (audit.failClosed)",
                            log.dir().display(),
                            log.last_error().unwrap_or_else(|| "unknown error".into())
                        ),
                    )
                });
            let call_id = exec.call_id.clone();
            let mut result = match &refused {
                Some(err) => ToolExecutionResult::from_error(call_id.as_str(), err),
                None => next.run(exec).await,
            };
            let Some(started) = guard.started.take() else {
                return Ok(result);
            };
            let record = inner.record(&started, &slot.note(), &result);
            for observer in &inner.observers {
                observer(&record);
            }
            if let Some(log) = &inner.log {
                if log.fail_closed() {
                    if let Err(why) = log.write(record.to_line()).await {
                        if refused.is_none() {
                            result = ToolExecutionResult::from_error(
                                call_id.as_str(),
                                &ToolError::new(
                                    ErrorCode::AuditUnavailable,
                                    format!(
                                        "the call ran, but its audit record could not be written to {} ({why}); the settings say calls must not go unrecorded (audit.failClosed), so calls are refused until it can be written",
                                        log.dir().display()
                                    ),
                                ),
                            );
                        }
                    }
                } else {
                    log.submit(record.to_line());
                }
            }
            Ok(result)
        })
    }
}

/// Records a call whose future was dropped before it ended.
struct Abandoned {
    inner: Arc<Inner>,
    started: Option<Started>,
    slot: DecisionSlot,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(started) = self.started.take() else {
            return;
        };
        let result = ToolExecutionResult::from_error(
            started.call_id.as_str(),
            &ToolError::new(
                ErrorCode::Aborted,
                "abandoned: the call's caller went away before it ended",
            ),
        );
        let record = self.inner.record(&started, &self.slot.note(), &result);
        for observer in &self.inner.observers {
            observer(&record);
        }
        if let Some(log) = &self.inner.log {
            log.submit(record.to_line());
        }
    }
}

impl Inner {
    fn record(&self, s: &Started, note: &DecisionNote, result: &ToolExecutionResult) -> CallRecord {
        let scrub = |t: &str| Masking::scrub(&self.masking.text(t, &mut Vec::new()), &s.found);
        let code = result.error.as_ref().map(|e| e.code);
        let mut decision = note.decision.map(|verdict| {
            let rule_file = note.rule.as_ref().map(|rule| {
                self.sources
                    .iter()
                    .find(|src| src.rule == *rule && src.list == verdict.as_str())
                    .or_else(|| self.sources.iter().find(|src| src.rule == *rule))
                    .map_or_else(
                        || "session".to_owned(),
                        |src| src.file.display().to_string(),
                    )
            });
            RecordedDecision {
                verdict: verdict.as_str().to_owned(),
                origin: note.origin.map(str::to_owned),
                rule: note.rule.as_deref().map(scrub),
                rule_file,
                reason: note.reason.as_deref().map(scrub),
                hook: note.hook.as_deref().map(scrub),
                kernel_hold: note.kernel_hold.map(str::to_owned),
                approval: note.approval.as_ref().map(|a| RecordedApproval {
                    answered_by: a.answered_by.clone(),
                    answer: serde_json::to_value(a.answer)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    waited_ms: millis(a.waited),
                }),
                ms: note
                    .started
                    .zip(note.decided)
                    .map(|(from, to)| millis(to.saturating_duration_since(from))),
            }
        });
        // A hook that blocks refuses the call before the permission layer.
        if decision.is_none() && code == Some(ErrorCode::HookBlocked) {
            decision = Some(RecordedDecision {
                verdict: "deny".to_owned(),
                origin: Some("hook".to_owned()),
                hook: Some(scrub(&format!("deny: {}", result.text()))),
                ..RecordedDecision::default()
            });
        }
        let mut outcome = Outcome {
            is_error: result.is_error,
            error_code: code.map(|c| c.as_str().to_owned()),
            ..Outcome::default()
        };
        if s.tool == "bash" && !result.is_error {
            if let Some(ContentBlock::Text { text, .. }) = result.content.last() {
                outcome.read_command_status(text);
            }
        }
        let held = note.kernel_hold.is_some();
        let sandbox = if held {
            "read-only".to_owned()
        } else if s.escalated && result.error.is_none() && self.sandbox != "none" {
            "escalated".to_owned()
        } else {
            self.sandbox.clone()
        };
        let origin = s.origin.clone().unwrap_or_default();
        CallRecord {
            v: RECORD_VERSION,
            time: format_rfc3339_ms(epoch_ms(s.time)),
            call_id: s.call_id.clone(),
            tool: s.tool.clone(),
            agent: s.agent.clone(),
            client: origin.client,
            session: origin.session.or_else(|| self.session.clone()),
            arguments: s.arguments.clone(),
            decision,
            outcome,
            duration_ms: millis(s.at.elapsed()),
            output_bytes: output_bytes(result),
            sandbox,
            traceparent: s.trace.as_ref().and_then(|t| t.traceparent.clone()),
            tracestate: s.trace.as_ref().and_then(|t| t.tracestate.clone()),
        }
    }
}

fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Bytes of what the result carries.
fn output_bytes(result: &ToolExecutionResult) -> u64 {
    let content: usize = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text, .. } => text.len(),
            other => serde_json::to_value(other)
                .ok()
                .and_then(|v| v.get("data").and_then(Value::as_str).map(str::len))
                .unwrap_or(0),
        })
        .sum();
    let structured = result
        .structured_content
        .as_ref()
        .map_or(0, |v| v.to_string().len());
    (content + structured) as u64
}
