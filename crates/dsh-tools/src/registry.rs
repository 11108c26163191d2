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
use crate::execution::{ToolArguments, ToolContext, ToolExecution, ToolExecutionResult};
use crate::middleware::{CallShared, FnMiddleware, Middleware, MiddlewareResult, Next};
use crate::presentation::{ToolCallPresentation, ToolResultPresentation};
use crate::schema::Dialect;
use futures::future::{self, BoxFuture, Either, FutureExt};
use futures::StreamExt;
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};
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

/// FNV-1a: tool names are short and chosen by the host, so a fast
/// non-keyed hash is fine and beats SipHash on the per-call lookup.
#[derive(Default, Clone, Copy)]
struct NameHasher(u64);

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

type NameMap<V> = HashMap<String, V, std::hash::BuildHasherDefault<NameHasher>>;

struct ToolEntry {
    id: u64,
    tool: Arc<dyn ToolDefinition>,
}

struct MiddlewareEntry {
    id: u64,
    layer: Arc<dyn Middleware>,
}

struct Inner {
    tools: RwLock<NameMap<ToolEntry>>,
    middleware: RwLock<Vec<MiddlewareEntry>>,
    /// The chain as `execute` reads it: rebuilt on every change, cloned per call.
    chain: RwLock<Arc<[Arc<dyn Middleware>]>>,
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
/// let _add = registry
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
    // (a map or a list) is still consistent, so keep serving.
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_owned()
    }
}

impl ToolRegistry {
    /// An empty registry with no middleware.
    pub fn new() -> Self {
        ToolRegistry {
            inner: Arc::new(Inner {
                tools: RwLock::new(NameMap::default()),
                middleware: RwLock::new(Vec::new()),
                chain: RwLock::new(Arc::from(Vec::new())),
                next_id: AtomicU64::new(1),
                batch_concurrency: AtomicUsize::new(DEFAULT_BATCH_CONCURRENCY),
                changes: broadcast::channel(256).0,
            }),
        }
    }

