//! OpenTelemetry export of tool calls: one trace span per call, with child
//! spans for its hooks, its permission decision and its execution, and
//! counters and a duration histogram — sent over OTLP/HTTP (protobuf).
//!
//! This crate has one job: turn a finished call's [`CallSummary`] into
//! spans and metrics. It knows no middleware and no audit log; the host
//! fills a [`CallSummary`] from what it recorded of the call (the audit
//! record, the permission layer's decision) and hands it to
//! [`Telemetry::record`].
//!
//! # Off by default
//!
//! [`Telemetry::from_env_and_settings`] returns `None` unless the standard
//! `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`,
//! `…_METRICS_ENDPOINT`) or the settings' `telemetry.otlpEndpoint` names a
//! collector. See [`TelemetryConfig::from_env_and_settings`] for every
//! variable and key. The command text of a call is exported only with
//! `telemetry.logCommands: true`.
//!
//! # Example
//!
//! ```
//! use dsh_telemetry::{CallSummary, Outcome, Telemetry, TelemetryConfig};
//! use std::time::{Duration, SystemTime};
//!
//! // Nothing set: no telemetry, nothing started.
//! let settings = dsh_policy::TelemetrySettings::default();
//! let config = TelemetryConfig::from_env_and_settings(|_| None, &settings).unwrap();
//! assert!(config.is_none());
//!
//! // What a host does once per call when telemetry is on.
//! fn after_call(telemetry: Option<&Telemetry>, summary: &CallSummary) {
//!     if let Some(telemetry) = telemetry {
//!         telemetry.record(summary); // cheap: queued, exported off the call's path
//!     }
//! }
//! let start = SystemTime::now();
//! let mut call = CallSummary::new("bash", "call-1", start, start + Duration::from_millis(5));
//! call.decision = Some("allow".into());
//! call.outcome = Outcome::Ok;
//! after_call(None, &call);
//! ```
//!
//! # What is exported
//!
//! A span `execute_tool TOOL` (kind internal) per call, following the
//! OpenTelemetry GenAI conventions for tool execution
//! (`gen_ai.operation.name = execute_tool`, `gen_ai.tool.name`,
//! `gen_ai.tool.call.id`), with `dsh.*` attributes for the decision, its
//! rule and origin, who answered an ask and what, the outcome, and
//! `error.type` and `process.exit.code` where they apply. Its children
//! `hooks`, `permission` and `execution` carry the times of those phases.
//! A W3C `traceparent` the client sent (MCP `_meta`) becomes the parent.
//! The names are listed in [`attr`].
//!
//! Metrics: `dsh.tool.calls`, `dsh.tool.denials`, `dsh.tool.asks`,
//! `dsh.tool.approvals` (by answer), `dsh.tool.errors` (by `error.type`)
//! and the histogram `dsh.tool.duration` in seconds.
//!
//! # Why it is built this way
//!
//! Spans are built after the call, from its recorded times, rather than
//! around it as it runs: the pipeline stays free of tracing, the host can
//! feed the same record to the audit log and to this crate, and a call's
//! phases need no context threaded through the middleware. Exporting runs
//! on the SDK's own threads (a batch span processor and a periodic metric
//! reader) with reqwest's blocking client, which has its own runtime:
//! [`Telemetry::record`] only queues, and neither it nor
//! [`Telemetry::shutdown`] depends on the caller's async runtime.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod config;
mod traceparent;

pub use config::{TelemetryConfig, TelemetryError, TelemetryErrorKind, DEFAULT_SERVICE_NAME};
pub use traceparent::remote_parent;

use config::TelemetryError as Error;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer as _, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

