//! [`ApprovalPage`]: the loopback HTTP server of the page (hyper, one
//! connection task each).

use crate::access::{query_value, write_allowed, Access, Credential};
use crate::registry::{AnsweredVia, ApprovalRegistry};
use bytes::Bytes;
use dsh_policy::ApprovalAnswer;
use http::{header, HeaderValue, Method, Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

type Body = BoxBody<Bytes, Infallible>;

/// The page itself: inline style and script, nothing fetched from elsewhere.
const PAGE: &str = include_str!("page.html");

/// How many recent records the page shows, when it has a provider.
const RECENT_RECORDS: usize = 20;
/// A comment on the event stream this often keeps idle connections open.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// Largest answer body.
const MAX_BODY: usize = 4096;

/// Why the page cannot be served.
#[derive(Debug)]
pub struct PageError(String);

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PageError {}

/// The approval page's server, bound to a loopback address.
pub struct ApprovalPage {
    registry: ApprovalRegistry,
    access: Arc<Access>,
    address: SocketAddr,
    listener: Option<TcpListener>,
}

impl ApprovalPage {
    /// Binds `address` (port 0: a random port), which must be a loopback
    /// address: the page answers for the person at this machine alone.
    ///
    /// # Errors
    /// A [`PageError`] for an address that is not loopback, one that cannot
    /// be bound, or no randomness for the tokens.
    pub async fn bind(address: SocketAddr, registry: ApprovalRegistry) -> Result<Self, PageError> {
        if !address.ip().is_loopback() {
            return Err(PageError(format!(
                "the approval page is served on loopback only, not on {address} (e.g. 127.0.0.1:0)"
            )));
        }
        let listener = TcpListener::bind(address)
            .await
            .map_err(|e| PageError(format!("cannot listen on {address}: {e}")))?;
        let address = listener.local_addr().unwrap_or(address);
        let access = Access::new(address.port()).map_err(PageError)?;
        Ok(ApprovalPage {
            registry,
            access: Arc::new(access),
            address,
            listener: Some(listener),
        })
    }

    /// The address served.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The page's base URL, `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// A new browser link with a one-time token:
    /// `http://127.0.0.1:PORT/?token=…`.
    ///
    /// # Errors
    /// A [`PageError`] when there is no randomness for the token.
    pub fn browser_url(&self) -> Result<String, PageError> {
        browser_url(&self.access, self.address).map_err(PageError)
    }

    /// The bearer token of the terminal's client (`dsh approvals`); never
    /// accepted in a link.
    pub fn terminal_token(&self) -> &str {
        self.access.cli_token()
    }

    /// Serves until `stop` is cancelled; spawn it.
    pub async fn serve(mut self, stop: CancellationToken) {
        let Some(listener) = self.listener.take() else {
            return;
        };
        let shared = Arc::new(Shared {
            registry: self.registry.clone(),
            access: self.access.clone(),
            address: self.address,
            stop: stop.clone(),
        });
        loop {
            let stream = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            let shared = shared.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |request| {
                    let shared = shared.clone();
                    async move { Ok::<_, Infallible>(route(&shared, request).await) }
                });
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(30));
                let connection =
                    builder.serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
                tokio::select! {
                    _ = connection => {}
                    () = stop.cancelled() => {}
                }
            });
        }
    }
}

fn browser_url(access: &Access, address: SocketAddr) -> Result<String, String> {
    Ok(format!("http://{address}/?token={}", access.mint_link()?))
}

struct Shared {
    registry: ApprovalRegistry,
    access: Arc<Access>,
    address: SocketAddr,
    stop: CancellationToken,
}

