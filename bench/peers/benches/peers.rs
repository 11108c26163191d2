//! `cargo bench --manifest-path bench/peers/Cargo.toml`: one trivial tool,
//! `add {a, b}`, called by name with JSON arguments through three tool
//! layers, each from a `block_on` on its own current-thread tokio runtime:
//!
//! 1. dsh-tools: `ToolRegistry::execute` — the setup of
//!    `crates/dsh-tools/benches/dispatch.rs` (raw-JSON validation against the
//!    derived schema, deserialisation, three pass-through `use_fn`
//!    middlewares, result normalisation);
//! 2. rig (rig-core/rig-agent 0.44): `rig_agent::tool::ToolSet::execute(name,
//!    args_json_string, &mut ToolContext)` on a typed `rig_core::tool::Tool`;
//! 3. rmcp 3.11: `ToolRouter::call(ToolCallContext::new(&server, params,
//!    RequestContext::new(id, peer)))` on a `#[tool_router]` server — exactly
//!    what the `#[tool_handler]`-generated `ServerHandler::call_tool` does for
//!    each request, minus the transport. The peer is a real one, taken from a
//!    server connected once to a client over an in-memory `tokio::io::duplex`.
//!
//! Then prints `RATIO` lines: rig/dsh and rmcp/dsh (each side measured
//! interleaved in the same process; the issue asks for >= 2x on both).

#[path = "../../ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;
use tokio::runtime::Runtime;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Side 1: copied from `crates/dsh-tools/benches/dispatch.rs`.
mod dsh {
    use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolContext, ToolError, ToolRegistry};
    use serde::Deserialize;

    #[derive(ToolArgs, Deserialize)]
    struct AddArgs {
        /// First addend.
        a: i64,
        /// Second addend.
        b: i64,
    }

    async fn add(args: AddArgs, _ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        Ok(vec![ContentBlock::text((args.a + args.b).to_string())])
    }

    /// The tool behind `middlewares` pass-through middlewares.
    pub fn registry(middlewares: usize) -> ToolRegistry {
        let registry = ToolRegistry::new();
        registry
            .register(define_tool("add", "Adds two integers.", add))
            .unwrap()
            .keep();
        for _ in 0..middlewares {
            registry
                .use_fn(|exec, next| async move { Ok(next.run(exec).await) })
                .keep();
        }
        registry
    }
}

/// Side 2: the same tool as a rig `Tool`, in a name-based `ToolSet`.
mod rig {
    use rig_agent::tool::{Tool, ToolContext, ToolSet};
    use serde::Deserialize;
    use std::convert::Infallible;

    #[derive(Deserialize)]
    pub struct AddArgs {
        a: i64,
        b: i64,
    }

    pub struct Add;

    impl Tool for Add {
        const NAME: &'static str = "add";
        type Args = AddArgs;
        type Output = String;
        type Error = Infallible;

        fn description(&self) -> String {
            "Adds two integers.".to_string()
        }

        fn parameters(&self) -> serde_json::Value {
            serde_json::json!({
                "type": "object",
                "properties": {
                    "a": {"type": "integer", "description": "First addend."},
                    "b": {"type": "integer", "description": "Second addend."}
                },
                "required": ["a", "b"]
            })
        }

        async fn call(
            &self,
            _context: &mut ToolContext,
            args: AddArgs,
        ) -> Result<String, Infallible> {
            Ok((args.a + args.b).to_string())
        }
    }

    pub fn toolset() -> ToolSet {
        let mut tools = ToolSet::default();
        tools.add_tool(Add);
        tools
    }
}

/// Side 3: the same tool on an rmcp `#[tool_router]` server.
mod mcp {
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::handler::server::tool::ToolCallContext;
    use rmcp::handler::server::wrapper::Parameters;
    use rmcp::model::{CallToolRequestParams, CallToolResponse, RequestId};
    use rmcp::service::{RequestContext, RunningService};
    use rmcp::{
        schemars, tool, tool_handler, tool_router, ErrorData, Peer, RoleClient, RoleServer,
        ServerHandler, ServiceExt,
    };
    use serde::Deserialize;

    #[derive(Deserialize, schemars::JsonSchema)]
    pub struct AddArgs {
        /// First addend.
        a: i64,
        /// Second addend.
        b: i64,
    }

    #[derive(Clone)]
    pub struct AddServer {
        tool_router: ToolRouter<Self>,
    }

    #[tool_router]
    impl AddServer {
        pub fn new() -> Self {
            Self {
                tool_router: Self::tool_router(),
            }
        }

        #[tool(name = "add", description = "Adds two integers.")]
        async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
            (a + b).to_string()
        }
    }

    #[tool_handler]
    impl ServerHandler for AddServer {}

    /// A server and a client connected over an in-memory duplex, handshake
    /// done. Only the server's `Peer` is used by the router-level calls; the
    /// services must stay alive (and the runtime they were spawned on too).
    pub struct Connected {
        pub server: RunningService<RoleServer, AddServer>,
        pub client: RunningService<RoleClient, ()>,
    }

    pub async fn connect() -> Connected {
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let (server, client) = tokio::join!(AddServer::new().serve(server_io), ().serve(client_io));
        Connected {
            server: server.expect("rmcp server handshake"),
            client: client.expect("rmcp client handshake"),
        }
    }

    /// One request through the router, as `#[tool_handler]`'s `call_tool` does it.
    pub async fn call(
        server: &AddServer,
        peer: &Peer<RoleServer>,
        params: CallToolRequestParams,
    ) -> Result<CallToolResponse, ErrorData> {
        let context = RequestContext::new(RequestId::Number(1), peer.clone());
        server
            .tool_router
            .call(ToolCallContext::new(server, params, context))
            .await
    }

    pub fn text(response: &CallToolResponse) -> String {
        match response {
            CallToolResponse::Complete(result) => result
                .content
                .iter()
                .filter_map(|c| c.as_text())
                .map(|t| t.text.clone())
                .collect(),
            _ => String::new(),
        }
    }
}

