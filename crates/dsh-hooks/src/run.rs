//! Running one command hook: `sh -c` in its own process group, the input
//! on stdin, both output streams read whole (up to a bound), and the whole
//! group killed when it ends or times out, so no hook process is left.

use crate::config::HookSpec;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// Output kept per stream; more is read and dropped, and the run is an error.
pub const MAX_OUTPUT: usize = 64 << 20;

/// How long the streams may stay open after the hook's group is killed
/// (a descendant that left the group); then they are given up.
const DRAIN_GRACE: Duration = Duration::from_secs(2);

/// How a hook's run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal.
    Signalled(i32),
    /// The timeout fired; the group was killed.
    TimedOut,
    /// The hook could not be started.
    SpawnFailed(String),
}

/// What one run gave.
#[derive(Debug, Clone)]
pub struct HookRun {
    /// How it ended.
    pub end: RunEnd,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// A stream was over [`MAX_OUTPUT`].
    pub overflowed: bool,
    /// Wall time.
    pub elapsed: Duration,
}

/// Kills the process group on drop: when the run ends, times out, or the
/// call that awaited it is dropped. A process that leaves the group
/// (`setsid`) is beyond its reach; its pipes are then given up after
/// [`DRAIN_GRACE`].
struct Group(Option<rustix::process::Pid>);

/// Aborts the stream tasks when the run is dropped half-way, so a
/// descendant that keeps the pipes open holds no task or buffer of ours.
struct Tasks(Vec<tokio::task::AbortHandle>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for t in &self.0 {
            t.abort();
        }
    }
}

impl Group {
    fn kill(&mut self) {
        if let Some(pid) = self.0.take() {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

async fn read_all(mut stream: impl AsyncRead + Unpin) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    let mut overflowed = false;
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
                overflowed |= n > room;
            }
        }
    }
    (kept, overflowed)
}

/// Runs `spec` with `input` on its stdin in `cwd`, with `env` added.
pub async fn run_hook(spec: &HookSpec, input: &[u8], cwd: &Path, env: &[(&str, &Path)]) -> HookRun {
    let start = Instant::now();
    let failed = |why: String| HookRun {
        end: RunEnd::SpawnFailed(why),
        stdout: String::new(),
        stderr: String::new(),
        overflowed: false,
        elapsed: start.elapsed(),
    };
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(&spec.command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return failed(format!("cannot start sh: {e}")),
    };
    let mut group = Group(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw),
    );
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return failed("the hook's pipes were not set up".into());
    };
    let input = input.to_vec();
    // A hook that never reads its stdin must not stall: the write runs on
    // its own and a closed pipe is no error.
    let writer = tokio::spawn(async move {
        let _ = stdin.write_all(&input).await;
        let _ = stdin.shutdown().await;
    });
    let out = tokio::spawn(read_all(stdout));
    let err = tokio::spawn(read_all(stderr));
    let _tasks = Tasks(vec![
        writer.abort_handle(),
        out.abort_handle(),
        err.abort_handle(),
    ]);
    let end = match tokio::time::timeout(spec.timeout, child.wait()).await {
        Ok(Ok(status)) => {
            use std::os::unix::process::ExitStatusExt;
            match (status.code(), status.signal()) {
                (Some(code), _) => RunEnd::Exited(code),
                (None, Some(sig)) => RunEnd::Signalled(sig),
                (None, None) => RunEnd::Signalled(0),
            }
        }
        Ok(Err(e)) => RunEnd::SpawnFailed(format!("waiting for the hook failed: {e}")),
        Err(_) => RunEnd::TimedOut,
    };
    // Whatever the shell left running goes with it.
    group.kill();
    let _ = child.wait().await;
    writer.abort();
    let (stdout, overflow_out) = drain(out).await;
    let (stderr, overflow_err) = drain(err).await;
    HookRun {
        end,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        overflowed: overflow_out || overflow_err,
        elapsed: start.elapsed(),
    }
}

async fn drain(task: tokio::task::JoinHandle<(Vec<u8>, bool)>) -> (Vec<u8>, bool) {
    let abort = task.abort_handle();
    match tokio::time::timeout(DRAIN_GRACE, task).await {
        Ok(Ok(v)) => v,
        _ => {
            abort.abort();
            (Vec::new(), false)
        }
    }
}
