//! `cargo bench -p dsh-netproxy --bench throughput`: what the proxy costs.
//!
//! A local HTTP server serves 100 MB from memory. A raw tokio client
//! downloads it directly, through the proxy as a plain HTTP request, and
//! through a `CONNECT` tunnel; interleaved, the ratio of the times printed as
//! `RATIO` lines (proxied throughput relative to direct; the aim: ≥ 0.7×).
//! Then the same for a 2-byte answer: the connection set-up latency the proxy
//! adds (a second TCP connection, the head parsed, the rules checked), printed
//! as `RESULT` lines (the aim: ≤ 1 ms).

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_netproxy::{DomainRules, NetProxy, ProxyConfig};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Runtime;

const BIG: usize = 100 * 1024 * 1024;

struct Setup {
    runtime: Runtime,
    origin: SocketAddr,
    proxy: NetProxy,
}

/// The origin: `/big` is 100 MB, anything else two bytes; one request per connection.
async fn origin() -> SocketAddr {
    let big: &'static [u8] = Box::leak(vec![b'x'; BIG].into_boxed_slice());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = Vec::with_capacity(1024);
                let mut chunk = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body: &[u8] = if buf.starts_with(b"GET /big ") {
                    big
                } else {
                    b"ok"
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(body).await;
            });
        }
    });
    addr
}

fn setup() -> Setup {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (origin, proxy) = runtime.block_on(async {
        let origin = origin().await;
        let config = ProxyConfig {
            rules: DomainRules::new(&["bench.test".to_string()], &[], true).unwrap(),
            ask_unknown: false,
            resolve_override: HashMap::from([("bench.test".to_string(), vec![origin.ip()])]),
            http_port: 0,
            socks_port: 0,
            require_client: false,
        };
        (origin, NetProxy::start(config, None, None).await.unwrap())
    });
    Setup {
        runtime,
        origin,
        proxy,
    }
}

/// Reads to the end; the byte count.
async fn drain(s: &mut TcpStream) -> usize {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0;
    loop {
        match s.read(&mut buf).await {
            Ok(0) | Err(_) => return total,
            Ok(n) => total += n,
        }
    }
}

#[derive(Clone, Copy)]
enum Route {
    Direct,
    Http,
    Connect,
}

async fn fetch(setup: &Setup, route: Route, path: &str) -> usize {
    let port = setup.origin.port();
    let origin_request =
        format!("GET {path} HTTP/1.1\r\nHost: bench.test:{port}\r\nConnection: close\r\n\r\n");
    let mut s = match route {
        Route::Direct => TcpStream::connect(setup.origin).await.unwrap(),
        Route::Http | Route::Connect => TcpStream::connect(setup.proxy.http_addr()).await.unwrap(),
    };
    s.set_nodelay(true).unwrap();
    match route {
        Route::Direct => s.write_all(origin_request.as_bytes()).await.unwrap(),
        Route::Http => {
            let request = format!(
                "GET http://bench.test:{port}{path} HTTP/1.1\r\nHost: bench.test:{port}\r\n\r\n"
            );
            s.write_all(request.as_bytes()).await.unwrap();
        }
        Route::Connect => {
            s.write_all(
                format!("CONNECT bench.test:{port} HTTP/1.1\r\nHost: bench.test:{port}\r\n\r\n")
                    .as_bytes(),
            )
            .await
            .unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 256];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut byte).await.unwrap();
                assert!(n > 0, "proxy closed the CONNECT");
                head.extend_from_slice(&byte[..n]);
            }
            assert!(head.starts_with(b"HTTP/1.1 200"));
            s.write_all(origin_request.as_bytes()).await.unwrap();
        }
    }
    let n = drain(&mut s).await;
    let expected = if path == "/big" { BIG } else { 2 };
    assert!(n > expected, "short response: {n} bytes");
    n
}

fn run(setup: &Setup, route: Route, path: &str) {
    ratio::keep(setup.runtime.block_on(fetch(setup, route, path)));
}

fn bench(c: &mut Criterion) {
    let setup = setup();
    let mut group = c.benchmark_group("netproxy");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));
    group.bench_function("small_direct", |b| {
        b.iter(|| run(&setup, Route::Direct, "/small"))
    });
    group.bench_function("small_via_http", |b| {
        b.iter(|| run(&setup, Route::Http, "/small"))
    });
    group.bench_function("small_via_connect", |b| {
        b.iter(|| run(&setup, Route::Connect, "/small"))
    });
    group.finish();
}

fn report() {
    let setup = setup();
    for (label, route) in [
        ("100 MB download, plain HTTP", Route::Http),
        ("100 MB download, CONNECT", Route::Connect),
    ] {
        let times = ratio::compare(
            || run(&setup, route, "/big"),
            || run(&setup, Route::Direct, "/big"),
            7,
            Duration::from_millis(300),
        );
        let r = ratio::report(label, "proxied", "direct", times);
        let mbps = |d: Duration| BIG as f64 / d.as_secs_f64() / 1e6;
        println!(
            "RESULT {label}: {:.0} MB/s proxied, {:.0} MB/s direct, proxied throughput {r:.2}x direct (aim >= 0.7x)",
            mbps(times.0),
            mbps(times.1)
        );
    }
    for (label, route) in [
        ("set-up latency, plain HTTP", Route::Http),
        ("set-up latency, CONNECT", Route::Connect),
    ] {
        let (proxied, direct) = ratio::compare(
            || run(&setup, route, "/small"),
            || run(&setup, Route::Direct, "/small"),
            15,
            Duration::from_millis(100),
        );
        println!(
            "RESULT {label}: {:.0} µs per request vs {:.0} µs direct, {:.0} µs added (aim <= 1000 µs)",
            proxied.as_secs_f64() * 1e6,
            direct.as_secs_f64() * 1e6,
            (proxied.as_secs_f64() - direct.as_secs_f64()) * 1e6
        );
    }
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        report();
    }
}
