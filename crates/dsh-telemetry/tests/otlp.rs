//! The export as a collector sees it: a loopback OTLP/HTTP receiver decodes
//! what `Telemetry` sends (with the exporter's own protobuf types) after a
//! few recorded calls and a shutdown.

use dsh_policy::TelemetrySettings;
use dsh_telemetry::{CallSummary, Outcome, Telemetry, TelemetryConfig};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, Metric};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// What the receiver got: (path, content type, body) per request.
type Received = Arc<Mutex<Vec<(String, String, Vec<u8>)>>>;

/// A minimal OTLP/HTTP receiver on a loopback port: HTTP/1.1 with
/// keep-alive, bodies by Content-Length, every request stored before it is
/// answered `200` (so once the exporter has its answer, the body is here).
fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let store = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let store = store.clone();
            std::thread::spawn(move || serve(stream, store));
        }
    });
    (url, received)
}

fn serve(stream: TcpStream, store: Received) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or("")
            .to_owned();
        let (mut length, mut content_type) = (0usize, String::new());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap(),
                    "content-type" => content_type = value.trim().to_owned(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        store.lock().unwrap().push((path, content_type, body));
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

fn start(url: &str, log_commands: bool) -> Telemetry {
    let settings = TelemetrySettings {
        log_commands: Some(log_commands),
        ..Default::default()
    };
    let endpoint = url.to_owned();
    let config = TelemetryConfig::from_env_and_settings(
        |k| match k {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(endpoint.clone()),
            "OTEL_SERVICE_NAME" => Some("dsh-test".into()),
            _ => None,
        },
        &settings,
    )
    .unwrap()
    .expect("on");
    Telemetry::start(&config).unwrap()
}

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_SPAN: &str = "00f067aa0ba902b7";

fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_790_000_000) + Duration::from_millis(ms)
}

fn ms(from: u64, to: u64) -> Option<(SystemTime, SystemTime)> {
    Some((at(from), at(to)))
}

/// The four calls of the test: allowed (with a traceparent), denied,
/// asked and approved, failed.
fn calls() -> Vec<CallSummary> {
    let mut allowed = CallSummary::new("bash", "call-allowed", at(0), at(100));
    allowed.agent = Some("alice".into());
    allowed.client = Some("claude-code/2.1".into());
    allowed.decision = Some("allow".into());
    allowed.rule = Some("Bash(git status)".into());
    allowed.origin = Some("rule".into());
    allowed.exit_code = Some(0);
    allowed.command = Some("git status".into());
    allowed.hooks = ms(1, 10);
    allowed.permission = ms(10, 12);
    allowed.execution = ms(12, 99);
    allowed.traceparent = Some(format!("00-{TRACE_ID}-{PARENT_SPAN}-01"));
    allowed.tracestate = Some("vendor=x".into());

    let mut denied = CallSummary::new("bash", "call-denied", at(200), at(205));
    denied.decision = Some("deny".into());
    denied.rule = Some("Bash(rm -rf:*)".into());
    denied.origin = Some("rule".into());
    denied.outcome = Outcome::Error {
        code: "PERMISSION_DENIED".into(),
    };
    denied.command = Some("rm -rf /".into());
    denied.permission = ms(201, 204);

    let mut asked = CallSummary::new("bash", "call-asked", at(300), at(2_300));
    asked.decision = Some("ask".into());
    asked.rule = Some("Bash(git push:*)".into());
    asked.origin = Some("rule".into());
    asked.answered_by = Some("approvalPage".into());
    asked.answer = Some("allowOnce".into());
    asked.exit_code = Some(0);
    asked.permission = ms(301, 2_000);
    asked.execution = ms(2_001, 2_299);

    let mut failed = CallSummary::new("read", "call-failed", at(3_000), at(3_010));
    failed.decision = Some("allow".into());
    failed.origin = Some("mode".into());
    failed.outcome = Outcome::Error {
        code: "TOOL_TIMEOUT".into(),
    };
    failed.execution = ms(3_001, 3_010);
    // An invalid traceparent: no parent, no panic.
    failed.traceparent = Some("00-not-a-trace-01".into());
    vec![allowed, denied, asked, failed]
}

