//! [`ToolRegistry`]: the registered tools, the middleware chain, and
//! `execute`, which turns every outcome into a [`ToolExecutionResult`].
//!
//! # Caveats
//! - Cancellation and timeouts stop a body by dropping its future, so they
//!   take effect at the body's next `.await`. A body that blocks its thread
//!   (a long synchronous loop) holds its worker until it returns; the result
//!   is still returned promptly only if the caller runs on another worker.
//! - A panic is caught and becomes `TOOL_PANICKED`, but the process's panic
//!   hook still runs (by default it prints to stderr).

use crate::definition::{Tool, ToolDefinition, ToolSchema, TypedTool};
use crate::error::{ErrorCode, ToolError};
use crate::execution::{CallArguments, ToolExecution, ToolExecutionResult};
use crate::middleware::{
    aborted_result, CallState, DirectFuture, FnMiddleware, Layer, LayerEntry, Middleware,
    MiddlewareResult, Next, NextFuture, SyncMiddleware, Tables, ToolEntry,
};
use crate::presentation::{ToolCallPresentation, ToolResultPresentation};
use crate::schema::Dialect;
use futures::future::{self, Either, FutureExt};
use futures::StreamExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
use std::task::{Context, Poll};
use tokio::sync::broadcast;

/// The default cap on calls of one batch that run at once.
pub const DEFAULT_BATCH_CONCURRENCY: usize = 10;

/// A change to the set of registered tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryChange {
    /// A tool was registered.
    Added(String),
    /// A tool was unregistered.
    Removed(String),
}

struct Inner {
    /// What calls run against, swapped as a whole on every change; a call
    /// clones the `Arc` once and needs no lock after that.
    tables: RwLock<Arc<Tables>>,
    next_id: AtomicU64,
    batch_concurrency: AtomicUsize,
    changes: broadcast::Sender<RegistryChange>,
}

/// The registered tools and the middleware chain. Cheap to clone (an `Arc`),
/// `Send + Sync`, shareable across tasks.
///
/// ```
/// use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolExecution, ToolRegistry};
/// use serde::Deserialize;
///
/// #[derive(ToolArgs, Deserialize)]
/// struct Add { a: i64, b: i64 }
///
/// # tokio_test_block_on(async {
/// let registry = ToolRegistry::new();
/// registry
///     .register(define_tool("add", "Adds two integers.", |args: Add, _| async move {
///         Ok(vec![ContentBlock::text((args.a + args.b).to_string())])
///     }))
///     .unwrap();
/// let result = registry.execute(ToolExecution::new("c1", "add", r#"{"a":2,"b":3}"#)).await;
/// assert_eq!(result.text(), "5");
/// let result = registry.execute(ToolExecution::new("c2", "add", r#"{"a":"2"}"#)).await;
/// assert_eq!(
///     result.text(),
///     r#"Error: invalid arguments: "a" must be an integer; missing required property "b""#
/// );
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone)]
pub struct ToolRegistry {
    inner: Arc<Inner>,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere while holding it; the data
    // (a snapshot pointer) is still consistent, so keep serving.
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

/// What providers accept as a tool name: `^[a-zA-Z0-9_-]{1,64}$`.
fn check_tool_name(name: &str) -> Result<(), ToolError> {
    let valid = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if valid {
        return Ok(());
    }
    Err(ToolError::new(
        ErrorCode::InvalidToolName,
        format!(
            "invalid tool name {name:?}: a tool name must match ^[a-zA-Z0-9_-]{{1,64}}$ \
             (1 to 64 ASCII letters, digits, '_' or '-'), which is what model providers accept"
        ),
    ))
}

impl ToolRegistry {
    /// An empty registry with no middleware.
    pub fn new() -> Self {
        ToolRegistry {
            inner: Arc::new(Inner {
                tables: RwLock::new(Arc::new(Tables::default())),
                next_id: AtomicU64::new(1),
                batch_concurrency: AtomicUsize::new(DEFAULT_BATCH_CONCURRENCY),
                changes: broadcast::channel(256).0,
            }),
        }
    }

    fn next_id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The snapshot calls run against.
    fn tables(&self) -> Arc<Tables> {
        read(&self.inner.tables).clone()
    }

    /// Changes the tables: in place when no call holds the current snapshot,
    /// else on a copy that the next calls see. Returns what `change` returns;
    /// anything it takes out is dropped by the caller, after the lock (a
    /// tool's or a layer's `Drop` may use this registry).
    fn update<R>(&self, change: impl FnOnce(&mut Tables) -> R) -> R {
        let mut tables = write(&self.inner.tables);
        change(Arc::make_mut(&mut tables))
    }

