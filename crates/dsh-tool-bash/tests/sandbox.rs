//! Commands confined by Landlock, run for real: writes inside and outside
//! the roots (touch, python3, cp, a redirection), `.git` kept read-only, TCP
//! to a loopback listener blocked and allowed, signals to a process outside
//! the sandbox refused, and the line that tells the model why.

use dsh_sandbox::{SandboxMode, SandboxPolicy};
use dsh_tool_bash::{Executor, ExecutorConfig, RunOutput, RunRequest};
use std::net::TcpListener;
use std::path::PathBuf;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-sandbox-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A project (`proj`, with `.git`, a subdirectory and a file) and a
/// directory outside it, with an executor confined by `policy` in `proj`.
fn fixture(name: &str, policy: SandboxPolicy) -> (TempDir, Executor) {
    let dir = TempDir::new(name);
    for d in ["proj/.git", "proj/src", "outside", "cache"] {
        std::fs::create_dir_all(dir.0.join(d)).unwrap();
    }
    std::fs::write(dir.0.join("proj/.git/config"), "[core]\n").unwrap();
    std::fs::write(dir.0.join("proj/README"), "hi\n").unwrap();
    let config = ExecutorConfig {
        cwd: dir.0.join("proj"),
        sandbox: Some(policy),
        ..ExecutorConfig::default()
    };
    (dir, Executor::new(config).unwrap())
}

async fn run(ex: &Executor, command: &str) -> RunOutput {
    ex.run(RunRequest::new(command)).await.unwrap()
}

fn policy(mode: SandboxMode, network: bool) -> SandboxPolicy {
    SandboxPolicy {
        mode,
        writable_roots: Vec::new(),
        network,
    }
}

fn exists(dir: &TempDir, rel: &str) -> bool {
    dir.0.join(rel).exists()
}

fn code(out: &RunOutput) -> Option<i32> {
    match out.exit {
        dsh_tool_bash::Exit::Code(c) => Some(c),
        _ => None,
    }
}

#[track_caller]
fn denied(out: &RunOutput, path: &str) {
    let text = out.model_text();
    assert_ne!(code(out), Some(0), "{text}");
    assert!(
        text.contains(&format!("[sandbox: write to {path} denied under")),
        "{text}"
    );
    // The status line stays last: presenters read the exit code from it.
    assert!(
        text.lines().last().unwrap().starts_with("[exit code: "),
        "{text}"
    );
}

