//! `cargo bench -p dsh-mcp --bench http`: MCP's streamable HTTP transport,
//! our front (`serve_http`: path routing, the bearer check, the `Caller`
//! extension, per-connection shutdown) against a plain rmcp
//! `StreamableHttpService` on hyper without it.
//!
//! Both servers run in this process, on one two-worker runtime (as
//! `dsh mcp --http` does), and serve the same `McpServer` over the same
//! registry: one trivial in-process tool (`add {a, b}`), so the figures are
//! the transport's, not a command's. The plain server calls the service's
//! `handle` from hyper's `service_fn`, the leanest way to serve it (its tower
//! `Service` impl, which axum's `nest_service` uses, clones the service's
//! config on every request).
//!
//! The client is the same raw hyper HTTP/1.1 client for both, on a runtime
//! of its own, one keep-alive connection per client, posting the same bytes:
//! a stateless (2026-07-28) `tools/call`, which needs no session, with the
//! bearer token (the plain server ignores it). The answer (an SSE stream of
//! one event) is read whole and checked.
//!
//! 1. Round trip of one `tools/call`, one client: criterion's figures for
//!    each, then both interleaved, `dsh/rmcp` printed (target <= 1.2x).
//! 2. Throughput with 32 concurrent clients: criterion's figures, then
//!    alternating bursts, the ratio of the median throughputs printed as
//!    `dsh/rmcp` (target >= 0.8x). Clients and servers share the machine, so
//!    the client's own cost is in both figures.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use bytes::Bytes;
use criterion::{criterion_group, Criterion, Throughput};
use dsh_mcp::{serve_http, HttpAccess, McpServer, Principal};
use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolContext, ToolError, ToolRegistry};
use http::{header, Request};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

const TOKEN: &str = "bench-token-0123456789abcdef";
/// Concurrent clients of the throughput comparison.
const CLIENTS: usize = 32;
/// Calls each client makes per throughput burst.
const PER_CLIENT: usize = 25;

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

fn mcp_server() -> McpServer {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("add", "Adds two integers.", add))
        .unwrap();
    McpServer::new(registry)
}

/// `serve_http` with one principal: the dsh side.
async fn start_dsh(stop: CancellationToken) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let access = HttpAccess {
        tokens: vec![Principal {
            name: "bench".into(),
            token: TOKEN.into(),
        }],
        ..HttpAccess::default()
    };
    tokio::spawn(serve_http(mcp_server(), listener, access, stop, false));
    addr
}

/// rmcp's service on hyper, nothing in front: the plain side.
async fn start_plain(stop: CancellationToken) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let server = mcp_server();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    tokio::spawn(async move {
        loop {
            let (stream, _) = tokio::select! {
                _ = stop.cancelled() => return,
                accepted = listener.accept() => accepted.unwrap(),
            };
            // As axum::serve does: without it, Nagle's algorithm holds the
            // SSE answer's last chunk for the client's delayed ACK.
            stream.set_nodelay(true).unwrap();
            let service = service.clone();
            let handler =
                hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                    let service = service.clone();
                    async move { Ok::<_, Infallible>(service.handle(request).await) }
                });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler),
            );
        }
    });
    addr
}

/// The request body both servers get: a stateless `tools/call` of `add`.
fn call_body() -> Bytes {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
            "name": "add",
            "arguments": {"a": 2, "b": 40},
        },
    });
    Bytes::from(serde_json::to_vec(&body).unwrap())
}