    /// Registers a tool for the registry's lifetime (or until
    /// [`ToolRegistry::unregister`]).
    ///
    /// # Errors
    /// `DUPLICATE_TOOL` (`tool "NAME" is already registered`);
    /// `INVALID_TOOL_NAME` when the name is not what providers accept
    /// (`^[a-zA-Z0-9_-]{1,64}$`); `INVALID_SCHEMA` when a default or enum
    /// value does not fit its property, or when the schema the tool reports
    /// names another tool (the model would call a name dispatch does not know).
    pub fn register(&self, tool: impl ToolDefinition) -> Result<(), ToolError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a typed [`Tool`] for the registry's lifetime.
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_tool<T: Tool>(&self, tool: T) -> Result<(), ToolError> {
        self.register(TypedTool::new(tool))
    }

    /// Registers a tool for as long as the returned handle lives: dropping
    /// it (or [`ToolHandle::unregister`]) removes the tool.
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_scoped(&self, tool: impl ToolDefinition) -> Result<ToolHandle, ToolError> {
        let (id, name) = self.insert(Arc::new(tool))?;
        Ok(ToolHandle {
            registry: Arc::downgrade(&self.inner),
            name,
            id,
        })
    }

    /// Registers a shared definition for the registry's lifetime.
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_arc(&self, tool: Arc<dyn ToolDefinition>) -> Result<(), ToolError> {
        self.insert(tool).map(|_| ())
    }

    /// Checks and inserts a tool; returns its registration id and name.
    fn insert(&self, tool: Arc<dyn ToolDefinition>) -> Result<(u64, String), ToolError> {
        let name = tool.name().to_owned();
        check_tool_name(&name)?;
        if let Some(spec) = tool.spec() {
            spec.check().map_err(|v| {
                ToolError::new(
                    ErrorCode::InvalidSchema,
                    format!("tool \"{name}\" has an invalid schema: {}", v.message()),
                )
            })?;
        }
        let schema_name = tool.schema(Dialect::Mcp).name;
        if schema_name != name {
            return Err(ToolError::new(
                ErrorCode::InvalidSchema,
                format!(
                    "tool \"{name}\" reports the name \"{schema_name}\" in its schema: \
                     the model would call a name that dispatch does not know"
                ),
            ));
        }
        let id = self.next_id();
        self.update(|tables| {
            if tables.tools.contains_key(&name) {
                return Err(ToolError::new(
                    ErrorCode::DuplicateTool,
                    format!("tool \"{name}\" is already registered"),
                ));
            }
            tables.tools.insert(name.clone(), ToolEntry { id, tool });
            // Sent under the lock, so events arrive in the order of the changes.
            let _ = self.inner.changes.send(RegistryChange::Added(name.clone()));
            Ok((id, name))
        })
    }

    /// Unregisters the tool of that name; `false` when there is none.
    pub fn unregister(&self, name: &str) -> bool {
        let removed = self.update(|tables| {
            let removed = tables.tools.remove(name);
            if removed.is_some() {
                let _ = self
                    .inner
                    .changes
                    .send(RegistryChange::Removed(name.to_owned()));
            }
            removed
        });
        removed.is_some()
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolDefinition>> {
        read(&self.inner.tables)
            .tools
            .get(name)
            .map(|e| e.tool.clone())
    }

    /// The names of the registered tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        let tables = self.tables();
        let mut entries: Vec<_> = tables.tools.iter().map(|(n, e)| (e.id, n)).collect();
        entries.sort_unstable();
        entries.into_iter().map(|(_, n)| n.clone()).collect()
    }

    /// The model-facing schemas, in registration order: a snapshot, built by
    /// an explicit allowlist (name, description, parameters, and `strict` for
    /// OpenAI strict mode). Nothing host-only is in it.
    pub fn schemas(&self, dialect: Dialect) -> Vec<ToolSchema> {
        self.definitions()
            .iter()
            .map(|t| t.schema(dialect))
            .collect()
    }

    /// The registered definitions, in registration order.
    pub(crate) fn definitions(&self) -> Vec<Arc<dyn ToolDefinition>> {
        let tables = self.tables();
        let mut tools: Vec<&ToolEntry> = tables.tools.values().collect();
        tools.sort_unstable_by_key(|e| e.id);
        tools.into_iter().map(|e| e.tool.clone()).collect()
    }