#[tokio::test]
async fn workspace_write_confines_writes_to_the_working_directory() {
    let (dir, ex) = fixture("ww", policy(SandboxMode::WorkspaceWrite, false));
    let outside = dir.0.join("outside");
    let o = outside.display();
    // Inside: a new file in a subdirectory, a redirection, cp, python3.
    let out = run(&ex, "touch src/a.rs && echo x > src/b.rs && cp README src/c && python3 -c \"open('src/d','w').write('d')\" && echo x >> README && echo ok").await;
    assert_eq!(out.stdout.text, "ok\n", "{}", out.model_text());
    for f in ["src/a.rs", "src/b.rs", "src/c", "src/d"] {
        assert!(exists(&dir, &format!("proj/{f}")), "{f}");
    }
    // Outside: each way of writing is refused, and the result says where.
    denied(&run(&ex, &format!("touch {o}/t")).await, &format!("{o}/t"));
    denied(
        &run(&ex, &format!("echo x > {o}/r")).await,
        &format!("{o}/r"),
    );
    denied(
        &run(&ex, &format!("cp README {o}/c")).await,
        &format!("{o}/c"),
    );
    denied(
        &run(&ex, &format!("python3 -c \"open('{o}/p', 'w')\"")).await,
        &format!("{o}/p"),
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    // .git stays read-only inside a writable working directory.
    let out = run(&ex, "echo '[core] fsmonitor = evil' >> .git/config").await;
    assert_ne!(code(&out), Some(0));
    assert_eq!(
        std::fs::read_to_string(dir.0.join("proj/.git/config")).unwrap(),
        "[core]\n"
    );
    let out = run(&ex, "mkdir -p .git/hooks && touch .git/hooks/pre-commit").await;
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
    assert!(!exists(&dir, "proj/.git/hooks/pre-commit"));
    // The private temp directory is writable, and is $TMPDIR.
    let out = run(&ex, "echo t > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"").await;
    assert_eq!(out.stdout.text, "t\n", "{}", out.model_text());
    // Reads anywhere.
    assert_eq!(
        run(&ex, "head -c 0 /etc/hostname && echo read")
            .await
            .stdout
            .text,
        "read\n"
    );
    // Nothing but files directly in the root: not `.claude`, not a link.
    for command in ["mkdir .claude", "ln -s /tmp here"] {
        let out = run(&ex, command).await;
        assert_ne!(code(&out), Some(0), "{command}: {}", out.model_text());
    }
    assert!(!exists(&dir, "proj/.claude") && !exists(&dir, "proj/here"));
    // A file: in a mount namespace (protected entries bound read-only), yes;
    // entry by entry, no.
    let out = run(&ex, "python3 -c \"open('new.txt', 'w')\"").await;
    assert_eq!(
        exists(&dir, "proj/new.txt"),
        dsh_sandbox::namespaces_available(),
        "{}",
        out.model_text()
    );
}

#[tokio::test]
async fn a_calls_workdir_grants_nothing() {
    let (dir, ex) = fixture("workdir", policy(SandboxMode::WorkspaceWrite, false));
    let outside = dir.0.join("outside");
    let out = ex
        .run(RunRequest::new("touch made").workdir(outside.display().to_string()))
        .await
        .unwrap();
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
    assert!(!outside.join("made").exists());
    let out = ex
        .run(RunRequest::new("touch tmp/x").workdir("/"))
        .await
        .unwrap();
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
}

#[tokio::test]
async fn a_link_inside_the_working_directory_grants_nothing_outside() {
    let (dir, ex) = fixture("links", policy(SandboxMode::WorkspaceWrite, false));
    std::os::unix::fs::symlink(dir.0.join("outside"), dir.0.join("proj/out")).unwrap();
    std::os::unix::fs::symlink(dir.0.join("proj/.git"), dir.0.join("proj/g")).unwrap();
    for command in [
        "touch out/x",
        "mkdir -p g/hooks && touch g/hooks/pre-commit",
    ] {
        let out = run(&ex, command).await;
        assert_ne!(code(&out), Some(0), "{command}: {}", out.model_text());
    }
    assert!(!dir.0.join("outside/x").exists());
    assert!(!dir.0.join("proj/.git/hooks/pre-commit").exists());
}

#[tokio::test]
async fn writable_roots_add_to_the_working_directory() {
    let dir_name = "roots";
    let cache = std::env::temp_dir()
        .join(format!("dsh-sandbox-{dir_name}-{}", std::process::id()))
        .join("cache");
    let mut p = policy(SandboxMode::WorkspaceWrite, false);
    p.writable_roots.push(cache.clone());
    let (dir, ex) = fixture(dir_name, p);
    let out = run(&ex, &format!("touch {}/ok && echo ok", cache.display())).await;
    assert_eq!(out.stdout.text, "ok\n", "{}", out.model_text());
    assert!(exists(&dir, "cache/ok"));
}

#[tokio::test]
async fn read_only_writes_nowhere_but_its_temp_directory() {
    let (dir, ex) = fixture("ro", policy(SandboxMode::ReadOnly, true));
    denied(&run(&ex, "touch src/a").await, "src/a");
    denied(&run(&ex, "echo x > README").await, "README");
    assert_eq!(
        std::fs::read_to_string(dir.0.join("proj/README")).unwrap(),
        "hi\n"
    );
    let out = run(&ex, "echo t > \"$TMPDIR/x\" && echo ok").await;
    assert_eq!(out.stdout.text, "ok\n", "{}", out.model_text());
    assert_eq!(run(&ex, "cat README").await.stdout.text, "hi\n");
    // /dev/null stays writable.
    assert_eq!(
        run(&ex, "echo x > /dev/null && echo ok").await.stdout.text,
        "ok\n"
    );
}

#[tokio::test]
async fn danger_full_access_is_no_confinement() {
    let (dir, ex) = fixture("full", policy(SandboxMode::DangerFullAccess, true));
    let out = run(
        &ex,
        &format!(
            "touch {}/outside/t && echo x > .git/x && echo ok",
            dir.0.display()
        ),
    )
    .await;
    assert_eq!(out.stdout.text, "ok\n", "{}", out.model_text());
}

/// Connects from inside the sandbox to a listener of this test.
async fn connect(ex: &Executor, port: u16) -> RunOutput {
    run(
        ex,
        &format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 5); print('connected')\""),
    )
    .await
}

