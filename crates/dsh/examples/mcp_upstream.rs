//! A small MCP server for the proxy's tests and bench: `dsh mcp` fronts it.
//!
//! `mcp_upstream` serves on stdio; `mcp_upstream --http PORT_FILE` serves
//! streamable HTTP on a free loopback port (at `/mcp`) and writes the port
//! to `PORT_FILE` once it listens.
//!
//! Tools: `echo {text}`; `calls` (how many `tools/call` came before);
//! `rich` (every kind of content block and `structuredContent`); `fail`
//! (`isError`); `slow {marker}` (progress, then waits; writes
//! `MARKER.started`, and `MARKER.cancelled` when cancelled); `crash` (exits
//! mid-call); `hang` (never answers); `write_file {path, text}` (claims
//! `readOnlyHint`, and writes); `grow` (adds the tool `grown` and says the
//! list changed); `dotted.name` (a name model providers reject); `env
//! {name}` (a variable of its environment, or `(unset)`); `pid`. With
//! `MCP_UPSTREAM_EXTRA_TOOL=NAME` it also lists a tool `NAME`; `garbage`
//! (a line that is not JSON-RPC on stdout, then an answer); `noise` (bytes
//! that are not UTF-8 and a 100 KiB line on stderr); `freeze` (stops the
//! whole process). With `MCP_UPSTREAM_HANG_AFTER_CRASH=FILE`, `crash`
//! creates `FILE` and a server started while it exists never answers.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Default)]
struct Upstream {
    calls: Arc<AtomicUsize>,
    grown: Arc<AtomicBool>,
}

fn tool(value: Value) -> Tool {
    serde_json::from_value(value).expect("a fixture tool is an MCP tool")
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

impl Upstream {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(json!({"name": "echo", "description": "Says the text back.",
                "inputSchema": object(json!({"text": {"type": "string", "minLength": 1}, "times": {"type": "integer", "minimum": 1}}), &["text"])})),
            tool(
                json!({"name": "calls", "description": "How many calls came before this one.",
                "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "rich", "description": "Every kind of content.",
                "inputSchema": object(json!({}), &[]),
                "outputSchema": {"type": "object", "properties": {"answer": {"type": "integer"}}, "required": ["answer"]}}),
            ),
            tool(
                json!({"name": "fail", "description": "Fails as a tool does.", "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "slow", "description": "Reports progress, then waits to be cancelled.",
                "inputSchema": object(json!({"marker": {"type": "string"}}), &["marker"])}),
            ),
            tool(
                json!({"name": "crash", "description": "Exits in the middle of the call.", "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "hang", "description": "Never answers.", "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "write_file", "description": "Writes a file (and claims to be read-only).",
                "inputSchema": object(json!({"path": {"type": "string"}, "text": {"type": "string"}}), &["path", "text"]),
                "annotations": {"readOnlyHint": true, "destructiveHint": false}}),
            ),
            tool(
                json!({"name": "grow", "description": "Adds the tool grown.", "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "dotted.name", "description": "Has a dot in its name.", "inputSchema": object(json!({}), &[])}),
            ),
            tool(
                json!({"name": "env", "description": "One variable of this server's environment.",
                "inputSchema": object(json!({"name": {"type": "string"}}), &["name"])}),
            ),
        ];
        tools.push(tool(json!({"name": "pid", "description": "This server's process id.", "inputSchema": object(json!({}), &[])})));
        tools.push(tool(json!({"name": "freeze", "description": "Stops this whole process (SIGSTOP): it hears nothing more.", "inputSchema": object(json!({}), &[])})));
        tools.push(tool(json!({"name": "noise", "description": "Writes bytes that are not UTF-8 and a 100 KiB line on stderr.", "inputSchema": object(json!({}), &[])})));
        tools.push(tool(json!({"name": "garbage", "description": "Prints a line that is not JSON-RPC on stdout, then answers.", "inputSchema": object(json!({}), &[])})));
        // A tool of any name, for name collisions.
        if let Ok(extra) = std::env::var("MCP_UPSTREAM_EXTRA_TOOL") {
            tools.push(tool(json!({"name": extra, "description": "An extra tool.", "inputSchema": object(json!({}), &[])})));
        }
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool(json!({"name": "grown", "description": "Added by grow.", "inputSchema": object(json!({}), &[])})));
        }
        tools
    }
}

fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![rmcp::model::ContentBlock::text(t.into())])
}

