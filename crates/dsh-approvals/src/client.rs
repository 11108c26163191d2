//! The terminal's side (`dsh approvals`): requests to a live server's page
//! with its bearer token, over loopback HTTP.

use crate::state::ServerState;
use bytes::Bytes;
use dsh_policy::ApprovalAnswer;
use http::{header, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use serde_json::Value;
use std::time::Duration;

/// How long one request may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// One request to `server`; its status and body.
///
/// # Errors
/// A message when the server cannot be reached or does not answer in time.
pub async fn request(
    server: &ServerState,
    method: Method,
    path: &str,
    body: Option<&Value>,
) -> Result<(StatusCode, String), String> {
    let authority = server
        .url
        .strip_prefix("http://")
        .ok_or_else(|| format!("not an http:// URL: {}", server.url))?
        .trim_end_matches('/')
        .to_owned();
    let exchange = async {
        let stream = tokio::net::TcpStream::connect(authority.as_str())
            .await
            .map_err(|e| format!("cannot reach {}: {e}", server.url))?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| format!("cannot talk to {}: {e}", server.url))?;
        let driver = tokio::spawn(connection);
        let mut builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, authority.as_str())
            .header(header::AUTHORIZATION, format!("Bearer {}", server.token));
        let payload = match body {
            Some(body) => {
                builder = builder.header(header::CONTENT_TYPE, "application/json");
                Bytes::from(body.to_string())
            }
            None => Bytes::new(),
        };
        let request = builder
            .body(Full::new(payload))
            .map_err(|e| format!("cannot build the request: {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("no answer from {}: {e}", server.url))?;
        let status = response.status();
        let text = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("cannot read the answer of {}: {e}", server.url))?
            .to_bytes();
        driver.abort();
        Ok((status, String::from_utf8_lossy(&text).into_owned()))
    };
    tokio::time::timeout(TIMEOUT, exchange).await.map_err(|_| {
        format!(
            "{} did not answer within {}s",
            server.url,
            TIMEOUT.as_secs()
        )
    })?
}

fn expect_ok((status, text): (StatusCode, String)) -> Result<String, String> {
    if status.is_success() {
        Ok(text)
    } else {
        Err(format!("{status}: {text}"))
    }
}

/// The asks waiting on `server`, as the page's JSON has them.
///
/// # Errors
/// A message when the server cannot be reached or refuses.
pub async fn pending(server: &ServerState) -> Result<Vec<Value>, String> {
    let text = expect_ok(request(server, Method::GET, "/api/state", None).await?)?;
    let state: Value =
        serde_json::from_str(&text).map_err(|e| format!("the state is not JSON: {e}"))?;
    Ok(state
        .get("pending")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default())
}

/// Answers ask `id` on `server`.
///
/// # Errors
/// A message when the server cannot be reached, or no such ask waits.
pub async fn answer(server: &ServerState, id: &str, answer: ApprovalAnswer) -> Result<(), String> {
    let body = serde_json::json!({ "answer": answer });
    let path = format!("/api/asks/{id}");
    expect_ok(request(server, Method::POST, &path, Some(&body)).await?).map(|_| ())
}

/// A new one-time browser link to `server`'s page.
///
/// # Errors
/// A message when the server cannot be reached or refuses.
pub async fn browser_url(server: &ServerState) -> Result<String, String> {
    let text = expect_ok(request(server, Method::POST, "/api/browser-url", None).await?)?;
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v.get("url").and_then(Value::as_str).map(str::to_owned))
        .ok_or_else(|| format!("no URL in the answer: {text}"))
}
