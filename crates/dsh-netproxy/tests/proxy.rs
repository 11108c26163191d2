//! The proxy over real loopback sockets, with real `curl` as the client.

use dsh_netproxy::{AskFn, ConnectionEvent, DomainRules, EventFn, NetProxy, ProxyConfig};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const CURL: &str = "/usr/bin/curl";

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn config(
    allowed: &[&str],
    denied: &[&str],
    allow_local: bool,
    resolve: &[(&str, &str)],
) -> ProxyConfig {
    let mut resolve_override = HashMap::new();
    for (name, ip) in resolve {
        resolve_override.insert(name.to_string(), vec![ip.parse().unwrap()]);
    }
    ProxyConfig {
        rules: DomainRules::new(&strings(allowed), &strings(denied), allow_local).unwrap(),
        ask_unknown: false,
        resolve_override,
        http_port: 0,
        socks_port: 0,
        require_client: false,
    }
}

type Events = Arc<Mutex<Vec<ConnectionEvent>>>;

async fn start(config: ProxyConfig, ask: Option<AskFn>) -> (NetProxy, Events) {
    let events: Events = Arc::default();
    let sink = events.clone();
    let on_event: EventFn = Arc::new(move |e| sink.lock().unwrap().push(e));
    (
        NetProxy::start(config, ask, Some(on_event)).await.unwrap(),
        events,
    )
}

/// A proxy allowing `allowed.test` (resolved to 127.0.0.1, local addresses allowed).
async fn allowing_the_test_host() -> (NetProxy, Events) {
    start(
        config(
            &["allowed.test"],
            &[],
            true,
            &[("allowed.test", "127.0.0.1")],
        ),
        None,
    )
    .await
}

/// An HTTP origin: answers every request with what it received (head and body).
async fn origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap())
                    })
                    .unwrap_or(0);
                while buf.len() < head_end + length {
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = format!(
                    "origin saw:\n{head}{}",
                    String::from_utf8_lossy(&buf[head_end..])
                );
                let answer = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: keep-alive\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(answer.as_bytes()).await;
                // Keep-alive: wait for the client to close.
                let _ = s.read(&mut chunk).await;
            });
        }
    });
    port
}

/// A TCP echo server.
async fn echo() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let (mut r, mut w) = s.into_split();
                let _ = tokio::io::copy(&mut r, &mut w).await;
            });
        }
    });
    port
}

struct Curl {
    code: String,
    output: String,
    success: bool,
}

impl Curl {
    fn denied_header(&self) -> Option<String> {
        self.output.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("x-dsh-denied")
                .then(|| value.trim().to_string())
        })
    }
}

async fn curl(args: &[String]) -> Curl {
    let mut all = strings(&[
        "-s",
        "-S",
        "-i",
        "--max-time",
        "10",
        "-w",
        "\nCODE=%{http_code}",
    ]);
    all.extend_from_slice(args);
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(CURL)
            .args(&all)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let code = text
        .rsplit_once("CODE=")
        .map(|(_, c)| c.trim().to_string())
        .unwrap_or_default();
    Curl {
        code,
        output: format!("{text}\n{}", String::from_utf8_lossy(&out.stderr)),
        success: out.status.success(),
    }
}

