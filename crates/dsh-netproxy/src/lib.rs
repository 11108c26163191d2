//! `dsh-netproxy` has one job: stand between sandboxed commands and the network,
//! letting a connection through only to a destination Claude Code's
//! `sandbox.network` lists allow.
//!
//! A sandboxed command gets `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` pointing
//! here ([`NetProxy::env`]); the kernel lets it connect to nothing else. The
//! proxy speaks HTTP (`CONNECT` tunnels and plain absolute-form requests) and
//! SOCKS5, checks the destination's name against [`DomainRules`], resolves the
//! name itself, refuses private and local addresses unless allowed, and copies
//! bytes. Every attempt is reported as a [`ConnectionEvent`]; denials are kept
//! per client (the proxy URL's username) for [`NetProxy::take_denials`].
//!
//! ```
//! use dsh_netproxy::{DenyReason, DomainRules, NetProxy, ProxyConfig, Verdict};
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> std::io::Result<()> {
//! let allowed = ["github.com".to_string(), "*.npmjs.org".to_string()];
//! let rules = DomainRules::new(&allowed, &[], false).expect("well-formed patterns");
//! assert_eq!(rules.check_name("registry.npmjs.org", 443), Verdict::Allow);
//! assert_eq!(rules.check_name("npmjs.org", 443), Verdict::Deny(DenyReason::NotAllowed));
//!
//! let config = ProxyConfig {
//!     rules,
//!     ask_unknown: false,
//!     resolve_override: dsh_netproxy::resolver_from_env(),
//!     http_port: 0,
//!     socks_port: 0,
//!     require_client: false,
//! };
//! let proxy = NetProxy::start(config, None, None).await?;
//! // Give these to the sandboxed command; its denials come back by name.
//! let env = proxy.env("call-1");
//! // `http://call-1:TOKEN@127.0.0.1:PORT`: only who holds the token speaks for call-1.
//! let (_, https) = env.iter().find(|(name, _)| name == "HTTPS_PROXY").unwrap();
//! assert!(https.starts_with("http://call-1:"));
//! assert!(proxy.take_denials("call-1").is_empty());
//! proxy.shutdown().await;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod copy;
mod http;
mod rules;
mod socks;

pub use rules::{is_private, DenyReason, DomainRules, Verdict};

use rules::Host;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// At most this many client connections at once, over both listeners.
const MAX_CONNECTIONS: usize = 256;
/// A client has this long to send a request head (or SOCKS handshake).
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// Connecting to one upstream address may take this long.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Denials kept per client between two [`NetProxy::take_denials`].
const MAX_DENIALS: usize = 64;

/// Clients whose denials are kept at once.
const MAX_CLIENTS: usize = 1024;
/// Copy buffers for tunnels and response bodies.
const COPY_BUFFER: usize = 128 * 1024;

/// How a [`NetProxy`] decides and where it listens.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The allowed and denied domains, and whether local addresses are allowed.
    ///
    /// Destinations in private (RFC 1918, CGNAT 100.64/10, ULA fc00::/7),
    /// loopback, link-local (169.254/16, fe80::/10), unspecified, multicast and
    /// broadcast ranges, and the IPv4-mapped forms of these, are refused
    /// unless `rules` allows local connections (see [`is_private`]) or an
    /// allowed entry names the host exactly (a name or an address, not a
    /// `*.` wildcard: the user named that host, which may be an internal
    /// one; a name a wildcard allowed cannot rebind to the inside), or a
    /// person approved the host when asked. Every
    /// address a name resolves to must pass, not only the first.
    pub rules: DomainRules,
    /// A destination neither allowed nor denied is put to the [`AskFn`]
    /// (denied when there is none) instead of being denied outright.
    pub ask_unknown: bool,
    /// Test override of name resolution, consulted before DNS; see
    /// [`resolver_from_env`].
    pub resolve_override: HashMap<String, Vec<IpAddr>>,
    /// The HTTP listener's port on 127.0.0.1; 0 for any free port.
    pub http_port: u16,
    /// The SOCKS5 listener's port on 127.0.0.1; 0 for any free port.
    pub socks_port: u16,
    /// Every request must name its client with the password
    /// [`NetProxy::env`] gave it, and a client [`NetProxy::forget`] forgot
    /// is no client: a process that outlived the call it came from cannot
    /// use the proxy on. Refused: [`DenyReason::NoClient`].
    pub require_client: bool,
}

