//! The network through a filtering proxy only (the fallback mechanism:
//! Landlock's TCP port rule and the system-call filter): a confined
//! command connects to the proxy's port, and to nothing else — not another
//! TCP port, not UDP, not a named UNIX socket, no listening.

#[path = "support/network.rs"]
mod network;

use dsh_sandbox::{confine, support, ChildConfig, ChildPlan, SandboxMode, SandboxPolicy};
use network::{arrives, Dirs};
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::process::{Command, Output};

/// A workspace-write plan with the network off but `port` reachable.
fn plan(dirs: &Dirs, port: u16) -> ChildPlan {
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        ..SandboxPolicy::default()
    };
    let mut confinement = confine(&policy, &[dirs.0.join("root")], &dirs.0.join("tmp")).unwrap();
    confinement.proxy_ports = vec![port];
    let layout = confinement.layout(support()).unwrap();
    let config = ChildConfig::for_layout(&confinement, layout);
    assert!(config.stream_only && !config.network);
    let plan = ChildPlan::prepare(config).unwrap();
    assert!(
        plan.seccomp(),
        "this machine enforces no system-call filter"
    );
    plan
}

fn python(plan: &ChildPlan, dirs: &Dirs, script: &str) -> Output {
    let exe = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3");
    let exe = String::from_utf8(exe.stdout).unwrap().trim().to_owned();
    let mut cmd = Command::new(exe);
    cmd.arg("-c")
        .arg(format!("import socket\n{script}"))
        .current_dir(dirs.0.join("root"));
    plan.attach_std(&mut cmd);
    cmd.output().unwrap()
}

fn stdout(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn connect_script(port: u16) -> String {
    format!(
        "try:\n    s = socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)"
    )
}

#[test]
fn the_proxy_port_is_reachable_and_no_other() {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (proxy_port, other_port) = (
        proxy.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let dirs = Dirs::new("proxy-only");
    let plan = plan(&dirs, proxy_port);
    let out = python(&plan, &dirs, &connect_script(proxy_port));
    assert!(stdout(&out).contains("connected"), "{}", stdout(&out));
    assert!(arrives(&proxy).is_some());
    // A program that ignores the proxy variables gets a refused connection.
    let out = python(&plan, &dirs, &connect_script(other_port));
    assert!(stdout(&out).contains("refused"), "{}", stdout(&out));
    other.set_nonblocking(true).unwrap();
    assert!(matches!(other.accept(), Err(e) if e.kind() == ErrorKind::WouldBlock));
}

#[test]
fn no_udp_no_unix_socket_no_listening() {
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let dirs = Dirs::new("proxy-only");
    let plan = plan(&dirs, 9);
    let script = format!(
        "for make in (lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM),\n             lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132),\n             lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM, 262),\n             lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM),\n             lambda: socket.socket(socket.AF_UNIX),\n             lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW)):\n    try:\n        s = make()\n        try:\n            s.sendto(b'leak', ('127.0.0.1', {udp_port}))\n        except Exception:\n            pass\n        print('made')\n    except OSError as e:\n        print('refused', e.errno)\ntry:\n    s = socket.socket()\n    s.bind(('127.0.0.1', 0))\n    s.listen()\n    print('listening')\nexcept OSError as e:\n    print('refused', e.errno)"
    );
    let out = python(&plan, &dirs, &script);
    let text = stdout(&out);
    // Refused by the filter (EPERM), not by a missing protocol module.
    assert_eq!(text.matches("refused 1\n").count(), 6, "{text}");
    assert_eq!(text.matches("refused").count(), 7, "{text}");
    assert!(
        !text.contains("made") && !text.contains("listening"),
        "{text}"
    );
    udp.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 8];
    assert!(matches!(udp.recv_from(&mut buf), Err(e) if e.kind() == ErrorKind::WouldBlock));
}
