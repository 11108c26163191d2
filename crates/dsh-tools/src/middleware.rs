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
//! `Next::run` takes `self`, so a call can never be dispatched twice, and its
//! future always yields a result: an inner layer's `Err`, an inner panic (in
//! its synchronous part or its future), an abort or a timeout reach every
//! outer layer as a failed result, so a logging layer or a post-call hook sees
//! every outcome.
//!
//! | write it as … | when |
//! |---|---|
//! | a closure, [`ToolRegistry::use_fn`](crate::ToolRegistry::use_fn) | small, stateless or `Arc`-captured state |
//! | an `impl Middleware` | configuration, state, reuse across registries |
//!
//! # Why it is built this way
//!
//! Each call takes one snapshot of the registry's tables (tools and layers,
//! swapped as a whole when either changes), so the chain a call runs and the
//! tool it dispatches to are looked up once, without locks after the first
//! read. The panic boundary sits in [`NextFuture`], once per layer, which
//! costs nothing unless something panics; and the only cancellation race of a
//! call is the registry's own (none at all when the call has no token).

use crate::content::ContentBlock;
use crate::definition::ToolDefinition;
use crate::error::{ErrorCode, ToolError};
use crate::execution::{ToolContext, ToolExecution, ToolExecutionResult};
use futures::future::BoxFuture;
use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

/// What a middleware returns: a result, or an error the registry turns into one.
pub type MiddlewareResult = Result<ToolExecutionResult, ToolError>;

/// The future a [`Middleware`] returns.
pub type MiddlewareFuture = BoxFuture<'static, MiddlewareResult>;

/// One layer of the chain.
///
/// ```
/// use dsh_tools::{Middleware, MiddlewareFuture, Next, ToolError, ToolExecution};
///
/// /// Refuses every call to tools whose name starts with `admin_`.
/// struct NoAdmin;
///
/// impl Middleware for NoAdmin {
///     fn handle(&self, exec: ToolExecution, next: Next) -> MiddlewareFuture {
///         Box::pin(async move {
///             if exec.name.starts_with("admin_") {
///                 return Err(ToolError::msg("admin tools are off"));
///             }
///             Ok(next.run(exec).await)
///         })
///     }
/// }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles one call; call `next.run(exec)` to go on, or return to veto.
    ///
    /// The returned future is `'static` (as a `tower` service's is): clone
    /// what it needs from `self` (keep shared state behind an `Arc`).
    /// An `Err` becomes a failed result with the error's code and the model's
    /// call id, so `?` works in a middleware.
    fn handle(&self, exec: ToolExecution, next: Next) -> MiddlewareFuture;
}

/// FNV-1a: tool names are short and chosen by the host, so a fast
/// non-keyed hash is fine and beats SipHash on the per-call lookup.
#[derive(Default, Clone, Copy)]
pub(crate) struct NameHasher(u64);

impl std::hash::Hasher for NameHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

pub(crate) type NameMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<NameHasher>>;

#[derive(Clone)]
pub(crate) struct ToolEntry {
    pub(crate) id: u64,
    pub(crate) tool: Arc<dyn ToolDefinition>,
}

/// A layer that decides before the call and looks at its outcome after it,
/// without a future of its own: it costs a few nanoseconds a layer, where a
/// [`Middleware`] costs a boxed future (and the moves of the execution and
/// the result through it). For auditing, counting, rewriting
/// arguments or vetoing by a rule that needs no waiting; anything that waits
/// (asks a person, runs a hook script) is a [`Middleware`].
///
/// Sync layers take their place in the chain like any other: first added is
/// outermost, and every outcome of the layers inside (a veto, an error, a
/// panic, an abort) reaches [`SyncMiddleware::after`].
///
/// ```
/// use dsh_tools::{SyncMiddleware, ToolError, ToolExecution, ToolExecutionResult, ToolRegistry};
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use std::sync::Arc;
///
/// /// Counts failed calls, and refuses tools named `admin_*`.
/// struct Guard(Arc<AtomicUsize>);
///
/// impl SyncMiddleware for Guard {
///     fn before(&self, exec: &mut ToolExecution) -> Result<(), ToolError> {
///         if exec.name.starts_with("admin_") {
///             return Err(ToolError::msg("admin tools are off"));
///         }
///         Ok(())
///     }
///
///     fn after(&self, result: &mut ToolExecutionResult) {
///         if result.is_error {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
///
/// let failures = Arc::new(AtomicUsize::new(0));
/// let registry = ToolRegistry::new();
/// registry.use_sync_middleware(Guard(failures.clone()));
/// ```
pub trait SyncMiddleware: Send + Sync + 'static {
    /// Before the call: rewrite `exec`, or veto with `Err` (which becomes a
    /// failed result with the error's code; the layers inside never run).
    ///
    /// # Errors
    /// The veto.
    fn before(&self, exec: &mut ToolExecution) -> Result<(), ToolError> {
        let _ = exec;
        Ok(())
    }

    /// After the call: every outcome of the layers inside, which it may change.
    fn after(&self, result: &mut ToolExecutionResult) {
        let _ = result;
    }
}