fn spans(received: &Received) -> Vec<Span> {
    received
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _, _)| path == "/v1/traces")
        .flat_map(|(_, content_type, body)| {
            assert_eq!(content_type, "application/x-protobuf");
            let request = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
            for rs in &request.resource_spans {
                let resource = rs.resource.as_ref().unwrap();
                assert_eq!(
                    string(&resource.attributes, "service.name").as_deref(),
                    Some("dsh-test")
                );
            }
            request
                .resource_spans
                .into_iter()
                .flat_map(|rs| rs.scope_spans)
                .flat_map(|ss| ss.spans)
        })
        .collect()
}

/// The last metrics export: cumulative, so it has the totals.
fn metrics(received: &Received) -> Vec<Metric> {
    let received = received.lock().unwrap();
    let (_, _, body) = received
        .iter()
        .rfind(|(path, _, _)| path == "/v1/metrics")
        .expect("a metrics export");
    ExportMetricsServiceRequest::decode(body.as_slice())
        .unwrap()
        .resource_metrics
        .into_iter()
        .flat_map(|rm| rm.scope_metrics)
        .flat_map(|sm| sm.metrics)
        .collect()
}

fn value(attributes: &[KeyValue], key: &str) -> Option<any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.clone())
        .and_then(|v| v.value)
}

fn string(attributes: &[KeyValue], key: &str) -> Option<String> {
    match value(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s),
        None => None,
        other => panic!("{key} is not a string: {other:?}"),
    }
}

fn int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match value(attributes, key) {
        Some(any_value::Value::IntValue(i)) => Some(i),
        None => None,
        other => panic!("{key} is not an integer: {other:?}"),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn nanos(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos() as u64
}

fn call_span<'a>(spans: &'a [Span], call_id: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| string(&s.attributes, "gen_ai.tool.call.id").as_deref() == Some(call_id))
        .unwrap_or_else(|| panic!("no span for {call_id}"))
}

fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    let mut out: Vec<&Span> = spans
        .iter()
        .filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id)
        .collect();
    out.sort_by_key(|s| s.start_time_unix_nano);
    out
}