fn respond(
    status: StatusCode,
    content_type: &'static str,
    body: impl Into<Bytes>,
) -> Response<Body> {
    let mut response = Response::new(Full::new(body.into()).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    response
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    respond(status, "text/plain; charset=utf-8", text.to_owned())
}

fn json(status: StatusCode, value: &serde_json::Value) -> Response<Body> {
    respond(status, "application/json", value.to_string())
}

/// What the page shows, as one JSON document.
fn snapshot(registry: &ApprovalRegistry) -> serde_json::Value {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let mut value = serde_json::json!({
        "now": u64::try_from(now).unwrap_or(u64::MAX),
        "pending": registry.pending(),
        "running": registry.running(),
    });
    if let Some((title, records)) = registry.recent_records(RECENT_RECORDS) {
        value["records"] = serde_json::json!({"title": title, "items": records});
    }
    value
}

const NEED_LINK: &str = "Not signed in: open the link `dsh mcp` printed on its standard error, \
or get a new one with `dsh approvals url`.";

async fn route(shared: &Shared, request: Request<hyper::body::Incoming>) -> Response<Body> {
    let access = &shared.access;
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    // A page of another name that resolves to loopback (DNS rebinding) is refused.
    let Some(host) = host.filter(|h| access.host_allowed(Some(h))) else {
        return plain(
            StatusCode::FORBIDDEN,
            "the Host header must name this server on loopback",
        );
    };
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or("").to_owned();
    if method == Method::POST {
        let headers = request.headers();
        let origin = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok());
        let site = headers.get("sec-fetch-site").and_then(|v| v.to_str().ok());
        let bearer = access.credential(headers) == Some(Credential::Bearer);
        if !write_allowed(&host, origin, site, bearer) {
            return plain(
                StatusCode::FORBIDDEN,
                "cross-origin writes are refused: answer from the page itself",
            );
        }
    }
    match (&method, path.as_str()) {
        (&Method::GET, "/") => {
            if let Some(token) = query_value(&query, "token") {
                return match access.redeem(token) {
                    Some(session) => {
                        // The token leaves the address bar (and the history).
                        let mut response = plain(StatusCode::SEE_OTHER, "signed in");
                        let headers = response.headers_mut();
                        headers.insert(header::LOCATION, HeaderValue::from_static("/"));
                        if let Ok(cookie) = HeaderValue::from_str(&access.set_cookie(&session)) {
                            headers.insert(header::SET_COOKIE, cookie);
                        }
                        response
                    }
                    None => plain(
                        StatusCode::FORBIDDEN,
                        "this link was used already or is not valid: get a new one with `dsh approvals url`",
                    ),
                };
            }
            if access.credential(request.headers()).is_none() {
                return plain(StatusCode::UNAUTHORIZED, NEED_LINK);
            }
            let mut response = respond(StatusCode::OK, "text/html; charset=utf-8", PAGE);
            let headers = response.headers_mut();
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
                     connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; \
                     frame-ancestors 'none'",
                ),
            );
            headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
            headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
            response
        }
        (&Method::GET, "/api/state") => {
            if access.credential(request.headers()).is_none() {
                return plain(StatusCode::UNAUTHORIZED, NEED_LINK);
            }
            json(StatusCode::OK, &snapshot(&shared.registry))
        }
        (&Method::GET, "/events") => {
            if access.credential(request.headers()).is_none() {
                return plain(StatusCode::UNAUTHORIZED, NEED_LINK);
            }
            events(shared)
        }
        (&Method::POST, "/api/browser-url") => {
            if access.credential(request.headers()) != Some(Credential::Bearer) {
                return plain(
                    StatusCode::UNAUTHORIZED,
                    "new links are for the terminal's bearer token",
                );
            }
            match browser_url(access, shared.address) {
                Ok(url) => json(StatusCode::OK, &serde_json::json!({ "url": url })),
                Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, &e),
            }
        }
        (&Method::POST, ask) if ask.starts_with("/api/asks/") => {
            let Some(credential) = access.credential(request.headers()) else {
                return plain(StatusCode::UNAUTHORIZED, NEED_LINK);
            };
            let id = ask.trim_start_matches("/api/asks/").to_owned();
            let limited = http_body_util::Limited::new(request.into_body(), MAX_BODY);
            let body = match tokio::time::timeout(Duration::from_secs(30), limited.collect()).await
            {
                Ok(Ok(body)) => body.to_bytes(),
                _ => return plain(StatusCode::BAD_REQUEST, "cannot read the answer"),
            };
            let answer = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("answer").cloned())
                .and_then(|v| serde_json::from_value::<ApprovalAnswer>(v).ok());
            let Some(answer) = answer else {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "the body must be {\"answer\": \"allowOnce|allowAlways|rejectOnce|rejectAlways\"}",
                );
            };
            let via = match credential {
                Credential::Cookie => AnsweredVia::Page,
                Credential::Bearer => AnsweredVia::Terminal,
            };
            match shared.registry.answer(&id, answer, via) {
                Ok(()) => json(StatusCode::OK, &serde_json::json!({"answered": id})),
                Err(refused @ crate::AnswerRefused::NotAChoice) => {
                    plain(StatusCode::BAD_REQUEST, &refused.to_string())
                }
                Err(refused) => plain(StatusCode::NOT_FOUND, &refused.to_string()),
            }
        }
        (&Method::POST, kill) if kill.starts_with("/api/running/") && kill.ends_with("/kill") => {
            if access.credential(request.headers()).is_none() {
                return plain(StatusCode::UNAUTHORIZED, NEED_LINK);
            }
            let id = kill
                .trim_start_matches("/api/running/")
                .trim_end_matches("/kill");
            match shared.registry.kill(id) {
                Ok(()) => json(StatusCode::OK, &serde_json::json!({ "killed": id })),
                Err(why) => plain(StatusCode::NOT_FOUND, &why),
            }
        }
        (_, "/" | "/api/state" | "/events" | "/api/browser-url") => {
            plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed")
        }
        _ => plain(StatusCode::NOT_FOUND, "not found"),
    }
}