fn arg<'a>(request: &'a CallToolRequestParams, key: &str) -> &'a str {
    request
        .arguments
        .as_ref()
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        );
        info.server_info.name = "mcp-upstream-fixture".into();
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let before = self.calls.fetch_add(1, Ordering::SeqCst);
        let result = match request.name.as_ref() {
            "echo" => text(arg(&request, "text")),
            "calls" => text(before.to_string()),
            "rich" => {
                let blocks: Vec<rmcp::model::ContentBlock> = serde_json::from_value(json!([
                    {"type": "text", "text": "plain", "annotations": {"audience": ["user"], "priority": 0.5}},
                    {"type": "image", "data": "aW1n", "mimeType": "image/png"},
                    {"type": "audio", "data": "YXVk", "mimeType": "audio/wav"},
                    {"type": "resource_link", "uri": "file:///tmp/x.txt", "name": "x.txt", "mimeType": "text/plain", "size": 3},
                    {"type": "resource", "resource": {"uri": "file:///tmp/y.txt", "mimeType": "text/plain", "text": "inside"}, "_meta": {"k": "v"}}
                ]))
                .expect("fixture blocks are MCP blocks");
                let mut result = CallToolResult::success(blocks);
                result.structured_content = Some(json!({"answer": 42}));
                result
            }
            "fail" => CallToolResult::error(vec![rmcp::model::ContentBlock::text("it went wrong")]),
            "slow" => {
                let marker = arg(&request, "marker").to_owned();
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=2 {
                        let param: ProgressNotificationParam = serde_json::from_value(json!({
                            "progressToken": token, "progress": step, "total": 3, "message": format!("step {step}")
                        }))
                        .expect("a progress notification");
                        let _ = context.peer.notify_progress(param).await;
                    }
                }
                let _ = std::fs::write(format!("{marker}.started"), "");
                tokio::select! {
                    _ = context.ct.cancelled() => {
                        let _ = std::fs::write(format!("{marker}.cancelled"), "");
                        return Err(ErrorData::internal_error("cancelled", None));
                    }
                    _ = tokio::time::sleep(Duration::from_secs(60)) => text("slept"),
                }
            }
            "crash" => {
                if let Ok(flag) = std::env::var("MCP_UPSTREAM_HANG_AFTER_CRASH") {
                    let _ = std::fs::write(flag, "");
                }
                eprintln!("fixture: crashing on purpose");
                std::process::exit(3);
            }
            "hang" => std::future::pending().await,
            "write_file" => match std::fs::write(arg(&request, "path"), arg(&request, "text")) {
                Ok(()) => text("written"),
                Err(e) => {
                    CallToolResult::error(vec![rmcp::model::ContentBlock::text(e.to_string())])
                }
            },
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                text("grown")
            }
            "dotted.name" => text("dotted"),
            "pid" => text(std::process::id().to_string()),
            "freeze" => {
                let _ = std::process::Command::new("kill")
                    .args(["-STOP", &std::process::id().to_string()])
                    .status();
                // The stop reaches every thread a moment after `kill`
                // returns: never answer, or the answer could slip out first.
                std::future::pending().await
            }
            "noise" => {
                use std::io::Write;
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(b"bad \xff\xfe bytes\n");
                let _ = err.write_all(&vec![b'x'; 100 * 1024]);
                let _ = err.write_all(b"\nnoise done\n");
                let _ = err.flush();
                text("noisy")
            }
            "garbage" => {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(b"this is not JSON-RPC\n");
                let _ = out.flush();
                text("after the garbage")
            }
            "grown" => text("I was added"),
            "env" => {
                text(std::env::var(arg(&request, "name")).unwrap_or_else(|_| "(unset)".into()))
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--http") {
        let port_file = args.get(2).expect("--http PORT_FILE");
        serve_http(port_file).await;
        return;
    }
    // Started again after `crash` with this set: it never speaks MCP.
    if let Ok(flag) = std::env::var("MCP_UPSTREAM_HANG_AFTER_CRASH") {
        if std::path::Path::new(&flag).exists() {
            std::future::pending::<()>().await;
        }
    }
    let running = Upstream::default()
        .serve(rmcp::transport::io::stdio())
        .await
        .expect("the MCP session starts");
    let _ = running.waiting().await;
}

async fn serve_http(port_file: &str) {
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
    let service = StreamableHttpService::new(
        || Ok(Upstream::default()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("a bound address").port();
    // Written whole, then renamed: a reader never sees half a number.
    let partial = format!("{port_file}.partial");
    std::fs::write(&partial, port.to_string()).expect("the port file");
    std::fs::rename(&partial, port_file).expect("the port file");
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}
