//! `Confine::ReadOnly`, the confinement the permission layer asks for when
//! a call runs only on the analysis's word: whatever the configured sandbox
//! (none here), the command can write nothing but its private temp
//! directory, reach no network (TCP, UDP, named UNIX sockets) and keeps no
//! descriptor it did not get as stdio. Each test runs real commands that
//! try, and checks the effect.

use dsh_tool_bash::{Confine, Executor, ExecutorConfig, RunOutput, RunRequest, SessionRequest};
use std::net::{TcpListener, UdpSocket};
use std::path::PathBuf;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("dsh-hold-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("proj/.git/hooks")).unwrap();
        TempDir(std::fs::canonicalize(dir).unwrap())
    }

    fn proj(&self) -> PathBuf {
        self.0.join("proj")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn executor(dir: &TempDir, confine_read_only: bool) -> Executor {
    Executor::new(ExecutorConfig {
        cwd: dir.proj(),
        confine_read_only,
        ..ExecutorConfig::default()
    })
    .unwrap()
}

async fn run(ex: &Executor, command: &str, confine: Confine) -> RunOutput {
    ex.run(RunRequest::new(command).confine(confine))
        .await
        .unwrap()
}

fn kernel_confines() -> bool {
    dsh_sandbox::support().scoping()
}

#[tokio::test]
async fn nothing_is_written_outside_the_temp_directory() {
    if !kernel_confines() {
        eprintln!("skipped: this kernel cannot confine (Landlock ABI < 6)");
        return;
    }
    let dir = TempDir::new("writes");
    let ex = executor(&dir, true);
    let lines = [
        "touch made-by-touch",
        "a='x[$(touch made-by-arith)]'; echo $((a))",
        "trap 'echo evil > .git/hooks/pre-commit' DEBUG; true",
        "python3 -c \"open('made-by-python', 'w').write('x')\"",
        "mkdir made-dir",
    ];
    for line in lines {
        let out = run(&ex, line, Confine::ReadOnly).await;
        assert_eq!(out.sandbox, Some(dsh_sandbox::SandboxMode::ReadOnly));
        let text = out.model_text();
        for mark in [
            "made-by-touch",
            "made-by-arith",
            "made-by-python",
            "made-dir",
        ] {
            assert!(!dir.proj().join(mark).exists(), "{line}: {text}");
        }
        assert!(
            !dir.proj().join(".git/hooks/pre-commit").exists(),
            "{line}: {text}"
        );
    }
    // The stopped write is named, and escalation offered, as for any sandbox.
    let text = run(&ex, "touch made-by-touch", Confine::ReadOnly)
        .await
        .model_text();
    assert!(text.contains("[sandbox: write to"), "{text}");
    assert!(text.contains("under read-only"), "{text}");
    assert!(text.contains("require_escalated"), "{text}");
    // The private temp directory is writable.
    let out = run(
        &ex,
        "echo kept > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"",
        Confine::ReadOnly,
    )
    .await;
    assert!(out.model_text().starts_with("kept"), "{}", out.model_text());
    // The same line, configured (no sandbox), writes: the hold did it.
    let out = run(&ex, "touch made-by-touch", Confine::Configured).await;
    assert_eq!(out.sandbox, None);
    assert!(dir.proj().join("made-by-touch").exists());
}

#[tokio::test]
async fn no_connection_leaves_tcp_or_udp() {
    if !kernel_confines() {
        return;
    }
    let dir = TempDir::new("net");
    let ex = executor(&dir, true);
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    let lines = [
        format!("git ls-remote http://127.0.0.1:{port}/x.git"),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
        format!("echo leak > /dev/udp/127.0.0.1/{udp_port}"),
        format!("echo leak | nc -u -w1 127.0.0.1 {udp_port}"),
        format!("dig @127.0.0.1 -p {udp_port} +tries=1 +time=1 secret.example.com"),
        format!(
            "python3 -c \"import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'leak', ('127.0.0.1', {udp_port}))\""
        ),
    ];
    for line in &lines {
        let text = run(&ex, line, Confine::ReadOnly).await.model_text();
        assert!(tcp.accept().is_err(), "{line} connected: {text}");
        let mut buf = [0u8; 64];
        assert!(udp.recv_from(&mut buf).is_err(), "{line} sent: {text}");
    }
}

#[tokio::test]
async fn the_setting_off_or_an_escalation_runs_as_configured() {
    if !kernel_confines() {
        return;
    }
    let dir = TempDir::new("off");
    let off = executor(&dir, false);
    let out = run(&off, "touch made-when-off", Confine::ReadOnly).await;
    assert_eq!(out.sandbox, None);
    assert!(dir.proj().join("made-when-off").exists());
    let on = executor(&dir, true);
    let out = run(&on, "touch made-escalated", Confine::Unconfined).await;
    assert_eq!(out.sandbox, None);
    assert!(dir.proj().join("made-escalated").exists());
}

#[tokio::test]
async fn background_tasks_and_sessions_keep_the_hold() {
    if !kernel_confines() {
        return;
    }
    let dir = TempDir::new("tasks");
    let ex = executor(&dir, true);
    // The task's own output says when it is done (and how `touch` ended).
    let task = ex
        .spawn_background_confined(
            "touch made-in-background; echo done-$?",
            None,
            None,
            Confine::ReadOnly,
        )
        .unwrap()
        .to_string();
    let wait = Some(std::time::Duration::from_secs(10));
    let seen = ex
        .read_output(&task, None, wait, Some("done-"))
        .await
        .unwrap();
    assert!(seen.contains("done-1"), "{seen}");
    assert!(!dir.proj().join("made-in-background").exists());
    let mut request = SessionRequest::new("touch made-in-session; echo session-$?");
    request.confine = Confine::ReadOnly;
    request.yield_time = Some(std::time::Duration::from_secs(5));
    let text = match ex.start_session(request, None).await.unwrap() {
        dsh_tool_bash::SessionStart::Finished { output } => output,
        dsh_tool_bash::SessionStart::Running { id, .. } => ex
            .read_output(&id.to_string(), None, wait, Some("session-"))
            .await
            .unwrap(),
    };
    assert!(text.contains("session-1"), "{text}");
    assert!(!dir.proj().join("made-in-session").exists());
}

#[tokio::test]
async fn disks_are_not_readable_under_the_hold() {
    use std::os::unix::fs::FileTypeExt;
    if !kernel_confines() {
        return;
    }
    // Any block device here (the root disk, a loop device): root owns it,
    // so without the sandbox it reads the bytes of every file.
    let Some(disk) = std::fs::read_dir("/dev")
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_type().is_ok_and(|t| t.is_block_device()))
        .map(|e| e.path())
    else {
        eprintln!("skipped: no block device in /dev");
        return;
    };
    let dir = TempDir::new("disk");
    let ex = executor(&dir, true);
    let line = format!("head -c 1 {} | wc -c", disk.display());
    let held = run(&ex, &line, Confine::ReadOnly).await.model_text();
    assert!(held.starts_with("0\n"), "{held}");
    assert!(held.contains("[sandbox: reading "), "{held}");
    // The devices programs open by name still work.
    let out = run(
        &ex,
        "head -c 4 /dev/urandom | wc -c; echo x > /dev/null && echo ok",
        Confine::ReadOnly,
    )
    .await
    .model_text();
    assert!(out.starts_with("4\nok\n"), "{out}");
}
