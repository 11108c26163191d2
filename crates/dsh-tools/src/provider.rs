//! Tool declarations as each provider's request wants them: [`ToolFormat`],
//! [`tool_declaration`], [`ToolRegistry::tool_declarations`] and
//! [`ToolRegistry::request_tools`].
//!
//! A [`ToolSchema`](crate::ToolSchema) is the spec's provider-neutral shape
//! (`name`, `description`, `parameters`). No provider accepts it as it is:
//! each wraps the same three facts in its own envelope.
//!
//! | format | one declaration | the request's `tools` |
//! |---|---|---|
//! | [`Mcp`](ToolFormat::Mcp) | `{name, title?, description, inputSchema, annotations?}` | the `tools/list` array |
//! | [`Anthropic`](ToolFormat::Anthropic) | `{name, description, input_schema}` | the array |
//! | [`OpenAiChat`](ToolFormat::OpenAiChat), [`OpenAiChatStrict`](ToolFormat::OpenAiChatStrict) | `{type: "function", function: {name, description, parameters, strict}}` | the array |
//! | [`OpenAiResponses`](ToolFormat::OpenAiResponses), [`OpenAiResponsesStrict`](ToolFormat::OpenAiResponsesStrict) | `{type: "function", name, description, parameters, strict}` | the array |
//! | [`Gemini`](ToolFormat::Gemini) | `{name, description, parameters?}` | `[{functionDeclarations: [...]}]` |
//!
//! The envelopes are built from [`ToolDefinition::schema`] by an explicit
//! allowlist, so nothing host-only (timeouts, concurrency, presenters)
//! reaches a model. The one exception is MCP, whose `tools/list` carries the
//! tool's [`ToolAnnotations`](crate::ToolAnnotations) by design: MCP clients
//! are hosts, and they read the hints.
//!
//! ```
//! use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolFormat, ToolRegistry};
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(ToolArgs, Deserialize)]
//! struct Read {
//!     /// File to read.
//!     path: String,
//! }
//!
//! let registry = ToolRegistry::new();
//! registry
//!     .register(define_tool("read", "Reads a file.", |args: Read, _ctx| async move {
//!         Ok(vec![ContentBlock::text(args.path)])
//!     }))
//!     .unwrap();
//!
//! // The value of the `tools` field of a Chat Completions request.
//! let tools = registry.request_tools(ToolFormat::OpenAiChatStrict);
//! assert_eq!(
//!     tools,
//!     json!([{
//!         "type": "function",
//!         "function": {
//!             "name": "read",
//!             "description": "Reads a file.",
//!             "parameters": {
//!                 "type": "object",
//!                 "properties": {"path": {"type": "string", "description": "File to read."}},
//!                 "required": ["path"],
//!                 "additionalProperties": false
//!             },
//!             "strict": true
//!         }
//!     }])
//! );
//!
//! // Gemini groups its declarations in one tool.
//! let tools = registry.request_tools(ToolFormat::Gemini);
//! assert_eq!(tools[0]["functionDeclarations"][0]["name"], json!("read"));
//! ```
//!
//! # Caveats
//! - In the strict formats a tool whose spec strict mode cannot express (see
//!   [`SchemaSpec::supports_strict`](crate::SchemaSpec::supports_strict)) is
//!   declared with `strict: false` and the plain OpenAI schema, as
//!   [`ToolDefinition::schema`] decides.
//! - Gemini rejects an object schema without properties, so a tool that takes
//!   no arguments is declared without `parameters`, as Gemini documents for
//!   parameterless functions.

use crate::definition::ToolDefinition;
use crate::registry::ToolRegistry;
use crate::schema::Dialect;
use serde_json::{Map, Value};
use std::fmt;
use std::str::FromStr;

