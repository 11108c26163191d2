//! What a registered tool is: [`ToolDefinition`] (object-safe, raw JSON in),
//! and the typed way to write one: the [`Tool`] trait or [`define_tool`].

use crate::args::{decode_args, ToolArgs};
use crate::content::ContentBlock;
use crate::error::{ErrorCode, ToolError};
use crate::execution::{
    ToolAnnotations, ToolArguments, ToolContext, ToolExecutionResult, ToolOutput,
};
use crate::presentation::{ToolCallPresentation, ToolResultPresentation};
use crate::schema::{Dialect, SchemaSpec};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

/// The model-facing shape of a tool: the only thing that reaches a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// OpenAI strict mode: set for [`Dialect::OpenAiStrict`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

/// The future a tool body returns.
pub type ToolFuture<'a> = BoxFuture<'a, Result<Vec<ContentBlock>, ToolError>>;

/// The future of [`ToolDefinition::execute_output`].
pub type OutputFuture<'a> = BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// A registered tool, kept as `Arc<dyn ToolDefinition>`.
///
/// A raw definition receives the arguments as JSON and validates them itself;
/// most tools implement [`Tool`] instead, which validates and types them.
pub trait ToolDefinition: Send + Sync + 'static {
    /// The tool's name, unique in a registry.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The JSON Schema of the arguments in the given dialect.
    fn parameters(&self, dialect: Dialect) -> Value;

    /// The argument spec, when the tool has one; registries check it at registration.
    fn spec(&self) -> Option<&SchemaSpec> {
        None
    }

    /// Runs the tool.
    ///
    /// # Cancel safety
    /// The registry may drop the returned future at any await point (on
    /// cancellation or timeout); `ctx.cancel` fires first. Release resources in `Drop`.
    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_>;

    /// Runs the tool from the registry's shared handle, with the arguments as
    /// the call carries them: what dispatch calls. The default parses them
    /// (arguments that are not JSON are `INVALID_ARGS`) and runs
    /// [`ToolDefinition::execute`]. Typed tools override it to skip work:
    /// one boxed future, and no JSON value when serde can read their
    /// arguments straight from the model's text.
    fn execute_shared(
        self: Arc<Self>,
        args: ToolArguments,
        ctx: ToolContext,
    ) -> ToolFuture<'static> {
        Box::pin(async move {
            let args = args
                .into_value()
                .map_err(|violation| ToolError::invalid_args(vec![violation]))?;
            self.execute(args, ctx).await
        })
    }

    /// Whether dispatch runs [`ToolDefinition::execute_output`] instead of
    /// [`ToolDefinition::execute_shared`]: for tools whose results carry
    /// more than content blocks (a proxied MCP tool's `structuredContent`
    /// and own `isError`). Most tools leave it `false`, and pay nothing.
    fn has_output(&self) -> bool {
        false
    }

    /// Runs the tool to a whole [`ToolOutput`]; the default wraps
    /// [`ToolDefinition::execute_shared`].
    fn execute_output(
        self: Arc<Self>,
        args: ToolArguments,
        ctx: ToolContext,
    ) -> OutputFuture<'static> {
        Box::pin(async move { self.execute_shared(args, ctx).await.map(ToolOutput::from) })
    }

    /// How to present the pending call; `None` for the generic presentation.
    /// Pure: depends only on `args`.
    fn present_call(&self, _args: &Value) -> Option<ToolCallPresentation> {
        None
    }

    /// How to present the completed call; `None` to keep the pending title and
    /// show the raw result. Pure: depends only on `args` and `result`.
    fn present_result(
        &self,
        _args: &Value,
        _result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        None
    }

    /// Host-only hints, trusted by the pipeline (plan mode lets a
    /// `read_only` tool run).
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The hints a listing shows (MCP's `tools/list`): by default the
    /// trusted [`ToolDefinition::annotations`]. A proxied tool shows its
    /// server's own hints here, while its `annotations` keep only what the
    /// host's settings trust.
    fn advertised_annotations(&self) -> ToolAnnotations {
        self.annotations()
    }

    /// The JSON Schema of the tool's `structuredContent`, when it declares one
    /// (MCP's `outputSchema`).
    fn output_schema(&self) -> Option<Value> {
        None
    }

    /// Other names by which permission rules and hook matchers may name the
    /// tool, lower-case: a proxied MCP tool answers to `mcp__server__tool`,
    /// `mcp__server` and `mcp__server__*` as in Claude Code.
    fn aliases(&self) -> &[String] {
        &[]
    }

    /// Checks the arguments before any middleware decides on the call: the
    /// spec's [validation](SchemaSpec::validate) by default. A tool whose
    /// schema is not a spec (a proxied tool's JSON Schema) checks it here.
    ///
    /// # Errors
    /// `INVALID_ARGS` with every violation.
    fn check_arguments(&self, args: &Value) -> Result<(), ToolError> {
        match self.spec() {
            Some(spec) => {
                let violations = spec.validate(args);
                if violations.is_empty() {
                    Ok(())
                } else {
                    Err(ToolError::invalid_args(violations))
                }
            }
            None => Ok(()),
        }
    }

    /// What the call amounts to for a permission check, when that is not
    /// the call itself: input typed into a shell session is the command the
    /// shell will run. `None` (the default): check the call as it is.
    fn checked_as(&self, _args: &Value, _agent: Option<&str>) -> Option<CheckedAs> {
        None
    }

    /// What the tool's arguments mean to a permission check, when the host
    /// said so (another server's tool with a shell command or a path in its
    /// arguments). `None` (the default): the tool is judged by its name.
    fn argument_meanings(&self) -> Option<&crate::ArgumentMeanings> {
        None
    }

    /// Set while the tool's definition differs from the one a person
    /// accepted: every call then asks. `None` (the default): not held.
    fn definition_hold(&self) -> Option<crate::DefinitionHold> {
        None
    }

    /// Whether the tool only reads or stops what the same caller started
    /// earlier (and refuses anything else): it then changes nothing that
    /// earlier call could not, and a permission check decides it as a read
    /// (deny rules still hold). Default: `false`.
    fn acts_on_own_work(&self) -> bool {
        false
    }

    /// The tool's own deadline. Only [`crate::TimeoutMiddleware`] enforces it:
    /// a registry without one lets the call run for as long as it takes.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Whether this call may run in parallel with other safe calls of a batch.
    /// Only an explicit `true` opts in.
    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        false
    }

    /// The model-facing schema.
    ///
    /// For [`Dialect::OpenAiStrict`], a spec that strict mode cannot express
    /// (see [`SchemaSpec::supports_strict`]) is sent in the plain OpenAI
    /// dialect with `strict: false`, rather than as a closed object the
    /// model could only fill with `{}`.
    fn schema(&self, dialect: Dialect) -> ToolSchema {
        let strictable = self.spec().is_none_or(SchemaSpec::supports_strict);
        let (dialect, strict) = match dialect {
            Dialect::OpenAiStrict if strictable => (dialect, Some(true)),
            Dialect::OpenAiStrict => (Dialect::OpenAi, Some(false)),
            _ => (dialect, None),
        };
        ToolSchema {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters(dialect),
            strict,
        }
    }
}

