//! The W3C Trace Context `traceparent` a client sends, checked strictly.

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use std::str::FromStr;

/// The remote parent named by a W3C `traceparent` (and its `tracestate`),
/// or `None` when the value is not one: wrong length or field sizes,
/// uppercase or non-hex digits, version `ff`, all-zero trace or span id, or
/// extra fields after a version-`00` value. A later version is read by its
/// first four fields, as the recommendation asks. An invalid `tracestate`
/// is dropped; the parent stays. Never panics, whatever the input.
///
/// ```
/// use dsh_telemetry::remote_parent;
///
/// let parent = remote_parent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", None)
///     .expect("valid");
/// assert_eq!(parent.trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
/// assert!(parent.is_remote() && parent.is_sampled());
/// assert!(remote_parent("00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01", None).is_none());
/// ```
pub fn remote_parent(traceparent: &str, tracestate: Option<&str>) -> Option<SpanContext> {
    let value = traceparent.trim_matches([' ', '\t']);
    let mut fields = value.split('-');
    let version = fields.next()?;
    let trace_id = fields.next()?;
    let span_id = fields.next()?;
    let flags = fields.next()?;
    let rest: Vec<&str> = fields.collect();
    if !is_hex(version, 2) || version == "ff" {
        return None;
    }
    if version == "00" && !rest.is_empty() {
        return None;
    }
    if !is_hex(trace_id, 32) || !is_hex(span_id, 16) || !is_hex(flags, 2) {
        return None;
    }
    let trace_id = TraceId::from_hex(trace_id).ok()?;
    let span_id = SpanId::from_hex(span_id).ok()?;
    if trace_id == TraceId::INVALID || span_id == SpanId::INVALID {
        return None;
    }
    let flags = u8::from_str_radix(flags, 16).ok()?;
    let state = tracestate
        .and_then(|s| TraceState::from_str(s).ok())
        .unwrap_or_default();
    let context = SpanContext::new(
        trace_id,
        span_id,
        TraceFlags::new(flags) & TraceFlags::SAMPLED,
        true,
        state,
    );
    context.is_valid().then_some(context)
}

/// Exactly `len` lowercase hex digits.
fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const SPAN: &str = "00f067aa0ba902b7";

    #[test]
    fn a_valid_traceparent_is_a_remote_parent() {
        let p = remote_parent(&format!("00-{TRACE}-{SPAN}-01"), Some("congo=t61rcWkgMzE"))
            .expect("valid");
        assert_eq!(p.trace_id().to_string(), TRACE);
        assert_eq!(p.span_id().to_string(), SPAN);
        assert!(p.is_remote());
        assert!(p.is_sampled());
        assert_eq!(p.trace_state().get("congo"), Some("t61rcWkgMzE"));

        let p = remote_parent(&format!("00-{TRACE}-{SPAN}-00"), None).expect("valid");
        assert!(!p.is_sampled());
        // Unknown flags are accepted and dropped.
        let p = remote_parent(&format!("00-{TRACE}-{SPAN}-ff"), None).expect("valid");
        assert_eq!(p.trace_flags(), TraceFlags::SAMPLED);
        // A later version may carry more fields.
        assert!(remote_parent(&format!("01-{TRACE}-{SPAN}-01-more"), None).is_some());
        // A bad tracestate is dropped, the parent kept.
        let p = remote_parent(&format!("00-{TRACE}-{SPAN}-01"), Some("not a state,,=")).unwrap();
        assert_eq!(p.trace_state().header(), "");
    }

    #[test]
    fn invalid_traceparents_make_no_parent() {
        let zero_trace = "0".repeat(32);
        let zero_span = "0".repeat(16);
        let upper = TRACE.to_uppercase();
        for bad in [
            String::new(),
            "garbage".into(),
            "00".into(),
            format!("00-{TRACE}-{SPAN}"),
            format!("00-{TRACE}-{SPAN}-01-extra"),
            format!("ff-{TRACE}-{SPAN}-01"),
            format!("0-{TRACE}-{SPAN}-01"),
            format!("00-{zero_trace}-{SPAN}-01"),
            format!("00-{TRACE}-{zero_span}-01"),
            format!("00-{upper}-{SPAN}-01"),
            format!("00-{}-{SPAN}-01", &TRACE[1..]),
            format!("00-{TRACE}-{}-01", &SPAN[1..]),
            format!("00-{TRACE}-{SPAN}-1"),
            format!("00-{TRACE}-{SPAN}-0g"),
            format!("00-{}x-{SPAN}-01", &TRACE[1..]),
            format!("00-{TRACE}-{SPAN}-01\u{e9}"),
            "\u{e9}\u{e9}-\u{e9}".into(),
            "-".repeat(60),
        ] {
            assert!(remote_parent(&bad, None).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        // A cheap sweep of odd inputs: multi-byte characters at every
        // position of a valid value, truncations and separators.
        let valid = format!("00-{TRACE}-{SPAN}-01");
        for i in 0..=valid.len() {
            let (a, b) = valid.split_at(i);
            for insert in ["\u{e9}", "-", "", "\u{1f600}", "\0"] {
                let _ = remote_parent(&format!("{a}{insert}{b}"), Some(&format!("{b}{insert}")));
            }
            let _ = remote_parent(a, Some(a));
        }
    }
}