    fn next_id(&self) -> u64 {
        self.inner.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Registers a tool.
    ///
    /// # Errors
    /// `DUPLICATE_TOOL` (`tool "NAME" is already registered`), or
    /// `INVALID_SCHEMA` when a default or enum value does not fit its property.
    pub fn register(&self, tool: impl ToolDefinition) -> Result<ToolHandle, ToolError> {
        self.register_arc(Arc::new(tool))
    }

    /// Registers a typed [`Tool`].
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_tool<T: Tool>(&self, tool: T) -> Result<ToolHandle, ToolError> {
        self.register(TypedTool::new(tool))
    }

    /// Registers a shared definition.
    ///
    /// # Errors
    /// As [`ToolRegistry::register`].
    pub fn register_arc(&self, tool: Arc<dyn ToolDefinition>) -> Result<ToolHandle, ToolError> {
        let name = tool.name().to_owned();
        if let Some(spec) = tool.spec() {
            spec.check().map_err(|v| {
                ToolError::new(
                    ErrorCode::InvalidSchema,
                    format!("tool \"{name}\" has an invalid schema: {}", v.message()),
                )
            })?;
        }
        let id = self.next_id();
        {
            let mut tools = write(&self.inner.tools);
            if tools.contains_key(&name) {
                return Err(ToolError::new(
                    ErrorCode::DuplicateTool,
                    format!("tool \"{name}\" is already registered"),
                ));
            }
            tools.insert(name.clone(), ToolEntry { id, tool });
            // Sent under the lock, so events arrive in the order of the changes.
            let _ = self.inner.changes.send(RegistryChange::Added(name.clone()));
        }
        Ok(ToolHandle {
            registry: Arc::downgrade(&self.inner),
            name,
            id,
            armed: true,
        })
    }

    /// The tool of that name.
    pub fn get(&self, name: &str) -> Option<Arc<dyn ToolDefinition>> {
        read(&self.inner.tools).get(name).map(|e| e.tool.clone())
    }

    /// The names of the registered tools, in registration order.
    pub fn names(&self) -> Vec<String> {
        let tools = read(&self.inner.tools);
        let mut entries: Vec<_> = tools.iter().map(|(n, e)| (e.id, n.clone())).collect();
        entries.sort_unstable();
        entries.into_iter().map(|(_, n)| n).collect()
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
        let mut tools: Vec<(u64, Arc<dyn ToolDefinition>)> = read(&self.inner.tools)
            .values()
            .map(|e| (e.id, e.tool.clone()))
            .collect();
        tools.sort_unstable_by_key(|(id, _)| *id);
        tools.into_iter().map(|(_, t)| t).collect()
    }

    /// Tools added and removed from now on. A receiver that falls more than
    /// 256 changes behind gets `Lagged` and should re-read [`ToolRegistry::names`].
    pub fn subscribe(&self) -> broadcast::Receiver<RegistryChange> {
        self.inner.changes.subscribe()
    }

    /// Publishes a new chain and returns the old one, which the caller drops
    /// after releasing its locks (a layer's `Drop` may use this registry).
    fn rebuild_chain(&self, middleware: &[MiddlewareEntry]) -> Arc<[Arc<dyn Middleware>]> {
        let chain: Arc<[Arc<dyn Middleware>]> =
            middleware.iter().map(|e| e.layer.clone()).collect();
        std::mem::replace(&mut *write(&self.inner.chain), chain)
    }

    fn add_middleware(&self, layer: Arc<dyn Middleware>, front: bool) -> MiddlewareHandle {
        let id = self.next_id();
        let mut list = write(&self.inner.middleware);
        let entry = MiddlewareEntry { id, layer };
        if front {
            list.insert(0, entry);
        } else {
            list.push(entry);
        }
        let old_chain = self.rebuild_chain(&list);
        drop(list);
        drop(old_chain);
        MiddlewareHandle {
            registry: Arc::downgrade(&self.inner),
            id,
            armed: true,
        }
    }

    /// Adds a middleware inside those already added (the first added is outermost).
    pub fn use_middleware(&self, layer: impl Middleware) -> MiddlewareHandle {
        self.add_middleware(Arc::new(layer), false)
    }

    /// Adds a middleware outside all others.
    pub fn use_middleware_first(&self, layer: impl Middleware) -> MiddlewareHandle {
        self.add_middleware(Arc::new(layer), true)
    }

    /// Adds a closure as a middleware (innermost so far).
    ///
    /// ```
    /// # use dsh_tools::ToolRegistry;
    /// let registry = ToolRegistry::new();
    /// registry
    ///     .use_fn(|exec, next| async move {
    ///         let result = next.run(exec).await;
    ///         Ok(result)
    ///     })
    ///     .keep();
    /// ```
    pub fn use_fn<F, Fut>(&self, f: F) -> MiddlewareHandle
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
    /// with `isError` and a code. On cancellation the result is returned at
    /// once, whether or not the body cooperates: `ABORTED_BEFORE_DISPATCH`
    /// before the body started, `ABORTED` after.
    ///
    /// Must run inside a Tokio runtime with time enabled when a
    /// [`TimeoutMiddleware`](crate::TimeoutMiddleware) is installed.
    pub async fn execute(&self, exec: ToolExecution) -> ToolExecutionResult {
        let cancel = exec.cancel.clone();
        let call = Arc::new(CallShared {
            call_id: exec.call_id.clone(),
            dispatched: AtomicBool::new(false),
        });
        let chain = read(&self.inner.chain).clone();
        let next = Next {
            chain,
            index: 0,
            registry: self.clone(),
            call: call.clone(),
        };
        // The outermost layer's `handle` runs inside the first poll, so a panic
        // in its synchronous part is caught too.
        let run = AssertUnwindSafe(async move { next.run(exec).await }).catch_unwind();
        let run = std::pin::pin!(run);
        let outcome = if cancel.is_cancelled() {
            None
        } else {
            // The chain is polled first, so a result it produces on the same
            // wake-up as the cancellation (e.g. `ABORTED` from dispatch,
            // passed back through the middleware) wins.
            let cancelled = std::pin::pin!(cancel.cancelled());
            match future::select(run, cancelled).await {
                Either::Left((outcome, _)) => Some(outcome),
                Either::Right(((), mut run)) => (&mut run).now_or_never(),
            }
        };
        match outcome {
            Some(Ok(result)) => result,
            Some(Err(payload)) => ToolExecutionResult::failure(
                call.call_id.as_str(),
                ErrorCode::ToolPanicked,
                format!("a middleware panicked: {}", panic_message(payload.as_ref())),
            ),
            None => aborted(
                call.call_id.clone(),
                call.dispatched.load(Ordering::Acquire),
            ),
        }
    }

    /// The innermost step: look up, validate, run the body.
    pub(crate) fn dispatch(
        &self,
        exec: ToolExecution,
        call: Arc<CallShared>,
    ) -> BoxFuture<'static, ToolExecutionResult> {
        let tool = self.get(&exec.name);
        Box::pin(async move {
            // Results carry the id the model sent, even if a middleware rewrote `exec.call_id`.
            let call_id = call.call_id.clone();
            let Some(tool) = tool else {
                return ToolExecutionResult::failure(
                    call_id,
                    ErrorCode::UnknownTool,
                    format!("unknown tool \"{}\"", exec.name),
                );
            };
            let args = match exec.arguments {
                ToolArguments::Json(value) => value,
                ToolArguments::Malformed { violation, .. } => {
                    return ToolExecutionResult::from_error(
                        call_id,
                        &ToolError::invalid_args(vec![*violation]),
                    );
                }
            };
            if exec.cancel.is_cancelled() {
                return aborted(call_id, false);
            }
            call.dispatched.store(true, Ordering::Release);
            let ctx = ToolContext {
                call_id: call_id.clone(),
                name: exec.name,
                agent: exec.agent,
                cancel: exec.cancel.clone(),
            };
            let body =
                AssertUnwindSafe(async move { tool.execute(args, ctx).await }).catch_unwind();
            let body = std::pin::pin!(body);
            let cancelled = std::pin::pin!(exec.cancel.cancelled());
            let outcome = match future::select(body, cancelled).await {
                // A body that noticed the cancellation and returned was still aborted.
                Either::Left(_) if exec.cancel.is_cancelled() => return aborted(call_id, true),
                Either::Left((outcome, _)) => outcome,
                Either::Right(_) => return aborted(call_id, true),
            };
            match outcome {
                Ok(Ok(content)) => ToolExecutionResult::ok(call_id, content),
                Ok(Err(err)) => ToolExecutionResult::from_error(call_id, &err),
                Err(payload) => ToolExecutionResult::failure(
                    call_id,
                    ErrorCode::ToolPanicked,
                    format!("tool panicked: {}", panic_message(payload.as_ref())),
                ),
            }
        })
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
    /// presentation when the tool is unknown, has none, returns `None` or panics.
    pub fn present_call(&self, name: &str, args: &Value) -> ToolCallPresentation {
        self.get(name)
            .and_then(|tool| {
                std::panic::catch_unwind(AssertUnwindSafe(|| tool.present_call(args)))
                    .ok()
                    .flatten()
            })
            .unwrap_or_else(|| ToolCallPresentation::generic(name, args))
    }

    /// How to show a completed call: the tool's presenter, or the generic
    /// presentation (keep the pending title, show the raw content).
    pub fn present_result(
        &self,
        name: &str,
        args: &Value,
        result: &ToolExecutionResult,
    ) -> ToolResultPresentation {
        self.get(name)
            .and_then(|tool| {
                std::panic::catch_unwind(AssertUnwindSafe(|| tool.present_result(args, result)))
                    .ok()
                    .flatten()
            })
            .unwrap_or_else(|| ToolResultPresentation::generic(&result.content))
    }
}

fn aborted(call_id: String, dispatched: bool) -> ToolExecutionResult {
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

/// Keeps a tool registered; unregisters it when dropped or on [`ToolHandle::unregister`].
/// Call [`ToolHandle::keep`] to keep the tool for the registry's lifetime.
#[must_use = "dropping the handle unregisters the tool; call .keep() to keep it"]
pub struct ToolHandle {
    registry: Weak<Inner>,
    name: String,
    id: u64,
    armed: bool,
}

impl ToolHandle {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Unregisters the tool now.
    pub fn unregister(mut self) {
        self.remove();
    }

    /// Keeps the tool registered for the registry's lifetime.
    pub fn keep(mut self) {
        self.armed = false;
    }

    fn remove(&mut self) {
        if !std::mem::take(&mut self.armed) {
            return;
        }
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let mut tools = write(&inner.tools);
        // Only the registration this handle made: a later tool of the same name stays.
        if tools.get(&self.name).is_none_or(|e| e.id != self.id) {
            return;
        }
        let removed = tools.remove(&self.name);
        // Sent under the lock, so events arrive in the order of the changes.
        let _ = inner
            .changes
            .send(RegistryChange::Removed(self.name.clone()));
        drop(tools);
        // Dropped without the lock: the tool's `Drop` may use this registry.
        drop(removed);
    }
}

impl Drop for ToolHandle {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Keeps a middleware installed; removes it when dropped or on
/// [`MiddlewareHandle::remove`]. Call [`MiddlewareHandle::keep`] to keep it.
#[must_use = "dropping the handle removes the middleware; call .keep() to keep it"]
pub struct MiddlewareHandle {
    registry: Weak<Inner>,
    id: u64,
    armed: bool,
}

impl MiddlewareHandle {
    /// Removes the middleware now.
    pub fn remove(mut self) {
        self.detach();
    }

    /// Keeps the middleware for the registry's lifetime.
    pub fn keep(mut self) {
        self.armed = false;
    }

    fn detach(&mut self) {
        if !std::mem::take(&mut self.armed) {
            return;
        }
        let Some(inner) = self.registry.upgrade() else {
            return;
        };
        let registry = ToolRegistry { inner };
        let mut list = write(&registry.inner.middleware);
        let Some(index) = list.iter().position(|e| e.id == self.id) else {
            return;
        };
        let removed = list.remove(index);
        let old_chain = registry.rebuild_chain(&list);
        drop(list);
        // Dropped without the locks: the layer's `Drop` may use this registry.
        drop(old_chain);
        drop(removed);
    }
}

impl Drop for MiddlewareHandle {
    fn drop(&mut self) {
        self.detach();
    }
}