/// A tool with typed arguments. Register it with
/// [`ToolRegistry::register_tool`](crate::ToolRegistry::register_tool).
///
/// Arguments are validated against `Args::schema()` before [`Tool::call`]
/// runs; a mismatch is an `INVALID_ARGS` result listing every violation.
pub trait Tool: Send + Sync + 'static {
    /// The argument struct.
    type Args: ToolArgs + Send;

    /// The tool's name.
    fn name(&self) -> &str;

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// The body.
    fn call(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send;

    /// Pending presentation from typed arguments.
    fn present_call(&self, _args: &Self::Args) -> Option<ToolCallPresentation> {
        None
    }

    /// Completed presentation from typed arguments.
    fn present_result(
        &self,
        _args: &Self::Args,
        _result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        None
    }

    /// Host-only hints.
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The tool's own deadline.
    fn timeout(&self) -> Option<Duration> {
        None
    }

    /// Whether this call may run in parallel with other safe calls.
    fn is_concurrency_safe(&self, _args: &Self::Args) -> bool {
        false
    }

    /// What the call amounts to for a permission check; see
    /// [`ToolDefinition::checked_as`].
    fn checked_as(&self, _args: &Self::Args, _agent: Option<&str>) -> Option<CheckedAs> {
        None
    }

    /// See [`ToolDefinition::acts_on_own_work`].
    fn acts_on_own_work(&self) -> bool {
        false
    }
}