/// The resolution override from `DSH_PROXY_RESOLVE`, e.g.
/// `allowed.test=127.0.0.1,other.test=10.0.0.1` (a name may repeat, or list
/// several addresses separated by `|`). Malformed entries are skipped; unset
/// is empty.
pub fn resolver_from_env() -> HashMap<String, Vec<IpAddr>> {
    parse_resolve(&std::env::var("DSH_PROXY_RESOLVE").unwrap_or_default())
}

fn parse_resolve(text: &str) -> HashMap<String, Vec<IpAddr>> {
    let mut map: HashMap<String, Vec<IpAddr>> = HashMap::new();
    for entry in text.split(',') {
        let Some((name, ips)) = entry.split_once('=') else {
            continue;
        };
        let name = name.trim().trim_end_matches('.').to_lowercase();
        if name.is_empty() {
            continue;
        }
        for ip in ips.split('|') {
            let ip = ip.trim();
            let ip = ip
                .strip_prefix('[')
                .and_then(|i| i.strip_suffix(']'))
                .unwrap_or(ip);
            if let Ok(ip) = ip.parse() {
                map.entry(name.clone()).or_default().push(ip);
            }
        }
    }
    map
}

/// Called for a name the rules neither allow nor deny when `ask_unknown`,
/// with the host, the port and the client (the proxy URL's user name):
/// returns whether to allow (the host decides, e.g. by asking a person).
pub type AskFn = Arc<
    dyn Fn(String, u16, Option<String>) -> futures::future::BoxFuture<'static, bool> + Send + Sync,
>;

/// One record per connection attempt, for an audit trail.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectionEvent {
    /// The destination as the client named it (normalised).
    pub host: String,
    /// The destination port.
    pub port: u16,
    /// Whether the connection was let through the rules (it may still fail to connect).
    pub allowed: bool,
    /// Why it was denied, or why an allowed connection failed.
    pub reason: Option<String>,
    /// The proxy URL's username the client used, if any.
    pub client: Option<String>,
    /// `"http"`, `"connect"` or `"socks5"`.
    pub protocol: &'static str,
}

/// Receives every [`ConnectionEvent`].
pub type EventFn = Arc<dyn Fn(ConnectionEvent) + Send + Sync>;

/// Shared by every connection.
pub(crate) struct Shared {
    config: ProxyConfig,
    ask: Option<AskFn>,
    events: Option<EventFn>,
    denials: Mutex<HashMap<String, Vec<(String, String)>>>,
    /// The password [`NetProxy::env`] gave each client: a request names a
    /// client only with it.
    tokens: Mutex<HashMap<String, String>>,
}

/// Why [`Shared::open`] did not return a connection.
pub(crate) enum OpenError {
    Denied(DenyReason),
    /// Allowed, but resolution or connection failed.
    Failed(std::io::Error),
}

impl Shared {
    /// The password of `client`, made on first use.
    fn token_for(&self, client: &str) -> String {
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        if !tokens.contains_key(client) && tokens.len() >= MAX_CLIENTS {
            tokens.clear();
        }
        tokens
            .entry(client.to_owned())
            .or_insert_with(|| {
                let mut bytes = [0u8; 16];
                // Without randomness no call can be named: an empty token
                // matches no password a request carries.
                if getrandom::fill(&mut bytes).is_err() {
                    return String::new();
                }
                bytes.iter().map(|b| format!("{b:02x}")).collect()
            })
            .clone()
    }

    /// Whether every request must name its client ([`ProxyConfig::require_client`]).
    pub(crate) fn requires_client(&self) -> bool {
        self.config.require_client
    }

    /// Drops `client`'s password.
    fn forget(&self, client: &str) {
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(client);
    }

    /// `user` when `password` is the one [`NetProxy::env`] gave it.
    pub(crate) fn verified(&self, user: &str, password: &str) -> Option<String> {
        let tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        tokens
            .get(user)
            .filter(|t| !t.is_empty() && t.as_bytes() == password.as_bytes())
            .map(|_| user.to_owned())
    }

