//! The server over an in-memory duplex, with rmcp's client: what changes
//! in the registry reaches the client, and calls keep the pipeline's shape.

use dsh_tools::{define_tool, ContentBlock, ToolAnnotations, ToolArgs, ToolRegistry};
use rmcp::model::CallToolRequestParams;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde::Deserialize;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(ToolArgs, Deserialize)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

/// Counts `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counting(Arc<Mutex<usize>>);

impl ClientHandler for Counting {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        *self.0.lock().unwrap() += 1;
    }
}

fn echo() -> impl dsh_tools::ToolDefinition {
    define_tool("echo", "Echoes text.", |args: EchoArgs, _| async move {
        Ok(vec![ContentBlock::text(args.text)])
    })
    .with_annotations(ToolAnnotations::read_only().with_title("Echo"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_changes_reach_the_client_as_list_changed() {
    let registry = ToolRegistry::new();
    registry.register(echo()).unwrap();
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let server = tokio::spawn(dsh_mcp::serve(
        dsh_mcp::McpServer::new(registry.clone()),
        server_io,
    ));
    let counting = Counting::default();
    let client = counting.clone().serve(client_io).await.unwrap();

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].title.as_deref(), Some("Echo"));

    let scoped = registry
        .register_scoped(define_tool(
            "later",
            "Added later.",
            |_: EchoArgs, _| async move { Ok(vec![]) },
        ))
        .unwrap();
    drop(scoped);
    let deadline = Instant::now() + Duration::from_secs(10);
    while *counting.0.lock().unwrap() < 2 {
        assert!(Instant::now() < deadline, "list_changed never arrived");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["echo"]);

    let serde_json::Value::Object(args) = json!({"text": 5}) else {
        unreachable!()
    };
    let invalid = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(invalid.is_error, Some(true));
    client.cancel().await.unwrap();
    server.await.unwrap().unwrap();
}

/// Notes the trace context each call carried.
struct SeenTraceContext(Arc<Mutex<Vec<Option<dsh_tools::TraceContext>>>>);

impl dsh_tools::SyncMiddleware for SeenTraceContext {
    fn before(&self, exec: &mut dsh_tools::ToolExecution) -> Result<(), dsh_tools::ToolError> {
        let seen = exec.extensions.get::<dsh_tools::TraceContext>().cloned();
        self.0.lock().unwrap().push(seen);
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_requests_trace_context_reaches_the_call() {
    let registry = ToolRegistry::new();
    registry.register(echo()).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    registry.use_sync_middleware(SeenTraceContext(seen.clone()));
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let _server = tokio::spawn(dsh_mcp::serve(dsh_mcp::McpServer::new(registry), server_io));
    let client = ().serve(client_io).await.unwrap();
    let serde_json::Value::Object(args) = json!({"text": "hi"}) else {
        unreachable!()
    };
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_traceparent(traceparent);
    meta.set_tracestate("vendor=x");
    let mut params = CallToolRequestParams::new("echo").with_arguments(args.clone());
    params.meta = Some(meta);
    client.call_tool(params).await.unwrap();
    client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(args))
        .await
        .unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            Some(dsh_tools::TraceContext {
                traceparent: Some(traceparent.into()),
                tracestate: Some("vendor=x".into()),
            }),
            None
        ]
    );
}