/// A call as a permission check should see it ([`ToolDefinition::checked_as`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedAs {
    /// The tool whose rules apply (`bash`).
    pub tool: String,
    /// The arguments as that tool's.
    pub arguments: Value,
    /// The call also feeds input to a program the policy cannot see into
    /// (a REPL): what the input makes it do is not in `arguments`.
    pub opaque_input: bool,
    /// What the input does runs where the kernel already holds it
    /// read-only (a session started so): a call the analysis alone allows
    /// needs nothing more. When false, such a call cannot be held by the
    /// kernel, and the permission layer asks instead.
    pub held: bool,
}

/// A [`Tool`] as a [`ToolDefinition`]: holds the argument spec, built once.
pub struct TypedTool<T> {
    tool: T,
    spec: SchemaSpec,
}

impl<T: Tool> TypedTool<T> {
    /// Wraps a typed tool.
    pub fn new(tool: T) -> Self {
        TypedTool {
            spec: T::Args::schema(),
            tool,
        }
    }

    /// The wrapped tool.
    pub fn inner(&self) -> &T {
        &self.tool
    }

    /// Typed arguments for a presenter: `None` when they do not validate.
    fn typed(&self, args: &Value) -> Option<T::Args> {
        decode_args(&self.spec, args.clone()).ok()
    }

    /// The call's arguments as `T::Args`, every violation reported.
    ///
    /// When serde checks `T::Args` exactly, serde reads them first (from the
    /// model's text when nobody parsed it): what serde accepts the schema
    /// accepts, so only a refusal needs the schema's check, for its messages.
    fn decode(&self, args: ToolArguments) -> Result<T::Args, ToolError> {
        if <T::Args as ToolArgs>::SERDE_EXACT {
            // Only an object: serde would also read a struct from an array.
            let fast = match args.unparsed_text() {
                Some(text) if text.trim_start().starts_with('{') => {
                    serde_json::from_str::<T::Args>(text).ok()
                }
                Some(_) => None,
                None => args
                    .as_value()
                    .filter(|value| value.is_object())
                    .and_then(|value| T::Args::deserialize(value).ok()),
            };
            if let Some(typed) = fast {
                return Ok(typed);
            }
        }
        let value = args
            .into_value()
            .map_err(|violation| ToolError::invalid_args(vec![violation]))?;
        decode_args(&self.spec, value)
    }
}

impl<T: Tool> ToolDefinition for TypedTool<T> {
    fn name(&self) -> &str {
        self.tool.name()
    }

    fn description(&self) -> &str {
        self.tool.description()
    }

    fn parameters(&self, dialect: Dialect) -> Value {
        self.spec.to_json_schema(dialect)
    }

    fn spec(&self) -> Option<&SchemaSpec> {
        Some(&self.spec)
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        match decode_args::<T::Args>(&self.spec, args) {
            Ok(args) => Box::pin(self.tool.call(args, ctx)),
            Err(err) => Box::pin(std::future::ready(Err(err))),
        }
    }

    fn execute_shared(
        self: Arc<Self>,
        args: ToolArguments,
        ctx: ToolContext,
    ) -> ToolFuture<'static> {
        Box::pin(async move {
            let args = self.decode(args)?;
            self.tool.call(args, ctx).await
        })
    }

    fn present_call(&self, args: &Value) -> Option<ToolCallPresentation> {
        self.tool.present_call(&self.typed(args)?)
    }

    fn present_result(
        &self,
        args: &Value,
        result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        self.tool.present_result(&self.typed(args)?, result)
    }

    fn annotations(&self) -> ToolAnnotations {
        self.tool.annotations()
    }

    fn timeout(&self) -> Option<Duration> {
        self.tool.timeout()
    }

    fn is_concurrency_safe(&self, args: &Value) -> bool {
        self.typed(args)
            .is_some_and(|a| self.tool.is_concurrency_safe(&a))
    }

    fn checked_as(&self, args: &Value, agent: Option<&str>) -> Option<CheckedAs> {
        self.typed(args)
            .and_then(|a| self.tool.checked_as(&a, agent))
    }

    fn acts_on_own_work(&self) -> bool {
        self.tool.acts_on_own_work()
    }
}

