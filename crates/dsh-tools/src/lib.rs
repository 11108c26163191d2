//! # dsh-tools
//!
//! The tool pipeline of an LLM agent harness: tools with typed arguments
//! whose JSON Schema the model gets and whose calls are validated against
//! it, a registry that exposes only model-facing fields, a middleware chain
//! where permission, hook, sandbox, plan-mode and timeout layers wrap or veto
//! every call, structured failures the model corrects itself from, and a
//! presentation vocabulary for UIs. It knows no particular tool, policy or
//! protocol: those are other crates built on this one.
//!
//! ```toml
//! [dependencies]
//! dsh-tools = { path = "crates/dsh-tools" }   # features: "anyhow" (`?` on anyhow::Error)
//! serde = { version = "1", features = ["derive"] }
//! tokio = { version = "1", features = ["rt", "macros", "time"] }
//! ```
//!
//! ## One agent step
//!
//! ```
//! use dsh_tools::{define_tool, ContentBlock, Dialect, ToolArgs, ToolExecution, ToolRegistry};
//! use serde::Deserialize;
//!
//! #[derive(ToolArgs, Deserialize)]
//! struct Search {
//!     /// Regular expression to look for.
//!     pattern: String,
//!     /// Directories to search; the working directory when absent.
//!     paths: Option<Vec<String>>,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = ToolRegistry::new();
//! registry.register(define_tool("search", "Searches files.", |args: Search, _ctx| async move {
//!     Ok(vec![ContentBlock::text(format!("looking for {}", args.pattern))])
//! }))?;
//!
//! // 1. What the model is told (OpenAI strict mode here; every provider has its dialect).
//! let schema = &registry.schemas(Dialect::OpenAiStrict)[0];
//! assert_eq!(schema.parameters["required"], serde_json::json!(["pattern", "paths"]));
//!
//! // 2. What the model sends back: an id, a name, the argument text.
//! let result = registry.execute(ToolExecution::new("call_1", "search", r#"{"paths": [1]}"#)).await;
//!
//! // 3. What goes into the next request: a failure the model can act on.
//! assert!(result.is_error);
//! assert_eq!(
//!     result.text(),
//!     r#"Error: invalid arguments: missing required property "pattern"; "paths[0]" must be a string"#
//! );
//! # Ok::<(), dsh_tools::ToolError>(())
//! # }).unwrap();
//! ```
//!
//! ## The parts
//!
//! | part | what it does |
//! |---|---|
//! | [`ToolArgs`] (derive), [`SchemaSpec`], [`SchemaProp`] | argument schemas: from a struct (serde-accurate names, doc comments as descriptions, defaults, enums, bounds) or built at run time |
//! | [`Dialect`], [`ToolSchema`] | JSON Schema as each provider accepts it (MCP, Anthropic, OpenAI, OpenAI strict, Gemini) |
//! | [`ToolFormat`], [`ToolRegistry::request_tools`] | the provider's whole tool declaration, ready for a request's `tools` field |
//! | [`SchemaSpec::validate`], [`Violation`] | every violation, with the path and a message the model understands |
//! | [`Tool`], [`define_tool`], [`DynamicTool`], [`ToolDefinition`] | a tool: typed, from a closure, from a runtime or JSON schema, or raw |
//! | [`ToolRegistry`] | registration, `schemas()`, `execute()`, `execute_batch()`, presenters |
//! | [`Middleware`], [`SyncMiddleware`], [`Next`], [`TimeoutMiddleware`] | the chain around every call |
//! | [`ToolExecutionResult`], [`ErrorCode`], [`ToolError`] | every outcome as a result, with a machine-routable code |
//! | [`ToolCallPresentation`], [`ToolResultPresentation`] | how a UI shows a call and its result |
//!
//! ## Registering
//!
//! [`ToolRegistry::register`] keeps a tool for the registry's lifetime (so
//! `let _ = registry.register(tool)?;` cannot unregister it by accident);
//! [`ToolRegistry::register_scoped`] returns a [`ToolHandle`] that removes
//! the tool when dropped. Names must match `^[a-zA-Z0-9_-]{1,64}$` (what
//! providers accept), a tool's schema must name the tool it is registered
//! as, and defaults and enum values must fit their properties: each is a
//! registration error, never a surprise at call time.
//!
//! ## The middleware chain
//!
//! The first middleware added is outermost. A layer gets the execution and a
//! [`Next`] by value: it can pass the call on, wrap it, rewrite it, or veto it
//! by returning without calling `next` — and it can never run it twice.
//! Every outcome of the inner layers comes back through `next.run` as a
//! result: an inner `Err`, a panic (in a layer's synchronous part, its
//! future, or the tool), an abort, a timeout. A call whose token fired before
//! `execute` still runs the chain, so a logging layer sees
//! `ABORTED_BEFORE_DISPATCH`. The result's `callId` is always the model's,
//! whatever a layer did to the execution or the result.
//!
//! ```
//! use dsh_tools::{ToolError, ToolRegistry};
//!
//! let registry = ToolRegistry::new();
//! // A veto: `?` works on common errors, and an `Err` becomes a failed result.
//! registry.use_fn(|exec, next| async move {
//!     if exec.name.starts_with("admin_") {
//!         return Err(ToolError::msg("admin tools are off"));
//!     }
//!     Ok(next.run(exec).await)
//! });
//! ```
//!
//! A closure ([`ToolRegistry::use_fn`]) is enough for small layers; implement
//! [`Middleware`] (returning a [`MiddlewareFuture`]) for configuration and
//! state. A layer that never waits (auditing, counting, rewriting, a rule
//! that vetoes) can be a [`SyncMiddleware`]: `before` and `after` hooks with
//! no future of their own, at a few nanoseconds a layer. (A registry with no
//! layer at all is cheapest: its calls skip the state a chain shares.)
//! [`TimeoutMiddleware`] bounds calls by the tool's own deadline or a default.
//!
//! ## Cancellation
//!
//! A [`ToolExecution`] carries an optional `CancellationToken`. When it fires
//! the result is returned at once, whether or not the body cooperates
//! (`ABORTED_BEFORE_DISPATCH` before the body started, `ABORTED` after), and
//! it passes back through the middleware. A call without a token costs no
//! token and no cancellation race. Bodies see the token through
//! [`ToolContext::cancelled`] and [`ToolContext::cancel_token`].
//!
//! ## Errors
//!
//! `execute` never fails and never panics: every failure is a result with
//! `isError`, one text block `Error: <message>`, and `error: {name, code}`.
//! In a body or a middleware, `?` turns `std::io::Error`, `serde_json::Error`,
//! `String`, `&str`, parse errors and boxed errors into `TOOL_ERROR` (causes
//! appended); the `anyhow` feature adds `anyhow::Error`.
//!
//! ## Why it is built this way
//!
//! Each call reads one snapshot of the registry (its tools and its layers,
//! swapped as a whole on a change), so a call needs one lock read, and a
//! tool registered or removed meanwhile never tears a call in half. The
//! model's argument text is parsed once, when first needed; a typed tool
//! whose arguments serde checks exactly reads its struct straight from the
//! text. Panics are caught where they happen, so the layer around sees them.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

