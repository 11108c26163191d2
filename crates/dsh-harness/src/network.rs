//! The network of confined commands by domain: Claude Code's
//! `sandbox.network` lists applied by a filtering proxy (`dsh-netproxy`)
//! that the kernel leaves as the only way out (see `dsh-sandbox`).

use dsh_netproxy::{AskFn, ConnectionEvent, DomainRules, EventFn, NetProxy, Protocol, ProxyConfig};
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver, NetworkDomains, PermissionMiddleware};
use dsh_tool_bash::NetworkProxy;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// How a confined command's network is held (`dsh settings` names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkMechanism {
    /// The network is on (no sandbox, or its network on): nothing to hold.
    On,
    /// Off entirely: no domain lists, or a kernel that cannot hold a proxy
    /// as the only way out.
    Off,
    /// Through the filtering proxy, in the commands' network namespace.
    Namespace,
    /// Through a proxy, held by Landlock's port rule alone (no namespace
    /// here, or a proxy of the user's own).
    Ports,
}

impl NetworkMechanism {
    /// Its name: `on`, `off`, `namespace`, `ports`.
    pub fn as_str(self) -> &'static str {
        match self {
            NetworkMechanism::On => "on",
            NetworkMechanism::Off => "off",
            NetworkMechanism::Namespace => "namespace",
            NetworkMechanism::Ports => "ports",
        }
    }
}

/// The mechanism `domains` and `sandbox` get on this machine.
pub(crate) fn mechanism(
    domains: Option<&NetworkDomains>,
    sandbox: Option<&dsh_sandbox::SandboxPolicy>,
) -> NetworkMechanism {
    let Some(sandbox) = sandbox else {
        return NetworkMechanism::On;
    };
    if sandbox.mode == dsh_sandbox::SandboxMode::DangerFullAccess || sandbox.network {
        return NetworkMechanism::On;
    }
    let Some(domains) = domains else {
        return NetworkMechanism::Off;
    };
    // Without Landlock's TCP rules and the system-call filter nothing keeps
    // a command from going around the proxy: the network stays off.
    let status = dsh_sandbox::status();
    if !(status.tcp && status.seccomp) {
        return NetworkMechanism::Off;
    }
    if !users_own_proxy(domains) && status.network_namespace {
        NetworkMechanism::Namespace
    } else {
        NetworkMechanism::Ports
    }
}

fn users_own_proxy(domains: &NetworkDomains) -> bool {
    domains.http_proxy_port.is_some() || domains.socks_proxy_port.is_some()
}