/// The attribute names this crate exports.
pub mod attr {
    /// Always `execute_tool` (GenAI conventions).
    pub const OPERATION_NAME: &str = "gen_ai.operation.name";
    /// The tool's name (GenAI conventions).
    pub const TOOL_NAME: &str = "gen_ai.tool.name";
    /// The model's id for the call (GenAI conventions).
    pub const TOOL_CALL_ID: &str = "gen_ai.tool.call.id";
    /// The agent (principal) on whose behalf the call ran.
    pub const AGENT: &str = "dsh.agent";
    /// The client program that sent the call.
    pub const CLIENT: &str = "dsh.client";
    /// The policy's verdict: `allow`, `ask` or `deny`.
    pub const DECISION: &str = "dsh.decision";
    /// The rule that decided, as written in the settings.
    pub const RULE: &str = "dsh.decision.rule";
    /// Where the verdict came from (a rule, the mode, a hook, …).
    pub const ORIGIN: &str = "dsh.decision.origin";
    /// Who answered an ask (the client's form, the approval page, a hook, …).
    pub const ANSWERED_BY: &str = "dsh.approval.answered_by";
    /// The answer to an ask (`allowOnce`, `allowAlways`, `reject`, …).
    pub const ANSWER: &str = "dsh.approval.answer";
    /// `ok` or `error`.
    pub const OUTCOME: &str = "dsh.outcome";
    /// The error code of a failed call (`PERMISSION_DENIED`, `TOOL_TIMEOUT`, …).
    pub const ERROR_TYPE: &str = "error.type";
    /// The exit code of the command the call ran.
    pub const EXIT_CODE: &str = "process.exit.code";
    /// The signal that killed the command (`SIGKILL`).
    pub const SIGNAL: &str = "dsh.process.signal";
    /// The command text: only with `telemetry.logCommands: true`.
    pub const COMMAND: &str = "dsh.tool.command";
}

/// The instrument names this crate exports.
pub mod metric {
    /// Calls, by tool, decision and outcome.
    pub const CALLS: &str = "dsh.tool.calls";
    /// Calls the policy denied (`decision = deny`), by tool and origin.
    pub const DENIALS: &str = "dsh.tool.denials";
    /// Calls the policy asked about (`decision = ask`), by tool.
    pub const ASKS: &str = "dsh.tool.asks";
    /// Answers to asks, by tool, answer and who answered.
    pub const APPROVALS: &str = "dsh.tool.approvals";
    /// Failed calls, by tool and `error.type`.
    pub const ERRORS: &str = "dsh.tool.errors";
    /// Call durations in seconds, by tool and outcome.
    pub const DURATION: &str = "dsh.tool.duration";
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Outcome {
    /// It returned a result that is not an error (a non-zero exit included).
    #[default]
    Ok,
    /// It failed: `isError`, with the machine-routable code.
    Error {
        /// The error code (`PERMISSION_DENIED`, `TOOL_TIMEOUT`, …).
        code: String,
    },
}

/// One finished tool call, as exported: what the host knows of it once it
/// returned. Only `tool`, `call_id`, `start`, `end` and `outcome` are
/// required; every other field is left out of the export when `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSummary {
    /// The tool's name (`bash`, `mcp__github__get_issue`).
    pub tool: String,
    /// The model's id for the call.
    pub call_id: String,
    /// The agent (authenticated principal) on whose behalf it ran.
    pub agent: Option<String>,
    /// The client program that sent it (`claude-code/2.1`).
    pub client: Option<String>,
    /// The policy's verdict before anyone was asked: `allow`, `ask` or `deny`.
    pub decision: Option<String>,
    /// The rule that decided, as written (`Bash(git push:*)`).
    pub rule: Option<String>,
    /// Where the verdict came from (`rule`, `mode`, `hook`, `readOnly`, …).
    pub origin: Option<String>,
    /// Who answered an ask (`client`, `approvalPage`, `hook`, `mode`, …).
    pub answered_by: Option<String>,
    /// The answer to an ask (`allowOnce`, `allowAlways`, `reject`, …).
    pub answer: Option<String>,
    /// How the call ended.
    pub outcome: Outcome,
    /// The exit code of the command it ran, when it ran one that exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the command (`SIGKILL`), when one did.
    pub signal: Option<String>,
    /// The command text (bash) or the call's main argument. Exported only
    /// when the settings allow it (`telemetry.logCommands`).
    pub command: Option<String>,
    /// When the call reached the pipeline.
    pub start: SystemTime,
    /// When its result was ready.
    pub end: SystemTime,
    /// When the hooks ran (first start, last end), if any ran.
    pub hooks: Option<(SystemTime, SystemTime)>,
    /// When the permission decision was made, waiting for an answer included.
    pub permission: Option<(SystemTime, SystemTime)>,
    /// When the tool's body ran, if it did.
    pub execution: Option<(SystemTime, SystemTime)>,
    /// The W3C `traceparent` the client sent (MCP request `_meta`); a valid
    /// one becomes the call span's parent.
    pub traceparent: Option<String>,
    /// The W3C `tracestate` sent with it.
    pub tracestate: Option<String>,
}