/// Everything the three sides need, built once.
struct Setup {
    dsh_rt: Runtime,
    dsh: dsh_tools::ToolRegistry,
    /// The same registry without middleware: what rig and rmcp offer.
    dsh_bare: dsh_tools::ToolRegistry,
    args: serde_json::Value,
    rig_rt: Runtime,
    rig: rig_agent::tool::ToolSet,
    args_json: String,
    mcp_rt: Runtime,
    mcp_server: mcp::AddServer,
    mcp_peer: rmcp::Peer<rmcp::RoleServer>,
    mcp_params: rmcp::model::CallToolRequestParams,
    _mcp_connected: mcp::Connected,
}

impl Setup {
    fn new() -> Self {
        let args = json!({"a": 2, "b": 40});
        let args_json = args.to_string();
        let mcp_rt = runtime();
        let connected = mcp_rt.block_on(mcp::connect());
        let mcp_peer = connected.server.peer().clone();
        let mcp_params = rmcp::model::CallToolRequestParams::new("add")
            .with_arguments(args.as_object().unwrap().clone());
        let setup = Setup {
            dsh_rt: runtime(),
            dsh: dsh::registry(3),
            dsh_bare: dsh::registry(0),
            args,
            rig_rt: runtime(),
            rig: rig::toolset(),
            args_json,
            mcp_rt,
            mcp_server: mcp::AddServer::new(),
            mcp_peer,
            mcp_params,
            _mcp_connected: connected,
        };
        setup.check();
        setup
    }

    /// Every side answers "42" (and the rmcp tool also does over the wire).
    fn check(&self) {
        assert_eq!(self.dsh_call().text(), "42");
        assert_eq!(self.dsh_bare_call().text(), "42");
        assert_eq!(self.rig_call().output().as_text(), Some("42"));
        assert_eq!(mcp::text(&self.mcp_call().unwrap()), "42");
        let over_wire = self
            .mcp_rt
            .block_on(
                self._mcp_connected
                    .client
                    .call_tool(self.mcp_params.clone()),
            )
            .unwrap();
        assert_eq!(mcp::text(&over_wire.into()), "42");
    }

    fn dsh_call(&self) -> dsh_tools::ToolExecutionResult {
        self.dsh_call_on(&self.dsh)
    }

    fn dsh_bare_call(&self) -> dsh_tools::ToolExecutionResult {
        self.dsh_call_on(&self.dsh_bare)
    }

    fn dsh_call_on(&self, registry: &dsh_tools::ToolRegistry) -> dsh_tools::ToolExecutionResult {
        self.dsh_rt
            .block_on(registry.execute(dsh_tools::ToolExecution::new(
                "call-1",
                "add",
                black_box(self.args.clone()),
            )))
    }

    fn rig_call(&self) -> rig_agent::tool::ToolResult {
        let mut context = rig_agent::tool::ToolContext::new();
        self.rig_rt.block_on(self.rig.execute(
            "add",
            black_box(self.args_json.clone()),
            &mut context,
        ))
    }

    fn mcp_call(&self) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        self.mcp_rt.block_on(mcp::call(
            &self.mcp_server,
            &self.mcp_peer,
            black_box(self.mcp_params.clone()),
        ))
    }
}

fn bench(c: &mut Criterion) {
    let setup = Setup::new();
    let mut group = c.benchmark_group("peers");
    group.bench_function(
        "dsh-tools ToolRegistry::execute (validation + 3 middlewares)",
        |b| b.iter(|| setup.dsh_call()),
    );
    group.bench_function(
        "dsh-tools ToolRegistry::execute (validation, no middleware)",
        |b| b.iter(|| setup.dsh_bare_call()),
    );
    group.bench_function("rig ToolSet::execute", |b| b.iter(|| setup.rig_call()));
    group.bench_function("rmcp ToolRouter::call", |b| b.iter(|| setup.mcp_call()));
    group.finish();
}

fn ratios() {
    let setup = Setup::new();
    let (rounds, batch) = (21, Duration::from_millis(40));
    type Call<'a> = &'a dyn Fn();
    let dsh_sides: [(&str, Call); 2] = [
        ("validation + 3 middlewares", &|| {
            ratio::keep(setup.dsh_call());
        }),
        ("validation, no middleware", &|| {
            ratio::keep(setup.dsh_bare_call());
        }),
    ];
    for (dsh_label, dsh_call) in dsh_sides {
        let rig = ratio::compare(
            dsh_call,
            || {
                ratio::keep(setup.rig_call());
            },
            rounds,
            batch,
        );
        ratio::report(
            &format!("peers rig ToolSet::execute vs dsh-tools ToolRegistry::execute ({dsh_label})"),
            "dsh",
            "rig",
            rig,
        );
        let mcp = ratio::compare(
            dsh_call,
            || {
                let _ = ratio::keep(setup.mcp_call());
            },
            rounds,
            batch,
        );
        ratio::report(
            &format!(
                "peers rmcp ToolRouter::call (router level, no transport) vs dsh-tools ToolRegistry::execute ({dsh_label})"
            ),
            "dsh",
            "rmcp",
            mcp,
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    ratios();
    Criterion::default().configure_from_args().final_summary();
}