/// `text/event-stream`: a `state` event with the whole snapshot now and on
/// every change, a comment now and then so that idle connections stay open.
fn events(shared: &Shared) -> Response<Body> {
    let registry = shared.registry.clone();
    let changes = registry.subscribe();
    let stop = shared.stop.clone();
    let stream = futures::stream::unfold(
        (registry, changes, stop, true),
        |(registry, mut changes, stop, first)| async move {
            if !first {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() {
                            return None;
                        }
                    }
                    () = tokio::time::sleep(KEEPALIVE) => {
                        let frame = hyper::body::Frame::data(Bytes::from_static(b": keepalive\n\n"));
                        return Some((Ok::<_, Infallible>(frame), (registry, changes, stop, false)));
                    }
                    () = stop.cancelled() => return None,
                }
            }
            changes.borrow_and_update();
            let text = format!("event: state\ndata: {}\n\n", snapshot(&registry));
            let frame = hyper::body::Frame::data(Bytes::from(text));
            Some((Ok(frame), (registry, changes, stop, false)))
        },
    );
    let mut response = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::AskOrigin;
    use dsh_policy::ApprovalRequest;

    struct Served {
        page_url: String,
        host: String,
        token: String,
        registry: ApprovalRegistry,
        stop: CancellationToken,
    }

    impl Drop for Served {
        fn drop(&mut self) {
            self.stop.cancel();
        }
    }

    async fn serve() -> Served {
        let registry = ApprovalRegistry::new();
        let page = ApprovalPage::bind("127.0.0.1:0".parse().unwrap(), registry.clone())
            .await
            .unwrap();
        let stop = CancellationToken::new();
        let served = Served {
            page_url: page.browser_url().unwrap(),
            host: page.address().to_string(),
            token: page.terminal_token().to_owned(),
            registry,
            stop: stop.clone(),
        };
        tokio::spawn(page.serve(stop));
        served
    }

    struct Reply {
        status: StatusCode,
        headers: http::HeaderMap,
        body: String,
    }

    /// One request with exactly these headers (a `Host` among them, or none).
    async fn send(
        served: &Served,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: &str,
    ) -> Reply {
        let stream = tokio::net::TcpStream::connect(&served.host).await.unwrap();
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(connection);
        let mut builder = Request::builder().method(method).uri(path);
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let response = sender
            .send_request(
                builder
                    .body(Full::new(Bytes::from(body.to_owned())))
                    .unwrap(),
            )
            .await
            .unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let body = if headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes())
            == Some(b"text/event-stream")
        {
            String::new()
        } else {
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Reply {
            status,
            headers,
            body,
        }
    }

    fn ask(registry: &ApprovalRegistry) -> crate::Ticket {
        let request = ApprovalRequest {
            call_id: "9".into(),
            tool: "bash".into(),
            tool_aliases: vec![],
            arguments: serde_json::json!({"command": "touch x"}),
            agent: None,
            reason: "no rule matches \"touch\"".into(),
            rule: None,
            allow_always_rules: vec!["Bash(touch x)".into()],
            reject_always_rules: vec![],
        };
        registry.file(&request, AskOrigin::default(), Duration::from_secs(60))
    }

    /// Signs in with the link; the session cookie's `name=value`.
    async fn sign_in(served: &Served) -> String {
        let path = served
            .page_url
            .trim_start_matches(&format!("http://{}", served.host));
        let reply = send(served, Method::GET, path, &[("host", &served.host)], "").await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        assert_eq!(reply.headers[header::LOCATION], "/");
        let cookie = reply.headers[header::SET_COOKIE].to_str().unwrap();
        assert!(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
            "{cookie}"
        );
        cookie.split(';').next().unwrap().to_owned()
    }

    struct Records;

    impl crate::RecentRecords for Records {
        fn title(&self) -> String {
            "Recent calls".into()
        }

        fn recent(&self, limit: usize) -> Vec<serde_json::Value> {
            vec![serde_json::json!({"tool": "bash", "limit": limit})]
        }
    }

    #[test]
    fn recent_records_show_only_with_a_provider() {
        let bare = snapshot(&ApprovalRegistry::new());
        assert!(bare.get("records").is_none());
        let with = snapshot(&ApprovalRegistry::new().with_recent_records(Arc::new(Records)));
        assert_eq!(
            with["records"],
            serde_json::json!({"title": "Recent calls", "items": [{"tool": "bash", "limit": RECENT_RECORDS}]})
        );
    }

    #[tokio::test]
    async fn only_loopback_addresses_are_served() {
        let refused =
            ApprovalPage::bind("0.0.0.0:0".parse().unwrap(), ApprovalRegistry::new()).await;
        assert!(refused.err().unwrap().to_string().contains("loopback only"));
    }

    #[tokio::test]
    async fn nothing_without_the_link_the_cookie_or_the_bearer_token() {
        let served = serve().await;
        let _ticket = ask(&served.registry);
        let host = served.host.as_str();
        let origin = format!("http://{host}");
        for (method, path) in [
            (Method::GET, "/"),
            (Method::GET, "/api/state"),
            (Method::GET, "/events"),
            (Method::POST, "/api/asks/1"),
            (Method::POST, "/api/running/1/kill"),
            (Method::POST, "/api/browser-url"),
        ] {
            let reply = send(
                &served,
                method.clone(),
                path,
                &[("host", host), ("origin", &origin)],
                r#"{"answer":"allowOnce"}"#,
            )
            .await;
            assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{method} {path}");
        }
        let wrong = send(&served, Method::GET, "/?token=guess", &[("host", host)], "").await;
        assert_eq!(wrong.status, StatusCode::FORBIDDEN);
        assert!(wrong.headers.get(header::SET_COOKIE).is_none());
        assert_eq!(served.registry.pending().len(), 1);
    }

    #[tokio::test]
    async fn the_link_signs_in_once_and_the_cookie_opens_the_page() {
        let served = serve().await;
        let host = served.host.as_str();
        let cookie = sign_in(&served).await;
        let path = served
            .page_url
            .trim_start_matches(&format!("http://{host}"));
        let again = send(&served, Method::GET, path, &[("host", host)], "").await;
        assert_eq!(
            again.status,
            StatusCode::FORBIDDEN,
            "a spent link signed in again"
        );
        let page = send(
            &served,
            Method::GET,
            "/",
            &[("host", host), ("cookie", &cookie)],
            "",
        )
        .await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.body.contains("<title>dsh approvals</title>"));
        let csp = page.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"));
        // No external asset: nothing is fetched from elsewhere.
        assert!(!page.body.contains("http://") && !page.body.contains("https://"));
        let state = send(
            &served,
            Method::GET,
            "/api/state",
            &[("host", host), ("cookie", &cookie)],
            "",
        )
        .await;
        assert_eq!(state.status, StatusCode::OK);
        let state: serde_json::Value = serde_json::from_str(&state.body).unwrap();
        assert_eq!(state["pending"], serde_json::json!([]));
        assert!(state.get("records").is_none());
    }

    #[tokio::test]
    async fn a_foreign_host_is_refused() {
        let served = serve().await;
        let cookie = sign_in(&served).await;
        let port = served.host.rsplit(':').next().unwrap();
        for host in [format!("evil.example:{port}"), "127.0.0.1:1".to_owned()] {
            let reply = send(
                &served,
                Method::GET,
                "/",
                &[("host", &host), ("cookie", &cookie)],
                "",
            )
            .await;
            assert_eq!(reply.status, StatusCode::FORBIDDEN, "{host}");
        }
        let none = send(&served, Method::GET, "/", &[("cookie", &cookie)], "").await;
        assert_eq!(none.status, StatusCode::FORBIDDEN);
    }

    #[tokio::test]
    async fn writes_from_another_origin_answer_nothing() {
        let served = serve().await;
        let host = served.host.as_str();
        let cookie = sign_in(&served).await;
        let ticket = ask(&served.registry);
        let path = format!("/api/asks/{}", ticket.id());
        let body = r#"{"answer":"allowOnce"}"#;
        let bearer = format!("Bearer {}", served.token);
        for headers in [
            vec![
                ("host", host),
                ("cookie", cookie.as_str()),
                ("origin", "http://evil.example"),
            ],
            vec![
                ("host", host),
                ("cookie", cookie.as_str()),
                ("sec-fetch-site", "cross-site"),
            ],
            vec![("host", host), ("cookie", cookie.as_str())],
            vec![
                ("host", host),
                ("authorization", bearer.as_str()),
                ("origin", "http://evil.example"),
            ],
        ] {
            let reply = send(&served, Method::POST, &path, &headers, body).await;
            assert_eq!(reply.status, StatusCode::FORBIDDEN, "{headers:?}");
        }
        assert_eq!(served.registry.pending().len(), 1);
        let origin = format!("http://{host}");
        let reply = send(
            &served,
            Method::POST,
            &path,
            &[("host", host), ("cookie", &cookie), ("origin", &origin)],
            body,
        )
        .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        assert_eq!(
            ticket.wait(Duration::from_secs(5)).await,
            Some((ApprovalAnswer::AllowOnce, AnsweredVia::Page))
        );
        let late = send(
            &served,
            Method::POST,
            &path,
            &[("host", host), ("cookie", &cookie), ("origin", &origin)],
            body,
        )
        .await;
        assert_eq!(late.status, StatusCode::NOT_FOUND);
    }

    #[tokio::test]
    async fn the_terminal_answers_and_mints_links_with_its_bearer_token() {
        let served = serve().await;
        let host = served.host.as_str();
        let state = crate::state::ServerState {
            pid: 0,
            started: String::new(),
            url: format!("http://{host}"),
            token: served.token.clone(),
        };
        let ticket = ask(&served.registry);
        let pending = crate::client::pending(&state).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0]["command"], "touch x");
        crate::client::answer(&state, &ticket.id(), ApprovalAnswer::RejectAlways)
            .await
            .unwrap();
        assert_eq!(
            ticket.wait(Duration::from_secs(5)).await,
            Some((ApprovalAnswer::RejectAlways, AnsweredVia::Terminal))
        );
        let gone = crate::client::answer(&state, "1", ApprovalAnswer::AllowOnce).await;
        assert!(gone.unwrap_err().starts_with("404"));
        let url = crate::client::browser_url(&state).await.unwrap();
        assert!(url.starts_with(&format!("http://{host}/?token=")), "{url}");
        let path = url.trim_start_matches(&format!("http://{host}"));
        let reply = send(&served, Method::GET, path, &[("host", host)], "").await;
        assert_eq!(reply.status, StatusCode::SEE_OTHER);
        // A browser's cookie cannot mint links.
        let cookie = sign_in(&Served {
            page_url: crate::client::browser_url(&state).await.unwrap(),
            host: served.host.clone(),
            token: String::new(),
            registry: served.registry.clone(),
            stop: CancellationToken::new(),
        })
        .await;
        let origin = format!("http://{host}");
        let minted = send(
            &served,
            Method::POST,
            "/api/browser-url",
            &[("host", host), ("cookie", &cookie), ("origin", &origin)],
            "",
        )
        .await;
        assert_eq!(minted.status, StatusCode::UNAUTHORIZED);
        let wrong = crate::state::ServerState {
            token: "nope".into(),
            ..state
        };
        assert!(crate::client::pending(&wrong)
            .await
            .unwrap_err()
            .starts_with("401"));
    }

    #[tokio::test]
    async fn the_event_stream_sends_the_state_now_and_on_every_change() {
        let served = serve().await;
        let cookie = sign_in(&served).await;
        let stream = tokio::net::TcpStream::connect(&served.host).await.unwrap();
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .unwrap();
        tokio::spawn(connection);
        let request = Request::builder()
            .uri("/events")
            .header("host", &served.host)
            .header("cookie", &cookie)
            .body(Full::new(Bytes::new()))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/event-stream"
        );
        let mut body = response.into_body();
        async fn next(body: &mut hyper::body::Incoming) -> String {
            let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
                .await
                .expect("an event in time")
                .unwrap()
                .unwrap();
            String::from_utf8(frame.into_data().unwrap().to_vec()).unwrap()
        }
        let first = next(&mut body).await;
        assert!(first.starts_with("event: state\ndata: "), "{first}");
        assert!(first.contains("\"pending\":[]"), "{first}");
        let _ticket = ask(&served.registry);
        let second = next(&mut body).await;
        assert!(second.contains("\"command\":\"touch x\""), "{second}");
    }
}