/// The proxy the settings ask for, and what the executor needs of it:
/// `None` without domain lists, or when the sandbox is off or its network
/// on (nothing to filter). With `httpProxyPort`/`socksProxyPort` the
/// user's own proxy is used (ours is not started).
///
/// # Errors
/// A malformed domain pattern, or the proxy cannot listen.
pub(crate) fn start(
    domains: Option<&NetworkDomains>,
    sandbox: Option<&dsh_sandbox::SandboxPolicy>,
    permissions: &PermissionMiddleware,
    audit: ConnectionLog,
) -> Result<Option<NetworkProxy>, String> {
    let (Some(domains), Some(sandbox)) = (domains, sandbox) else {
        return Ok(None);
    };
    let mechanism = mechanism(Some(domains), Some(sandbox));
    if matches!(mechanism, NetworkMechanism::On | NetworkMechanism::Off) {
        return Ok(None);
    }
    let local_binding = domains.allow_local_binding == Some(true);
    if users_own_proxy(domains) {
        if local_binding {
            local_binding_not_applied(
                "with a proxy of your own (httpProxyPort, socksProxyPort) commands stay in \
                 dsh's network namespace",
            );
        }
        return Ok(Some(users_own(domains)));
    }
    let rules = DomainRules::new(&domains.allowed_domains, &domains.denied_domains, false)
        .map_err(|e| format!("sandbox.network: {e}"))?;
    let config = ProxyConfig {
        rules,
        ask_unknown: domains.ask_unknown_domains == Some(true),
        resolve_override: dsh_netproxy::resolver_from_env(),
        http_port: 0,
        socks_port: 0,
        // A process that outlived its call (the call's end is told below)
        // gets nothing more.
        require_client: true,
    };
    let bound = Bound::default();
    let ask = (domains.ask_unknown_domains == Some(true))
        .then(|| asker(permissions.clone(), bound.clone()));
    let proxy = Arc::new(
        NetProxy::bind(config, ask, Some(recorder(audit, sandbox.mode.as_str())))
            .map_err(|e| format!("cannot start the sandbox's network proxy: {e}"))?,
    );
    let (env_of, denials_of, server, forgets) =
        (proxy.clone(), proxy.clone(), proxy.clone(), proxy.clone());
    // Local servers stay local only in the commands' network namespace.
    let local_binding = if local_binding && mechanism != NetworkMechanism::Namespace {
        local_binding_not_applied("commands get no network namespace here");
        false
    } else {
        local_binding
    };
    let (http_port, socks_port) = (proxy.http_addr().port(), proxy.socks_addr().port());
    // In the commands' network namespace the proxy's ports are listeners
    // made there: served as the proxy's own (a request names its call by
    // the password of its proxy URL).
    let serve: dsh_tool_bash::ServeListeners = Arc::new(move |listeners, ends| {
        let listeners = listeners
            .into_iter()
            .filter_map(|(port, listener)| {
                let protocol = if port == http_port {
                    Protocol::Http
                } else if port == socks_port {
                    Protocol::Socks
                } else {
                    return None;
                };
                Some((protocol, listener))
            })
            .collect();
        server.serve_listeners(None, listeners, ends)
    });
    let net = NetworkProxy {
        ports: vec![http_port, socks_port],
        env: Arc::new(move |client: &str| {
            let mut env = env_of.env(client);
            if local_binding {
                // The commands' own servers are reached directly, in their namespace.
                for (name, value) in &mut env {
                    if name.eq_ignore_ascii_case("NO_PROXY") {
                        *value = "localhost,127.0.0.1,::1".to_owned();
                    }
                }
            }
            env
        }),
        denials: Arc::new(move |client: &str| denials_of.take_denials(client)),
        started: (domains.ask_unknown_domains == Some(true))
            .then(|| binder(permissions.clone(), bound)),
        ended: Some(Arc::new(move |client: &str, ends| {
            forgets.forget_when(client, ends)
        })),
        serve: Some(serve),
        local_binding,
    };
    Ok(Some(net))
}

/// Says on stderr why `allowLocalBinding` is not applied.
fn local_binding_not_applied(why: &str) {
    eprintln!(
        "dsh: sandbox.network.allowLocalBinding is not applied: {why}, and Landlock cannot tell \
         loopback from the world (the sandbox stays stricter)"
    );
}

/// Where connection records go once the audit log is open.
pub(crate) type ConnectionLog = Arc<Mutex<Option<dsh_audit::AuditLog>>>;

/// Writes one audit record per connection the proxy allowed or refused:
/// tool `network`, the host, port and protocol as its arguments, the call
/// (the proxy URL's user name) as its id.
fn recorder(audit: ConnectionLog, sandbox: &'static str) -> EventFn {
    Arc::new(move |event: ConnectionEvent| {
        let log = audit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let Some(log) = log else {
            return;
        };
        let now = dsh_audit::time::epoch_ms(std::time::SystemTime::now());
        let record = dsh_audit::CallRecord {
            v: dsh_audit::RECORD_VERSION,
            time: dsh_audit::time::format_rfc3339_ms(now),
            call_id: event.client.clone().unwrap_or_else(|| "network".into()),
            tool: "network".into(),
            agent: None,
            client: None,
            session: None,
            arguments: serde_json::json!({
                "host": event.host,
                "port": event.port,
                "protocol": event.protocol,
            }),
            decision: Some(dsh_audit::RecordedDecision {
                verdict: if event.allowed { "allow" } else { "deny" }.into(),
                origin: Some("sandbox".into()),
                reason: event.reason.clone(),
                ..dsh_audit::RecordedDecision::default()
            }),
            outcome: dsh_audit::Outcome {
                is_error: !event.allowed,
                ..dsh_audit::Outcome::default()
            },
            duration_ms: 0,
            output_bytes: 0,
            sandbox: sandbox.to_owned(),
            traceparent: None,
            tracestate: None,
        };
        log.submit(record.to_line());
    })
}

