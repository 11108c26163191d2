//! # dsh-mcp
//!
//! An MCP server for a [`ToolRegistry`]: every `tools/call` goes through the
//! registry's whole pipeline (permission rules, and every other middleware
//! the registry has), and every outcome the pipeline produces — invalid
//! arguments, an unknown tool, a denial, a tool failure — is an `isError`
//! result the model reads, never a protocol error it cannot see.
//!
//! Built on `rmcp`, the official Rust SDK, which speaks both protocol
//! generations: the `initialize` handshake (2025-06-18, 2025-11-25) and the
//! stateless 2026-07-28 revision (`server/discover`, per-request `_meta`).
//!
//! | MCP | the pipeline |
//! |---|---|
//! | `tools/list` | [`ToolRegistry::tool_declarations`] in the MCP format: `schemas(mcp)` plus `title` and the annotations (`readOnlyHint`, …), in registration order |
//! | `tools/call` | [`ToolRegistry::execute`] with the JSON-RPC request id as the call id |
//! | `notifications/cancelled` | the call's cancellation token: the call is aborted and a command's whole process tree killed |
//! | registry changes | `notifications/tools/list_changed` |
//!
//! ```no_run
//! # async fn serve(registry: dsh_tools::ToolRegistry) -> Result<(), dsh_mcp::ServeError> {
//! // Serve until the client closes stdin.
//! dsh_mcp::serve_stdio(dsh_mcp::McpServer::new(registry)).await?;
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use dsh_tools::{ContentBlock, RegistryChange, ToolExecution, ToolFormat, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, RequestId, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;

/// Serves a registry's tools over MCP. Cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    registry: ToolRegistry,
    instructions: Option<String>,
}

impl McpServer {
    /// A server for `registry`.
    pub fn new(registry: ToolRegistry) -> Self {
        McpServer {
            registry,
            instructions: None,
        }
    }

    /// Instructions the client may show the model.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The registry served.
    pub fn registry(&self) -> &ToolRegistry {
        &self.registry
    }

    /// The `tools/list` entries.
    ///
    /// # Errors
    /// An internal error if a declaration does not read as an MCP tool
    /// (which would be a bug in the envelope).
    pub fn tools(&self) -> Result<Vec<Tool>, ErrorData> {
        self.registry
            .tool_declarations(ToolFormat::Mcp)
            .into_iter()
            .map(|declaration| {
                serde_json::from_value::<Tool>(declaration).map_err(|err| {
                    ErrorData::internal_error(
                        format!("a tool declaration is not an MCP tool: {err}"),
                        None,
                    )
                })
            })
            .collect()
    }
}

/// The call id a result echoes: the JSON-RPC request id as text.
fn call_id(id: &RequestId) -> String {
    match id {
        RequestId::Number(n) => n.to_string(),
        RequestId::String(s) => s.to_string(),
    }
}

fn mcp_content(block: ContentBlock) -> rmcp::model::ContentBlock {
    match block {
        ContentBlock::Text { text } => rmcp::model::ContentBlock::text(text),
        ContentBlock::Image { data, mime_type } => {
            rmcp::model::ContentBlock::image(data, mime_type)
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info.name = "dsh".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        if let Some(instructions) = &self.instructions {
            info = info.with_instructions(instructions.clone());
        }
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self.tools()?;
        serde_json::from_value(serde_json::json!({ "tools": tools }))
            .map_err(|err| ErrorData::internal_error(format!("cannot list tools: {err}"), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let exec = ToolExecution::new(call_id(&context.id), request.name.to_string(), arguments)
            .with_cancel(context.ct.clone());
        let result = self.registry.execute(exec).await;
        let content = result.content.into_iter().map(mcp_content).collect();
        Ok(if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

/// Why serving stopped with an error.
#[derive(Debug)]
pub struct ServeError(String);

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ServeError {}

/// Serves `server` on this process's stdin and stdout until the client
/// closes stdin (or the connection fails). Sends
/// `notifications/tools/list_changed` whenever the registry changes.
///
/// # Errors
/// A [`ServeError`] when the session cannot start or ends abnormally.
pub async fn serve_stdio(server: McpServer) -> Result<(), ServeError> {
    let mut changes = server.registry.subscribe();
    let running = server
        .serve(rmcp::transport::io::stdio_pipes())
        .await
        .map_err(|err| ServeError(format!("cannot start the MCP session: {err}")))?;
    let peer = running.peer().clone();
    let notifier = tokio::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(RegistryChange::Added(_) | RegistryChange::Removed(_))
                | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if peer.notify_tool_list_changed().await.is_err() {
                        return;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    let outcome = running.waiting().await;
    notifier.abort();
    outcome
        .map(|_| ())
        .map_err(|err| ServeError(format!("the MCP session ended abnormally: {err}")))
}