    /// Decides on `raw_host:port`, resolves, checks addresses and connects;
    /// records the event and any denial.
    pub(crate) async fn open(
        &self,
        raw_host: &str,
        port: u16,
        client: Option<&str>,
        protocol: &'static str,
    ) -> Result<TcpStream, OpenError> {
        let host = match Host::parse(raw_host) {
            Ok(h) => h,
            Err(why) => {
                let reason = DenyReason::BadRequest(why);
                self.record(
                    &rules::printable(raw_host),
                    port,
                    client,
                    protocol,
                    Some(&reason),
                    None,
                );
                return Err(OpenError::Denied(reason));
            }
        };
        let name = host.as_string();
        if self.config.require_client && client.is_none() {
            let reason = DenyReason::NoClient;
            self.record(&name, port, client, protocol, Some(&reason), None);
            return Err(OpenError::Denied(reason));
        }
        let mut verdict = self.config.rules.check_host(&host, port);
        if verdict == Verdict::Deny(DenyReason::NotAllowed) && self.config.ask_unknown {
            verdict = Verdict::Ask;
        }
        // A host a person approved by name is named exactly, as a listed one.
        let asked = verdict == Verdict::Ask;
        if asked {
            verdict = match &self.ask {
                Some(ask) if ask(name.clone(), port, client.map(str::to_owned)).await => {
                    Verdict::Allow
                }
                Some(_) => Verdict::Deny(DenyReason::Refused),
                None => Verdict::Deny(DenyReason::NotAllowed),
            };
        }
        if let Verdict::Deny(reason) = verdict {
            self.record(&name, port, client, protocol, Some(&reason), None);
            return Err(OpenError::Denied(reason));
        }
        let addrs = match self.resolve(&host, port).await {
            Ok(a) => a,
            Err(e) => {
                self.record(&name, port, client, protocol, None, Some(&e));
                return Err(OpenError::Failed(e));
            }
        };
        if !self.config.rules.allows_local()
            && !asked
            && !self.config.rules.names_exactly(&host, port)
        {
            if let Some(ip) = addrs.iter().map(SocketAddr::ip).find(|ip| is_private(*ip)) {
                let reason = DenyReason::PrivateAddress(ip);
                self.record(&name, port, client, protocol, Some(&reason), None);
                return Err(OpenError::Denied(reason));
            }
        }
        let mut last = std::io::Error::new(std::io::ErrorKind::NotFound, "no addresses");
        for addr in addrs {
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
                Ok(Ok(stream)) => {
                    let _ = stream.set_nodelay(true);
                    self.record(&name, port, client, protocol, None, None);
                    return Ok(stream);
                }
                Ok(Err(e)) => last = e,
                Err(_) => {
                    last = std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("connecting to {addr} timed out"),
                    )
                }
            }
        }
        self.record(&name, port, client, protocol, None, Some(&last));
        Err(OpenError::Failed(last))
    }

    async fn resolve(&self, host: &Host, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let name = match host {
            Host::Ip(ip) => return Ok(vec![SocketAddr::new(*ip, port)]),
            Host::Name(n) => n,
        };
        if let Some(ips) = self.config.resolve_override.get(name) {
            return Ok(ips.iter().map(|ip| SocketAddr::new(*ip, port)).collect());
        }
        let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), port))
            .await?
            .collect();
        if addrs.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{name} has no addresses"),
            ));
        }
        Ok(addrs)
    }

    fn record(
        &self,
        host: &str,
        port: u16,
        client: Option<&str>,
        protocol: &'static str,
        denied: Option<&DenyReason>,
        failed: Option<&std::io::Error>,
    ) {
        if let Some(reason) = denied {
            let mut all = self.denials.lock().unwrap_or_else(|p| p.into_inner());
            // A client nobody collects from (a name a command made up, a
            // call that ended early) must not grow the map without bound.
            let name = client.unwrap_or("");
            if !all.contains_key(name) && all.len() >= MAX_CLIENTS {
                all.clear();
            }
            let list = all.entry(name.to_string()).or_default();
            if list.len() < MAX_DENIALS {
                list.push((host.to_string(), reason.as_sentence()));
            }
        }
        if let Some(events) = &self.events {
            events(ConnectionEvent {
                host: host.to_string(),
                port,
                allowed: denied.is_none(),
                reason: denied
                    .map(DenyReason::as_sentence)
                    .or_else(|| failed.map(|e| format!("connection failed: {e}"))),
                client: client.map(str::to_string),
                protocol,
            });
        }
    }
}

