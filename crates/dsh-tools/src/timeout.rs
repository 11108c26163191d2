//! [`TimeoutMiddleware`]: a deadline for every call.

use crate::error::{ErrorCode, ToolError};
use crate::execution::ToolExecution;
use crate::middleware::{panic_message, Middleware, MiddlewareFuture, Next};
use futures::future::{self, Either, FutureExt};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Duration;

/// Turns an overrun into `TOOL_TIMEOUT` (`Error: tool call timed out after Nms`).
///
/// The deadline is the tool's own [`timeout`](crate::ToolDefinition::timeout),
/// else the default given here; with neither, the call runs unbounded. On
/// overrun the call's cancellation token fires (so a cooperative body can
/// clean up) and the rest of the chain is dropped.
///
/// # Errors
/// Needs a Tokio runtime with time enabled. Outside one (or with timers
/// disabled), a bounded call fails with `TOOL_ERROR` naming the cause instead
/// of running without its deadline.
#[derive(Debug, Clone, Default)]
pub struct TimeoutMiddleware {
    default: Option<Duration>,
}

impl TimeoutMiddleware {
    /// With a default deadline for tools that declare none.
    pub fn new(default: Duration) -> Self {
        TimeoutMiddleware {
            default: Some(default),
        }
    }

    /// Only tools that declare a timeout are bounded.
    pub fn tool_declared_only() -> Self {
        TimeoutMiddleware { default: None }
    }
}

impl Middleware for TimeoutMiddleware {
    fn handle(&self, mut exec: ToolExecution, next: Next) -> MiddlewareFuture {
        let deadline = next
            .tool(&exec.name)
            .and_then(|tool| tool.timeout())
            .or(self.default);
        Box::pin(async move {
            let Some(deadline) = deadline else {
                return Ok(next.run(exec).await);
            };
            let sleep = timer(deadline)?;
            // A child token: firing it on timeout stops the body, not the caller's other calls.
            let cancel = match &exec.cancel {
                Some(parent) => parent.child_token(),
                None => tokio_util::sync::CancellationToken::new(),
            };
            exec.cancel = Some(cancel.clone());
            let mut run = next.run(exec);
            let sleep = std::pin::pin!(sleep);
            match future::select(&mut run, sleep).await {
                Either::Left((result, _)) => Ok(result),
                Either::Right(_) => {
                    // Fire the token first and give the chain one more poll, so a
                    // cooperative body sees the cancellation before it is dropped.
                    cancel.cancel();
                    let _ = (&mut run).now_or_never();
                    Err(ToolError::new(
                        ErrorCode::ToolTimeout,
                        format!("tool call timed out after {}", format_ms(deadline)),
                    ))
                }
            }
        })
    }
}

/// A Tokio sleep, or the reason there can be none here.
fn timer(deadline: Duration) -> Result<tokio::time::Sleep, ToolError> {
    let unavailable = |why: &str| {
        ToolError::msg(format!(
            "the timeout middleware cannot bound this call: {why}; run the registry inside a \
             Tokio runtime built with time enabled (`enable_time` or `enable_all`)"
        ))
    };
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(unavailable("there is no Tokio runtime on this thread"));
    }
    // Tokio offers no query for "timers enabled"; creating a sleep panics
    // when they are not.
    catch_unwind(AssertUnwindSafe(|| tokio::time::sleep(deadline)))
        .map_err(|payload| unavailable(&panic_message(payload.as_ref())))
}

/// `250ms`, `1.5ms`, `0.001ms`: milliseconds, with the fraction when there is one.
pub(crate) fn format_ms(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    let whole = nanos / 1_000_000;
    let fraction = nanos % 1_000_000;
    if fraction == 0 {
        return format!("{whole}ms");
    }
    let digits = format!("{fraction:06}");
    format!("{whole}.{}ms", digits.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::format_ms;
    use std::time::Duration;

    #[test]
    fn milliseconds_keep_their_fraction() {
        assert_eq!(format_ms(Duration::from_millis(250)), "250ms");
        assert_eq!(format_ms(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(format_ms(Duration::from_micros(1)), "0.001ms");
        assert_eq!(format_ms(Duration::from_nanos(1)), "0.000001ms");
        assert_eq!(format_ms(Duration::ZERO), "0ms");
    }
}