impl CallSummary {
    /// A call of `tool` with id `call_id` that ran from `start` to `end`
    /// and ended well; set the other fields as known.
    pub fn new(
        tool: impl Into<String>,
        call_id: impl Into<String>,
        start: SystemTime,
        end: SystemTime,
    ) -> Self {
        CallSummary {
            tool: tool.into(),
            call_id: call_id.into(),
            agent: None,
            client: None,
            decision: None,
            rule: None,
            origin: None,
            answered_by: None,
            answer: None,
            outcome: Outcome::Ok,
            exit_code: None,
            signal: None,
            command: None,
            start,
            end,
            hooks: None,
            permission: None,
            execution: None,
            traceparent: None,
            tracestate: None,
        }
    }
}

/// The running exporter: record calls with [`Telemetry::record`], and call
/// [`Telemetry::shutdown`] before the process exits so the last spans and
/// the final metrics are sent.
pub struct Telemetry {
    traces: Option<(SdkTracerProvider, SdkTracer)>,
    metrics: Option<(SdkMeterProvider, Instruments)>,
    log_commands: bool,
}

struct Instruments {
    calls: Counter<u64>,
    denials: Counter<u64>,
    asks: Counter<u64>,
    approvals: Counter<u64>,
    errors: Counter<u64>,
    duration: Histogram<f64>,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Telemetry")
            .field("traces", &self.traces.is_some())
            .field("metrics", &self.metrics.is_some())
            .field("log_commands", &self.log_commands)
            .finish()
    }
}

/// Bucket bounds of the duration histogram, in seconds: the conventions'
/// bounds for short operations, then up to ten minutes (a long command).
const DURATION_BOUNDS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 30.0, 60.0,
    120.0, 300.0, 600.0,
];

const SCOPE: &str = "dsh-telemetry";

impl Telemetry {
    /// The exporter the process environment and the settings ask for, started;
    /// `Ok(None)` when they ask for none (the default).
    ///
    /// # Errors
    /// As [`TelemetryConfig::from_env_and_settings`] and [`Telemetry::start`].
    pub fn from_env_and_settings(
        settings: &dsh_policy::TelemetrySettings,
    ) -> Result<Option<Telemetry>, TelemetryError> {
        match TelemetryConfig::from_env_and_settings(|k| std::env::var(k).ok(), settings)? {
            Some(config) => Telemetry::start(&config).map(Some),
            None => Ok(None),
        }
    }