    /// Tools added and removed from now on. A receiver that falls more than
    /// 256 changes behind gets `Lagged` and should re-read [`ToolRegistry::names`].
    pub fn subscribe(&self) -> broadcast::Receiver<RegistryChange> {
        self.inner.changes.subscribe()
    }

    fn add_middleware(&self, layer: Layer, front: bool) -> u64 {
        let id = self.next_id();
        self.update(|tables| {
            let entry = LayerEntry { id, layer };
            if front {
                tables.layers.insert(0, entry);
            } else {
                tables.layers.push(entry);
            }
        });
        id
    }

    /// Adds a middleware inside those already added (the first added is
    /// outermost), for the registry's lifetime.
    pub fn use_middleware(&self, layer: impl Middleware) {
        self.add_middleware(Layer::Async(Arc::new(layer)), false);
    }

    /// Adds a [`SyncMiddleware`] inside those already added, for the
    /// registry's lifetime: a layer with no future of its own.
    pub fn use_sync_middleware(&self, layer: impl SyncMiddleware) {
        self.add_middleware(Layer::Sync(Arc::new(layer)), false);
    }

    /// Adds a [`SyncMiddleware`] inside those already added, for as long as
    /// the returned handle lives.
    pub fn use_sync_middleware_scoped(&self, layer: impl SyncMiddleware) -> MiddlewareHandle {
        let id = self.add_middleware(Layer::Sync(Arc::new(layer)), false);
        MiddlewareHandle {
            registry: Arc::downgrade(&self.inner),
            id,
        }
    }

    /// Adds a middleware outside all others, for the registry's lifetime.
    pub fn use_middleware_first(&self, layer: impl Middleware) {
        self.add_middleware(Layer::Async(Arc::new(layer)), true);
    }

    /// Adds a middleware inside those already added, for as long as the
    /// returned handle lives.
    pub fn use_middleware_scoped(&self, layer: impl Middleware) -> MiddlewareHandle {
        let id = self.add_middleware(Layer::Async(Arc::new(layer)), false);
        MiddlewareHandle {
            registry: Arc::downgrade(&self.inner),
            id,
        }
    }

    /// Adds a closure as a middleware (innermost so far), for the registry's lifetime.
    ///
    /// ```
    /// # use dsh_tools::ToolRegistry;
    /// let registry = ToolRegistry::new();
    /// registry.use_fn(|exec, next| async move {
    ///     let result = next.run(exec).await;
    ///     Ok(result)
    /// });
    /// ```
    pub fn use_fn<F, Fut>(&self, f: F)
    where
        F: Fn(ToolExecution, Next) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = MiddlewareResult> + Send + 'static,
    {
        self.use_middleware(FnMiddleware(f))
    }

    /// Sets how many concurrency-safe calls of a batch run at once (at least 1).
    pub fn set_batch_concurrency(&self, cap: usize) {
        self.inner
            .batch_concurrency
            .store(cap.max(1), Ordering::Relaxed);
    }

    /// Runs one call through the middleware chain and the tool.
    ///
    /// Never fails and never panics: a tool error, an unknown tool, invalid
    /// arguments, a panic, a cancellation or a timeout each become a result
    /// with `isError` and a code, and that result passes back through every
    /// middleware. The result's `callId` is always the one the model sent,
    /// whatever a middleware did to `exec.call_id` or to the result.
    ///
    /// On cancellation the result is returned at once, whether or not the
    /// body cooperates: `ABORTED_BEFORE_DISPATCH` before the body started,
    /// `ABORTED` after. A call whose token already fired still runs the
    /// chain (so logging layers and hooks see it); only dispatch is skipped.
    ///
    /// Must run inside a Tokio runtime with time enabled when a
    /// [`TimeoutMiddleware`](crate::TimeoutMiddleware) is installed.
    ///
    /// # Cancel safety
    /// Dropping the future drops the call (the body's future with it).
    pub fn execute(
        &self,
        exec: ToolExecution,
    ) -> impl Future<Output = ToolExecutionResult> + Send + '_ {
        // A hand-written future rather than an `async fn`: it holds the
        // execution until its first poll and the chain after it, never
        // both, so it stays small (128 bytes) and is moved inline, not by a
        // `memcpy` call, each time a runtime moves it.
        Execute::Start(self, exec)
    }

