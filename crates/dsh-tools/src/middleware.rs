//! The middleware chain: the one seam where permission, hook, sandbox,
//! plan-mode and timeout plugins wrap or veto a call.
//!
//! ```text
//!   execute(exec) ──► first ──► second ──► … ──► dispatch (look up, validate, run)
//!   result        ◄── first ◄── second ◄── … ◄──
//! ```
//!
//! The first registered middleware is outermost: with two that log around
//! `next`, the order is `first:before, second:before, second:after, first:after`.
//!
//! A middleware receives the execution by value and a [`Next`] by value:
//!
//! | to … | do |
//! |---|---|
//! | pass through | `next.run(exec).await` |
//! | wrap | act, `next.run(exec).await`, act on the result |
//! | rewrite | change `exec` (e.g. its arguments), then `next.run(exec)` |
//! | veto | return a result (or `Err`) without calling `next` |
//!
//! `Next::run` takes `self`, so a call can never be dispatched twice.
//!
//! | write it as … | when |
//! |---|---|
//! | a closure, [`ToolRegistry::use_fn`](crate::ToolRegistry::use_fn) | small, stateless or `Arc`-captured state |
//! | an `impl Middleware` | configuration, state, reuse across registries |

use crate::error::{ErrorCode, ToolError};
use crate::execution::{ToolExecution, ToolExecutionResult};
use crate::registry::ToolRegistry;
use futures::future::{self, BoxFuture, Either, FutureExt};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// What a middleware returns: a result, or an error the registry turns into one.
pub type MiddlewareResult = Result<ToolExecutionResult, ToolError>;

/// One layer of the chain.
pub trait Middleware: Send + Sync + 'static {
    /// Handles one call; call `next.run(exec)` to go on, or return to veto.
    ///
    /// The returned future is `'static` (as a `tower` service's is): clone
    /// what it needs from `self` (keep shared state behind an `Arc`).
    /// An `Err` becomes a failed result with the error's code and the model's
    /// call id, so `?` works in a middleware.
    fn handle(&self, exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult>;
}

/// The rest of the chain after one middleware. Not `Clone`: run it at most once.
pub struct Next {
    pub(crate) chain: Arc<[Arc<dyn Middleware>]>,
    pub(crate) index: usize,
    pub(crate) registry: ToolRegistry,
    pub(crate) call: Arc<CallShared>,
}

/// What the layers of one call share: one allocation per call.
pub(crate) struct CallShared {
    /// The model's call id, for results the registry makes (a middleware's
    /// `Err`, a panic, an abort): always the id the model sent.
    pub(crate) call_id: String,
    /// Set when the tool body starts; tells `ABORTED` from `ABORTED_BEFORE_DISPATCH`.
    pub(crate) dispatched: AtomicBool,
}

impl Next {
    /// Runs the rest of the chain and the tool. Never fails: every outcome is a result.
    pub fn run(self, exec: ToolExecution) -> NextFuture {
        match self.chain.get(self.index).cloned() {
            Some(layer) => {
                let call = self.call.clone();
                let next = Next {
                    chain: self.chain,
                    index: self.index + 1,
                    registry: self.registry,
                    call: self.call,
                };
                NextFuture {
                    inner: NextInner::Layer {
                        future: layer.handle(exec, next),
                        call,
                    },
                }
            }
            None => NextFuture {
                inner: NextInner::Dispatch(self.registry.dispatch(exec, self.call)),
            },
        }
    }

    /// The registry the call runs in (e.g. to read the tool's annotations).
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }
}

/// The future [`Next::run`] returns: the next layer's outcome as a result.
#[must_use = "futures do nothing unless awaited"]
pub struct NextFuture {
    inner: NextInner,
}

enum NextInner {
    Layer {
        future: BoxFuture<'static, MiddlewareResult>,
        call: Arc<CallShared>,
    },
    Dispatch(BoxFuture<'static, ToolExecutionResult>),
}

impl Future for NextFuture {
    type Output = ToolExecutionResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
        // Every field is Unpin (boxed futures and Arcs), so NextFuture is too.
        match &mut self.get_mut().inner {
            NextInner::Layer { future, call } => {
                future.as_mut().poll(cx).map(|outcome| match outcome {
                    Ok(result) => result,
                    Err(err) => ToolExecutionResult::from_error(call.call_id.as_str(), &err),
                })
            }
            NextInner::Dispatch(future) => future.as_mut().poll(cx),
        }
    }
}

/// A closure as a middleware; see [`ToolRegistry::use_fn`](crate::ToolRegistry::use_fn).
pub struct FnMiddleware<F>(pub F);

impl<F, Fut> Middleware for FnMiddleware<F>
where
    F: Fn(ToolExecution, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MiddlewareResult> + Send + 'static,
{
    fn handle(&self, exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult> {
        Box::pin((self.0)(exec, next))
    }
}

/// Turns an overrun into `TOOL_TIMEOUT` (`Error: tool call timed out after Nms`).
///
/// The deadline is the tool's own [`timeout`](crate::ToolDefinition::timeout),
/// else the default given here; with neither, the call runs unbounded. On
/// overrun the call's cancellation token fires (so a cooperative body can
/// clean up) and the rest of the chain is dropped.
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
    fn handle(&self, mut exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult> {
        let deadline = next
            .registry()
            .get(&exec.name)
            .and_then(|tool| tool.timeout())
            .or(self.default);
        Box::pin(async move {
            let Some(deadline) = deadline else {
                return Ok(next.run(exec).await);
            };
            // A child token: firing it on timeout stops the body, not the caller's other calls.
            let cancel = exec.cancel.child_token();
            exec.cancel = cancel.clone();
            let mut run = next.run(exec);
            let sleep = std::pin::pin!(tokio::time::sleep(deadline));
            match future::select(&mut run, sleep).await {
                Either::Left((result, _)) => Ok(result),
                Either::Right(_) => {
                    // Fire the token first and give the chain one more poll, so a
                    // cooperative body sees the cancellation before it is dropped.
                    cancel.cancel();
                    let _ = (&mut run).now_or_never();
                    Err(ToolError::new(
                        ErrorCode::ToolTimeout,
                        format!(
                            "tool call timed out after {}ms",
                            deadline.as_millis().max(1)
                        ),
                    ))
                }
            }
        })
    }
}
