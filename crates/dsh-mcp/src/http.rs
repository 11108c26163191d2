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
//! - With an [`OAuth`] resource server (`--oauth-issuer`), a bearer token
//!   may also be a JWT access token of that issuer (see the `oauth`
//!   module); its principal is `oauth:SUB`. `GET
//!   /.well-known/oauth-protected-resource` (and the same path suffixed with
//!   `/mcp`) serves the protected-resource metadata (RFC 9728) without
//!   authentication, and a 401 names it in `WWW-Authenticate`.
//! - `GET /healthz` answers `ok` without authentication and says nothing
//!   else.
//! - The `Host` header must name a loopback host unless more are allowed
//!   (a DNS-rebinding guard), and a browser's `Origin` must be one allowed;
//!   both are rmcp's checks, configured here.
//! - Limits: a request body over [`HttpLimits::max_body_bytes`] is a 413
//!   (read only after authentication), a body not received within
//!   [`HttpLimits::body_timeout`] a 408, and a connection that sends no
//!   complete request head within [`HttpLimits::idle_timeout`] (a slow head,
//!   or an idle keep-alive) is closed.
//! - With [`HttpAccess::tls`], every connection is TLS (rustls).
//! - SIGTERM or SIGINT (or `stop`) stops accepting connections and new
//!   calls, lets running calls finish for [`HttpLimits::shutdown_grace`],
//!   then ends the sessions, which cancels what is left.

use crate::oauth::{OAuth, TokenRefusal};
use crate::{McpServer, ServeError};
use bytes::Bytes;
use http::{header, Method, Request, Response, StatusCode};
use http_body_util::{combinators::BoxBody, BodyExt, Full};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How much a request may carry and how long a client may take.
#[derive(Debug, Clone, Copy)]
pub struct HttpLimits {
    /// Largest request body. Default: 4 MiB.
    pub max_body_bytes: usize,
    /// Longest wait for a request body once its head arrived. Default: 30 s.
    pub body_timeout: Duration,
    /// Longest wait for a complete request head, idle keep-alive included,
    /// and for a TLS handshake. Default: 30 s.
    pub idle_timeout: Duration,
    /// How long running calls may go on once shutting down. Default: 10 s.
    pub shutdown_grace: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_body_bytes: 4 * 1024 * 1024,
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// A TLS server configuration for every connection.
#[derive(Clone)]
pub struct Tls(pub tokio_rustls::TlsAcceptor);

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls")
    }
}

impl Tls {
    /// Reads a PEM certificate chain and its PEM private key.
    ///
    /// # Errors
    /// A message naming the file and what is wrong with it.
    pub fn from_pem_files(cert: &std::path::Path, key: &std::path::Path) -> Result<Tls, String> {
        use tokio_rustls::rustls;
        use tokio_rustls::rustls::pki_types::pem::PemObject;
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain = CertificateDer::pem_file_iter(cert)
            .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?;
        if chain.is_empty() {
            return Err(format!("{} holds no PEM certificate", cert.display()));
        }
        let private = PrivateKeyDer::from_pem_file(key)
            .map_err(|e| format!("cannot read the private key {}: {e}", key.display()))?;
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(|e| {
                format!(
                    "the key {} does not go with the certificate {}: {e}",
                    key.display(),
                    cert.display()
                )
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(
            config,
        ))))
    }
}

/// Who may call, and from where.
#[derive(Debug, Clone, Default)]
pub struct HttpAccess {
    /// The accepted bearer tokens, each with the name of its principal.
    /// Empty and no `oauth`: no authentication (only for a loopback address).
    pub tokens: Vec<Principal>,
    /// JWT access tokens of an authorization server, besides `tokens`.
    pub oauth: Option<Arc<OAuth>>,
    /// Hosts the `Host` header may name besides the loopback names.
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed (`scheme://host:port`) besides loopback ones.
    pub allowed_origins: Vec<String>,
    /// Request size and time limits, and the shutdown grace.
    pub limits: HttpLimits,
    /// Serve TLS instead of plain HTTP.
    pub tls: Option<Tls>,
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

/// A 401 (a 403 for a missing scope) with its `WWW-Authenticate`: in OAuth
/// mode, where the protected-resource metadata is and why a token failed.
fn unauthorized(
    text: &str,
    oauth: Option<&OAuth>,
    refusal: Option<&TokenRefusal>,
) -> Response<Body> {
    let status = match refusal {
        Some(TokenRefusal::InsufficientScope) => StatusCode::FORBIDDEN,
        _ => StatusCode::UNAUTHORIZED,
    };
    let mut response = plain(status, text);
    let challenge = oauth
        .and_then(|oauth| header::HeaderValue::from_str(&oauth.challenge(refusal)).ok())
        .unwrap_or(header::HeaderValue::from_static("Bearer realm=\"dsh\""));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge);
    response
}