/// One keep-alive HTTP/1.1 connection to a server.
struct Client {
    send: SendRequest<Full<Bytes>>,
    host: String,
    authorization: String,
    body: Bytes,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).await.unwrap();
        stream.set_nodelay(true).unwrap();
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        Client {
            send,
            host: addr.to_string(),
            authorization: format!("Bearer {TOKEN}"),
            body: call_body(),
        }
    }

    /// One `tools/call`: the whole answer, checked.
    async fn call(&mut self) -> Bytes {
        let request = Request::post("/mcp")
            .header(header::HOST, &self.host)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            // The 2026-07-28 revision's standard headers (SEP-2243).
            .header("mcp-method", "tools/call")
            .header("mcp-name", "add")
            .header(header::AUTHORIZATION, &self.authorization)
            .body(Full::new(self.body.clone()))
            .unwrap();
        self.send.ready().await.unwrap();
        let response = self.send.send_request(request).await.unwrap();
        let status = response.status();
        let answer = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(
            status,
            http::StatusCode::OK,
            "{}",
            String::from_utf8_lossy(&answer)
        );
        assert!(
            contains(&answer, br#""text":"42""#),
            "{}",
            String::from_utf8_lossy(&answer)
        );
        answer
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// `CLIENTS` clients each making `PER_CLIENT` calls at once; how long it took.
fn burst(runtime: &Runtime, clients: &mut Vec<Client>) -> Duration {
    let start = Instant::now();
    let taken = std::mem::take(clients);
    *clients = runtime.block_on(async {
        let tasks: Vec<_> = taken
            .into_iter()
            .map(|mut client| {
                tokio::spawn(async move {
                    for _ in 0..PER_CLIENT {
                        ratio::keep(client.call().await);
                    }
                    client
                })
            })
            .collect();
        let mut back = Vec::with_capacity(tasks.len());
        for task in tasks {
            back.push(task.await.unwrap());
        }
        back
    });
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let servers = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let clients = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stop = CancellationToken::new();
    let dsh_addr = servers.block_on(start_dsh(stop.clone()));
    let plain_addr = servers.block_on(start_plain(stop.clone()));

    // Same client, same bytes; both answer and say 42.
    let mut dsh = clients.block_on(Client::connect(dsh_addr));
    let mut plain = clients.block_on(Client::connect(plain_addr));
    let first = clients.block_on(dsh.call());
    clients.block_on(plain.call());
    assert!(!contains(&first, br#""isError":true"#), "{first:?}");

    let mut group = c.benchmark_group("mcp http");
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("tools/call round trip through serve_http", |b| {
        b.iter(|| clients.block_on(dsh.call()))
    });
    group.bench_function("tools/call round trip through plain rmcp on hyper", |b| {
        b.iter(|| clients.block_on(plain.call()))
    });
    group.finish();
    let round_trip = ratio::compare(
        || {
            ratio::keep(clients.block_on(plain.call()));
        },
        || {
            ratio::keep(clients.block_on(dsh.call()));
        },
        15,
        Duration::from_millis(200),
    );
    ratio::report(
        "http round trip tools/call, keep-alive, bearer auth (plain rmcp on hyper vs serve_http; target dsh <= 1.2x rmcp)",
        "rmcp",
        "dsh",
        round_trip,
    );

    // Throughput: 32 clients at once.
    let connect_all = |addr| {
        clients.block_on(async {
            let mut all = Vec::with_capacity(CLIENTS);
            for _ in 0..CLIENTS {
                all.push(Client::connect(addr).await);
            }
            all
        })
    };
    let mut dsh_clients = connect_all(dsh_addr);
    let mut plain_clients = connect_all(plain_addr);
    let calls = (CLIENTS * PER_CLIENT) as u64;
    let mut group = c.benchmark_group("mcp http 32 clients");
    group.measurement_time(Duration::from_secs(4));
    group.sample_size(10);
    group.throughput(Throughput::Elements(calls));
    group.bench_function("tools/call burst through serve_http", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| burst(&clients, &mut dsh_clients)).sum())
    });
    group.bench_function("tools/call burst through plain rmcp on hyper", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| burst(&clients, &mut plain_clients))
                .sum()
        })
    });
    group.finish();
    // Alternating bursts; the median of each side.
    let mut dsh_rates = Vec::new();
    let mut plain_rates = Vec::new();
    for _ in 0..15 {
        let t = burst(&clients, &mut plain_clients);
        plain_rates.push(calls as f64 / t.as_secs_f64());
        let t = burst(&clients, &mut dsh_clients);
        dsh_rates.push(calls as f64 / t.as_secs_f64());
    }
    dsh_rates.sort_by(f64::total_cmp);
    plain_rates.sort_by(f64::total_cmp);
    let (dsh_rate, plain_rate) = (dsh_rates[7], plain_rates[7]);
    println!(
        "RATIO http throughput tools/call, {CLIENTS} keep-alive clients (plain rmcp on hyper vs serve_http; target dsh >= 0.8x rmcp): \
         rmcp {plain_rate:.0} calls/s, dsh {dsh_rate:.0} calls/s, dsh/rmcp = {:.2}x",
        dsh_rate / plain_rate
    );

    drop((dsh, plain, dsh_clients, plain_clients));
    stop.cancel();
    drop(clients);
    drop(servers);
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