#[tokio::test]
async fn tcp_is_blocked_without_the_network_and_allowed_with_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (_dir, ex) = fixture("tcp-off", policy(SandboxMode::WorkspaceWrite, false));
    let out = connect(&ex, port).await;
    assert_ne!(code(&out), Some(0));
    assert!(
        out.stderr.text.contains("PermissionError"),
        "{}",
        out.model_text()
    );
    assert!(
        out.model_text().contains("[sandbox: "),
        "{}",
        out.model_text()
    );
    // Binding a port is refused too.
    let out = run(
        &ex,
        "python3 -c \"import socket; socket.socket().bind(('127.0.0.1', 0))\"",
    )
    .await;
    assert_ne!(code(&out), Some(0), "{}", out.model_text());

    let (_dir, ex) = fixture("tcp-on", policy(SandboxMode::WorkspaceWrite, true));
    let accept = std::thread::spawn(move || listener.accept().map(|_| ()));
    let out = connect(&ex, port).await;
    assert_eq!(out.stdout.text, "connected\n", "{}", out.model_text());
    accept.join().unwrap().unwrap();
}

#[tokio::test]
async fn signals_to_processes_outside_the_sandbox_are_refused() {
    let mut outside = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = outside.id();
    let (_dir, ex) = fixture("signal", policy(SandboxMode::WorkspaceWrite, false));
    let out = run(&ex, &format!("kill -TERM {pid}")).await;
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
    assert!(
        out.stderr.text.contains("Operation not permitted"),
        "{}",
        out.model_text()
    );
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the outside process still runs"
    );
    // Inside the sandbox, a command signals its own children.
    let out = run(&ex, "sleep 30 & kill $! && wait $!; echo $?").await;
    assert_eq!(out.stdout.text, "143\n", "{}", out.model_text());
    outside.kill().unwrap();
    outside.wait().unwrap();
}

#[test]
fn the_machine_enforces_what_the_tests_rely_on() {
    // A machine without Landlock ABI 6 would make every test above fail for
    // that reason alone: say so plainly.
    let s = dsh_sandbox::status();
    assert!(
        s.abi >= 6,
        "this kernel has Landlock ABI {}; these tests need 6",
        s.abi
    );
    assert!(s.files && s.tcp && s.scoping);
}

#[tokio::test]
async fn abstract_unix_sockets_outside_the_sandbox_are_scoped_away() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("dsh-sandbox-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let connect = format!(
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print('connected')\""
    );
    let (_dir, ex) = fixture("abstract-off", policy(SandboxMode::WorkspaceWrite, false));
    let out = run(&ex, &connect).await;
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
    assert!(
        out.stderr.text.contains("PermissionError")
            || out.stderr.text.contains("Operation not permitted"),
        "{}",
        out.model_text()
    );
    let (_dir, ex) = fixture("abstract-on", policy(SandboxMode::WorkspaceWrite, true));
    let out = run(&ex, &connect).await;
    assert_eq!(out.stdout.text, "connected\n", "{}", out.model_text());
    drop(listener);
}

#[tokio::test]
async fn with_a_filtering_proxy_only_its_port_is_reachable_and_its_refusals_end_the_text() {
    use std::sync::{Arc, Mutex};
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (proxy_port, other_port) = (
        proxy.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = asked.clone();
    let (ended_tx, mut ended_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let net = dsh_tool_bash::NetworkProxy {
        ports: vec![proxy_port],
        env: Arc::new(move |client: &str| {
            vec![(
                "HTTP_PROXY".to_owned(),
                format!("http://{client}@127.0.0.1:{proxy_port}"),
            )]
        }),
        denials: Arc::new(move |client: &str| {
            seen.lock().unwrap().push(client.to_owned());
            vec![("evil.test".to_owned(), "not in allowedDomains".to_owned())]
        }),
        started: None,
        ended: Some(Arc::new(move |client: &str, ends| {
            let (client, tx) = (client.to_owned(), ended_tx.clone());
            tokio::spawn(async move {
                ends.await;
                let _ = tx.send(client);
            });
        })),
        serve: None,
        local_binding: false,
    };
    let dir = TempDir::new("proxy");
    std::fs::create_dir_all(dir.0.join("proj")).unwrap();
    let ex = Executor::new(ExecutorConfig {
        cwd: dir.0.join("proj"),
        sandbox: Some(policy(SandboxMode::WorkspaceWrite, false)),
        network_proxy: Some(net),
        ..ExecutorConfig::default()
    })
    .unwrap();
    let out = connect(&ex, proxy_port).await;
    assert_eq!(out.stdout.text, "connected\n", "{}", out.model_text());
    let out = connect(&ex, other_port).await;
    assert_ne!(code(&out), Some(0), "{}", out.model_text());
    // The call is named in the proxy's URL, and what it refused is said.
    let out = run(&ex, "echo \"$HTTP_PROXY\"").await;
    let client = asked.lock().unwrap().last().cloned().unwrap();
    // Its end is told, so the proxy forgets it.
    let mut ended = Vec::new();
    while ended.last() != Some(&client) {
        let next = tokio::time::timeout(std::time::Duration::from_secs(10), ended_rx.recv())
            .await
            .expect("the end of each call is told");
        ended.push(next.unwrap());
    }
    assert_eq!(
        out.stdout.text,
        format!("http://{client}@127.0.0.1:{proxy_port}\n")
    );
    assert!(
        out.model_text()
            .contains("[sandbox: connection to evil.test denied: not in allowedDomains]"),
        "{}",
        out.model_text()
    );
    // The read-only hold keeps the network off, the proxy included.
    let held = ex
        .run(
            RunRequest::new(format!(
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {proxy_port}), 5)\""
        ))
            .confine(dsh_tool_bash::Confine::ReadOnly),
        )
        .await
        .unwrap();
    assert_ne!(code(&held), Some(0), "{}", held.model_text());
}