    /// Runs a model turn's calls. Consecutive concurrency-safe calls run in
    /// parallel (at most the batch cap at once); any other call runs alone, as
    /// a barrier. Results come back in the model's order.
    pub async fn execute_batch(&self, calls: Vec<ToolExecution>) -> Vec<ToolExecutionResult> {
        let cap = self.inner.batch_concurrency.load(Ordering::Relaxed);
        let mut results = Vec::with_capacity(calls.len());
        let mut safe_run: Vec<ToolExecution> = Vec::new();
        for exec in calls {
            if self.is_concurrency_safe(&exec) {
                safe_run.push(exec);
                continue;
            }
            self.run_parallel(std::mem::take(&mut safe_run), cap, &mut results)
                .await;
            results.push(self.execute(exec).await);
        }
        self.run_parallel(safe_run, cap, &mut results).await;
        results
    }

    async fn run_parallel(
        &self,
        calls: Vec<ToolExecution>,
        cap: usize,
        results: &mut Vec<ToolExecutionResult>,
    ) {
        if calls.is_empty() {
            return;
        }
        let mut stream =
            futures::stream::iter(calls.into_iter().map(|exec| self.execute(exec))).buffered(cap);
        while let Some(result) = stream.next().await {
            results.push(result);
        }
    }

    fn is_concurrency_safe(&self, exec: &ToolExecution) -> bool {
        let (Some(tool), Some(args)) = (self.get(&exec.name), exec.arguments.as_value()) else {
            return false;
        };
        std::panic::catch_unwind(AssertUnwindSafe(|| tool.is_concurrency_safe(args)))
            .unwrap_or(false)
    }

    /// How to show a pending call: the tool's presenter, or the generic
    /// presentation when the tool is unknown, has none, returns `None`, panics
    /// or the arguments are not JSON.
    ///
    /// `args` is the call's [`ToolArguments`](crate::ToolArguments) or a parsed `Value`.
    pub fn present_call(
        &self,
        name: &str,
        args: &(impl CallArguments + ?Sized),
    ) -> ToolCallPresentation {
        args.as_json()
            .and_then(|value| {
                let tool = self.get(name)?;
                std::panic::catch_unwind(AssertUnwindSafe(|| tool.present_call(value)))
                    .ok()
                    .flatten()
            })
            .unwrap_or_else(|| ToolCallPresentation::generic(name, &args.to_display()))
    }

    /// How to show a completed call: the tool's presenter, or the generic
    /// presentation (keep the pending title, show the raw content).
    pub fn present_result(
        &self,
        name: &str,
        args: &(impl CallArguments + ?Sized),
        result: &ToolExecutionResult,
    ) -> ToolResultPresentation {
        args.as_json()
            .and_then(|value| {
                let tool = self.get(name)?;
                std::panic::catch_unwind(AssertUnwindSafe(|| tool.present_result(value, result)))
                    .ok()
                    .flatten()
            })
            .unwrap_or_else(|| ToolResultPresentation::generic(&result.content))
    }
}

/// Keeps a tool registered; unregisters it when dropped or on
/// [`ToolHandle::unregister`]. Returned by [`ToolRegistry::register_scoped`]
/// only: plain [`ToolRegistry::register`] keeps the tool.
#[must_use = "dropping the handle unregisters the tool at once"]
pub struct ToolHandle {
    registry: Weak<Inner>,
    name: String,
    id: u64,
}

impl ToolHandle {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Unregisters the tool now.
    pub fn unregister(self) {}

    /// Keeps the tool registered for the registry's lifetime after all
    /// (e.g. once every tool of a group registered).
    pub fn keep(mut self) {
        self.registry = Weak::new();
    }
}

impl Drop for ToolHandle {
    fn drop(&mut self) {
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let registry = ToolRegistry { inner };
        let removed = registry.update(|tables| {
            // Only the registration this handle made: a later tool of the same name stays.
            if tables.tools.get(&self.name).is_none_or(|e| e.id != self.id) {
                return None;
            }
            let removed = tables.tools.remove(&self.name);
            // Sent under the lock, so events arrive in the order of the changes.
            let _ = registry
                .inner
                .changes
                .send(RegistryChange::Removed(self.name.clone()));
            removed
        });
        // Dropped without the lock: the tool's `Drop` may use this registry.
        drop(removed);
    }
}

/// Keeps a middleware installed; removes it when dropped or on
/// [`MiddlewareHandle::remove`]. Returned by
/// [`ToolRegistry::use_middleware_scoped`] only.
#[must_use = "dropping the handle removes the middleware at once"]
pub struct MiddlewareHandle {
    registry: Weak<Inner>,
    id: u64,
}

