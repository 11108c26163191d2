//! `dsh mcp --http`: the same server over MCP's streamable HTTP transport
//! (rmcp's, both the stateless 2026-07-28 revision and the session-based
//! one), behind a bearer token.
//!
//! - `POST/GET/DELETE /mcp` is the MCP endpoint; every request needs
//!   `Authorization: Bearer TOKEN` unless the server was started without
//!   authentication (allowed on a loopback address only). Tokens are
//!   compared in constant time, never accepted in the query string and
//!   never logged. The token's name is the call's agent, so background
//!   tasks and interactive sessions belong to the principal that started
//!   them: another token can neither read nor stop them.
//! - `GET /healthz` answers `ok` without authentication and says nothing
//!   else.
//! - The `Host` header must name a loopback host unless more are allowed
//!   (a DNS-rebinding guard), and a browser's `Origin` must be one allowed;
//!   both are rmcp's checks, configured here.
//! - SIGTERM or SIGINT stops accepting connections and ends the sessions.

use crate::{McpServer, ServeError};
use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Who may call, and from where.
#[derive(Debug, Clone, Default)]
pub struct HttpAccess {
    /// The accepted bearer tokens, each with the name of its principal.
    /// Empty: no authentication (only for a loopback address).
    pub tokens: Vec<Principal>,
    /// Hosts the `Host` header may name besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (`scheme://host:port`) besides loopback ones.
    pub allowed_origins: Vec<String>,
}

/// A bearer token and the name of whoever holds it.
#[derive(Clone)]
pub struct Principal {
    /// The principal's name: the agent of its calls.
    pub name: String,
    /// The token.
    pub token: String,
}

impl std::fmt::Debug for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token: debug output ends up in logs.
        f.debug_struct("Principal")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The authenticated principal of a request, in its extensions (and so in
/// the call's `http::request::Parts`).
#[derive(Debug, Clone)]
pub struct Caller(pub String);

type Body = BoxBody<Bytes, Infallible>;

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn unauthorized(text: &str) -> Response<Body> {
    let mut response = plain(StatusCode::UNAUTHORIZED, text);
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer realm=\"dsh\""),
    );
    response
}

/// Equal bytes, in time that depends on the lengths only.
fn same(a: &[u8], b: &[u8]) -> bool {
    let mut differ = a.len() ^ b.len();
    for i in 0..a.len().max(b.len()) {
        differ |= usize::from(a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0));
    }
    differ == 0
}

/// The principal whose token `presented` is, comparing with every token
/// (no early exit, so timing tells nothing about which).
fn principal_of<'a>(tokens: &'a [Principal], presented: &str) -> Option<&'a Principal> {
    let mut found = None;
    for principal in tokens {
        if same(principal.token.as_bytes(), presented.as_bytes()) && found.is_none() {
            found = Some(principal);
        }
    }
    found
}

/// Whether a query string carries something that looks like a credential.
fn query_has_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let key = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
        matches!(
            key.as_str(),
            "access_token" | "token" | "bearer" | "auth" | "authorization" | "api_key" | "apikey"
        )
    })
}

/// Why a request is refused before it reaches the MCP endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    TokenInQuery,
    NoToken,
    WrongToken,
}

impl Refusal {
    fn response(self) -> Response<Body> {
        match self {
            Refusal::TokenInQuery => plain(
                StatusCode::BAD_REQUEST,
                "tokens are not accepted in the query string: send Authorization: Bearer TOKEN",
            ),
            Refusal::NoToken => unauthorized("missing Authorization: Bearer TOKEN"),
            Refusal::WrongToken => unauthorized("the bearer token is not valid"),
        }
    }
}

/// Authenticates a request: its principal (none without authentication).
fn authenticate<B>(access: &HttpAccess, request: &Request<B>) -> Result<Option<String>, Refusal> {
    if request.uri().query().is_some_and(query_has_token) {
        return Err(Refusal::TokenInQuery);
    }
    if access.tokens.is_empty() {
        return Ok(None);
    }
    let value = request
        .headers()
        .get(header::AUTHORIZATION)
        .ok_or(Refusal::NoToken)?;
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    presented
        .and_then(|token| principal_of(&access.tokens, token))
        .map(|principal| Some(principal.name.clone()))
        .ok_or(Refusal::WrongToken)
}

/// Serves `server` on `listener` until `stop` is cancelled (or SIGTERM /
/// SIGINT when `on_signals`).
///
/// # Errors
/// A [`ServeError`] when the listener fails.
pub async fn serve_http(
    server: McpServer,
    listener: TcpListener,
    access: HttpAccess,
    stop: CancellationToken,
    on_signals: bool,
) -> Result<(), ServeError> {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(access.allowed_hosts.iter().cloned());
    // A browser page may call only from a loopback origin unless more are
    // allowed (rmcp checks no Origin when the list is empty).
    let mut origins: Vec<String> = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
        .map(String::from)
        .to_vec();
    origins.extend(access.allowed_origins.iter().cloned());
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    config.cancellation_token = stop.child_token();
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let access = Arc::new(access);
    if on_signals {
        let stop = stop.clone();
        tokio::spawn(async move {
            use tokio::signal::unix::{signal, SignalKind};
            let (Ok(mut term), Ok(mut int)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            stop.cancel();
        });
    }
    loop {
        let (stream, _) = tokio::select! {
            _ = stop.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A connection that failed before it was accepted is its own.
                Err(err) if is_per_connection(&err) => continue,
                Err(err) => return Err(ServeError(format!("cannot accept connections: {err}"))),
            },
        };
        // An answer is written in pieces (headers, SSE chunks, the last
        // chunk): with Nagle's algorithm each round trip waited for the
        // client's delayed ACK, some 40 ms.
        let _ = stream.set_nodelay(true);
        let (service, access, stop) = (service.clone(), access.clone(), stop.clone());
        let handler =
            hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                let (service, access) = (service.clone(), access.clone());
                async move {
                    let path = request.uri().path().to_owned();
                    if path == "/healthz" {
                        return Ok::<_, Infallible>(if request.method() == Method::GET {
                            plain(StatusCode::OK, "ok")
                        } else {
                            plain(StatusCode::METHOD_NOT_ALLOWED, "GET only")
                        });
                    }
                    if path != "/mcp" {
                        return Ok(plain(
                            StatusCode::NOT_FOUND,
                            "not found: the MCP endpoint is /mcp",
                        ));
                    }
                    match authenticate(&access, &request) {
                        Err(refused) => Ok(refused.response()),
                        Ok(principal) => {
                            if let Some(name) = principal {
                                request.extensions_mut().insert(Caller(name));
                            }
                            Ok(service.handle(request).await)
                        }
                    }
                }
            });
        tokio::spawn(async move {
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), handler);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stop.cancelled() => connection.as_mut().graceful_shutdown(),
            }
        });
    }
}

fn is_per_connection(err: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        err.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
        let tokens = vec![
            Principal {
                name: "a".into(),
                token: "tok-a".into(),
            },
            Principal {
                name: "b".into(),
                token: "tok-b".into(),
            },
        ];
        assert_eq!(
            principal_of(&tokens, "tok-b").map(|p| p.name.as_str()),
            Some("b")
        );
        assert!(principal_of(&tokens, "tok-").is_none());
        assert!(!format!("{:?}", tokens[0]).contains("tok-a"));
    }

    #[test]
    fn credentials_in_the_query_are_seen() {
        assert!(query_has_token("access_token=x"));
        assert!(query_has_token("a=1&Token=x"));
        assert!(!query_has_token("session=1"));
    }
}