extern crate self as dsh_tools;

mod args;
mod content;
mod definition;
mod error;
mod execution;
mod import;
mod meaning;
mod middleware;
mod presentation;
mod provider;
mod registry;
mod schema;
mod timeout;
mod validate;

pub use args::{decode_args, ArgType, ToolArgs};
pub use content::{ContentBlock, ContentExtra};
pub use definition::{
    define_tool, CheckedAs, DynamicTool, FnTool, OutputFuture, Tool, ToolDefinition, ToolFuture,
    ToolSchema, TypedTool,
};
pub use dsh_tools_derive::ToolArgs;
pub use error::{ErrorCode, ToolError};
pub use execution::TraceContext;
pub use execution::{
    CallArguments, CallOrigin, Extensions, KernelHold, LiveOutput, ToolAnnotations, ToolArguments,
    ToolContext, ToolErrorInfo, ToolExecution, ToolExecutionResult, ToolOutput, ToolProgress,
};
pub use futures::future::BoxFuture;
pub use import::{ImportedSchema, SchemaImportError, SchemaImportErrorKind};
pub use meaning::{ArgumentMeaning, ArgumentMeanings, DefinitionHold};
pub use middleware::{
    FnMiddleware, Middleware, MiddlewareFuture, MiddlewareResult, Next, NextFuture, SyncMiddleware,
};
pub use presentation::{
    FileDiff, TerminalExit, ToolCallKind, ToolCallPresentation, ToolLocation,
    ToolResultPresentation, ToolTerminal,
};
pub use provider::{tool_declaration, ToolFormat, UnknownToolFormat};
pub use registry::{
    MiddlewareHandle, RegistryChange, ToolHandle, ToolRegistry, DEFAULT_BATCH_CONCURRENCY,
};
pub use schema::{Dialect, NumberBound, SchemaProp, SchemaSpec, SchemaType, UnknownDialect};
pub use timeout::TimeoutMiddleware;
pub use validate::{parse_arguments, Violation, ViolationKind};

/// Re-exports for code generated by `#[derive(ToolArgs)]`. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use serde_json;
}

pub use tokio_util::sync::CancellationToken;