impl MiddlewareHandle {
    /// Removes the middleware now.
    pub fn remove(self) {}

    /// Keeps the middleware for the registry's lifetime after all.
    pub fn keep(mut self) {
        self.registry = Weak::new();
    }
}

impl Drop for MiddlewareHandle {
    fn drop(&mut self) {
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let registry = ToolRegistry { inner };
        let removed = registry.update(|tables| {
            let index = tables.layers.iter().position(|e| e.id == self.id)?;
            Some(tables.layers.remove(index))
        });
        // Dropped without the lock: the layer's `Drop` may use this registry.
        drop(removed);
    }
}

/// The future of [`ToolRegistry::execute`]. Nothing happens before its
/// first poll, as with an `async fn`.
enum Execute<'a> {
    Start(&'a ToolRegistry, ToolExecution),
    /// A call without a token on a registry without layers: straight to
    /// the tool, with no state for layers to share.
    Direct(DirectFuture),
    /// The chain of a call without a token.
    Run(NextFuture, Arc<CallState>),
    /// The chain of a call with a token, raced against it. Boxed: the race
    /// and the token's future would make every call's future larger.
    Race(
        Pin<Box<dyn Future<Output = ToolExecutionResult> + Send>>,
        Arc<CallState>,
    ),
    Done,
}

impl Future for Execute<'_> {
    type Output = ToolExecutionResult;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
        // Every field is Unpin (an execution, boxed futures, Arcs).
        let this = self.get_mut();
        if let Execute::Start(..) = this {
            let Execute::Start(registry, exec) = std::mem::replace(this, Execute::Done) else {
                unreachable!("matched above")
            };
            let tables = registry.tables();
            if exec.cancel.is_none() && tables.layers.is_empty() {
                *this = Execute::Direct(DirectFuture::new(exec, &tables));
                return self_poll_direct(this, cx);
            }
            let cancel = exec.cancel.clone();
            let state = Arc::new(CallState {
                tables,
                call_id: exec.call_id.clone(),
                dispatched: AtomicBool::new(false),
            });
            let run = Next::first(state.clone()).run(exec);
            *this = match cancel {
                None => Execute::Run(run, state),
                Some(cancel) => {
                    Execute::Race(Box::pin(race_cancel(run, cancel, state.clone())), state)
                }
            };
        }
        let (polled, state) = match this {
            Execute::Direct(_) => return self_poll_direct(this, cx),
            Execute::Run(run, state) => (Pin::new(run).poll(cx), state),
            Execute::Race(race, state) => (race.as_mut().poll(cx), state),
            Execute::Start(..) | Execute::Done => {
                return Poll::Ready(ToolExecutionResult::failure(
                    "",
                    ErrorCode::ToolError,
                    "a call's future was polled after it finished",
                ))
            }
        };
        let Poll::Ready(mut result) = polled else {
            return Poll::Pending;
        };
        if result.call_id != state.call_id {
            result.call_id.clone_from(&state.call_id);
        }
        *this = Execute::Done;
        Poll::Ready(result)
    }
}

/// Polls [`Execute::Direct`]: its result needs no fixing, as no layer saw it.
fn self_poll_direct(this: &mut Execute<'_>, cx: &mut Context<'_>) -> Poll<ToolExecutionResult> {
    let Execute::Direct(direct) = this else {
        unreachable!("called on Execute::Direct")
    };
    let polled = Pin::new(direct).poll(cx);
    if polled.is_ready() {
        *this = Execute::Done;
    }
    polled
}

/// The chain of a call with a token, raced against the token.
///
/// The chain is polled first, so a result it produces on the same wake-up as
/// the cancellation (e.g. `ABORTED` from dispatch, passed back through the
/// middleware) wins; once the token fired, the chain gets one more poll to
/// say so.
async fn race_cancel(
    mut run: NextFuture,
    cancel: tokio_util::sync::CancellationToken,
    state: Arc<CallState>,
) -> ToolExecutionResult {
    let cancelled = std::pin::pin!(cancel.cancelled());
    match future::select(&mut run, cancelled).await {
        Either::Left((result, _)) => result,
        Either::Right(((), _)) => match (&mut run).now_or_never() {
            Some(result) => result,
            None => aborted_result(&state.call_id, state.dispatched.load(Ordering::Acquire)),
        },
    }
}