#[derive(Clone)]
pub(crate) enum Layer {
    Async(Arc<dyn Middleware>),
    Sync(Arc<dyn SyncMiddleware>),
}

#[derive(Clone)]
pub(crate) struct LayerEntry {
    pub(crate) id: u64,
    pub(crate) layer: Layer,
}

/// What a call runs against: the tools and the layers, as one immutable
/// snapshot. A change to the registry publishes a new one; calls in flight
/// keep theirs.
#[derive(Clone, Default)]
pub(crate) struct Tables {
    pub(crate) tools: NameMap<ToolEntry>,
    pub(crate) layers: Vec<LayerEntry>,
}

/// What the layers of one call share: one allocation per call.
pub(crate) struct CallState {
    pub(crate) tables: Arc<Tables>,
    /// The model's call id, for results the registry makes (a middleware's
    /// `Err`, a panic, an abort): always the id the model sent.
    pub(crate) call_id: String,
    /// Set when the tool body starts; tells `ABORTED` from `ABORTED_BEFORE_DISPATCH`.
    pub(crate) dispatched: AtomicBool,
}

/// The rest of the chain after one middleware. Not `Clone`: run it at most once.
pub struct Next {
    state: Arc<CallState>,
    index: usize,
}

impl Next {
    pub(crate) fn first(state: Arc<CallState>) -> Next {
        Next { state, index: 0 }
    }

    /// Runs the rest of the chain and the tool. Never fails: every outcome,
    /// an inner panic included, is a result.
    pub fn run(self, mut exec: ToolExecution) -> NextFuture {
        let Next { state, index } = self;
        let layers = &state.tables.layers;
        // Sync layers run here, one after another, with no future of their
        // own; their `after` hooks run when this future completes.
        let first_sync = index;
        let mut index = index;
        let inner = loop {
            let Some(entry) = layers.get(index) else {
                break dispatch(exec, &state);
            };
            match &entry.layer {
                Layer::Sync(layer) => {
                    match catch_unwind(AssertUnwindSafe(|| layer.before(&mut exec))) {
                        Ok(Ok(())) => index += 1,
                        // A veto or a panic is this layer's outcome: the
                        // layers outside it see it, its own `after` does not.
                        Ok(Err(err)) => {
                            break done(ToolExecutionResult::from_error(
                                state.call_id.as_str(),
                                &err,
                            ))
                        }
                        Err(payload) => {
                            break done(middleware_panicked(&state.call_id, payload.as_ref()))
                        }
                    }
                }
                Layer::Async(layer) => {
                    let next = Next {
                        state: state.clone(),
                        index: index + 1,
                    };
                    // A panic in the layer's synchronous part is this layer's
                    // outcome, which the caller (the outer layer) must see.
                    break match catch_unwind(AssertUnwindSafe(|| layer.handle(exec, next))) {
                        Ok(future) => NextInner::Layer(future),
                        Err(payload) => done(middleware_panicked(&state.call_id, payload.as_ref())),
                    };
                }
            }
        };
        NextFuture {
            inner,
            after: first_sync..index,
            state,
        }
    }

    /// The tool of that name in the registry as this call sees it (e.g. to
    /// read its annotations or its timeout).
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn ToolDefinition>> {
        self.state.tables.tools.get(name).map(|e| &e.tool)
    }

    /// The id the model gave the call, whatever a layer did to `exec.call_id`.
    pub fn call_id(&self) -> &str {
        &self.state.call_id
    }
}

/// The future [`Next::run`] returns: the next layer's outcome as a result.
#[must_use = "futures do nothing unless awaited"]
pub struct NextFuture {
    inner: NextInner,
    /// The sync layers this run passed, whose `after` hooks see the outcome.
    after: std::ops::Range<usize>,
    state: Arc<CallState>,
}

fn done(result: ToolExecutionResult) -> NextInner {
    NextInner::Done(Some(Box::new(result)))
}