    /// Starts exporting as `config` says: a batch span processor and a
    /// periodic metric reader (every 60 s, or `OTEL_METRIC_EXPORT_INTERVAL`
    /// ms), each on its own thread. Nothing is sent until a call is recorded.
    ///
    /// # Errors
    /// [`TelemetryErrorKind::Start`] when an exporter cannot be built.
    pub fn start(config: &TelemetryConfig) -> Result<Telemetry, TelemetryError> {
        let headers: HashMap<String, String> = config.headers.iter().cloned().collect();
        let resource = Resource::builder_empty()
            .with_attributes(
                config
                    .resource_attributes
                    .iter()
                    .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
            )
            .with_service_name(config.service_name.clone())
            .build();
        let start_error = |what: &str, e: &dyn std::fmt::Display| {
            Error::new(TelemetryErrorKind::Start, what, e.to_string())
        };
        let traces = match &config.traces_endpoint {
            None => None,
            Some(url) => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(url.clone())
                    .with_headers(headers.clone())
                    .build()
                    .map_err(|e| start_error("span exporter", &e))?;
                let provider = SdkTracerProvider::builder()
                    .with_batch_exporter(exporter)
                    .with_resource(resource.clone())
                    .build();
                let tracer = provider.tracer(SCOPE);
                Some((provider, tracer))
            }
        };
        let metrics = match &config.metrics_endpoint {
            None => None,
            Some(url) => {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .with_protocol(Protocol::HttpBinary)
                    .with_endpoint(url.clone())
                    .with_headers(headers)
                    .build()
                    .map_err(|e| start_error("metric exporter", &e))?;
                let provider = SdkMeterProvider::builder()
                    .with_reader(PeriodicReader::builder(exporter).build())
                    .with_resource(resource)
                    .build();
                let meter = provider.meter(SCOPE);
                let counter = |name: &'static str, description: &'static str| {
                    meter
                        .u64_counter(name)
                        .with_description(description)
                        .with_unit("{call}")
                        .build()
                };
                let instruments = Instruments {
                    calls: counter(metric::CALLS, "Tool calls"),
                    denials: counter(metric::DENIALS, "Tool calls the policy denied"),
                    asks: counter(metric::ASKS, "Tool calls the policy asked about"),
                    approvals: counter(metric::APPROVALS, "Answers to asks, by answer"),
                    errors: counter(metric::ERRORS, "Tool calls that failed"),
                    duration: meter
                        .f64_histogram(metric::DURATION)
                        .with_description("Duration of tool calls")
                        .with_unit("s")
                        .with_boundaries(DURATION_BOUNDS.to_vec())
                        .build(),
                };
                Some((provider, instruments))
            }
        };
        Ok(Telemetry {
            traces,
            metrics,
            log_commands: config.log_commands,
        })
    }

    /// Whether command text is exported.
    pub fn logs_commands(&self) -> bool {
        self.log_commands
    }

    /// Records one finished call: its spans are queued for the batch
    /// exporter and its measurements added. Never blocks on the network
    /// and never fails; when the queue is full, spans are dropped.
    pub fn record(&self, call: &CallSummary) {
        if let Some((_, tracer)) = &self.traces {
            self.record_spans(tracer, call);
        }
        if let Some((_, instruments)) = &self.metrics {
            record_metrics(instruments, call);
        }
    }

    fn record_spans(&self, tracer: &SdkTracer, call: &CallSummary) {
        let parent = match call
            .traceparent
            .as_deref()
            .and_then(|tp| remote_parent(tp, call.tracestate.as_deref()))
        {
            Some(remote) => Context::new().with_remote_span_context(remote),
            None => Context::new(),
        };
        let mut attributes = vec![
            KeyValue::new(attr::OPERATION_NAME, "execute_tool"),
            KeyValue::new(attr::TOOL_NAME, call.tool.clone()),
            KeyValue::new(attr::TOOL_CALL_ID, call.call_id.clone()),
        ];
        let optional = [
            (attr::AGENT, &call.agent),
            (attr::CLIENT, &call.client),
            (attr::DECISION, &call.decision),
            (attr::RULE, &call.rule),
            (attr::ORIGIN, &call.origin),
            (attr::ANSWERED_BY, &call.answered_by),
            (attr::ANSWER, &call.answer),
            (attr::SIGNAL, &call.signal),
        ];
        attributes.extend(
            optional
                .into_iter()
                .filter_map(|(k, v)| v.as_ref().map(|v| KeyValue::new(k, v.clone()))),
        );
        let status = match &call.outcome {
            Outcome::Ok => {
                attributes.push(KeyValue::new(attr::OUTCOME, "ok"));
                Status::Unset
            }
            Outcome::Error { code } => {
                attributes.push(KeyValue::new(attr::OUTCOME, "error"));
                attributes.push(KeyValue::new(attr::ERROR_TYPE, code.clone()));
                Status::error(code.clone())
            }
        };
        if let Some(code) = call.exit_code {
            attributes.push(KeyValue::new(attr::EXIT_CODE, i64::from(code)));
        }
        if self.log_commands {
            if let Some(command) = &call.command {
                attributes.push(KeyValue::new(attr::COMMAND, command.clone()));
            }
        }
        let mut span = tracer
            .span_builder(format!("execute_tool {}", call.tool))
            .with_kind(SpanKind::Internal)
            .with_start_time(call.start)
            .with_attributes(attributes)
            .start_with_context(tracer, &parent);
        opentelemetry::trace::Span::set_status(&mut span, status);
        let cx = parent.with_span(span);
        // Children, clamped into the call's span so a clock step cannot
        // put a phase outside it.
        let clamp = |t: SystemTime| t.clamp(call.start, call.end.max(call.start));
        let child = |name: &'static str,
                     times: Option<(SystemTime, SystemTime)>,
                     attributes: Vec<KeyValue>| {
            if let Some((start, end)) = times {
                let (start, end) = (clamp(start), clamp(end));
                let mut span = tracer
                    .span_builder(name)
                    .with_kind(SpanKind::Internal)
                    .with_start_time(start)
                    .with_attributes(attributes)
                    .start_with_context(tracer, &cx);
                opentelemetry::trace::Span::end_with_timestamp(&mut span, end.max(start));
            }
        };
        child("hooks", call.hooks, Vec::new());
        let permission: Vec<KeyValue> = [
            (attr::DECISION, &call.decision),
            (attr::RULE, &call.rule),
            (attr::ORIGIN, &call.origin),
            (attr::ANSWERED_BY, &call.answered_by),
            (attr::ANSWER, &call.answer),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| KeyValue::new(k, v.clone())))
        .collect();
        child("permission", call.permission, permission);
        let mut execution = Vec::new();
        if let Some(code) = call.exit_code {
            execution.push(KeyValue::new(attr::EXIT_CODE, i64::from(code)));
        }
        if let Some(signal) = &call.signal {
            execution.push(KeyValue::new(attr::SIGNAL, signal.clone()));
        }
        child("execution", call.execution, execution);
        cx.span().end_with_timestamp(call.end.max(call.start));
    }

    /// Sends what is queued and stops the exporters, waiting at most
    /// `deadline`: spans first, then the final metrics. Call it once,
    /// before the process exits (after `dsh mcp`'s last call); calls
    /// recorded afterwards are dropped.
    ///
    /// It blocks the calling thread (at most `deadline`); from async code
    /// run it with `spawn_blocking`, or at the very end. It needs no
    /// runtime: the exports run on the exporters' own threads. What is
    /// still unsent at the deadline is lost; the threads finish on their
    /// own (reqwest's timeout, `OTEL_EXPORTER_OTLP_TIMEOUT`, bounds them).
    ///
    /// # Errors
    /// [`TelemetryErrorKind::Shutdown`] when the deadline passed or an
    /// export failed (the collector was unreachable or refused it).
    pub fn shutdown(self, deadline: Duration) -> Result<(), TelemetryError> {
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let Telemetry {
            traces, metrics, ..
        } = self;
        let started = std::time::Instant::now();
        let spawned = std::thread::Builder::new()
            .name("dsh-telemetry-shutdown".into())
            .spawn(move || {
                let mut failures = Vec::new();
                if let Some((provider, _)) = traces {
                    if let Err(e) = provider.shutdown_with_timeout(deadline) {
                        failures.push(format!("spans: {e}"));
                    }
                }
                if let Some((provider, _)) = metrics {
                    let left = deadline.saturating_sub(started.elapsed());
                    if let Err(e) = provider.shutdown_with_timeout(left) {
                        failures.push(format!("metrics: {e}"));
                    }
                }
                let _ = done_tx.send(failures);
            });
        if let Err(e) = spawned {
            return Err(Error::new(
                TelemetryErrorKind::Shutdown,
                "shutdown",
                format!("cannot start the shutdown thread: {e}"),
            ));
        }
        match done_rx.recv_timeout(deadline) {
            Ok(failures) if failures.is_empty() => Ok(()),
            Ok(failures) => Err(Error::new(
                TelemetryErrorKind::Shutdown,
                "shutdown",
                failures.join("; "),
            )),
            Err(_) => Err(Error::new(
                TelemetryErrorKind::Shutdown,
                "shutdown",
                format!("the last exports did not finish within {deadline:?}"),
            )),
        }
    }
}

