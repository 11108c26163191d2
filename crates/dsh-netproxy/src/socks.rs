//! The SOCKS5 side (RFC 1928): `CONNECT` only, no authentication or
//! username/password (RFC 1929; the username names the client, the password is
//! ignored).

use crate::{OpenError, Shared, HEAD_TIMEOUT};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const GENERAL_FAILURE: u8 = 0x01;
const NOT_ALLOWED: u8 = 0x02;
const HOST_UNREACHABLE: u8 = 0x04;
const CONNECTION_REFUSED: u8 = 0x05;
const TTL_EXPIRED: u8 = 0x06;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_NOT_SUPPORTED: u8 = 0x08;

/// The answer when the connection limit is reached: no acceptable method.
pub(crate) async fn busy(mut stream: TcpStream) {
    let mut greeting = [0u8; 2];
    if tokio::time::timeout(HEAD_TIMEOUT, stream.read_exact(&mut greeting))
        .await
        .is_ok()
    {
        let _ = stream.write_all(&[0x05, 0xff]).await;
    }
}

async fn reply(stream: &mut TcpStream, code: u8, bound: Option<SocketAddr>) {
    let mut out = vec![0x05, code, 0x00];
    match bound.unwrap_or_else(|| SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0)) {
        SocketAddr::V4(a) => {
            out.push(0x01);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_be_bytes());
        }
        SocketAddr::V6(a) => {
            out.push(0x04);
            out.extend_from_slice(&a.ip().octets());
            out.extend_from_slice(&a.port().to_be_bytes());
        }
    }
    let _ = stream.write_all(&out).await;
}

/// What the handshake yields: the destination and the client's name and
/// password (RFC 1929), not yet checked.
struct Request {
    host: String,
    port: u16,
    client: Option<(String, String)>,
}

/// The handshake up to the request; `Err(Some(code))` is answered with that
/// reply, `Err(None)` just closed.
async fn handshake(stream: &mut TcpStream) -> Result<Request, Option<u8>> {
    let io = |_| None;
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).await.map_err(io)?;
    if head[0] != 0x05 {
        return Err(None);
    }
    let mut methods = vec![0u8; head[1] as usize];
    stream.read_exact(&mut methods).await.map_err(io)?;
    let mut client = None;
    if methods.contains(&0x02) {
        stream.write_all(&[0x05, 0x02]).await.map_err(io)?;
        let mut ver_len = [0u8; 2];
        stream.read_exact(&mut ver_len).await.map_err(io)?;
        if ver_len[0] != 0x01 {
            let _ = stream.write_all(&[0x01, 0x01]).await;
            return Err(None);
        }
        let mut user = vec![0u8; ver_len[1] as usize];
        stream.read_exact(&mut user).await.map_err(io)?;
        let mut plen = [0u8; 1];
        stream.read_exact(&mut plen).await.map_err(io)?;
        let mut password = vec![0u8; plen[0] as usize];
        stream.read_exact(&mut password).await.map_err(io)?;
        stream.write_all(&[0x01, 0x00]).await.map_err(io)?;
        let user = String::from_utf8_lossy(&user).into_owned();
        let password = String::from_utf8_lossy(&password).into_owned();
        client = (!user.is_empty()).then_some((user, password));
    } else if methods.contains(&0x00) {
        stream.write_all(&[0x05, 0x00]).await.map_err(io)?;
    } else {
        let _ = stream.write_all(&[0x05, 0xff]).await;
        return Err(None);
    }

    let mut req = [0u8; 4];
    stream.read_exact(&mut req).await.map_err(io)?;
    if req[0] != 0x05 {
        return Err(Some(GENERAL_FAILURE));
    }
    if req[1] != 0x01 {
        return Err(Some(COMMAND_NOT_SUPPORTED));
    }
    let host = match req[3] {
        0x01 => {
            let mut a = [0u8; 4];
            stream.read_exact(&mut a).await.map_err(io)?;
            Ipv4Addr::from(a).to_string()
        }
        0x04 => {
            let mut a = [0u8; 16];
            stream.read_exact(&mut a).await.map_err(io)?;
            format!("[{}]", Ipv6Addr::from(a))
        }
        0x03 => {
            let mut len = [0u8; 1];
            stream.read_exact(&mut len).await.map_err(io)?;
            let mut name = vec![0u8; len[0] as usize];
            stream.read_exact(&mut name).await.map_err(io)?;
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => return Err(Some(ADDRESS_NOT_SUPPORTED)),
    };
    let mut port = [0u8; 2];
    stream.read_exact(&mut port).await.map_err(io)?;
    Ok(Request {
        host,
        port: u16::from_be_bytes(port),
        client,
    })
}

/// Serves one client connection; `listener_client` as in `http::handle`.
pub(crate) async fn handle(mut client: TcpStream, shared: &Shared, listener_client: Option<&str>) {
    let request = match tokio::time::timeout(HEAD_TIMEOUT, handshake(&mut client)).await {
        Ok(Ok(r)) => r,
        Ok(Err(Some(code))) => return reply(&mut client, code, None).await,
        Ok(Err(None)) | Err(_) => return,
    };
    if request.port == 0 {
        return reply(&mut client, NOT_ALLOWED, None).await;
    }
    let mut upstream = match shared
        .open(
            &request.host,
            request.port,
            match listener_client {
                Some(name) => Some(name.to_owned()),
                None => request
                    .client
                    .and_then(|(user, password)| shared.verified(&user, &password)),
            }
            .as_deref(),
            "socks5",
        )
        .await
    {
        Ok(s) => s,
        Err(OpenError::Denied(_)) => return reply(&mut client, NOT_ALLOWED, None).await,
        Err(OpenError::Failed(e)) => {
            let code = match e.kind() {
                std::io::ErrorKind::ConnectionRefused => CONNECTION_REFUSED,
                std::io::ErrorKind::TimedOut => TTL_EXPIRED,
                std::io::ErrorKind::NotFound => HOST_UNREACHABLE,
                _ => HOST_UNREACHABLE,
            };
            return reply(&mut client, code, None).await;
        }
    };
    reply(&mut client, 0x00, upstream.local_addr().ok()).await;
    crate::copy::bidirectional(&mut client, &mut upstream).await;
}