/// `GET` of the protected-resource metadata document.
fn resource_metadata(oauth: &OAuth, method: &Method) -> Response<Body> {
    if method != Method::GET {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "GET only");
    }
    let mut response = Response::new(Full::new(Bytes::from(oauth.metadata().to_string())).boxed());
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    // Public, credential-free metadata: a browser-based MCP client on any
    // origin must be able to read it to find the authorization server.
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        header::HeaderValue::from_static("*"),
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
#[derive(Debug, Clone, PartialEq, Eq)]
enum Refusal {
    TokenInQuery,
    NoToken,
    WrongToken,
    /// A JWT the OAuth resource server refused.
    Token(TokenRefusal),
}

impl Refusal {
    fn response(self, oauth: Option<&OAuth>) -> Response<Body> {
        match self {
            Refusal::TokenInQuery => plain(
                StatusCode::BAD_REQUEST,
                "tokens are not accepted in the query string: send Authorization: Bearer TOKEN",
            ),
            Refusal::NoToken => unauthorized("missing Authorization: Bearer TOKEN", oauth, None),
            Refusal::WrongToken => {
                let text = "the bearer token is not valid";
                unauthorized(text, oauth, Some(&TokenRefusal::Invalid(text)))
            }
            Refusal::Token(refused) => {
                let text = match &refused {
                    TokenRefusal::Invalid(why) => format!("the bearer token is not valid: {why}"),
                    TokenRefusal::InsufficientScope => {
                        "the bearer token lacks a required scope".to_owned()
                    }
                };
                unauthorized(&text, oauth, Some(&refused))
            }
        }
    }
}