/// A proxy of the user's own on loopback ports: reachable, and named in
/// the variables; what it refuses is its own to say.
fn users_own(domains: &NetworkDomains) -> NetworkProxy {
    let (http, socks) = (domains.http_proxy_port, domains.socks_proxy_port);
    NetworkProxy {
        ports: http.into_iter().chain(socks).collect(),
        env: Arc::new(move |_client: &str| {
            dsh_netproxy::proxy_variables(
                http.map(|port| format!("http://127.0.0.1:{port}"))
                    .as_deref(),
                socks
                    .map(|port| format!("socks5h://127.0.0.1:{port}"))
                    .as_deref(),
            )
        }),
        denials: Arc::new(|_client: &str| Vec::new()),
        started: None,
        ended: None,
        // The user's proxy listens in the host's namespace: commands reach
        // it by Landlock's port rule (the weaker mechanism), and cannot
        // have local servers of their own.
        serve: None,
        local_binding: false,
    }
}

/// The approvers bound to the calls whose commands reach the proxy, by
/// client name, most recent last (a few hundred at most).
type Bound = Arc<Mutex<Vec<(String, Arc<dyn Approver>)>>>;

/// How many calls' approvers are kept.
const BOUND_CALLS: usize = 256;

/// Binds the approver to the call starting a command, in that call's task.
fn binder(permissions: PermissionMiddleware, bound: Bound) -> dsh_tool_bash::OnClient {
    Arc::new(move |client: &str| {
        let Some(approver) = permissions.approver() else {
            return;
        };
        let approver = approver.for_this_call().unwrap_or(approver);
        let mut calls = bound
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        calls.retain(|(c, _)| c != client);
        if calls.len() >= BOUND_CALLS {
            calls.remove(0);
        }
        calls.push((client.to_owned(), approver));
    })
}

/// Asks about a domain no list names, through the permission layer's
/// approver (the same person as any ask): *allow always* lets the host for
/// the rest of the session. Nobody to ask: refused.
fn asker(permissions: PermissionMiddleware, bound: Bound) -> AskFn {
    let always: Arc<Mutex<HashSet<String>>> = Arc::default();
    Arc::new(move |host: String, port: u16, client: Option<String>| {
        let permissions = permissions.clone();
        let always = always.clone();
        // The call's own client when the command's call was bound to it.
        let for_call = client.and_then(|client| {
            bound
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .rev()
                .find(|(c, _)| *c == client)
                .map(|(_, approver)| approver.clone())
        });
        Box::pin(async move {
            let known = always
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .contains(&host);
            if known {
                return true;
            }
            let Some(approver) = for_call.or_else(|| permissions.approver()) else {
                return false;
            };
            let request = ApprovalRequest {
                call_id: format!("network:{host}:{port}"),
                tool: "network".into(),
                tool_aliases: Vec::new(),
                arguments: serde_json::json!({ "host": host, "port": port }),
                agent: None,
                reason: format!(
                    "a sandboxed command connects to {host}:{port}, which sandbox.network.allowedDomains does not list"
                ),
                rule: None,
                allow_always_rules: Vec::new(),
                reject_always_rules: Vec::new(),
            };
            match approver.ask(request).await {
                ApprovalAnswer::AllowOnce => true,
                ApprovalAnswer::AllowAlways => {
                    always
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .insert(host);
                    true
                }
                _ => false,
            }
        })
    })
}