#[test]
fn spans_parents_attributes_and_metrics_reach_the_collector() {
    let (url, received) = receiver();
    let telemetry = start(&url, false);
    assert!(!telemetry.logs_commands());
    for call in calls() {
        telemetry.record(&call);
    }
    telemetry.shutdown(Duration::from_secs(20)).unwrap();

    let spans = spans(&received);
    // Four calls: 4 call spans + 3 + 1 + 2 + 1 children.
    assert_eq!(spans.len(), 11, "{spans:#?}");
    let calls = calls();

    // The allowed call: parented on the client's span, in its trace.
    let allowed = call_span(&spans, "call-allowed");
    assert_eq!(allowed.name, "execute_tool bash");
    assert_eq!(hex(&allowed.trace_id), TRACE_ID);
    assert_eq!(hex(&allowed.parent_span_id), PARENT_SPAN);
    assert_eq!(allowed.trace_state, "vendor=x");
    assert_eq!(allowed.kind, 1, "internal");
    assert_eq!(allowed.start_time_unix_nano, nanos(calls[0].start));
    assert_eq!(allowed.end_time_unix_nano, nanos(calls[0].end));
    let a = &allowed.attributes;
    assert_eq!(
        string(a, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(string(a, "gen_ai.tool.name").as_deref(), Some("bash"));
    assert_eq!(string(a, "dsh.agent").as_deref(), Some("alice"));
    assert_eq!(string(a, "dsh.client").as_deref(), Some("claude-code/2.1"));
    assert_eq!(string(a, "dsh.decision").as_deref(), Some("allow"));
    assert_eq!(
        string(a, "dsh.decision.rule").as_deref(),
        Some("Bash(git status)")
    );
    assert_eq!(string(a, "dsh.decision.origin").as_deref(), Some("rule"));
    assert_eq!(string(a, "dsh.outcome").as_deref(), Some("ok"));
    assert_eq!(int(a, "process.exit.code"), Some(0));
    assert_eq!(string(a, "error.type"), None);
    // Off by default: no command text anywhere.
    assert!(
        spans
            .iter()
            .all(|s| string(&s.attributes, "dsh.tool.command").is_none()),
        "command text exported without logCommands"
    );
    let kids = children(&spans, allowed);
    let names: Vec<&str> = kids.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["hooks", "permission", "execution"]);
    for (kid, (start, end)) in kids.iter().zip([
        calls[0].hooks.unwrap(),
        calls[0].permission.unwrap(),
        calls[0].execution.unwrap(),
    ]) {
        assert_eq!(kid.start_time_unix_nano, nanos(start), "{}", kid.name);
        assert_eq!(kid.end_time_unix_nano, nanos(end), "{}", kid.name);
        assert!(kid.start_time_unix_nano >= allowed.start_time_unix_nano);
        assert!(kid.end_time_unix_nano <= allowed.end_time_unix_nano);
    }
    assert_eq!(
        string(&kids[1].attributes, "dsh.decision.rule").as_deref(),
        Some("Bash(git status)")
    );
    assert_eq!(int(&kids[2].attributes, "process.exit.code"), Some(0));

    // The denied call: a root span of its own (no traceparent), an error.
    let denied = call_span(&spans, "call-denied");
    assert!(denied.parent_span_id.is_empty());
    assert_ne!(hex(&denied.trace_id), TRACE_ID);
    let d = &denied.attributes;
    assert_eq!(string(d, "dsh.decision").as_deref(), Some("deny"));
    assert_eq!(
        string(d, "dsh.decision.rule").as_deref(),
        Some("Bash(rm -rf:*)")
    );
    assert_eq!(string(d, "dsh.outcome").as_deref(), Some("error"));
    assert_eq!(
        string(d, "error.type").as_deref(),
        Some("PERMISSION_DENIED")
    );
    let status = denied.status.as_ref().unwrap();
    assert_eq!(status.code, 2, "error status");
    assert_eq!(status.message, "PERMISSION_DENIED");
    let names: Vec<String> = children(&spans, denied)
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(names, ["permission"]);

    // The asked call: who answered and what, on the call and on its
    // permission span, which holds the wait.
    let asked = call_span(&spans, "call-asked");
    let q = &asked.attributes;
    assert_eq!(string(q, "dsh.decision").as_deref(), Some("ask"));
    assert_eq!(
        string(q, "dsh.approval.answered_by").as_deref(),
        Some("approvalPage")
    );
    assert_eq!(
        string(q, "dsh.approval.answer").as_deref(),
        Some("allowOnce")
    );
    let kids = children(&spans, asked);
    assert_eq!(kids[0].name, "permission");
    assert_eq!(
        kids[0].end_time_unix_nano - kids[0].start_time_unix_nano,
        1_699_000_000
    );
    assert_eq!(
        string(&kids[0].attributes, "dsh.approval.answer").as_deref(),
        Some("allowOnce")
    );
    assert_eq!(kids[1].name, "execution");

    // The failed call: an invalid traceparent gives no parent.
    let failed = call_span(&spans, "call-failed");
    assert_eq!(failed.name, "execute_tool read");
    assert!(failed.parent_span_id.is_empty());
    assert_eq!(
        string(&failed.attributes, "error.type").as_deref(),
        Some("TOOL_TIMEOUT")
    );

    // Metrics: the totals of the four calls.
    let metrics = metrics(&received);
    let sum = |name: &str, filter: &dyn Fn(&[KeyValue]) -> bool| -> i64 {
        let m = metrics
            .iter()
            .find(|m| m.name == name)
            .unwrap_or_else(|| panic!("no metric {name}"));
        let Some(metric::Data::Sum(sum)) = &m.data else {
            panic!("{name} is not a sum")
        };
        assert!(sum.is_monotonic, "{name}");
        sum.data_points
            .iter()
            .filter(|p| filter(&p.attributes))
            .map(|p| match p.value {
                Some(number_data_point::Value::AsInt(i)) => i,
                ref other => panic!("{name}: {other:?}"),
            })
            .sum()
    };
    let any = |_: &[KeyValue]| true;
    assert_eq!(sum("dsh.tool.calls", &any), 4);
    assert_eq!(
        sum("dsh.tool.calls", &|a| string(a, "gen_ai.tool.name")
            .as_deref()
            == Some("bash")),
        3
    );
    assert_eq!(
        sum("dsh.tool.calls", &|a| string(a, "dsh.outcome").as_deref()
            == Some("error")),
        2
    );
    assert_eq!(sum("dsh.tool.denials", &any), 1);
    assert_eq!(sum("dsh.tool.asks", &any), 1);
    assert_eq!(
        sum("dsh.tool.approvals", &|a| string(a, "dsh.approval.answer")
            .as_deref()
            == Some("allowOnce")),
        1
    );
    assert_eq!(sum("dsh.tool.errors", &any), 2);
    assert_eq!(
        sum("dsh.tool.errors", &|a| string(a, "error.type").as_deref()
            == Some("TOOL_TIMEOUT")),
        1
    );
    let duration = metrics
        .iter()
        .find(|m| m.name == "dsh.tool.duration")
        .expect("the duration histogram");
    assert_eq!(duration.unit, "s");
    let Some(metric::Data::Histogram(histogram)) = &duration.data else {
        panic!("dsh.tool.duration is not a histogram")
    };
    let count: u64 = histogram.data_points.iter().map(|p| p.count).sum();
    assert_eq!(count, 4);
    let total: f64 = histogram.data_points.iter().filter_map(|p| p.sum).sum();
    assert!((total - (0.1 + 0.005 + 2.0 + 0.01)).abs() < 1e-9, "{total}");
}

#[test]
fn command_text_is_exported_only_when_the_settings_allow() {
    let (url, received) = receiver();
    let telemetry = start(&url, true);
    assert!(telemetry.logs_commands());
    for call in calls().into_iter().take(2) {
        telemetry.record(&call);
    }
    // A client that did not sample its trace (flags 00) is followed: the
    // call's spans are not exported, though the call is counted.
    let mut unsampled = calls().remove(0);
    unsampled.call_id = "call-unsampled".into();
    unsampled.traceparent = Some(format!("00-{TRACE_ID}-{PARENT_SPAN}-00"));
    telemetry.record(&unsampled);
    telemetry.shutdown(Duration::from_secs(20)).unwrap();
    let spans = spans(&received);
    assert_eq!(spans.len(), 4 + 1 + 1, "two calls and their children");
    assert!(
        spans
            .iter()
            .all(|s| string(&s.attributes, "gen_ai.tool.call.id").as_deref()
                != Some("call-unsampled"))
    );
    let calls_counted: i64 = metrics(&received)
        .iter()
        .filter(|m| m.name == "dsh.tool.calls")
        .flat_map(|m| match &m.data {
            Some(metric::Data::Sum(sum)) => sum.data_points.clone(),
            _ => Vec::new(),
        })
        .map(|p| match p.value {
            Some(number_data_point::Value::AsInt(i)) => i,
            _ => 0,
        })
        .sum();
    assert_eq!(calls_counted, 3);
    assert_eq!(
        string(
            &call_span(&spans, "call-allowed").attributes,
            "dsh.tool.command"
        )
        .as_deref(),
        Some("git status")
    );
    assert_eq!(
        string(
            &call_span(&spans, "call-denied").attributes,
            "dsh.tool.command"
        )
        .as_deref(),
        Some("rm -rf /")
    );
}

#[test]
fn an_unreachable_collector_fails_the_shutdown_not_the_calls() {
    // A port nobody listens on: record never blocks or fails; shutdown
    // reports the failed export within its deadline.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let telemetry = start(&format!("http://127.0.0.1:{port}"), false);
    let started = std::time::Instant::now();
    for call in calls() {
        telemetry.record(&call);
    }
    assert!(started.elapsed() < Duration::from_secs(1));
    let started = std::time::Instant::now();
    let e = telemetry.shutdown(Duration::from_secs(5)).unwrap_err();
    assert_eq!(e.kind(), dsh_telemetry::TelemetryErrorKind::Shutdown);
    assert!(started.elapsed() < Duration::from_secs(6), "{e}");
}

#[test]
fn works_from_inside_a_current_thread_runtime() {
    // `dsh mcp` runs on one thread: exporting must not need that thread,
    // nor panic for blocking inside it.
    let (url, received) = receiver();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let telemetry = start(&url, false);
        for call in calls() {
            telemetry.record(&call);
        }
        telemetry.shutdown(Duration::from_secs(20)).unwrap();
    });
    assert_eq!(spans(&received).len(), 11);
}