/// Authenticates a request from its URI and headers: its principal (none
/// without authentication). A static token is looked for first; then, in
/// OAuth mode, the token is checked as a JWT.
async fn authenticate(
    access: &HttpAccess,
    uri: &http::Uri,
    headers: &http::HeaderMap,
) -> Result<Option<String>, Refusal> {
    if uri.query().is_some_and(query_has_token) {
        return Err(Refusal::TokenInQuery);
    }
    if access.tokens.is_empty() && access.oauth.is_none() {
        return Ok(None);
    }
    let value = headers.get(header::AUTHORIZATION).ok_or(Refusal::NoToken)?;
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim);
    let presented = presented
        .filter(|token| !token.is_empty())
        .ok_or(Refusal::WrongToken)?;
    if let Some(principal) = principal_of(&access.tokens, presented) {
        return Ok(Some(principal.name.clone()));
    }
    match &access.oauth {
        Some(oauth) => oauth
            .authorize(presented)
            .await
            .map(Some)
            .map_err(Refusal::Token),
        None => Err(Refusal::WrongToken),
    }
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
    // Sessions end after running calls had their grace, not at the signal.
    let sessions = CancellationToken::new();
    config.cancellation_token = sessions.clone();
    let draining = server.clone();
    let service = Arc::new(StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    ));
    let limits = access.limits;
    let tls = access.tls.clone();
    let access = Arc::new(access);
    if on_signals {
        let stop = stop.clone();
        tokio::spawn(async move {
            crate::terminated().await;
            stop.cancel();
        });
    }
    let connections = tokio_util::task::TaskTracker::new();
    let failed = loop {
        let (stream, _) = tokio::select! {
            _ = stop.cancelled() => break None,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A connection that failed before it was accepted is its own.
                Err(err) if is_per_connection(&err) => continue,
                Err(err) => break Some(ServeError(format!("cannot accept connections: {err}"))),
            },
        };
        // An answer is written in pieces (headers, SSE chunks, the last
        // chunk): with Nagle's algorithm each round trip waited for the
        // client's delayed ACK, some 40 ms. Set before any TLS handshake.
        let _ = stream.set_nodelay(true);
        let (service, access, stop, tls) =
            (service.clone(), access.clone(), stop.clone(), tls.clone());
        let handler = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
            let (service, access) = (service.clone(), access.clone());
            async move { Ok::<_, Infallible>(route(&service, &access, request).await) }
        });
        connections.spawn(async move {
            match tls {
                None => serve_connection(stream, handler, &stop, limits).await,
                Some(Tls(acceptor)) => {
                    // A handshake that never completes holds nothing for long.
                    let Ok(Ok(stream)) =
                        tokio::time::timeout(limits.idle_timeout, acceptor.accept(stream)).await
                    else {
                        return;
                    };
                    serve_connection(stream, handler, &stop, limits).await;
                }
            }
        });
    };
    drop(listener);
    // No new connection or call; running calls get their grace, then the
    // sessions end (cancelling what is left) and connections close.
    connections.close();
    let started = tokio::time::Instant::now();
    draining.drain(limits.shutdown_grace).await;
    // The answers of calls that just ended are still on their way out.
    let flush = limits
        .shutdown_grace
        .saturating_sub(started.elapsed())
        .min(Duration::from_secs(1));
    let _ = tokio::time::timeout(flush, connections.wait()).await;
    sessions.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(2), connections.wait()).await;
    failed.map_or(Ok(()), Err)
}

/// Serves one connection until it closes or, once `stop` is cancelled,
/// until its request in flight is answered.
async fn serve_connection<IO, S>(io: IO, handler: S, stop: &CancellationToken, limits: HttpLimits)
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = Body> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(limits.idle_timeout);
    let connection = builder.serve_connection(hyper_util::rt::TokioIo::new(io), handler);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = stop.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    let _ = connection.await;
}

/// Answers one request: the health check, or an authenticated MCP request
/// with a body within the limits.
async fn route(
    service: &StreamableHttpService<McpServer, LocalSessionManager>,
    access: &HttpAccess,
    mut request: Request<hyper::body::Incoming>,
) -> Response<Body> {
    let path = request.uri().path();
    if path == "/healthz" {
        return if request.method() == Method::GET {
            plain(StatusCode::OK, "ok")
        } else {
            plain(StatusCode::METHOD_NOT_ALLOWED, "GET only")
        };
    }
    if let Some(oauth) = access.oauth.as_deref().filter(|o| o.is_metadata_path(path)) {
        return resource_metadata(oauth, request.method());
    }
    if path != "/mcp" {
        return plain(StatusCode::NOT_FOUND, "not found: the MCP endpoint is /mcp");
    }
    match authenticate(access, request.uri(), request.headers()).await {
        Err(refused) => return refused.response(access.oauth.as_deref()),
        Ok(Some(name)) => {
            request.extensions_mut().insert(Caller(name));
        }
        Ok(None) => {}
    }
    // Only now, for a caller we know, is the body read; never more than the limit.
    let (parts, body) = request.into_parts();
    let max = access.limits.max_body_bytes;
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return too_large(max);
    }
    let limited = http_body_util::Limited::new(body, max);
    let body = match tokio::time::timeout(access.limits.body_timeout, limited.collect()).await {
        Err(_) => {
            return plain(
                StatusCode::REQUEST_TIMEOUT,
                "the request body did not arrive in time",
            )
        }
        Ok(Err(err)) if err.is::<http_body_util::LengthLimitError>() => return too_large(max),
        Ok(Err(err)) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("cannot read the request body: {err}"),
            )
        }
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    service
        .handle(Request::from_parts(parts, Full::new(body)))
        .await
}

fn too_large(max: usize) -> Response<Body> {
    plain(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!("the request body is larger than {max} bytes"),
    )
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
