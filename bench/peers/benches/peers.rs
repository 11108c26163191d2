//! `cargo bench --manifest-path bench/peers/Cargo.toml`: one trivial tool,
//! `add {a, b}` → `(a + b).to_string()`, called by name through three tool
//! layers. Every side starts from the same argument text, `{"a":2,"b":40}`
//! (one `String` held by the setup, borrowed as `&str` by each side), parses
//! it inside the timed call, runs the same body and is driven by `block_on`
//! on the same current-thread tokio runtime:
//!
//! 1. dsh-tools: `ToolRegistry::execute(ToolExecution::new("call-1", "add",
//!    text))` — the text goes in as `ToolArguments::from_raw`; then schema
//!    checking (serde reads the struct straight from the text when it checks
//!    exactly), the middlewares (three pass-through `use_fn`, or none),
//!    result normalisation;
//! 2. rig (rig-core/rig-agent 0.44): `rig_agent::tool::ToolSet::execute("add",
//!    text, &mut ToolContext)` on a typed `rig_core::tool::Tool`;
//! 3. rmcp 3.11: `serde_json::from_str::<JsonObject>(text)` (what rmcp's
//!    transport does with a request's `arguments`), `CallToolRequestParams`,
//!    then `ToolRouter::call(ToolCallContext::new(server, params,
//!    RequestContext::new(id, peer)))` on a `#[tool_router]` server — exactly
//!    what the `#[tool_handler]`-generated `ServerHandler::call_tool` does for
//!    each request, minus the transport. The server and its peer are the ones
//!    of a server connected once, on the same runtime, to a client over an
//!    in-memory `tokio::io::duplex`, and kept alive.
//!
//! Then prints `RATIO` lines (each pair measured interleaved in the same
//! process): rmcp/dsh and rig/dsh, for dsh with validation + 3 pass-through
//! middlewares and with no middleware; and one `RESULT` line with the cost of
//! one pass-through middleware, `(t3 - t0) / 3`, dsh with three against none.

#[path = "../../ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use std::hint::black_box;
use std::time::Duration;
use tokio::runtime::Runtime;

/// The model's argument text, the same for every side.
const ARGS: &str = r#"{"a":2,"b":40}"#;

/// Side 1: the tool of `crates/dsh-tools/benches/dispatch.rs`.
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
            .unwrap();
        for _ in 0..middlewares {
            registry.use_fn(|exec, next| async move { Ok(next.run(exec).await) });
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
    /// done. The router-level calls use the running server's own handler and
    /// `Peer`; both services must stay alive, and so must the runtime they
    /// were spawned on (the one every side's calls run on).
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
    /// The one runtime every side's calls are driven on; rmcp's services
    /// were spawned on it.
    rt: Runtime,
    /// The model's argument text, borrowed by every side.
    text: String,
    dsh: dsh_tools::ToolRegistry,
    /// The same registry without middleware: what rig and rmcp offer.
    dsh_bare: dsh_tools::ToolRegistry,
    rig: rig_agent::tool::ToolSet,
    mcp_peer: rmcp::Peer<rmcp::RoleServer>,
    /// Keeps the server (whose handler the router calls use) and the
    /// client alive.
    mcp_connected: mcp::Connected,
}

impl Setup {
    fn new() -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mcp_connected = rt.block_on(mcp::connect());
        let mcp_peer = mcp_connected.server.peer().clone();
        let setup = Setup {
            rt,
            text: ARGS.to_owned(),
            dsh: dsh::registry(3),
            dsh_bare: dsh::registry(0),
            rig: rig::toolset(),
            mcp_peer,
            mcp_connected,
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
        let params = rmcp::model::CallToolRequestParams::new("add")
            .with_arguments(serde_json::from_str(&self.text).unwrap());
        let over_wire = self
            .rt
            .block_on(self.mcp_connected.client.call_tool(params))
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
        let text = black_box(self.text.as_str());
        self.rt
            .block_on(registry.execute(dsh_tools::ToolExecution::new("call-1", "add", text)))
    }

    fn rig_call(&self) -> rig_agent::tool::ToolResult {
        let text = black_box(self.text.as_str());
        let mut context = rig_agent::tool::ToolContext::new();
        self.rt
            .block_on(self.rig.execute("add", text, &mut context))
    }

    fn mcp_call(&self) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let text = black_box(self.text.as_str());
        self.rt.block_on(async {
            let arguments = serde_json::from_str::<rmcp::model::JsonObject>(text)
                .map_err(|e| rmcp::ErrorData::invalid_params(e.to_string(), None))?;
            let params = rmcp::model::CallToolRequestParams::new("add").with_arguments(arguments);
            mcp::call(self.mcp_connected.server.service(), &self.mcp_peer, params).await
        })
    }
}

fn bench(c: &mut Criterion) {
    let setup = Setup::new();
    let mut group = c.benchmark_group("peers");
    group.measurement_time(Duration::from_secs(3));
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
    }
    let (three, none) = ratio::compare(
        || {
            ratio::keep(setup.dsh_call());
        },
        || {
            ratio::keep(setup.dsh_bare_call());
        },
        rounds,
        batch,
    );
    let per_layer_ns = (three.as_secs_f64() - none.as_secs_f64()) * 1e9 / 3.0;
    println!(
        "RESULT peers dsh-tools cost of one pass-through middleware: 3 middlewares {three:?}/call, no middleware {none:?}/call, (t3 - t0) / 3 = {per_layer_ns:.1}ns per middleware"
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    ratios();
    Criterion::default().configure_from_args().final_summary();
}
