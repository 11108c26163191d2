//! The network through a filtering proxy only, the stronger mechanism: the
//! command gets a network namespace of its own, with only loopback, where
//! the proxy's port listens — on a socket the child made there and handed
//! to its parent. Nothing else is reachable, not even the same port on
//! another address, which the fallback (Landlock's port rule alone) lets
//! through.

use dsh_sandbox::{
    confine, network_namespaces_available, support, ChildConfig, ChildPlan, ListenerChannel,
    SandboxMode, SandboxPolicy,
};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, TcpListener, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

struct Dirs(PathBuf);

impl Dirs {
    fn new() -> Dirs {
        static N: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "dsh-netns-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        for d in ["root", "tmp"] {
            std::fs::create_dir_all(base.join(d)).unwrap();
        }
        Dirs(base)
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A workspace-write plan with the network off but the proxy's `port`
/// reachable, in a namespace of its own or not.
fn plan(dirs: &Dirs, port: u16, namespace: bool) -> ChildPlan {
    plan_with(dirs, port, namespace, false)
}

fn plan_with(dirs: &Dirs, port: u16, namespace: bool, local_binding: bool) -> ChildPlan {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        ..SandboxPolicy::default()
    };
    let mut confinement = confine(&policy, &[dirs.0.join("root")], &dirs.0.join("tmp")).unwrap();
    confinement.proxy_ports = vec![port];
    confinement.network_namespace = namespace;
    confinement.local_binding = local_binding;
    let layout = confinement.layout(support()).unwrap();
    let config = ChildConfig::for_layout(&confinement, layout);
    assert_eq!(config.loopback_ports.len(), usize::from(namespace));
    let plan = ChildPlan::prepare(config).unwrap();
    assert_eq!(plan.network_namespace(), namespace);
    plan
}

/// Starts python with `script` under `plan`, the listeners (if any) sent
/// over a channel; returns the child and what the channel brought.
fn start(plan: &ChildPlan, dirs: &Dirs, script: &str) -> (Child, Vec<(u16, TcpListener)>) {
    let channel = ListenerChannel::new().unwrap();
    let fd = channel.child_fd();
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(format!("import socket\n{script}"))
        .current_dir(dirs.0.join("root"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let plan = plan.clone();
    // SAFETY: `apply_with` makes plain system calls only, no allocation.
    unsafe {
        cmd.pre_exec(move || plan.apply_with(Some(fd)));
    }
    let child = cmd.spawn().unwrap();
    let listeners = if child_has_namespace(&child) {
        channel.receive().unwrap()
    } else {
        Vec::new()
    };
    (child, listeners)
}

fn child_has_namespace(child: &Child) -> bool {
    let ours = std::fs::read_link("/proc/self/ns/net").unwrap();
    let theirs = std::fs::read_link(format!("/proc/{}/ns/net", child.id())).unwrap();
    ours != theirs
}

fn output(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether a connection arrives on `listener` within a few seconds.
fn arrives(listener: &TcpListener) -> Option<std::net::TcpStream> {
    listener.set_nonblocking(true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match listener.accept() {
            Ok((s, _)) => return Some(s),
            Err(e) if e.kind() == ErrorKind::WouldBlock && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20))
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            Err(e) => panic!("{e}"),
        }
    }
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
fn in_its_namespace_a_command_reaches_the_listeners_it_handed_over_and_nothing_else() {
    if !network_namespaces_available() {
        eprintln!("no network namespaces here: nothing to test");
        return;
    }
    // The host's side: a server on every address at the proxy's port.
    let host = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let dirs = Dirs::new();
    let plan = plan(&dirs, port, true);
    let mut script = String::from(
        "s = socket.create_connection(('127.0.0.1', PORT), timeout=5)\nprint('proxy says', s.recv(16).decode())\n",
    )
    .replace("PORT", &port.to_string());
    script += &connect_line("127.0.0.2", port, "other loopback");
    let outside = outside_address();
    if let Some(ip) = outside {
        script += &connect_line(&ip.to_string(), port, "outside");
    }
    let (child, listeners) = start(&plan, &dirs, &script);
    assert_eq!(listeners.len(), 1);
    assert_eq!(listeners[0].0, port);
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
    let dirs = Dirs::new();
    let plan = plan(&dirs, port, false);
    let (child, listeners) = start(&plan, &dirs, &connect_line("127.0.0.2", port, "other"));
    assert!(listeners.is_empty());
    let text = output(child);
    assert!(text.contains("other connected"), "{text}");
    assert!(arrives(&host).is_some());
}

#[test]
fn a_namespace_without_a_channel_has_no_network_at_all() {
    if !network_namespaces_available() {
        return;
    }
    let host = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let dirs = Dirs::new();
    let plan = plan(&dirs, port, true);
    let mut cmd = Command::new("python3");
    cmd.arg("-c")
        .arg(format!(
            "import socket\n{}",
            connect_line("127.0.0.1", port, "proxy")
        ))
        .stdout(Stdio::piped());
    plan.attach_std(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let mut text = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    child.wait().unwrap();
    assert!(
        text.contains(&format!("proxy refused {}", libc::ECONNREFUSED)),
        "{text}"
    );
    host.set_nonblocking(true).unwrap();
    assert!(matches!(host.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}

#[test]
fn a_channel_with_nothing_sent_is_an_error() {
    let channel = ListenerChannel::new().unwrap();
    let e = channel.receive().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock, "{e}");
}

const LOCAL_SERVER: &str = "try:\n    server = socket.socket()\n    server.bind(('127.0.0.1', 0))\n    server.listen()\n    c = socket.create_connection(server.getsockname(), timeout=5)\n    server.accept()[0].sendall(b'local')\n    print('served', c.recv(5).decode())\nexcept OSError as e:\n    print('refused', e.errno)\n";

/// Local binding leaves TCP to the namespace: a command's own server on
/// loopback works there, and still nothing outside is reachable; without
/// the namespace it changes nothing.
#[test]
fn local_binding_is_left_to_the_namespace_alone() {
    let host = TcpListener::bind("0.0.0.0:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let dirs = Dirs::new();
    if network_namespaces_available() {
        let plan = plan_with(&dirs, port, true, true);
        let script = format!("{LOCAL_SERVER}{}", connect_line("127.0.0.2", port, "other"));
        let (child, listeners) = start(&plan, &dirs, &script);
        assert_eq!(listeners.len(), 1);
        let text = output(child);
        assert!(text.contains("served local"), "{text}");
        assert!(
            text.contains(&format!("other refused {}", libc::ECONNREFUSED)),
            "{text}"
        );
    }
    let plan = plan_with(&dirs, port, false, true);
    let (child, _) = start(&plan, &dirs, LOCAL_SERVER);
    let text = output(child);
    assert!(
        text.contains(&format!("refused {}", libc::EACCES)),
        "{text}"
    );
    host.set_nonblocking(true).unwrap();
    assert!(matches!(host.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}
