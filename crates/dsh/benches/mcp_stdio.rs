//! `cargo bench -p dsh --bench mcp_stdio`: MCP over real stdio pipes.
//!
//! 1. Round trip of `tools/call` for a trivial tool (`add {a, b}`), from an
//!    rmcp client in this process to a server in a child process: the dsh-mcp
//!    server (the registry's pipeline with the permission layer of `dsh mcp`,
//!    which allows the call by a rule) against a plain rmcp `ServerHandler`
//!    serving the same tool with the same body. Both servers are this bench's
//!    own executable, started again with `DSH_BENCH_SERVE=dsh|rmcp`, so they
//!    differ only in the server code. Interleaved, the ratio printed.
//! 2. Time from spawn to the first answered request (`initialize` done and one
//!    `tools/list` answered): the real `dsh mcp` binary against the plain rmcp
//!    server, both on a current-thread runtime, both built by `cargo bench`
//!    in the `bench` profile (release, no debug info). Interleaved, 31 spawns
//!    each; the ratio of the medians printed as dsh/rmcp.
//! 3. The proxy's cost: the same `tools/call` to the plain rmcp server,
//!    directly and through the real `dsh mcp --no-builtin -- SERVER` (its
//!    permission rules, argument check against the upstream's schema, and a
//!    second stdio hop). Interleaved; the ratio and the time added per call.
//!    Beside it the floor of any stdio proxy: a relay that copies bytes
//!    between the pipes without reading them (`DSH_BENCH_SERVE=relay`).
//!    Then a `run {command}` call whose command the settings say is a shell
//!    line (`mcp.arguments`): analysed as a bash command and allowed as
//!    read-only on every call, its pin checked; against the relay.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolContext, ToolError, ToolRegistry};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ErrorData, RoleClient, ServerHandler, ServiceExt};
use serde::Deserialize;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;

#[derive(ToolArgs, Deserialize)]
struct AddArgs {
    /// First addend.
    a: i64,
    /// Second addend.
    b: i64,
}

fn sum(a: i64, b: i64) -> String {
    (a + b).to_string()
}

async fn add(args: AddArgs, _ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
    Ok(vec![ContentBlock::text(sum(args.a, args.b))])
}

/// The same tool as a hand-written rmcp handler: a name match and serde.
#[derive(Clone)]
struct PlainServer;

impl ServerHandler for PlainServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let schema = AddArgs::schema().to_json_schema(dsh_tools::Dialect::Mcp);
        serde_json::from_value(json!({"tools": [{
            "name": "add", "description": "Adds two integers.", "inputSchema": schema
        }, {
            // A shell-running tool's shape (runs nothing here): through the
            // proxy its `command` is analysed as a bash command line.
            "name": "run", "description": "Runs a command.",
            "inputSchema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
        }]}))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == "run" {
            let length = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("command"))
                .and_then(serde_json::Value::as_str)
                .map_or(0, str::len);
            return Ok(
                CallToolResult::success(vec![rmcp::model::ContentBlock::text(length.to_string())])
                    .into(),
            );
        }
        if request.name != "add" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let args: AddArgs = serde_json::from_value(serde_json::Value::Object(
            request.arguments.unwrap_or_default(),
        ))
        .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        Ok(
            CallToolResult::success(vec![rmcp::model::ContentBlock::text(sum(args.a, args.b))])
                .into(),
        )
    }
}

/// The child side: serve on stdio until end-of-file.
fn serve(kind: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        match kind {
            "relay" => relay().await,
            "rmcp" => {
                let running = PlainServer
                    .serve(rmcp::transport::io::stdio_pipes())
                    .await
                    .unwrap();
                let _ = running.waiting().await;
            }
            _ => {
                let registry = ToolRegistry::new();
                registry
                    .register(define_tool("add", "Adds two integers.", add))
                    .unwrap();
                // The permission layer of `dsh mcp`, allowing the call by a rule.
                let rules =
                    dsh_policy::PermissionRules::parse(&["add"], &[] as &[&str], &[] as &[&str])
                        .unwrap();
                let policy =
                    dsh_policy::PermissionPolicy::new(rules, dsh_policy::Mode::Default, "/");
                registry.use_middleware(dsh_policy::PermissionMiddleware::new(policy));
                dsh_mcp::serve_stdio(dsh_mcp::McpServer::new(registry))
                    .await
                    .unwrap();
            }
        }
    });
}

