//! The HTTP side: `CONNECT` tunnels and plain absolute-form requests.
//!
//! One request per client connection for plain HTTP: the upstream request
//! carries `Connection: close`, and so does the response passed back, so a
//! keep-alive client knows to open a new connection for its next request.

use crate::rules::printable;
use crate::{DenyReason, OpenError, Shared, HEAD_TIMEOUT};
use base64::Engine;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The largest request or response head read.
const MAX_HEAD: usize = 64 * 1024;
const MAX_HEADERS: usize = 128;

enum HeadError {
    /// The peer closed before sending anything.
    Closed,
    TooLarge,
    Malformed(String),
    Io,
}

/// A parsed request head, owned.
struct Request {
    method: String,
    target: String,
    minor_version: u8,
    headers: Vec<(String, Vec<u8>)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }

    /// The user name and password of `Proxy-Authorization: Basic …`, if any.
    fn client(&self) -> Option<(String, String)> {
        let value = std::str::from_utf8(self.header("proxy-authorization")?)
            .ok()?
            .trim();
        let (scheme, token) = value.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("basic") {
            return None;
        }
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(token.trim())
            .ok()?;
        let text = String::from_utf8_lossy(&decoded);
        let (user, password) = text.split_once(':').unwrap_or((&text, ""));
        (!user.is_empty()).then(|| (user.to_string(), password.to_string()))
    }
}

/// Reads until a complete head is in `buf`; returns its length.
async fn read_head<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    complete: impl Fn(&[u8]) -> Result<Option<usize>, HeadError>,
) -> Result<usize, HeadError> {
    loop {
        if !buf.is_empty() {
            if let Some(n) = complete(buf)? {
                return Ok(n);
            }
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::TooLarge);
        }
        buf.reserve(8192);
        match reader.read_buf(buf).await {
            Ok(0) if buf.is_empty() => return Err(HeadError::Closed),
            Ok(0) => {
                return Err(HeadError::Malformed(
                    "connection closed inside the request head".into(),
                ))
            }
            Ok(_) => {}
            Err(_) => return Err(HeadError::Io),
        }
    }
}

fn parse_error(e: httparse::Error) -> HeadError {
    match e {
        httparse::Error::TooManyHeaders => HeadError::TooLarge,
        other => HeadError::Malformed(other.to_string()),
    }
}

fn request_complete(buf: &[u8]) -> Result<Option<usize>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    match httparse::Request::new(&mut headers).parse(buf) {
        Ok(httparse::Status::Complete(n)) => Ok(Some(n)),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(parse_error(e)),
    }
}

fn parse_request(buf: &[u8]) -> Option<Request> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    req.parse(buf).ok()?;
    Some(Request {
        method: req.method?.to_string(),
        target: req.path?.to_string(),
        minor_version: req.version?,
        headers: req
            .headers
            .iter()
            .map(|h| (h.name.to_string(), h.value.to_vec()))
            .collect(),
    })
}