/// Which provider's tool declaration to build.
///
/// The names are those of `dsh schemas --format`; parsing ignores ASCII case.
///
/// ```
/// use dsh_tools::{Dialect, ToolFormat};
///
/// let format: ToolFormat = "openai-responses-strict".parse().unwrap();
/// assert_eq!(format, ToolFormat::OpenAiResponsesStrict);
/// assert_eq!(format.dialect(), Dialect::OpenAiStrict);
/// assert_eq!(format.to_string(), "openai-responses-strict");
///
/// let err = "yaml".parse::<ToolFormat>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown tool format \"yaml\" (expected one of mcp, anthropic, openai, \
///      openai-strict, openai-responses, openai-responses-strict, gemini)"
/// );
/// ```
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolFormat {
    /// An entry of MCP's `tools/list` result:
    /// `{name, title?, description, inputSchema, annotations?}`. The default.
    #[default]
    Mcp,
    /// An Anthropic Messages tool: `{name, description, input_schema}`.
    Anthropic,
    /// An OpenAI Chat Completions function tool without strict mode:
    /// `{type: "function", function: {name, description, parameters, strict: false}}`.
    OpenAiChat,
    /// An OpenAI Chat Completions function tool in strict mode (`strict: true`
    /// unless the tool's spec cannot be strict).
    OpenAiChatStrict,
    /// An OpenAI Responses function tool without strict mode:
    /// `{type: "function", name, description, parameters, strict: false}`.
    /// `strict` is always written, because the Responses API makes an absent
    /// `strict` mean `true`.
    OpenAiResponses,
    /// An OpenAI Responses function tool in strict mode (`strict: true`
    /// unless the tool's spec cannot be strict).
    OpenAiResponsesStrict,
    /// A Gemini function declaration: `{name, description, parameters?}`,
    /// grouped in a request as `[{functionDeclarations: [...]}]`.
    Gemini,
}

impl ToolFormat {
    /// Every format, in a stable order.
    pub const ALL: [ToolFormat; 7] = [
        ToolFormat::Mcp,
        ToolFormat::Anthropic,
        ToolFormat::OpenAiChat,
        ToolFormat::OpenAiChatStrict,
        ToolFormat::OpenAiResponses,
        ToolFormat::OpenAiResponsesStrict,
        ToolFormat::Gemini,
    ];

    /// The format's name as the command line spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolFormat::Mcp => "mcp",
            ToolFormat::Anthropic => "anthropic",
            ToolFormat::OpenAiChat => "openai",
            ToolFormat::OpenAiChatStrict => "openai-strict",
            ToolFormat::OpenAiResponses => "openai-responses",
            ToolFormat::OpenAiResponsesStrict => "openai-responses-strict",
            ToolFormat::Gemini => "gemini",
        }
    }

    /// The JSON Schema dialect of the format's parameters.
    pub fn dialect(self) -> Dialect {
        match self {
            ToolFormat::Mcp => Dialect::Mcp,
            ToolFormat::Anthropic => Dialect::Anthropic,
            ToolFormat::OpenAiChat | ToolFormat::OpenAiResponses => Dialect::OpenAi,
            ToolFormat::OpenAiChatStrict | ToolFormat::OpenAiResponsesStrict => {
                Dialect::OpenAiStrict
            }
            ToolFormat::Gemini => Dialect::Gemini,
        }
    }

    /// Whether the format asks for OpenAI strict mode.
    pub fn is_strict(self) -> bool {
        self.dialect() == Dialect::OpenAiStrict
    }

    /// The value of a request's `tools` field holding these declarations
    /// (built with [`tool_declaration`] in this format): the array itself,
    /// except for Gemini, which wants `[{"functionDeclarations": [...]}]`.
    ///
    /// Use it to declare a chosen subset of tools; for all of a registry's,
    /// [`ToolRegistry::request_tools`] does both steps.
    pub fn request_tools(self, declarations: impl IntoIterator<Item = Value>) -> Value {
        let declarations = Value::Array(declarations.into_iter().collect());
        match self {
            ToolFormat::Gemini => {
                let mut tool = Map::new();
                tool.insert("functionDeclarations".into(), declarations);
                Value::Array(vec![Value::Object(tool)])
            }
            _ => declarations,
        }
    }
}

impl fmt::Display for ToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown [`ToolFormat`] name; its message lists
/// the valid names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownToolFormat(pub String);

impl fmt::Display for UnknownToolFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown tool format \"{}\" (expected one of ", self.0)?;
        for (i, format) in ToolFormat::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(format.as_str())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownToolFormat {}

