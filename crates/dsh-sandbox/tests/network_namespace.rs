//! The network through a filtering proxy only, the stronger mechanism:
//! commands join a network namespace with only loopback, where the proxy's
//! ports are listening sockets made inside it and handed to the proxy.
//! Nothing else is reachable, not even the same port on another address,
//! which the fallback (Landlock's port rule alone) lets through. Commands
//! of the same namespace reach each other's servers when local binding is
//! allowed.

#[path = "support/network.rs"]
mod network;

use dsh_sandbox::{
    confine, network_namespaces_available, support, ChildConfig, ChildPlan, NetworkNamespace,
    SandboxMode, SandboxPolicy,
};
use network::{arrives, Dirs};
use std::io::{ErrorKind, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// A workspace-write plan with the network off but the proxy's `port`
/// reachable, joining `namespace` or not.
fn plan(
    dirs: &Dirs,
    port: u16,
    namespace: Option<&Arc<NetworkNamespace>>,
    local_binding: bool,
) -> ChildPlan {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        ..SandboxPolicy::default()
    };
    let mut confinement = confine(&policy, &[dirs.0.join("root")], &dirs.0.join("tmp")).unwrap();
    confinement.proxy_ports = vec![port];
    confinement.network_namespace = namespace.is_some();
    confinement.local_binding = local_binding;
    let layout = confinement.layout(support()).unwrap();
    let mut config = ChildConfig::for_layout(&confinement, layout);
    config.network_namespace = namespace.cloned();
    let plan = ChildPlan::prepare(config).unwrap();
    assert_eq!(plan.network_namespace(), namespace.is_some());
    plan
}

/// Starts python with `script` under `plan`.
fn start(plan: &ChildPlan, dirs: &Dirs, script: &str) -> Child {
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(format!("import socket\n{script}"))
        .current_dir(dirs.0.join("root"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    plan.attach_std(&mut cmd);
    cmd.spawn().unwrap()
}

fn output(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn connect_line(host: &str, port: u16, label: &str) -> String {
    format!(
        "try:\n    socket.create_connection(('{host}', {port}), timeout=5)\n    print('{label} connected')\nexcept OSError as e:\n    print('{label} refused', e.errno)\n"
    )
}

/// This machine's address on its default route, if it has one.
fn outside_address() -> Option<IpAddr> {
    let s = UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.200:9").ok()?;
    Some(s.local_addr().ok()?.ip()).filter(|ip| !ip.is_loopback() && !ip.is_unspecified())
}

#[test]
fn in_the_namespace_a_command_reaches_the_listeners_made_there_and_nothing_else() {
    if !network_namespaces_available() {
        eprintln!("no network namespaces here: nothing to test");
        return;
    }
    // The host's side: a server on every address at the proxy's port.
    let host = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let (namespace, listeners) = NetworkNamespace::create(&[port]).unwrap();
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].0, port);
    let dirs = Dirs::new("netns");
    let plan = plan(&dirs, port, Some(&namespace), false);
    let mut script = String::from(
        "s = socket.create_connection(('127.0.0.1', PORT), timeout=5)\nprint('proxy says', s.recv(16).decode())\n",
    )
    .replace("PORT", &port.to_string());
    script += &connect_line("127.0.0.2", port, "other loopback");
    let outside = outside_address();
    if let Some(ip) = outside {
        script += &connect_line(&ip.to_string(), port, "outside");
    }
    let child = start(&plan, &dirs, &script);
    let mut conn = arrives(&listeners[0].1).expect("the command's connection");
    conn.write_all(b"hello").unwrap();
    let text = output(child);
    assert!(text.contains("proxy says hello"), "{text}");
    // 127.0.0.2 is loopback there too, but nothing listens on it.
    assert!(
        text.contains(&format!("other loopback refused {}", libc::ECONNREFUSED)),
        "{text}"
    );
    if outside.is_some() {
        assert!(
            text.contains(&format!("outside refused {}", libc::ENETUNREACH)),
            "{text}"
        );
    }
    // The host's server at the same port heard nothing.
    host.set_nonblocking(true).unwrap();
    assert!(matches!(host.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}

/// What the fallback lets through and the namespace does not: Landlock
/// names ports, not addresses.
#[test]
fn without_the_namespace_the_same_port_elsewhere_is_reachable() {
    let host = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let dirs = Dirs::new("netns");
    let plan = plan(&dirs, port, None, false);
    let child = start(&plan, &dirs, &connect_line("127.0.0.2", port, "other"));
    let text = output(child);
    assert!(text.contains("other connected"), "{text}");
    assert!(arrives(&host).is_some());
}

const SERVER_PORT: u16 = 47213;

/// Local binding leaves TCP to the namespace: a command's server on
/// loopback is reached by another command of the namespace (a later call),
/// and still nothing outside is; without the namespace it changes nothing.
#[test]
fn with_local_binding_commands_of_the_namespace_reach_each_others_servers() {
    let host = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let dirs = Dirs::new("netns");
    if network_namespaces_available() {
        let (namespace, _listeners) = NetworkNamespace::create(&[port]).unwrap();
        let plan = plan(&dirs, port, Some(&namespace), true);
        let server = start(
            &plan,
            &dirs,
            &format!(
                "server = socket.socket()\nserver.bind(('127.0.0.1', {SERVER_PORT}))\nserver.listen()\nprint('listening', flush=True)\nserver.accept()[0].sendall(b'local')\n"
            ),
        );
        let mut server = server;
        let mut first = [0u8; 10];
        std::io::Read::read_exact(server.stdout.as_mut().unwrap(), &mut first).unwrap();
        assert_eq!(&first, b"listening\n");
        let script = format!(
            "c = socket.create_connection(('127.0.0.1', {SERVER_PORT}), timeout=5)\nprint('served', c.recv(5).decode())\n{}",
            connect_line("127.0.0.2", port, "other")
        );
        let text = output(start(&plan, &dirs, &script));
        assert!(text.contains("served local"), "{text}");
        assert!(
            text.contains(&format!("other refused {}", libc::ECONNREFUSED)),
            "{text}"
        );
        server.wait().unwrap();
        // Not on the host: the server was in the namespace.
        assert!(std::net::TcpStream::connect(("127.0.0.1", SERVER_PORT)).is_err());
    }
    let plan = plan(&dirs, port, None, true);
    let text = output(start(
        &plan,
        &dirs,
        "try:\n    socket.socket().bind(('127.0.0.1', 0))\n    print('bound')\nexcept OSError as e:\n    print('refused', e.errno)\n",
    ));
    assert!(
        text.contains(&format!("refused {}", libc::EACCES)),
        "{text}"
    );
    host.set_nonblocking(true).unwrap();
    assert!(matches!(host.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}