/// Copies stdin to a plain server's stdin and its stdout to ours: a second
/// hop that costs what the pipes and the scheduler cost, and nothing else.
async fn relay() {
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env("DSH_BENCH_SERVE", "rmcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = child.stdout.take().unwrap();
    let up = async {
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut to_child).await;
        drop(to_child);
    };
    let down = async {
        let _ = tokio::io::copy(&mut from_child, &mut tokio::io::stdout()).await;
    };
    tokio::join!(up, down);
    let _ = child.wait().await;
}

async fn connect(command: tokio::process::Command) -> RunningService<RoleClient, ()> {
    ().serve(TokioChildProcess::new(command).unwrap())
        .await
        .expect("MCP session")
}

fn own(kind: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
    command.env("DSH_BENCH_SERVE", kind);
    command
}

fn params() -> CallToolRequestParams {
    let serde_json::Value::Object(args) = json!({"a": 2, "b": 40}) else {
        unreachable!()
    };
    CallToolRequestParams::new("add").with_arguments(args)
}

/// A read-only command line of a typical agent's shape, for `run`.
const SHELL_LINE: &str = "cd src && git status --short && ls -la | grep -v target | head -n 20";

fn run_params() -> CallToolRequestParams {
    let serde_json::Value::Object(args) = json!({"command": SHELL_LINE}) else {
        unreachable!()
    };
    CallToolRequestParams::new("run").with_arguments(args)
}

fn answer(runtime: &Runtime, client: &RunningService<RoleClient, ()>) -> String {
    answer_to(runtime, client, params())
}