/// The HTTP proxy URL naming `client`, as a command gets it.
fn http_proxy(p: &NetProxy, client: &str) -> String {
    let env: HashMap<String, String> = p.env(client).into_iter().collect();
    env["HTTP_PROXY"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_name_is_forwarded_in_origin_form() {
    let port = origin().await;
    let (proxy, events) = allowing_the_test_host().await;
    let r = curl(&strings(&[
        "-x",
        &http_proxy(&proxy, "call-1"),
        &format!("http://allowed.test:{port}/hello?x=1"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    assert!(r.output.contains("GET /hello?x=1 HTTP/1.1"), "{}", r.output);
    assert!(
        !r.output
            .to_ascii_lowercase()
            .contains("proxy-authorization"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains(&format!("Host: allowed.test:{port}")),
        "{}",
        r.output
    );
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].allowed);
    assert_eq!(events[0].client.as_deref(), Some("call-1"));
    assert_eq!(events[0].protocol, "http");
    assert_eq!(events[0].host, "allowed.test");
    assert!(proxy.take_denials("call-1").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_body_and_keep_alive_client() {
    let port = origin().await;
    let (proxy, _) = allowing_the_test_host().await;
    let url = format!("http://allowed.test:{port}/");
    let r = curl(&strings(&[
        "-x",
        &http_proxy(&proxy, "c"),
        "-d",
        "payload=42",
        &url,
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    assert!(
        r.output.contains("POST / HTTP/1.1") && r.output.contains("payload=42"),
        "{}",
        r.output
    );
    // Two requests in one curl run: it would reuse a kept-alive connection.
    let r = curl(&strings(&[
        "-x",
        &http_proxy(&proxy, "c"),
        &format!("{url}a"),
        &format!("{url}b"),
    ]))
    .await;
    assert!(r.success, "{}", r.output);
    assert!(
        r.output.contains("GET /a HTTP/1.1") && r.output.contains("GET /b HTTP/1.1"),
        "{}",
        r.output
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_and_unlisted_get_403() {
    let port = origin().await;
    let resolve = [
        ("allowed.test", "127.0.0.1"),
        ("bad.test", "127.0.0.1"),
        ("other.test", "127.0.0.1"),
    ];
    let (proxy, events) = start(
        config(&["allowed.test", "bad.test"], &["bad.test"], true, &resolve),
        None,
    )
    .await;
    let via = http_proxy(&proxy, "c2");
    let r = curl(&strings(&["-x", &via, &format!("http://bad.test:{port}/")])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(r.denied_header().as_deref(), Some("in deniedDomains"));
    assert!(r.output.contains("bad.test"), "{}", r.output);
    let r = curl(&strings(&[
        "-x",
        &via,
        &format!("http://Other.Test.:{port}/"),
    ]))
    .await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(r.denied_header().as_deref(), Some("not in allowedDomains"));
    assert_eq!(
        proxy.take_denials("c2"),
        vec![
            ("bad.test".to_string(), "in deniedDomains".to_string()),
            (
                "other.test".to_string(),
                "not in allowedDomains".to_string()
            )
        ]
    );
    assert!(proxy.take_denials("c2").is_empty());
    let events = events.lock().unwrap().clone();
    assert!(
        events
            .iter()
            .all(|e| !e.allowed && e.client.as_deref() == Some("c2")),
        "{events:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_addresses_are_denied_unless_the_host_is_listed_exactly() {
    let port = origin().await;
    let resolve = [
        ("ten.wild.test", "10.0.0.1"),
        ("lo.wild.test", "127.0.0.1"),
        ("lo.test", "127.0.0.1"),
    ];
    let (proxy, _) = start(
        config(
            &["*.wild.test", "lo.test", "127.0.0.1"],
            &[],
            false,
            &resolve,
        ),
        None,
    )
    .await;
    let via = http_proxy(&proxy, "c");
    // Allowed by a wildcard only: a rebinding name reaches nothing inside.
    let r = curl(&strings(&["-x", &via, "http://ten.wild.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(
        r.denied_header().as_deref(),
        Some("resolves to a private address 10.0.0.1")
    );
    let r = curl(&strings(&[
        "-x",
        &via,
        &format!("http://lo.wild.test:{port}/"),
    ]))
    .await;
    assert_eq!(
        r.denied_header().as_deref(),
        Some("resolves to a private address 127.0.0.1"),
        "{}",
        r.output
    );
    // Named exactly (a host, or an address): the user meant that host.
    for url in [
        format!("http://lo.test:{port}/"),
        format!("http://127.0.0.1:{port}/"),
    ] {
        let r = curl(&strings(&["-x", &via, &url])).await;
        assert_eq!(r.code, "200", "{url}: {}", r.output);
    }
    // An unlisted literal address: not allowed (a name entry does not match it).
    let r = curl(&strings(&["-x", &via, "http://8.8.8.8/"])).await;
    assert_eq!(
        r.denied_header().as_deref(),
        Some("not in allowedDomains"),
        "{}",
        r.output
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_tunnel_with_curl_proxytunnel() {
    let port = origin().await;
    let (proxy, events) = allowing_the_test_host().await;
    let r = curl(&strings(&[
        "-p",
        "-x",
        &http_proxy(&proxy, "t1"),
        &format!("http://allowed.test:{port}/tunnelled"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    assert!(r.output.contains("GET /tunnelled HTTP/1.1"), "{}", r.output);
    let events = events.lock().unwrap().clone();
    assert_eq!(events[0].protocol, "connect");
    assert_eq!(events[0].client.as_deref(), Some("t1"));
}

async fn read_until_blank_line(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.unwrap() == 0 {
            break;
        }
        buf.push(byte[0]);
    }
    String::from_utf8_lossy(&buf).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_connect_to_echo_and_denied_connect() {
    let port = echo().await;
    let (proxy, _) = start(
        config(&["echo.test"], &[], true, &[("echo.test", "127.0.0.1")]),
        None,
    )
    .await;
    let mut s = TcpStream::connect(proxy.http_addr()).await.unwrap();
    s.write_all(
        format!("CONNECT echo.test:{port} HTTP/1.1\r\nHost: echo.test:{port}\r\n\r\nearly")
            .as_bytes(),
    )
    .await
    .unwrap();
    let head = read_until_blank_line(&mut s).await;
    assert!(
        head.starts_with("HTTP/1.1 200 Connection Established"),
        "{head}"
    );
    let mut got = [0u8; 5];
    s.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"early");
    s.write_all(b"ping").await.unwrap();
    let mut got = [0u8; 4];
    s.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"ping");

    let mut s = TcpStream::connect(proxy.http_addr()).await.unwrap();
    s.write_all(b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n")
        .await
        .unwrap();
    let mut all = String::new();
    s.read_to_string(&mut all).await.unwrap();
    assert!(all.starts_with("HTTP/1.1 403 Forbidden"), "{all}");
    assert!(all.contains("X-Dsh-Denied: not in allowedDomains"), "{all}");
    assert!(all.contains("evil.test:443"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socks5_with_curl() {
    let port = origin().await;
    let resolve = [("allowed.test", "127.0.0.1"), ("nope.test", "127.0.0.1")];
    let (proxy, events) = start(config(&["allowed.test"], &[], true, &resolve), None).await;
    let env: HashMap<String, String> = proxy.env("alice").into_iter().collect();
    let via = env["ALL_PROXY"].clone();
    let r = curl(&strings(&[
        "-x",
        &via,
        &format!("http://allowed.test:{port}/sock"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    assert!(r.output.contains("GET /sock HTTP/1.1"), "{}", r.output);
    let r = curl(&strings(&[
        "--socks5-hostname",
        &proxy.socks_addr().to_string(),
        &format!("http://allowed.test:{port}/plain"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    let r = curl(&strings(&[
        "-x",
        &via,
        &format!("http://nope.test:{port}/"),
    ]))
    .await;
    assert!(!r.success, "{}", r.output);
    let events = events.lock().unwrap().clone();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(events.iter().all(|e| e.protocol == "socks5"));
    assert_eq!(events[0].client.as_deref(), Some("alice"));
    assert_eq!(events[1].client, None);
    assert!(!events[2].allowed && events[2].reason.as_deref() == Some("not in allowedDomains"));
    assert_eq!(
        proxy.take_denials("alice"),
        vec![("nope.test".to_string(), "not in allowedDomains".to_string())]
    );
}

async fn socks_request(proxy: &NetProxy, cmd: u8) -> [u8; 10] {
    let mut s = TcpStream::connect(proxy.socks_addr()).await.unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let mut method = [0u8; 2];
    s.read_exact(&mut method).await.unwrap();
    assert_eq!(method, [5, 0]);
    s.write_all(&[5, cmd, 0, 1, 127, 0, 0, 1, 0, 80])
        .await
        .unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).await.unwrap();
    reply
}

/// A SOCKS5 CONNECT to a name (ATYP 3), port 80: the reply's first 2 bytes.
async fn socks_connect_name(proxy: &NetProxy, name: &str) -> [u8; 2] {
    let mut s = TcpStream::connect(proxy.socks_addr()).await.unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let mut method = [0u8; 2];
    s.read_exact(&mut method).await.unwrap();
    assert_eq!(method, [5, 0]);
    let mut request = vec![5, 1, 0, 3, name.len() as u8];
    request.extend_from_slice(name.as_bytes());
    request.extend_from_slice(&[0, 80]);
    s.write_all(&request).await.unwrap();
    let mut reply = [0u8; 2];
    s.read_exact(&mut reply).await.unwrap();
    reply
}

#[tokio::test]
async fn socks5_udp_associate_and_bind_refused() {
    let (proxy, _) = start(config(&["127.0.0.1"], &[], true, &[]), None).await;
    assert_eq!(socks_request(&proxy, 3).await[1], 0x07);
    assert_eq!(socks_request(&proxy, 2).await[1], 0x07);
    // A private address a wildcard allowed: ruleset refusal.
    let resolve = [("lo.wild.test", "127.0.0.1")];
    let (strict, _) = start(config(&["*.wild.test"], &[], false, &resolve), None).await;
    assert_eq!(socks_connect_name(&strict, "lo.wild.test").await[1], 0x02);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_callback_decides_unlisted_names() {
    let port = origin().await;
    let asked: Arc<Mutex<Vec<(String, u16)>>> = Arc::default();
    let log = asked.clone();
    let ask: AskFn = Arc::new(move |host: String, port: u16, _client: Option<String>| {
        log.lock().unwrap().push((host.clone(), port));
        Box::pin(async move { host == "yes.test" })
    });
    let resolve = [
        ("yes.test", "127.0.0.1"),
        ("no.test", "127.0.0.1"),
        ("listed.test", "127.0.0.1"),
    ];
    let mut cfg = config(&["listed.test"], &["never.test"], true, &resolve);
    cfg.ask_unknown = true;
    let (proxy, _) = start(cfg, Some(ask)).await;
    let via = http_proxy(&proxy, "c");
    let r = curl(&strings(&["-x", &via, &format!("http://yes.test:{port}/")])).await;
    assert_eq!(r.code, "200", "{}", r.output);
    let r = curl(&strings(&["-x", &via, &format!("http://no.test:{port}/")])).await;
    assert_eq!(
        r.denied_header().as_deref(),
        Some("refused when asked"),
        "{}",
        r.output
    );
    let r = curl(&strings(&[
        "-x",
        &via,
        &format!("http://listed.test:{port}/"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
    let r = curl(&strings(&["-x", &via, "http://never.test/"])).await;
    assert_eq!(
        r.denied_header().as_deref(),
        Some("in deniedDomains"),
        "{}",
        r.output
    );
    assert_eq!(
        *asked.lock().unwrap(),
        vec![
            ("yes.test".to_string(), port),
            ("no.test".to_string(), port)
        ]
    );

    // Asking without an ask function: not allowed.
    let mut cfg = config(&[], &[], true, &resolve);
    cfg.ask_unknown = true;
    let (proxy, _) = start(cfg, None).await;
    let r = curl(&strings(&[
        "-x",
        &http_proxy(&proxy, "c"),
        &format!("http://yes.test:{port}/"),
    ]))
    .await;
    assert_eq!(
        r.denied_header().as_deref(),
        Some("not in allowedDomains"),
        "{}",
        r.output
    );
}

async fn exchange(addr: SocketAddr, bytes: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let _ = s.write_all(bytes).await;
    let _ = s.shutdown().await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_are_answered() {
    let port = origin().await;
    let (proxy, _) = allowing_the_test_host().await;
    let http = proxy.http_addr();
    assert!(exchange(http, b"\x00\x01\x02garbage\xff\xfe\r\n\r\n")
        .await
        .starts_with("HTTP/1.1 400"));
    let mut huge = b"GET http://allowed.test/ HTTP/1.1\r\nX-Big: ".to_vec();
    huge.extend(std::iter::repeat_n(b'a', 200_000));
    assert!(exchange(http, &huge).await.starts_with("HTTP/1.1 431"));
    let mut many = b"GET http://allowed.test/ HTTP/1.1\r\n".to_vec();
    for i in 0..500 {
        many.extend_from_slice(format!("X-{i}: y\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    assert!(exchange(http, &many).await.starts_with("HTTP/1.1 431"));
    assert!(
        exchange(http, b"GET /origin-form HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400")
    );
    assert!(
        exchange(http, b"GET https://allowed.test/ HTTP/1.1\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400")
    );
    assert!(exchange(http, b"CONNECT allowed.test HTTP/1.1\r\n\r\n")
        .await
        .starts_with("HTTP/1.1 400"));
    assert!(
        exchange(http, b"CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n")
            .await
            .starts_with("HTTP/1.1 400")
    );
    let bad_name = exchange(http, b"GET http://a%20b.test/ HTTP/1.1\r\n\r\n").await;
    assert!(
        bad_name.starts_with("HTTP/1.1 403") && bad_name.contains("X-Dsh-Denied: bad request"),
        "{bad_name}"
    );
    let bad_name = exchange(http, b"CONNECT \xc3\x28:443 HTTP/1.1\r\n\r\n").await;
    assert!(bad_name.starts_with("HTTP/1.1 4"), "{bad_name}");
    // Closed mid-head: 400. SOCKS garbage: closed or refused, no panic.
    assert!(exchange(http, b"GET http://allowed.test/ HTTP/1.1\r\nHost")
        .await
        .starts_with("HTTP/1.1 400"));
    let socks = proxy.socks_addr();
    assert_eq!(exchange(socks, b"\x04\x01\x00\x50garbage").await, "");
    assert_eq!(
        exchange(socks, &[5, 1, 0, 5, 1, 0, 9, 1, 2, 3, 4, 0, 80])
            .await
            .as_bytes(),
        [5, 0, 5, 8, 0, 1, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        exchange(
            socks,
            &[5, 1, 0, 5, 1, 0, 3, 4, b'a', b' ', b'b', b'c', 0, 80]
        )
        .await
        .as_bytes()[2..4],
        [5, 2]
    );
    // Still serving.
    let r = curl(&strings(&[
        "-x",
        &http_proxy(&proxy, "c"),
        &format!("http://allowed.test:{port}/after"),
    ]))
    .await;
    assert_eq!(r.code, "200", "{}", r.output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connection_limit_answers_503() {
    let (proxy, _) = start(config(&[], &[], false, &[]), None).await;
    let mut idle = Vec::new();
    for _ in 0..256 {
        idle.push(TcpStream::connect(proxy.http_addr()).await.unwrap());
    }
    // Let the proxy accept all of them.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = exchange(proxy.http_addr(), b"GET http://x.test/ HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(idle);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = exchange(proxy.http_addr(), b"GET http://x.test/ HTTP/1.1\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    proxy.shutdown().await;
}

#[tokio::test]
async fn env_names_the_client() {
    let (proxy, _) = start(config(&[], &[], false, &[]), None).await;
    let env: HashMap<String, String> = proxy.env("call 7").into_iter().collect();
    let http = &env["HTTP_PROXY"];
    let token = http
        .strip_prefix("http://call%207:")
        .and_then(|rest| rest.strip_suffix(&format!("@{}", proxy.http_addr())))
        .unwrap_or_else(|| panic!("{http}"));
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{token}"
    );
    assert_eq!(&env["https_proxy"], http);
    assert_eq!(
        env["ALL_PROXY"],
        format!("socks5h://call%207:{token}@{}", proxy.socks_addr())
    );
    // Another call gets another password; the same call the same one.
    assert_ne!(http_proxy(&proxy, "call 8"), http_proxy(&proxy, "call 9"));
    assert_eq!(&http_proxy(&proxy, "call 7"), http);
    assert_eq!(env["all_proxy"], env["ALL_PROXY"]);
    assert_eq!(env["NO_PROXY"], "");
    assert_eq!(env["no_proxy"], "");
    assert_eq!(env.len(), 8);
}

#[test]
fn malformed_pattern_is_named() {
    let err = DomainRules::new(&strings(&["ok.com", "bad*.com"]), &[], false).unwrap_err();
    assert!(err.contains("bad*.com"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_is_named_only_with_its_password() {
    let (proxy, _) = start(config(&[], &[], false, &[]), None).await;
    let genuine = http_proxy(&proxy, "c1");
    let r = curl(&strings(&["-x", &genuine, "http://nope.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(proxy.take_denials("c1").len(), 1);
    // Another call's name without its password speaks for nobody.
    let forged = format!("http://c1:guess@{}", proxy.http_addr());
    let r = curl(&strings(&["-x", &forged, "http://nope.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert!(proxy.take_denials("c1").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_made_for_one_client_speaks_for_it_until_told_to_stop() {
    let (proxy, events) = start(config(&[], &[], false, &[]), None).await;
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let socks = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (http_addr, socks_addr) = (http.local_addr().unwrap(), socks.local_addr().unwrap());
    let (done, ended) = tokio::sync::oneshot::channel::<()>();
    proxy
        .serve_listeners(
            Some("call-7"),
            vec![
                (dsh_netproxy::Protocol::Http, http),
                (dsh_netproxy::Protocol::Socks, socks),
            ],
            async move {
                let _ = ended.await;
            },
        )
        .unwrap();
    // A name in the URL does not matter: the listener says who it is.
    let forged = format!("http://call-1:guess@{http_addr}");
    let r = curl(&strings(&["-x", &forged, "http://nope.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(proxy.take_denials("call-7").len(), 1);
    assert!(proxy.take_denials("call-1").is_empty());
    let socks_url = format!("socks5h://{socks_addr}");
    let r = curl(&strings(&["-x", &socks_url, "http://nope.test/"])).await;
    assert_ne!(r.code, "200", "{}", r.output);
    assert_eq!(proxy.take_denials("call-7").len(), 1);
    assert!(events
        .lock()
        .unwrap()
        .iter()
        .all(|e| e.client.as_deref() == Some("call-7")));
    // Once the command is gone, its listeners are closed.
    done.send(()).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(http_addr).await.is_ok() {
        assert!(std::time::Instant::now() < deadline, "still listening");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listeners_served_for_no_one_in_particular_name_clients_by_password() {
    let (proxy, _) = start(config(&[], &[], false, &[]), None).await;
    let http = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = http.local_addr().unwrap();
    proxy
        .serve_listeners(
            None,
            vec![(dsh_netproxy::Protocol::Http, http)],
            std::future::pending(),
        )
        .unwrap();
    let genuine =
        http_proxy(&proxy, "c1").replace(&proxy.http_addr().to_string(), &addr.to_string());
    let r = curl(&strings(&["-x", &genuine, "http://nope.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert_eq!(proxy.take_denials("c1").len(), 1);
    let forged = format!("http://c1:guess@{addr}");
    let r = curl(&strings(&["-x", &forged, "http://nope.test/"])).await;
    assert_eq!(r.code, "403", "{}", r.output);
    assert!(proxy.take_denials("c1").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_requiring_clients_refuses_one_without_a_password_or_forgotten() {
    let mut config = config(
        &["allowed.test"],
        &[],
        false,
        &[("allowed.test", "127.0.0.1")],
    );
    config.require_client = true;
    let (proxy, events) = start(config, None).await;
    let port = origin().await;
    let url = format!("http://allowed.test:{port}/x");
    let genuine = http_proxy(&proxy, "call-3");
    let r = curl(&strings(&["-x", &genuine, &url])).await;
    assert_eq!(r.code, "200", "{}", r.output);
    // No name: challenged (clients that send credentials only then do);
    // not a decision, so not recorded.
    let bare = format!("http://{}", proxy.http_addr());
    let r = curl(&strings(&["-x", &bare, "-D", "-", &url])).await;
    assert_eq!(r.code, "407", "{}", r.output);
    let head = r.output.to_ascii_lowercase();
    assert!(head.contains("proxy-authenticate: basic"), "{}", r.output);
    assert!(
        head.contains("x-dsh-denied: the proxy url names no running call"),
        "{}",
        r.output
    );
    // Credentials only when challenged, as git sends them: served.
    let r = curl(&strings(&["-x", &genuine, "--proxy-anyauth", &url])).await;
    assert_eq!(r.code, "200", "{}", r.output);
    let socks = format!("socks5h://{}", proxy.socks_addr());
    let r = curl(&strings(&["-x", &socks, &url])).await;
    assert_ne!(r.code, "200", "{}", r.output);
    // The call ended: its password is forgotten, its later requests refused.
    proxy.forget("call-3");
    let r = curl(&strings(&["-x", &genuine, &url])).await;
    assert_eq!(r.code, "407", "{}", r.output);
    assert!(proxy.take_denials("call-3").is_empty());
    let refused = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| !e.allowed && e.client.is_none())
        .count();
    // SOCKS without credentials, and the forgotten password.
    assert_eq!(refused, 2);
}