enum NextInner {
    Layer(MiddlewareFuture),
    Body {
        future: BoxFuture<'static, Result<Vec<ContentBlock>, ToolError>>,
        cancel: Option<tokio_util::sync::CancellationToken>,
        /// The model's call id for the result, taken from the execution
        /// (so a successful call copies the id once less).
        call_id: String,
    },
    /// A body with a whole [`ToolOutput`] (see `ToolDefinition::has_output`).
    Output {
        future: crate::definition::OutputFuture<'static>,
        cancel: Option<tokio_util::sync::CancellationToken>,
        call_id: String,
    },
    /// Decided without a future (a veto by dispatch, a panic in `handle`);
    /// `None` once taken. Boxed: a rare path, and it keeps every layer's
    /// future (which holds a `NextFuture`) small to move.
    Done(Option<Box<ToolExecutionResult>>),
}

impl Future for NextFuture {
    type Output = ToolExecutionResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
        // Every field is Unpin (boxed futures and Arcs), so NextFuture is too.
        let this = self.get_mut();
        if this.after.is_empty() {
            // No sync layer to run after: the result goes straight out, with
            // no copy of it on the way (it is moved once per layer already).
            return this.poll_inner(cx);
        }
        let Poll::Ready(mut result) = this.poll_inner(cx) else {
            return Poll::Pending;
        };
        let layers = &this.state.tables.layers;
        for entry in layers[this.after.clone()].iter().rev() {
            if let Layer::Sync(layer) = &entry.layer {
                if let Err(payload) = catch_unwind(AssertUnwindSafe(|| layer.after(&mut result))) {
                    result = middleware_panicked(&this.state.call_id, payload.as_ref());
                }
            }
        }
        Poll::Ready(result)
    }
}

impl NextFuture {
    #[inline(always)]
    fn poll_inner(&mut self, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
        poll_next_inner(&mut self.inner, cx, &self.state.call_id)
    }
}

/// Polls what a [`NextFuture`] runs; `call_id` is the model's, for the
/// results made here (a layer's `Err` or panic).
#[inline(always)]
fn poll_next_inner(
    inner: &mut NextInner,
    cx: &mut Context<'_>,
    call_id: &str,
) -> Poll<ToolExecutionResult> {
    {
        match inner {
            NextInner::Layer(future) => {
                match catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))) {
                    Ok(Poll::Pending) => Poll::Pending,
                    Ok(Poll::Ready(Ok(result))) => Poll::Ready(result),
                    Ok(Poll::Ready(Err(err))) => {
                        Poll::Ready(ToolExecutionResult::from_error(call_id, &err))
                    }
                    Err(payload) => Poll::Ready(middleware_panicked(call_id, payload.as_ref())),
                }
            }
            NextInner::Body {
                future,
                cancel,
                call_id: id,
            } => poll_body(future, cancel.as_ref(), cx, id, |id, content| {
                ToolExecutionResult::ok(id, content)
            }),
            NextInner::Output {
                future,
                cancel,
                call_id: id,
            } => poll_body(future, cancel.as_ref(), cx, id, |id, output| {
                ToolExecutionResult::from_output(id, output)
            }),
            NextInner::Done(result) => match result.take() {
                Some(result) => Poll::Ready(*result),
                None => Poll::Ready(ToolExecutionResult::failure(
                    call_id,
                    ErrorCode::ToolError,
                    "the result of this layer was already taken (a NextFuture polled after it finished)",
                )),
            },
        }
    }
}

/// Polls a body's future; `finish` makes its value the result, with
/// `call_id` (taken: a body's future is polled to completion once).
fn poll_body<T>(
    future: &mut BoxFuture<'static, Result<T, ToolError>>,
    cancel: Option<&tokio_util::sync::CancellationToken>,
    cx: &mut Context<'_>,
    call_id: &mut String,
    finish: fn(String, T) -> ToolExecutionResult,
) -> Poll<ToolExecutionResult> {
    let polled = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)));
    // Checked on every wake-up, after the body had its poll (so a
    // cooperative body sees its token fire): when the registry's race or a
    // timeout sees the token fire, it polls the chain once more, and this
    // turns the call into `ABORTED`, which then passes back through every
    // layer. A body that noticed the cancellation and returned was still
    // aborted.
    if cancel.is_some_and(tokio_util::sync::CancellationToken::is_cancelled) {
        return Poll::Ready(aborted_result(call_id, true));
    }
    match polled {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(Ok(value))) => Poll::Ready(finish(std::mem::take(call_id), value)),
        Ok(Poll::Ready(Err(err))) => Poll::Ready(ToolExecutionResult::from_error(
            std::mem::take(call_id),
            &err,
        )),
        Err(payload) => Poll::Ready(tool_panicked(call_id, payload.as_ref())),
    }
}