impl FromStr for ToolFormat {
    type Err = UnknownToolFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ToolFormat::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownToolFormat(s.to_owned()))
    }
}

/// Whether a Gemini `parameters` schema declares no property, which Gemini
/// rejects (`properties: should be non-empty for OBJECT type`).
fn takes_no_arguments(parameters: &Value) -> bool {
    match parameters.get("properties") {
        None => true,
        Some(Value::Object(properties)) => properties.is_empty(),
        Some(_) => false,
    }
}

/// One tool's declaration in a provider's format (see [`ToolFormat`] for
/// the shapes).
///
/// Built from [`ToolDefinition::schema`] in [`ToolFormat::dialect`], so the
/// strict fallback applies: in a strict format, `strict` is what the schema
/// says (`false` with the plain OpenAI schema for a spec strict mode cannot
/// express); in the other OpenAI formats it is `false`. Only the MCP format
/// carries the tool's annotations (and their `title`); they are omitted when
/// empty.
pub fn tool_declaration(tool: &dyn ToolDefinition, format: ToolFormat) -> Value {
    let schema = tool.schema(format.dialect());
    let strict = format.is_strict() && schema.strict == Some(true);
    let mut out = Map::new();
    match format {
        ToolFormat::Mcp => {
            let annotations = tool.advertised_annotations();
            out.insert("name".into(), Value::String(schema.name));
            if let Some(title) = &annotations.title {
                out.insert("title".into(), Value::String(title.clone()));
            }
            out.insert("description".into(), Value::String(schema.description));
            out.insert("inputSchema".into(), schema.parameters);
            if let Some(output) = tool.output_schema() {
                out.insert("outputSchema".into(), output);
            }
            match serde_json::to_value(&annotations) {
                Ok(Value::Object(hints)) if !hints.is_empty() => {
                    out.insert("annotations".into(), Value::Object(hints));
                }
                _ => {}
            }
        }
        ToolFormat::Anthropic => {
            out.insert("name".into(), Value::String(schema.name));
            out.insert("description".into(), Value::String(schema.description));
            out.insert("input_schema".into(), schema.parameters);
        }
        ToolFormat::OpenAiChat | ToolFormat::OpenAiChatStrict => {
            let mut function = Map::new();
            function.insert("name".into(), Value::String(schema.name));
            function.insert("description".into(), Value::String(schema.description));
            function.insert("parameters".into(), schema.parameters);
            function.insert("strict".into(), Value::Bool(strict));
            out.insert("type".into(), Value::String("function".into()));
            out.insert("function".into(), Value::Object(function));
        }
        ToolFormat::OpenAiResponses | ToolFormat::OpenAiResponsesStrict => {
            out.insert("type".into(), Value::String("function".into()));
            out.insert("name".into(), Value::String(schema.name));
            out.insert("description".into(), Value::String(schema.description));
            out.insert("parameters".into(), schema.parameters);
            out.insert("strict".into(), Value::Bool(strict));
        }
        ToolFormat::Gemini => {
            out.insert("name".into(), Value::String(schema.name));
            out.insert("description".into(), Value::String(schema.description));
            if !takes_no_arguments(&schema.parameters) {
                out.insert("parameters".into(), schema.parameters);
            }
        }
    }
    Value::Object(out)
}

impl ToolRegistry {
    /// Every registered tool's declaration in `format`, in registration
    /// order: a snapshot, like [`ToolRegistry::schemas`].
    pub fn tool_declarations(&self, format: ToolFormat) -> Vec<Value> {
        self.definitions()
            .iter()
            .map(|tool| tool_declaration(tool.as_ref(), format))
            .collect()
    }

    /// The value of a request's `tools` field declaring every registered
    /// tool: the array of [`ToolRegistry::tool_declarations`], or for
    /// Gemini `[{"functionDeclarations": [...]}]`. For MCP it is the `tools`
    /// array of a `tools/list` result.
    pub fn request_tools(&self, format: ToolFormat) -> Value {
        format.request_tools(self.tool_declarations(format))
    }
}