fn answer_to(
    runtime: &Runtime,
    client: &RunningService<RoleClient, ()>,
    params: CallToolRequestParams,
) -> String {
    let result = runtime.block_on(client.call_tool(params)).unwrap();
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

fn bench(c: &mut Criterion) {
    let runtime = Runtime::new().unwrap();
    let dsh = runtime.block_on(connect(own("dsh")));
    let plain = runtime.block_on(connect(own("rmcp")));
    assert_eq!(answer(&runtime, &dsh), "42");
    assert_eq!(answer(&runtime, &plain), "42");
    let mut group = c.benchmark_group("mcp stdio");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("tools/call through dsh-mcp", |b| {
        b.iter(|| answer(&runtime, &dsh))
    });
    group.bench_function("tools/call through a plain rmcp server", |b| {
        b.iter(|| answer(&runtime, &plain))
    });
    group.finish();

    let round_trip = ratio::compare(
        || {
            ratio::keep(answer(&runtime, &dsh));
        },
        || {
            ratio::keep(answer(&runtime, &plain));
        },
        15,
        Duration::from_millis(200),
    );
    ratio::report(
        "mcp stdio tools/call round trip (plain rmcp server vs dsh-mcp; target dsh time <= 1.1x rmcp, i.e. rmcp/dsh >= 0.91)",
        "dsh",
        "rmcp",
        round_trip,
    );
    runtime.block_on(async {
        let _ = dsh.cancel().await;
        let _ = plain.cancel().await;
    });

    // The proxy in front of the plain server, against the plain server.
    let dir = std::env::temp_dir().join(format!("dsh-bench-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        // `run` has no rule: its command line is analysed on every call
        // and allowed as read-only.
        // The audit log (on by default) is left out: its cost is its own,
        // measured beside (`DSH_BENCH_AUDIT=1` keeps it).
        format!(
            r#"{{"permissions": {{"allow": ["mcp__plain__add"]}},
                "mcp": {{"arguments": {{"mcp__plain__run": {{"command": "shell"}}}}}},
                "audit": {{"enabled": {}}}}}"#,
            std::env::var_os("DSH_BENCH_AUDIT").is_some()
        ),
    )
    .unwrap();
    let mut through = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
    // Never the real home: no user settings.
    through.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
    through
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(&dir)
        .args([
            "--no-builtin",
            "--name",
            "plain",
            "--",
            "env",
            "DSH_BENCH_SERVE=rmcp",
        ])
        .arg(std::env::current_exe().unwrap());
    let proxied = runtime.block_on(connect(through));
    let direct = runtime.block_on(connect(own("rmcp")));
    let relayed = runtime.block_on(connect(own("relay")));
    assert_eq!(answer(&runtime, &proxied), "42");
    assert_eq!(answer(&runtime, &direct), "42");
    assert_eq!(answer(&runtime, &relayed), "42");
    let mut group = c.benchmark_group("mcp proxy");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("tools/call through dsh mcp to an rmcp upstream", |b| {
        b.iter(|| answer(&runtime, &proxied))
    });
    group.bench_function("tools/call to the rmcp upstream directly", |b| {
        b.iter(|| answer(&runtime, &direct))
    });
    group.finish();
    let (direct_time, proxied_time) = ratio::compare(
        || {
            ratio::keep(answer(&runtime, &direct));
        },
        || {
            ratio::keep(answer(&runtime, &proxied));
        },
        15,
        Duration::from_millis(200),
    );
    ratio::report(
        "mcp proxy tools/call (direct vs through `dsh mcp`; target <= 1.3x and <= 150 us added)",
        "direct",
        "proxied",
        (direct_time, proxied_time),
    );
    println!(
        "RESULT mcp proxy added per call: {:?}",
        proxied_time.saturating_sub(direct_time)
    );
    let (relay_time, proxied_time) = ratio::compare(
        || {
            ratio::keep(answer(&runtime, &relayed));
        },
        || {
            ratio::keep(answer(&runtime, &proxied));
        },
        15,
        Duration::from_millis(200),
    );
    ratio::report(
        "mcp proxy tools/call (a byte relay, the floor of any stdio proxy, vs `dsh mcp`)",
        "relay",
        "proxied",
        (relay_time, proxied_time),
    );
    println!(
        "RESULT mcp proxy added per call beyond a byte relay: {:?}",
        proxied_time.saturating_sub(relay_time)
    );
    // The same through the proxy, with a shell argument analysed (and the
    // pins checked) on every call: what argument-aware rules cost.
    let run = || answer_to(&runtime, &proxied, run_params());
    assert_eq!(run(), SHELL_LINE.len().to_string());
    let (relay_time, analysed_time) = ratio::compare(
        || {
            ratio::keep(answer_to(&runtime, &relayed, run_params()));
        },
        || {
            ratio::keep(run());
        },
        15,
        Duration::from_millis(200),
    );
    ratio::report(
        "mcp proxy tools/call with a shell argument analysed (a byte relay vs `dsh mcp`; target <= 150 us added)",
        "relay",
        "proxied",
        (relay_time, analysed_time),
    );
    println!(
        "RESULT mcp proxy added per call with a shell argument analysed, beyond a byte relay: {:?}",
        analysed_time.saturating_sub(relay_time)
    );
    // The analysis alone, end to end: the same proxy, a call allowed by a
    // name rule (`add`) against one judged by its shell argument (`run`).
    let (named_time, analysed_time) = ratio::compare(
        || {
            ratio::keep(answer(&runtime, &proxied));
        },
        || {
            ratio::keep(run());
        },
        21,
        Duration::from_millis(200),
    );
    ratio::report(
        "mcp proxy tools/call: allowed by its name vs judged by its shell argument, both through `dsh mcp`",
        "named",
        "analysed",
        (named_time, analysed_time),
    );
    println!(
        "RESULT mcp proxy: a shell argument analysed adds per call: {:?}",
        analysed_time.saturating_sub(named_time)
    );
    runtime.block_on(async {
        let _ = proxied.cancel().await;
        let _ = direct.cancel().await;
        let _ = relayed.cancel().await;
    });
    let _ = std::fs::remove_dir_all(&dir);

    // Spawn to the first answered request.
    let dir = std::env::temp_dir().join(format!("dsh-bench-spawn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let first_answer = |command: tokio::process::Command| {
        let start = Instant::now();
        runtime.block_on(async {
            let client = connect(command).await;
            client.list_all_tools().await.unwrap();
            let elapsed = start.elapsed();
            let _ = client.cancel().await;
            elapsed
        })
    };
    let mut dsh_times = Vec::new();
    let mut plain_times = Vec::new();
    for _ in 0..31 {
        let mut real = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh"));
        // Never the real home: no user settings.
        real.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config");
        real.arg("mcp").arg("--cwd").arg(&dir);
        dsh_times.push(first_answer(real));
        plain_times.push(first_answer(own("rmcp")));
    }
    dsh_times.sort();
    plain_times.sort();
    let _ = std::fs::remove_dir_all(&dir);
    ratio::report(
        "mcp stdio spawn to first answer (plain rmcp server vs `dsh mcp`; target dsh <= 1.3x rmcp)",
        "rmcp",
        "dsh",
        (
            plain_times[plain_times.len() / 2],
            dsh_times[dsh_times.len() / 2],
        ),
    );
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(kind) = std::env::var("DSH_BENCH_SERVE") {
        serve(&kind);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