/// The innermost step: look up and run the body (which parses and checks
/// the arguments, so a typed tool can skip what it does not need).
fn dispatch(exec: ToolExecution, state: &CallState) -> NextInner {
    dispatch_in(
        exec,
        &state.tables,
        Some(&state.call_id),
        Some(&state.dispatched),
    )
}

/// [`dispatch`] against `tables`. `model_id` is the model's call id, `None`
/// when it is `exec.call_id` (no layer can have changed it); `dispatched`
/// is set when the body starts, if someone needs to know.
fn dispatch_in(
    exec: ToolExecution,
    tables: &Tables,
    model_id: Option<&str>,
    dispatched: Option<&AtomicBool>,
) -> NextInner {
    let Some(entry) = tables.tools.get(exec.name.as_str()) else {
        return done(ToolExecutionResult::failure(
            model_id.unwrap_or(&exec.call_id),
            ErrorCode::UnknownTool,
            format!("unknown tool \"{}\"", exec.name),
        ));
    };
    if exec.cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
        return done(aborted_result(model_id.unwrap_or(&exec.call_id), false));
    }
    if let Some(dispatched) = dispatched {
        dispatched.store(true, Ordering::Release);
    }
    let ctx_id = model_id.unwrap_or(&exec.call_id).to_owned();
    // The result's id: the execution's own string when a layer left it alone.
    let result_id = match model_id {
        Some(id) if exec.call_id != id => id.to_owned(),
        _ => exec.call_id,
    };
    let ctx = ToolContext {
        call_id: ctx_id,
        name: exec.name,
        agent: exec.agent,
        cancel: exec.cancel.clone(),
        progress: exec.progress,
        extensions: exec.extensions,
    };
    // A panic in the body's synchronous part is the tool's, like one in its future.
    let args = exec.arguments;
    if entry.tool.has_output() {
        return match catch_unwind(AssertUnwindSafe(|| {
            entry.tool.clone().execute_output(args, ctx)
        })) {
            Ok(future) => NextInner::Output {
                future,
                cancel: exec.cancel,
                call_id: result_id,
            },
            Err(payload) => done(tool_panicked(&result_id, payload.as_ref())),
        };
    }
    match catch_unwind(AssertUnwindSafe(|| {
        entry.tool.clone().execute_shared(args, ctx)
    })) {
        Ok(future) => NextInner::Body {
            future,
            cancel: exec.cancel,
            call_id: result_id,
        },
        Err(payload) => done(tool_panicked(&result_id, payload.as_ref())),
    }
}

/// A call on a chain with no layer and without a token, run without the
/// state a chain shares ([`CallState`]): no layer can see the execution,
/// change its id or wait for its outcome, and nothing can abort it.
pub(crate) struct DirectFuture(NextInner);

impl DirectFuture {
    /// Dispatches `exec` against `tables`, which must have no layers.
    pub(crate) fn new(exec: ToolExecution, tables: &Tables) -> DirectFuture {
        debug_assert!(tables.layers.is_empty() && exec.cancel.is_none());
        DirectFuture(dispatch_in(exec, tables, None, None))
    }
}

impl Future for DirectFuture {
    type Output = ToolExecutionResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
        // The id is only read for a layer's outcome, which there is none of.
        poll_next_inner(&mut self.get_mut().0, cx, "")
    }
}

pub(crate) fn aborted_result(call_id: &str, dispatched: bool) -> ToolExecutionResult {
    if dispatched {
        ToolExecutionResult::failure(call_id, ErrorCode::Aborted, "tool call aborted")
    } else {
        ToolExecutionResult::failure(
            call_id,
            ErrorCode::AbortedBeforeDispatch,
            "tool call aborted before dispatch",
        )
    }
}

fn tool_panicked(call_id: &str, payload: &(dyn Any + Send)) -> ToolExecutionResult {
    ToolExecutionResult::failure(
        call_id,
        ErrorCode::ToolPanicked,
        format!("tool panicked: {}", panic_message(payload)),
    )
}

fn middleware_panicked(call_id: &str, payload: &(dyn Any + Send)) -> ToolExecutionResult {
    ToolExecutionResult::failure(
        call_id,
        ErrorCode::ToolPanicked,
        format!("a middleware panicked: {}", panic_message(payload)),
    )
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

/// A closure as a middleware; see [`ToolRegistry::use_fn`](crate::ToolRegistry::use_fn).
pub struct FnMiddleware<F>(pub F);

impl<F, Fut> Middleware for FnMiddleware<F>
where
    F: Fn(ToolExecution, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MiddlewareResult> + Send + 'static,
{
    fn handle(&self, exec: ToolExecution, next: Next) -> MiddlewareFuture {
        Box::pin((self.0)(exec, next))
    }
}