/// A running proxy: an HTTP and a SOCKS5 listener on 127.0.0.1.
pub struct NetProxy {
    http_addr: SocketAddr,
    socks_addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    limit: Arc<Semaphore>,
    runtime: tokio::runtime::Handle,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// What a listener made for one client speaks ([`NetProxy::serve_client`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP: `CONNECT` and plain absolute-form requests.
    Http,
    /// SOCKS5.
    Socks,
}

impl NetProxy {
    /// Binds both listeners on 127.0.0.1 and serves until dropped or shut down.
    pub async fn start(
        config: ProxyConfig,
        ask: Option<AskFn>,
        events: Option<EventFn>,
    ) -> std::io::Result<NetProxy> {
        Self::bind(config, ask, events)
    }

    /// [`NetProxy::start`] for a caller that is not async: binds at once and
    /// serves on the current Tokio runtime.
    ///
    /// # Errors
    /// A port cannot be bound, or there is no Tokio runtime here.
    pub fn bind(
        config: ProxyConfig,
        ask: Option<AskFn>,
        events: Option<EventFn>,
    ) -> std::io::Result<NetProxy> {
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let listen = |port: u16| {
            let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
            listener.set_nonblocking(true)?;
            TcpListener::from_std(listener)
        };
        let http = listen(config.http_port)?;
        let socks = listen(config.socks_port)?;
        let http_addr = http.local_addr()?;
        let socks_addr = socks.local_addr()?;
        let shared = Arc::new(Shared {
            config,
            ask,
            events,
            denials: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
        });
        let stop = CancellationToken::new();
        let limit = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        let tasks = vec![
            tokio::spawn(serve(
                http,
                Protocol::Http,
                None,
                shared.clone(),
                limit.clone(),
                stop.clone(),
            )),
            tokio::spawn(serve(
                socks,
                Protocol::Socks,
                None,
                shared.clone(),
                limit.clone(),
                stop.clone(),
            )),
        ];
        Ok(NetProxy {
            http_addr,
            socks_addr,
            shared,
            stop,
            limit,
            runtime,
            tasks,
        })
    }

    /// The HTTP proxy's address.
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The SOCKS5 proxy's address.
    pub fn socks_addr(&self) -> SocketAddr {
        self.socks_addr
    }

    /// The variables a command needs: `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`
    /// (`socks5h://`), their lowercase forms, and `NO_PROXY`/`no_proxy` set to
    /// `""`, with `client` as the proxy URL's username
    /// and a random password for it (`http://CLIENT:TOKEN@127.0.0.1:PORT`;
    /// without a password git asks for one), so events, denials and asks
    /// can be attributed to one call — and only by whoever was given that
    /// call's variables. `client` is percent-encoded where needed.
    pub fn env(&self, client: &str) -> Vec<(String, String)> {
        let user = encode_userinfo(client);
        let at = if user.is_empty() {
            String::new()
        } else {
            format!("{user}:{}@", self.shared.token_for(client))
        };
        proxy_variables(
            Some(&format!("http://{at}{}", self.http_addr)),
            Some(&format!("socks5h://{at}{}", self.socks_addr)),
        )
    }

    /// Serves `listeners` made elsewhere (in the network namespace of
    /// sandboxed commands, where they are the only way out) until `until`
    /// completes or the proxy stops: the same rules, asks, events and
    /// connection limit as the proxy's own listeners. A connection's client
    /// is `client` when given (listeners made for one client alone),
    /// whatever name its request gives; else, as on the proxy's own, the
    /// name its request proves with its password. Runs on the runtime the
    /// proxy was bound on.
    ///
    /// # Errors
    /// A listener cannot be served here (then none is).
    pub fn serve_listeners(
        &self,
        client: Option<&str>,
        listeners: Vec<(Protocol, std::net::TcpListener)>,
        until: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        // Every listener is served, or none: a port left unserved would
        // hold its connections unanswered.
        let listeners = {
            let _runtime = self.runtime.enter();
            listeners
                .into_iter()
                .map(|(protocol, listener)| {
                    listener.set_nonblocking(true)?;
                    Ok((protocol, TcpListener::from_std(listener)?))
                })
                .collect::<std::io::Result<Vec<_>>>()?
        };
        let shared = self.shared.clone();
        let limit = self.limit.clone();
        let stop = self.stop.child_token();
        let client: Option<Arc<str>> = client.map(Into::into);
        self.runtime.spawn(async move {
            let mut serving = tokio::task::JoinSet::new();
            for (protocol, listener) in listeners {
                serving.spawn(serve(
                    listener,
                    protocol,
                    client.clone(),
                    shared.clone(),
                    limit.clone(),
                    stop.clone(),
                ));
            }
            tokio::select! {
                _ = until => {}
                _ = stop.cancelled() => {}
            }
            stop.cancel();
            while serving.join_next().await.is_some() {}
        });
        Ok(())
    }