/// Writes a short plain-text answer and closes.
async fn respond(stream: &mut TcpStream, status: &str, denied: Option<&str>, body: &str) {
    let mut head = format!("HTTP/1.1 {status}\r\n");
    if let Some(sentence) = denied {
        let safe: String = sentence
            .chars()
            .map(|c| {
                if c.is_ascii() && !c.is_ascii_control() {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        head.push_str(&format!("X-Dsh-Denied: {safe}\r\n"));
    }
    if status.starts_with("407") {
        head.push_str("Proxy-Authenticate: Basic realm=\"dsh-netproxy\"\r\n");
    }
    head.push_str(&format!(
        "Content-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.shutdown().await;
    // A lingering close: read (and drop) what the client is still sending, so
    // that closing with unread data does not reset the connection before the
    // client has read the answer.
    let drain = async {
        let mut sink = [0u8; 8192];
        let mut total = 0usize;
        while total < 1 << 20 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), drain).await;
}

/// The answer when the connection limit is reached.
pub(crate) async fn busy(mut stream: TcpStream) {
    respond(
        &mut stream,
        "503 Service Unavailable",
        None,
        "dsh-netproxy: too many connections\n",
    )
    .await;
}

/// Splits `host:port` / `[v6]:port`; the port defaults to `default` when absent.
fn split_authority(authority: &str, default: Option<u16>) -> Result<(String, u16), String> {
    let bad = || format!("malformed destination {}", printable(authority));
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (ip, after) = rest.split_once(']').ok_or_else(bad)?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':').ok_or_else(bad)?),
        };
        (format!("[{ip}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (authority.to_string(), None),
        }
    };
    let port = match port {
        Some(p) => {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(bad)?
        }
        None => default.ok_or_else(|| format!("no port in {}", printable(authority)))?,
    };
    if host.is_empty() {
        return Err(bad());
    }
    Ok((host, port))
}

/// The answer for a refused or failed [`Shared::open`].
async fn refuse(client: &mut TcpStream, host: &str, port: u16, error: OpenError) {
    match error {
        OpenError::Denied(reason) => {
            let sentence = reason.as_sentence();
            let body = format!("dsh-netproxy: {host}:{port} denied: {sentence}\n");
            let status = if reason == DenyReason::NoClient {
                "407 Proxy Authentication Required"
            } else {
                "403 Forbidden"
            };
            respond(client, status, Some(&sentence), &body).await;
        }
        OpenError::Failed(e) => {
            let body = format!("dsh-netproxy: could not connect to {host}:{port}: {e}\n");
            let status = if e.kind() == std::io::ErrorKind::TimedOut {
                "504 Gateway Timeout"
            } else {
                "502 Bad Gateway"
            };
            respond(client, status, None, &body).await;
        }
    }
}

/// Serves one client connection; `listener_client` is the client the
/// listener itself names (one made for a single call), over any name the
/// request gives.
pub(crate) async fn handle(mut client: TcpStream, shared: &Shared, listener_client: Option<&str>) {
    let mut buf = Vec::with_capacity(8192);
    let head = tokio::time::timeout(
        HEAD_TIMEOUT,
        read_head(&mut client, &mut buf, request_complete),
    )
    .await;
    let head_len = match head {
        Err(_) => {
            return respond(
                &mut client,
                "408 Request Timeout",
                None,
                "dsh-netproxy: no request head within 30 s\n",
            )
            .await
        }
        Ok(Err(HeadError::Closed | HeadError::Io)) => return,
        Ok(Err(HeadError::TooLarge)) => {
            return respond(
                &mut client,
                "431 Request Header Fields Too Large",
                None,
                "dsh-netproxy: request head too large\n",
            )
            .await
        }
        Ok(Err(HeadError::Malformed(why))) => {
            let body = format!("dsh-netproxy: malformed request: {why}\n");
            return respond(&mut client, "400 Bad Request", None, &body).await;
        }
        Ok(Ok(n)) => n,
    };
    let Some(request) = parse_request(&buf[..head_len]) else {
        return respond(
            &mut client,
            "400 Bad Request",
            None,
            "dsh-netproxy: malformed request\n",
        )
        .await;
    };
    let leftover = buf[head_len..].to_vec();
    // A name counts only with the password `env` gave it: a command cannot
    // speak for another call.
    let named = request.client();
    let who = match listener_client {
        Some(name) => Some(name.to_owned()),
        None => named
            .as_ref()
            .and_then(|(user, password)| shared.verified(user, password)),
    };
    // Clients that send credentials only when challenged (git: libcurl
    // with any proxy authentication) are challenged, not refused: not a
    // decision, so not recorded.
    if who.is_none() && shared.requires_client() && named.is_none() {
        let sentence = DenyReason::NoClient.as_sentence();
        let body = format!("dsh-netproxy: proxy credentials required: {sentence}\n");
        return respond(
            &mut client,
            "407 Proxy Authentication Required",
            Some(&sentence),
            &body,
        )
        .await;
    }
    if request.method.eq_ignore_ascii_case("CONNECT") {
        connect(client, shared, &request, who, leftover).await;
    } else {
        forward(client, shared, &request, who, leftover).await;
    }
}

async fn connect(
    mut client: TcpStream,
    shared: &Shared,
    request: &Request,
    who: Option<String>,
    leftover: Vec<u8>,
) {
    let (host, port) = match split_authority(&request.target, None) {
        Ok(hp) => hp,
        Err(why) => {
            let body = format!("dsh-netproxy: bad CONNECT target: {why}\n");
            return respond(&mut client, "400 Bad Request", None, &body).await;
        }
    };
    let mut upstream = match shared.open(&host, port, who.as_deref(), "connect").await {
        Ok(s) => s,
        Err(e) => return refuse(&mut client, &host, port, e).await,
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
    {
        return;
    }
    if !leftover.is_empty() && upstream.write_all(&leftover).await.is_err() {
        return;
    }
    crate::copy::bidirectional(&mut client, &mut upstream).await;
}

/// Hop-by-hop headers not passed on (RFC 9110 §7.6.1), besides `Proxy-*`.
fn hop_by_hop(name: &str) -> bool {
    [
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
        "transfer-encoding",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

async fn forward(
    mut client: TcpStream,
    shared: &Shared,
    request: &Request,
    who: Option<String>,
    leftover: Vec<u8>,
) {
    let target = &request.target;
    let rest = match target.get(..7) {
        Some(scheme) if scheme.eq_ignore_ascii_case("http://") => &target[7..],
        _ => {
            let why = if target.starts_with('/') {
                "a proxy request needs an absolute URL (http://host/path)".to_string()
            } else {
                format!(
                    "unsupported request target {} (only http:// URLs; use CONNECT for https)",
                    printable(target)
                )
            };
            return respond(
                &mut client,
                "400 Bad Request",
                None,
                &format!("dsh-netproxy: {why}\n"),
            )
            .await;
        }
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let mut path = rest[end..].split('#').next().unwrap_or("").to_string();
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let (host, port) = match split_authority(authority, Some(80)) {
        Ok(hp) => hp,
        Err(why) => {
            return respond(
                &mut client,
                "400 Bad Request",
                None,
                &format!("dsh-netproxy: {why}\n"),
            )
            .await
        }
    };
    let upstream = match shared.open(&host, port, who.as_deref(), "http").await {
        Ok(s) => s,
        Err(e) => return refuse(&mut client, &host, port, e).await,
    };

    // The origin-form request, Proxy-* and hop-by-hop headers dropped.
    let upgrade = request.header("upgrade").is_some()
        && request.header("connection").is_some_and(|v| {
            String::from_utf8_lossy(v)
                .to_ascii_lowercase()
                .contains("upgrade")
        });
    let mut head = format!(
        "{} {} HTTP/1.{}\r\n",
        request.method,
        path,
        request.minor_version.min(1)
    )
    .into_bytes();
    let mut has_host = false;
    for (name, value) in &request.headers {
        let lower = name.to_ascii_lowercase();
        if lower.starts_with("proxy-")
            || (hop_by_hop(&lower)
                && lower != "transfer-encoding"
                && !(upgrade && lower == "upgrade"))
        {
            continue;
        }
        has_host |= lower == "host";
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    if !has_host {
        head.extend_from_slice(format!("Host: {authority}\r\n").as_bytes());
    }
    head.extend_from_slice(if upgrade {
        b"Connection: Upgrade\r\n\r\n"
    } else {
        b"Connection: close\r\n\r\n"
    });
    head.extend_from_slice(&leftover);

    let (client_r, mut client_w) = client.into_split();
    let (upstream_r, mut upstream_w) = upstream.into_split();
    if upstream_w.write_all(&head).await.is_err() {
        let body = "dsh-netproxy: upstream closed\n";
        let msg = format!(
            "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client_w.write_all(msg.as_bytes()).await;
        let _ = client_w.shutdown().await;
        return;
    }
    // The request body (or, after an upgrade, the client's side), streamed.
    let uploader = tokio::spawn(async move {
        let mut client_r = client_r;
        crate::copy::one_way(&mut client_r, &mut upstream_w).await;
        (client_r, upstream_w)
    });

    let mut upstream_r = upstream_r;
    let mut rbuf = Vec::with_capacity(8192);
    let mut sent_anything = false;
    loop {
        let n = match read_head(&mut upstream_r, &mut rbuf, response_complete).await {
            Ok(n) => n,
            Err(e) => {
                if !sent_anything {
                    let why = match e {
                        HeadError::TooLarge => "response head too large".to_string(),
                        HeadError::Malformed(w) => format!("malformed response: {w}"),
                        HeadError::Closed | HeadError::Io => {
                            "upstream closed without a response".to_string()
                        }
                    };
                    let body = format!("dsh-netproxy: {why}\n");
                    let msg = format!(
                        "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = client_w.write_all(msg.as_bytes()).await;
                }
                let _ = client_w.shutdown().await;
                uploader.abort();
                return;
            }
        };
        let Some((code, rewritten)) = rewrite_response(&rbuf[..n]) else {
            break;
        };
        if client_w.write_all(&rewritten).await.is_err() {
            uploader.abort();
            return;
        }
        sent_anything = true;
        rbuf.drain(..n);
        // 1xx interim answers (not 101) come before the final one.
        if (100..200).contains(&code) && code != 101 {
            continue;
        }
        break;
    }
    if !rbuf.is_empty() && client_w.write_all(&rbuf).await.is_err() {
        uploader.abort();
        return;
    }
    crate::copy::one_way(&mut upstream_r, &mut client_w).await;
    let _ = client_w.shutdown().await;
    uploader.abort();
}

fn response_complete(buf: &[u8]) -> Result<Option<usize>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    match httparse::Response::new(&mut headers).parse(buf) {
        Ok(httparse::Status::Complete(n)) => Ok(Some(n)),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(parse_error(e)),
    }
}

/// The response head with `Connection: close` (unless 101 or 1xx), and its status.
fn rewrite_response(head: &[u8]) -> Option<(u16, Vec<u8>)> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut res = httparse::Response::new(&mut headers);
    res.parse(head).ok()?;
    let code = res.code?;
    if (100..200).contains(&code) {
        return Some((code, head.to_vec()));
    }
    let mut out = format!(
        "HTTP/1.{} {} {}\r\n",
        res.version?,
        code,
        res.reason.unwrap_or("")
    )
    .into_bytes();
    for h in res.headers.iter() {
        if h.name.eq_ignore_ascii_case("connection") || h.name.eq_ignore_ascii_case("keep-alive") {
            continue;
        }
        out.extend_from_slice(h.name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(h.value);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    Some((code, out))
}