/// A typed tool from a name, a description and an async closure.
///
/// ```
/// use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolRegistry};
/// use serde::Deserialize;
///
/// #[derive(ToolArgs, Deserialize)]
/// struct Echo {
///     /// Text to echo.
///     text: String,
/// }
///
/// let registry = ToolRegistry::new();
/// registry
///     .register(define_tool("echo", "Echoes its input.", |args: Echo, _ctx| async move {
///         Ok(vec![ContentBlock::text(args.text)])
///     }))
///     .unwrap()
///     ;
/// ```
pub fn define_tool<A, F, Fut>(
    name: impl Into<String>,
    description: impl Into<String>,
    body: F,
) -> TypedTool<FnTool<A, F>>
where
    A: ToolArgs + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send + 'static,
{
    TypedTool::new(FnTool {
        name: name.into(),
        description: description.into(),
        body,
        annotations: ToolAnnotations::default(),
        timeout: None,
        concurrency_safe: false,
        _args: PhantomData,
    })
}

/// The tool [`define_tool`] builds. Configure it with the `with_*` methods of
/// [`TypedTool<FnTool>`].
pub struct FnTool<A, F> {
    name: String,
    description: String,
    body: F,
    annotations: ToolAnnotations,
    timeout: Option<Duration>,
    concurrency_safe: bool,
    _args: PhantomData<fn() -> A>,
}

impl<A, F> TypedTool<FnTool<A, F>> {
    /// Sets the host-only annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = annotations;
        self
    }

    /// Sets the tool's own deadline (enforced by [`crate::TimeoutMiddleware`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.tool.timeout = Some(timeout);
        self
    }

    /// Lets every call of this tool run in parallel with other safe calls.
    pub fn concurrency_safe(mut self) -> Self {
        self.tool.concurrency_safe = true;
        self
    }
}

