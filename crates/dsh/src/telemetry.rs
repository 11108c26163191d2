//! OpenTelemetry for the long-running commands: each call's audit record
//! (the audit layer hands every record to an observer, even with the log
//! file off) becomes a span and metrics of `dsh-telemetry`.

use crate::UsageError;
use dsh_audit::{CallRecord, RecordObserver};
use dsh_harness::Pipeline;
use dsh_telemetry::{CallSummary, Outcome, Telemetry};
use std::sync::{Arc, RwLock};
use std::time::{Duration, UNIX_EPOCH};

/// The exporter, shared by the observer and whoever shuts it down.
#[derive(Clone)]
pub struct Exporter(Arc<RwLock<Option<Telemetry>>>);

impl Exporter {
    /// The exporter the environment (`OTEL_EXPORTER_OTLP_*`) or the
    /// settings' `telemetry` section ask for; `None` when neither does.
    ///
    /// # Errors
    /// A usage error naming the variable or key at fault.
    pub fn start(pipeline: &Pipeline) -> Result<Option<Exporter>, UsageError> {
        let telemetry = Telemetry::from_env_and_settings(&pipeline.settings().telemetry)
            .map_err(|e| UsageError(format!("OpenTelemetry: {e}")))?;
        Ok(telemetry.map(|t| Exporter(Arc::new(RwLock::new(Some(t))))))
    }

    /// What the audit layer calls with each record.
    pub fn observer(&self) -> RecordObserver {
        let exporter = self.0.clone();
        Arc::new(move |record: &CallRecord| {
            let held = exporter.read().unwrap_or_else(|e| e.into_inner());
            if let (Some(telemetry), Some(call)) = (held.as_ref(), summary(record)) {
                telemetry.record(&call);
            }
        })
    }

    /// Sends what is left (spans, then the final metrics), giving up after
    /// `deadline`; a failure is said on stderr.
    pub fn shutdown(&self, deadline: Duration) {
        let taken = self.0.write().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(telemetry) = taken {
            if let Err(err) = telemetry.shutdown(deadline) {
                use std::io::Write;
                let _ = writeln!(std::io::stderr(), "dsh: OpenTelemetry: {err}");
            }
        }
    }
}

/// A record as the exporter takes it. The permission layer's time is
/// counted from the call's start (the hooks before it, when any, are in
/// it), and the tool's body from the verdict to the result.
fn summary(record: &CallRecord) -> Option<CallSummary> {
    let start = UNIX_EPOCH + Duration::from_millis(u64::try_from(record.epoch_ms()?).ok()?);
    let end = start + Duration::from_millis(record.duration_ms);
    let mut call = CallSummary::new(record.tool.clone(), record.call_id.clone(), start, end);
    call.agent = record.agent.clone();
    call.client = record.client.clone();
    let outcome = &record.outcome;
    if outcome.is_error {
        call.outcome = Outcome::Error {
            code: outcome
                .error_code
                .clone()
                .unwrap_or_else(|| "TOOL_ERROR".to_owned()),
        };
    }
    call.exit_code = outcome.exit_code;
    call.signal = outcome.signal.clone();
    // Masked as the audit log has it; exported only when the settings say.
    call.command = record
        .arguments
        .get("command")
        .and_then(|c| c.as_str())
        .map(str::to_owned);
    call.traceparent = record.traceparent.clone();
    call.tracestate = record.tracestate.clone();
    if let Some(decision) = &record.decision {
        call.decision = Some(decision.verdict.clone());
        call.rule = decision.rule.clone();
        call.origin = decision.origin.clone();
        if let Some(approval) = &decision.approval {
            call.answered_by = Some(approval.answered_by.clone());
            call.answer = Some(approval.answer.clone());
        }
        if let Some(ms) = decision.ms {
            let decided = (start + Duration::from_millis(ms)).min(end);
            call.permission = Some((start, decided));
            if ran(record) {
                call.execution = Some((decided, end));
            }
        }
    }
    Some(call)
}

/// Whether the tool's body ran: the verdict let it on.
fn ran(record: &CallRecord) -> bool {
    let refused = matches!(
        record.outcome.error_code.as_deref(),
        Some(
            "PERMISSION_DENIED"
                | "APPROVAL_UNAVAILABLE"
                | "PLAN_MODE"
                | "HOOK_BLOCKED"
                | "AUDIT_UNAVAILABLE"
                | "INVALID_ARGS"
                | "UNKNOWN_TOOL"
        )
    );
    !refused
}

/// The observer for the audit layer, when telemetry is on.
pub fn observer(exporter: Option<&Exporter>) -> Option<RecordObserver> {
    exporter.map(Exporter::observer)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(line: &str) -> CallRecord {
        CallRecord::from_line(line).expect("a record")
    }

    #[test]
    fn a_record_becomes_a_summary() {
        let allowed = record(
            r#"{"v":1,"time":"2026-12-04T10:00:00.000Z","callId":"7","tool":"bash","client":"c/1","arguments":{"command":"echo hi"},"decision":{"verdict":"ask","origin":"mode","ms":40,"approval":{"answeredBy":"client form","answer":"allowOnce","waitedMs":39}},"outcome":{"isError":false,"exitCode":0},"durationMs":100,"outputBytes":3,"sandbox":"none","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}"#,
        );
        let call = summary(&allowed).unwrap();
        assert_eq!(call.tool, "bash");
        assert_eq!(call.decision.as_deref(), Some("ask"));
        assert_eq!(call.answered_by.as_deref(), Some("client form"));
        assert_eq!(call.answer.as_deref(), Some("allowOnce"));
        assert_eq!(call.command.as_deref(), Some("echo hi"));
        assert_eq!(call.exit_code, Some(0));
        assert!(matches!(call.outcome, Outcome::Ok));
        let (p0, p1) = call.permission.unwrap();
        let (e0, e1) = call.execution.unwrap();
        assert_eq!(
            (p0, p1, e0, e1),
            (
                call.start,
                call.start + Duration::from_millis(40),
                p1,
                call.end
            )
        );
        assert_eq!(call.end - Duration::from_millis(100), call.start);
        assert!(call.traceparent.is_some());

        let denied = record(
            r#"{"v":1,"time":"2026-12-04T10:00:00.000Z","callId":"8","tool":"bash","arguments":{"command":"rm -rf x"},"decision":{"verdict":"deny","origin":"rule","rule":"Bash(rm:*)","ms":1},"outcome":{"isError":true,"errorCode":"PERMISSION_DENIED"},"durationMs":1,"outputBytes":10,"sandbox":"none"}"#,
        );
        let call = summary(&denied).unwrap();
        assert!(matches!(&call.outcome, Outcome::Error { code } if code == "PERMISSION_DENIED"));
        assert_eq!(call.rule.as_deref(), Some("Bash(rm:*)"));
        assert!(call.execution.is_none(), "a denied call's body never ran");
    }
}