    /// Forgets `client`'s password: requests naming it are no longer its
    /// (its call has ended). Its denials not yet taken stay.
    pub fn forget(&self, client: &str) {
        self.shared.forget(client);
    }

    /// [`NetProxy::forget`]s `client` once `ends` completes (its call's
    /// command has exited), on the runtime the proxy was bound on.
    pub fn forget_when(
        &self,
        client: &str,
        ends: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let shared = self.shared.clone();
        let client = client.to_owned();
        self.runtime.spawn(async move {
            ends.await;
            shared.forget(&client);
        });
    }

    /// Denials since the last take for this client: (host, reason sentence).
    pub fn take_denials(&self, client: &str) -> Vec<(String, String)> {
        let mut all = self
            .shared
            .denials
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        all.remove(client).unwrap_or_default()
    }

    /// Stops both listeners and every connection in flight.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
    }
}

impl Drop for NetProxy {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The variables that send a command's traffic to these proxies, in both
/// cases: `HTTP_PROXY` and `HTTPS_PROXY` to `http`, `ALL_PROXY` to `socks`
/// (each only when given), `NO_PROXY` empty.
pub fn proxy_variables(http: Option<&str>, socks: Option<&str>) -> Vec<(String, String)> {
    let mut vars = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", http),
        ("HTTPS_PROXY", http),
        ("ALL_PROXY", socks),
        ("NO_PROXY", Some("")),
    ] {
        if let Some(value) = value {
            vars.push((name.to_string(), value.to_string()));
            vars.push((name.to_lowercase(), value.to_string()));
        }
    }
    vars
}

fn encode_userinfo(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-decoding, the inverse of `encode_userinfo` (clients decode the
/// username themselves before sending it).
#[cfg(test)]
fn decode_userinfo(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn serve(
    listener: TcpListener,
    kind: Protocol,
    client: Option<Arc<str>>,
    shared: Arc<Shared>,
    limit: Arc<Semaphore>,
    stop: CancellationToken,
) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            a = listener.accept() => a,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let Ok((stream, peer)) = accepted else {
            // EMFILE and the like: back off rather than spin.
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        let _ = peer;
        let _ = stream.set_nodelay(true);
        let permit = limit.clone().try_acquire_owned();
        let shared = shared.clone();
        let client = client.clone();
        connections.spawn(async move {
            let client = client.as_deref();
            match (permit, kind) {
                (Ok(_permit), Protocol::Http) => http::handle(stream, &shared, client).await,
                (Ok(_permit), Protocol::Socks) => socks::handle(stream, &shared, client).await,
                (Err(_), Protocol::Http) => http::busy(stream).await,
                (Err(_), Protocol::Socks) => socks::busy(stream).await,
            }
        });
    }
    connections.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_override_parses() {
        let m = parse_resolve(
            "allowed.test=127.0.0.1, Other.Test.=10.0.0.1|::1,bad,x=nope,[y]=1.1.1.1",
        );
        assert_eq!(
            m["allowed.test"],
            vec!["127.0.0.1".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(m["other.test"].len(), 2);
        assert!(!m.contains_key("x"));
    }

    #[test]
    fn userinfo_round_trip() {
        for s in ["call-1", "a b@c:d", "ünï"] {
            assert_eq!(decode_userinfo(&encode_userinfo(s)), s);
        }
        assert_eq!(decode_userinfo("100%"), "100%");
        assert_eq!(decode_userinfo("%4"), "%4");
    }
}