impl<A, F, Fut> Tool for FnTool<A, F>
where
    A: ToolArgs + Send + 'static,
    F: Fn(A, ToolContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send + 'static,
{
    type Args = A;

    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn call(
        &self,
        args: A,
        ctx: ToolContext,
    ) -> impl Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send {
        (self.body)(args, ctx)
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn is_concurrency_safe(&self, _args: &A) -> bool {
        self.concurrency_safe
    }
}

/// The body of a [`DynamicTool`].
type DynamicBody = dyn Fn(Value, ToolContext) -> ToolFuture<'static> + Send + Sync;

/// A tool defined at run time: a runtime [`SchemaSpec`] (from configuration,
/// say) or an MCP server's JSON Schema, and a body that takes JSON.
///
/// Arguments are validated against the spec before the body runs, with the
/// same `INVALID_ARGS` messages as typed tools. The body receives them as the
/// model sent them: validated, not normalised (no default filled in, no
/// `null` removed), so a proxy forwards exactly what it was given.
///
/// ```
/// use dsh_tools::{ContentBlock, DynamicTool, SchemaProp, SchemaSpec, ToolExecution, ToolRegistry};
///
/// let spec = SchemaSpec::new().prop("city", SchemaProp::string().required());
/// let weather = DynamicTool::new("weather", "Current weather.", spec, |args, _ctx| async move {
///     Ok(vec![ContentBlock::text(format!("sunny in {}", args["city"].as_str().unwrap_or("?")))])
/// });
/// let registry = ToolRegistry::new();
/// registry.register(weather).unwrap();
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let result = registry.execute(ToolExecution::new("c1", "weather", r#"{"city": 3}"#)).await;
/// assert_eq!(result.text(), r#"Error: invalid arguments: "city" must be a string"#);
/// # });
/// ```
pub struct DynamicTool {
    name: String,
    description: String,
    spec: SchemaSpec,
    /// The JSON Schema to show the model instead of the spec's own rendering
    /// (an imported schema the spec cannot express exactly).
    shown_schema: Option<Value>,
    annotations: ToolAnnotations,
    timeout: Option<Duration>,
    concurrency_safe: bool,
    body: Arc<DynamicBody>,
}

impl DynamicTool {
    /// A tool whose arguments follow `spec`.
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        spec: SchemaSpec,
        body: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send + 'static,
    {
        DynamicTool {
            name: name.into(),
            description: description.into(),
            spec,
            shown_schema: None,
            annotations: ToolAnnotations::default(),
            timeout: None,
            concurrency_safe: false,
            body: Arc::new(move |args, ctx| Box::pin(body(args, ctx))),
        }
    }

    /// A tool whose arguments follow a JSON Schema (an MCP tool's
    /// `inputSchema`), read with [`SchemaSpec::from_json_schema`]. Calls are
    /// checked against what the spec can express, with the typed tools'
    /// messages; when the spec cannot say everything the schema says, the
    /// model is shown the schema itself (in every dialect but Gemini's, which
    /// accepts only the subset the spec renders) and the server behind the
    /// body has the last word.
    ///
    /// ```
    /// use dsh_tools::{ContentBlock, DynamicTool, ErrorCode, ToolExecution, ToolRegistry};
    ///
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"path": {"type": "string"}, "mode": {"type": "string", "pattern": "^(text|bytes)$"}},
    ///     "required": ["path"]
    /// });
    /// let read = DynamicTool::from_json_schema("read_file", "Reads a file.", schema.clone(), |_args, _ctx| async {
    ///     Ok(vec![ContentBlock::text("…")])
    /// })?;
    /// let registry = ToolRegistry::new();
    /// registry.register(read)?;
    /// // The model sees the upstream's own schema, `pattern` included.
    /// assert_eq!(registry.schemas(dsh_tools::Dialect::Mcp)[0].parameters, schema);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let result = registry.execute(ToolExecution::new("c1", "read_file", r#"{"path": 7}"#)).await;
    /// assert_eq!(result.code(), Some(ErrorCode::InvalidArgs));
    /// assert_eq!(result.text(), r#"Error: invalid arguments: "path" must be a string"#);
    /// # });
    /// # Ok::<(), dsh_tools::ToolError>(())
    /// ```
    ///
    /// # Errors
    /// `INVALID_SCHEMA` naming the JSON path of what cannot be read (a root
    /// that is not an object schema, an unknown type name, …).
    pub fn from_json_schema<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        schema: Value,
        body: F,
    ) -> Result<Self, ToolError>
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<ContentBlock>, ToolError>> + Send + 'static,
    {
        let name = name.into();
        let imported = SchemaSpec::from_json_schema(&schema).map_err(|err| {
            ToolError::new(
                ErrorCode::InvalidSchema,
                format!("tool \"{name}\" has a JSON Schema that cannot be read: {err}"),
            )
        })?;
        let mut tool = DynamicTool::new(name, description, imported.spec, body);
        if !imported.lossless {
            tool.shown_schema = Some(schema);
        }
        Ok(tool)
    }

    /// Sets the host-only annotations.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// Sets the tool's own deadline (enforced by [`crate::TimeoutMiddleware`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Lets every call of this tool run in parallel with other safe calls.
    pub fn concurrency_safe(mut self) -> Self {
        self.concurrency_safe = true;
        self
    }

    /// The body on `args` once they pass the spec. Its future is already
    /// `'static`, so the shared path needs no wrapper.
    fn checked(&self, args: Value, ctx: ToolContext) -> ToolFuture<'static> {
        let violations = self.spec.validate(&args);
        if !violations.is_empty() {
            return Box::pin(std::future::ready(Err(ToolError::invalid_args(violations))));
        }
        (self.body)(args, ctx)
    }

    /// The argument spec arguments are validated against.
    pub fn argument_spec(&self) -> &SchemaSpec {
        &self.spec
    }
}

impl ToolDefinition for DynamicTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self, dialect: Dialect) -> Value {
        match (&self.shown_schema, dialect) {
            // Gemini rejects much of JSON Schema; the spec's rendering is its subset.
            (Some(shown), Dialect::Mcp | Dialect::Anthropic | Dialect::OpenAi) => shown.clone(),
            _ => self.spec.to_json_schema(dialect),
        }
    }

    fn spec(&self) -> Option<&SchemaSpec> {
        Some(&self.spec)
    }

    fn execute(&self, args: Value, ctx: ToolContext) -> ToolFuture<'_> {
        self.checked(args, ctx)
    }

    fn execute_shared(
        self: Arc<Self>,
        args: ToolArguments,
        ctx: ToolContext,
    ) -> ToolFuture<'static> {
        match args.into_value() {
            Ok(args) => self.checked(args, ctx),
            Err(violation) => Box::pin(std::future::ready(Err(ToolError::invalid_args(vec![
                violation,
            ])))),
        }
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations.clone()
    }

    fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn is_concurrency_safe(&self, _args: &Value) -> bool {
        self.concurrency_safe
    }
}