fn record_metrics(instruments: &Instruments, call: &CallSummary) {
    let tool = KeyValue::new(attr::TOOL_NAME, call.tool.clone());
    let outcome = KeyValue::new(
        attr::OUTCOME,
        match call.outcome {
            Outcome::Ok => "ok",
            Outcome::Error { .. } => "error",
        },
    );
    let mut calls = vec![tool.clone(), outcome.clone()];
    if let Some(decision) = &call.decision {
        calls.push(KeyValue::new(attr::DECISION, decision.clone()));
    }
    instruments.calls.add(1, &calls);
    match call.decision.as_deref() {
        Some("deny") => {
            let mut attrs = vec![tool.clone()];
            if let Some(origin) = &call.origin {
                attrs.push(KeyValue::new(attr::ORIGIN, origin.clone()));
            }
            instruments.denials.add(1, &attrs);
        }
        Some("ask") => instruments.asks.add(1, std::slice::from_ref(&tool)),
        _ => {}
    }
    if let Some(answer) = &call.answer {
        let mut attrs = vec![tool.clone(), KeyValue::new(attr::ANSWER, answer.clone())];
        if let Some(by) = &call.answered_by {
            attrs.push(KeyValue::new(attr::ANSWERED_BY, by.clone()));
        }
        instruments.approvals.add(1, &attrs);
    }
    if let Outcome::Error { code } = &call.outcome {
        instruments.errors.add(
            1,
            &[tool.clone(), KeyValue::new(attr::ERROR_TYPE, code.clone())],
        );
    }
    let seconds = call
        .end
        .duration_since(call.start)
        .unwrap_or_default()
        .as_secs_f64();
    instruments.duration.record(seconds, &[tool, outcome]);
}