/// With a server for its listeners, confined commands join a network
/// namespace with only loopback, made at the first of them and kept: the
/// proxy's port there is a listener made in it and served by the proxy;
/// the same port on the host is not reached; the listeners are served
/// until the executor goes. Both ways of starting a child (straight into
/// a cgroup, and the process-tree fallback).
#[tokio::test]
async fn in_the_network_namespace_the_proxy_port_is_a_listener_made_there() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    if !dsh_sandbox::network_namespaces_available() {
        eprintln!("no network namespaces here: nothing to test");
        return;
    }
    for containment in [
        dsh_tool_bash::Containment::Auto,
        dsh_tool_bash::Containment::ProcessTree,
    ] {
        // The host's listener at the proxy's port: it must hear nothing.
        let host = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = host.local_addr().unwrap().port();
        let served: Arc<Mutex<usize>> = Arc::default();
        let count = served.clone();
        let (ended_tx, mut ended_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let serve: dsh_tool_bash::ServeListeners = Arc::new(move |listeners, ends| {
            *count.lock().unwrap() += 1;
            assert_eq!(listeners.len(), 1);
            let (listen_port, listener) = listeners.into_iter().next().unwrap();
            assert_eq!(listen_port, port);
            // Answer every connection, as a proxy would.
            std::thread::spawn(move || {
                while let Ok((mut conn, _)) = listener.accept() {
                    let _ = conn.write_all(b"from the namespace");
                }
            });
            let tx = ended_tx.clone();
            tokio::spawn(async move {
                ends.await;
                let _ = tx.send(());
            });
            Ok(())
        });
        let net = dsh_tool_bash::NetworkProxy {
            ports: vec![port],
            env: Arc::new(|_client: &str| Vec::new()),
            denials: Arc::new(|_client: &str| Vec::new()),
            started: None,
            ended: None,
            serve: Some(serve),
            local_binding: false,
        };
        let dir = TempDir::new("netns");
        std::fs::create_dir_all(dir.0.join("proj")).unwrap();
        let ex = Executor::new(ExecutorConfig {
            cwd: dir.0.join("proj"),
            sandbox: Some(policy(SandboxMode::WorkspaceWrite, false)),
            network_proxy: Some(net),
            containment,
            ..ExecutorConfig::default()
        })
        .unwrap();
        for _ in 0..2 {
            let out = run(
                &ex,
                &format!("python3 -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}), 5); print(s.recv(64).decode())\""),
            )
            .await;
            assert_eq!(
                out.stdout.text,
                "from the namespace\n",
                "{containment:?}: {}",
                out.model_text()
            );
        }
        // One namespace for the executor's commands.
        assert_eq!(*served.lock().unwrap(), 1);
        let out = run(&ex, "readlink /proc/self/ns/net").await;
        assert_ne!(
            out.stdout.text.trim(),
            std::fs::read_link("/proc/self/ns/net")
                .unwrap()
                .to_string_lossy(),
        );
        host.set_nonblocking(true).unwrap();
        assert!(
            matches!(host.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{containment:?}: the host's port was reached"
        );
        // Served until the executor goes.
        assert!(ended_rx.try_recv().is_err());
        drop(ex);
        tokio::time::timeout(std::time::Duration::from_secs(10), ended_rx.recv())
            .await
            .expect("the end of the serving is told");
    }
}
