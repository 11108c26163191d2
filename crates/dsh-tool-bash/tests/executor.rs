//! Behaviour of the local executor, with real processes.
//!
//! Every test has its own executor and its own temporary directory, so the
//! tests run in parallel. Where a test must wait for a process, it polls with a
//! deadline; no sleep stands in for synchronisation.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use dsh_tool_bash::{
    Containment, ErrorKind, Executor, ExecutorConfig, Exit, RunOutput, RunRequest,
};
use tokio_util::sync::CancellationToken;

/// Both containment mechanisms: what this machine offers, and the fallback.
const MODES: [Containment; 2] = [Containment::Auto, Containment::ProcessTree];

/// A temporary directory removed at the end of the test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "dsh-bash-test-{}-{name}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn file(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn config(dir: &TempDir, containment: Containment) -> ExecutorConfig {
    ExecutorConfig {
        cwd: dir.path().to_path_buf(),
        containment,
        ..ExecutorConfig::default()
    }
}

fn executor(dir: &TempDir) -> Executor {
    Executor::new(config(dir, Containment::Auto)).unwrap()
}

async fn run(executor: &Executor, command: &str) -> RunOutput {
    executor.run(RunRequest::new(command)).await.unwrap()
}

/// Whether process `pid` is gone: no such process, or a zombie (dead,
/// waiting for its parent to collect it).
fn gone(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat[stat.rfind(')').unwrap() + 2..].chars().next().unwrap();
            state == 'Z' || state == 'X'
        }
    }
}

/// Waits (up to 10 s) until `path` holds a complete line, and returns it as a pid.
async fn wait_for_pid(path: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text.trim().parse().unwrap();
            }
        }
        assert!(Instant::now() < deadline, "{path} never appeared");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Polls `check` until it holds, up to 10 s.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A command that starts a TERM-proof daemon in its own session, a
/// double-forked grandchild, and a double-forked daemon in its own session
/// (orphaned at once), records their pids in `dir`, waits until all are
/// recorded, prints `ready` and sleeps.
/// The executor still runs commands after it killed a call: a killed
/// cgroup handed to the next call would kill it at birth on some kernels.
async fn still_runs(ex: &Executor, mode: Containment) {
    for _ in 0..3 {
        let out = run(ex, "echo after").await;
        assert_eq!(out.stdout.text, "after\n", "{mode:?}: {:?}", out.exit);
        assert_eq!(out.exit, Exit::Code(0), "{mode:?}");
    }
}

fn escaping_command(dir: &TempDir) -> String {
    format!(
        "setsid bash -c 'trap \"\" TERM; echo $$ > {shell}; sleep 1000 & echo $! > {daemon}; wait' & \
         ( (sleep 1000 & echo $! > {grandchild}) & ); \
         ( (setsid sleep 1000 & echo $! > {orphan}) & ); \
         while [ ! -s {daemon} ] || [ ! -s {grandchild} ] || [ ! -s {orphan} ]; do sleep 0.01; done; \
         echo ready; sleep 1000",
        shell = dir.file("shell"),
        daemon = dir.file("daemon"),
        grandchild = dir.file("grandchild"),
        orphan = dir.file("orphan"),
    )
}

async fn escaped_pids(dir: &TempDir) -> Vec<i32> {
    let mut pids = Vec::new();
    for name in ["shell", "daemon", "grandchild", "orphan"] {
        pids.push(wait_for_pid(&dir.file(name)).await);
    }
    pids
}

// ------------------------------------------------------------------ basics

#[tokio::test]
async fn stdout_stderr_and_exit_codes() {
    let dir = TempDir::new("basics");
    let ex = executor(&dir);
    assert_eq!(run(&ex, "echo hi").await.model_text(), "hi\n[exit code: 0]");
    assert_eq!(
        run(&ex, "printf hi; exit 3").await.model_text(),
        "hi\n[exit code: 3]"
    );
    assert_eq!(
        run(&ex, "true").await.model_text(),
        "(no output)\n[exit code: 0]"
    );
    assert_eq!(
        run(&ex, "echo out; echo err >&2").await.model_text(),
        "out\n[stderr]\nerr\n[exit code: 0]"
    );
    assert_eq!(
        run(&ex, "printf out; printf err >&2; exit 1")
            .await
            .model_text(),
        "out\n[stderr]\nerr\n[exit code: 1]"
    );
    assert_eq!(
        run(&ex, "echo err >&2; exit 2").await.model_text(),
        "[stderr]\nerr\n[exit code: 2]"
    );
    let out = run(&ex, "kill -USR1 $$").await;
    assert_eq!(out.exit, Exit::Signal("SIGUSR1".into()));
    assert_eq!(out.model_text(), "(no output)\n[killed by signal: SIGUSR1]");
}

#[tokio::test]
async fn stdin_is_closed() {
    let dir = TempDir::new("stdin");
    let ex = executor(&dir);
    let request =
        RunRequest::new("cat; read line; echo \"read: $?\"").timeout(Duration::from_secs(20));
    let out = ex.run(request).await.unwrap();
    assert_eq!(out.model_text(), "read: 1\n[exit code: 0]");
    assert!(!out.timed_out);
    assert!(out.elapsed < Duration::from_secs(10), "{:?}", out.elapsed);
}

#[tokio::test]
async fn environment_is_scrubbed_and_quiet() {
    let dir = TempDir::new("env");
    // Names unique to this test, so other tests are unaffected.
    for (name, value) in [
        ("DSH_TEST_FOO_TOKEN", "t"),
        ("DSH_TEST_my_secret", "s"),
        ("DSH_TEST_API_KEY", "k"),
        ("DSH_TEST_DB_Password", "p"),
        ("DSH_TEST_PLAIN", "kept"),
    ] {
        std::env::set_var(name, value);
    }
    let ex = executor(&dir);
    let out = run(
        &ex,
        "env | grep '^DSH_TEST_' | sort; echo \"$NO_COLOR $TERM $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT\"",
    )
    .await;
    assert_eq!(
        out.model_text(),
        "DSH_TEST_PLAIN=kept\n1 dumb cat cat 0\n[exit code: 0]"
    );
}

#[tokio::test]
async fn no_startup_files_are_read() {
    let dir = TempDir::new("rc");
    let rc = dir.path().join("rc");
    fs::write(&rc, "echo sourced\n").unwrap();
    // A non-interactive bash sources $BASH_ENV; every executor drops it, so
    // setting it here affects no other test.
    std::env::set_var("BASH_ENV", &rc);
    let ex = executor(&dir);
    let out = run(&ex, "echo \"[$BASH_ENV]\"").await;
    assert_eq!(out.model_text(), "[]\n[exit code: 0]");
}

#[tokio::test]
async fn workdir_absolute_relative_and_missing() {
    let dir = TempDir::new("workdir");
    fs::create_dir(dir.path().join("sub")).unwrap();
    let ex = executor(&dir);
    let root = dir.path().display().to_string();

    let out = ex.run(RunRequest::new("pwd")).await.unwrap();
    assert_eq!(out.model_text(), format!("{root}\n[exit code: 0]"));
    let out = ex.run(RunRequest::new("pwd").workdir("sub")).await.unwrap();
    assert_eq!(out.model_text(), format!("{root}/sub\n[exit code: 0]"));
    let out = ex
        .run(RunRequest::new("pwd").workdir(format!("{root}/sub")))
        .await
        .unwrap();
    assert_eq!(out.cwd, dir.path().join("sub"));

    let err = ex
        .run(RunRequest::new("pwd").workdir("missing"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Workdir);
    assert_eq!(
        err.to_string(),
        format!("working directory {root}/missing does not exist")
    );
    let err = ex
        .spawn_background("pwd", Some("/no/such/dir"), None)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "working directory /no/such/dir does not exist"
    );
}

#[tokio::test]
async fn ansi_sequences_are_removed() {
    let dir = TempDir::new("ansi");
    let ex = executor(&dir);
    let out = run(
        &ex,
        r"printf '\033[1;31mred\033[0m \033]0;title\007plain \033]8;;http://x\033\\link\033]8;;\033\\\n'",
    )
    .await;
    assert_eq!(out.model_text(), "red plain link\n[exit code: 0]");
}

#[tokio::test]
async fn invalid_utf8_is_replaced_and_flagged() {
    let dir = TempDir::new("utf8");
    let ex = executor(&dir);
    let out = run(&ex, r"printf 'a\377b\n'; printf '\376' >&2").await;
    assert!(out.stdout.lossy && out.stderr.lossy);
    assert_eq!(
        out.model_text(),
        "a\u{FFFD}b\n[stderr]\n\u{FFFD}\n[invalid UTF-8 in stdout and stderr replaced with U+FFFD]\n[exit code: 0]"
    );
    let out = run(&ex, "echo 'é ok'").await;
    assert!(!out.stdout.lossy);
    assert_eq!(out.model_text(), "é ok\n[exit code: 0]");
}

// ------------------------------------------------------------------ timeouts

#[tokio::test]
async fn timeout_is_clamped_and_reported() {
    let dir = TempDir::new("clamp");
    let mut cfg = config(&dir, Containment::Auto);
    cfg.max_timeout = Duration::from_millis(300);
    let ex = Executor::new(cfg).unwrap();
    let out = ex
        .run(RunRequest::new("echo before; sleep 100").timeout(Duration::from_secs(3600)))
        .await
        .unwrap();
    assert!(out.timed_out && out.timeout_clamped);
    assert_eq!(out.timeout, Duration::from_millis(300));
    assert_eq!(
        out.model_text(),
        "before\n[timeout clamped to 300ms]\n[timed out after 300ms]\n[killed by signal: SIGTERM]"
    );

    // Within the maximum: no note.
    let out = ex
        .run(RunRequest::new("echo fast").timeout(Duration::from_millis(250)))
        .await
        .unwrap();
    assert!(!out.timeout_clamped);
    assert_eq!(out.model_text(), "fast\n[exit code: 0]");
}

#[tokio::test]
async fn default_timeout_applies() {
    let dir = TempDir::new("default-timeout");
    let mut cfg = config(&dir, Containment::Auto);
    cfg.default_timeout = Duration::from_millis(200);
    let ex = Executor::new(cfg).unwrap();
    let out = run(&ex, "sleep 100").await;
    assert_eq!(
        out.model_text(),
        "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]"
    );
}

#[tokio::test]
async fn term_trapping_command_is_killed_after_the_grace() {
    let dir = TempDir::new("trap");
    let mut cfg = config(&dir, Containment::Auto);
    cfg.kill_grace = Duration::from_millis(300);
    let ex = Executor::new(cfg).unwrap();
    let out = ex
        .run(
            RunRequest::new("trap '' TERM; echo trapped; sleep 100")
                .timeout(Duration::from_millis(200)),
        )
        .await
        .unwrap();
    assert_eq!(
        out.model_text(),
        "trapped\n[timed out after 200ms]\n[killed by signal: SIGKILL]"
    );
    assert!(
        out.elapsed >= Duration::from_millis(500),
        "{:?}",
        out.elapsed
    );
}

// ------------------------------------------------------------------ no survivors

#[tokio::test]
async fn escaped_descendants_are_gone_after_a_timeout() {
    for mode in MODES {
        let dir = TempDir::new("escape-timeout");
        let mut cfg = config(&dir, mode);
        cfg.kill_grace = Duration::from_millis(200);
        let ex = Executor::new(cfg).unwrap();
        let out = ex
            .run(RunRequest::new(escaping_command(&dir)).timeout(Duration::from_millis(1500)))
            .await
            .unwrap();
        assert!(out.timed_out, "{mode:?}");
        assert!(
            out.model_text()
                .starts_with("ready\n[timed out after 1500ms]\n"),
            "{mode:?}: {}",
            out.model_text()
        );
        for pid in escaped_pids(&dir).await {
            assert!(gone(pid), "{mode:?}: process {pid} survived the timeout");
        }
        still_runs(&ex, mode).await;
    }
}

#[tokio::test]
async fn escaped_descendants_are_gone_after_cancellation() {
    for mode in MODES {
        let dir = TempDir::new("escape-cancel");
        let ex = Executor::new(config(&dir, mode)).unwrap();
        let cancel = CancellationToken::new();
        let request = RunRequest::new(escaping_command(&dir)).cancel(cancel.clone());
        let call = {
            let ex = ex.clone();
            tokio::spawn(async move { ex.run(request).await })
        };
        let pids = escaped_pids(&dir).await;
        cancel.cancel();
        let err = call.await.unwrap().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Cancelled);
        for pid in pids {
            assert!(gone(pid), "{mode:?}: process {pid} survived cancellation");
        }
        still_runs(&ex, mode).await;
    }
}

#[tokio::test]
async fn escaped_descendants_are_gone_when_the_call_is_dropped() {
    for mode in MODES {
        let dir = TempDir::new("escape-drop");
        let ex = Executor::new(config(&dir, mode)).unwrap();
        let call = {
            let ex = ex.clone();
            let command = escaping_command(&dir);
            tokio::spawn(async move { ex.run(RunRequest::new(command)).await })
        };
        let pids = escaped_pids(&dir).await;
        call.abort();
        assert!(call.await.unwrap_err().is_cancelled());
        eventually("escaped processes die after the call is dropped", || {
            pids.iter().all(|&pid| gone(pid))
        })
        .await;
        still_runs(&ex, mode).await;
    }
}

#[tokio::test]
async fn escaped_descendants_are_gone_after_bash_kill() {
    for mode in MODES {
        let dir = TempDir::new("escape-kill");
        let ex = Executor::new(config(&dir, mode)).unwrap();
        let id = ex
            .spawn_background(&escaping_command(&dir), None, None)
            .unwrap();
        let text = ex
            .read_output("bash-1", None, Some(Duration::from_secs(10)), None)
            .await
            .unwrap();
        assert_eq!(text, "ready\n[status: running]", "{mode:?}");
        let pids = escaped_pids(&dir).await;
        assert_eq!(
            ex.kill(&id.to_string(), None).await.unwrap(),
            "killed background task bash-1"
        );
        for pid in pids {
            assert!(gone(pid), "{mode:?}: process {pid} survived bash_kill");
        }
        let text = ex.read_output("bash-1", None, None, None).await.unwrap();
        assert_eq!(
            text, "(no new output)\n[status: killed by SIGKILL]",
            "{mode:?}"
        );
        still_runs(&ex, mode).await;
    }
}

#[tokio::test]
async fn leftovers_of_a_finished_command_are_killed() {
    for mode in MODES {
        let dir = TempDir::new("leftovers");
        let ex = Executor::new(config(&dir, mode)).unwrap();
        // The daemon keeps stdout open: the call must still end promptly.
        let out = run(&ex, "setsid sleep 1000 & echo $!").await;
        let pid: i32 = out.stdout.text.trim().parse().unwrap();
        assert_eq!(out.model_text(), format!("{pid}\n[exit code: 0]"));
        assert!(gone(pid), "{mode:?}: daemon {pid} survived its call");
        assert!(
            out.elapsed < Duration::from_secs(2),
            "{mode:?}: {:?}",
            out.elapsed
        );
    }
}

#[tokio::test]
async fn dropping_the_executor_kills_background_tasks_and_removes_spill_files() {
    for mode in MODES {
        let dir = TempDir::new("drop");
        let ex = Executor::new(config(&dir, mode)).unwrap();
        ex.spawn_background(&escaping_command(&dir), None, None)
            .unwrap();
        let pids = escaped_pids(&dir).await;
        let spill_dir = ex.spill_dir().to_path_buf();
        assert!(spill_dir.is_dir());
        let clone = ex.clone();
        drop(ex);
        assert!(spill_dir.is_dir(), "a clone still holds the executor");
        drop(clone);
        for pid in pids {
            assert!(gone(pid), "{mode:?}: process {pid} survived the executor");
        }
        assert!(!spill_dir.exists(), "{mode:?}: spill directory left behind");
    }
}

#[tokio::test]
async fn commands_run_in_their_own_cgroup_when_available() {
    let dir = TempDir::new("cgroup");
    if let Ok(ex) = Executor::new(config(&dir, Containment::Cgroup)) {
        assert_eq!(ex.containment(), Containment::Cgroup);
        let first = run(&ex, "grep '^0::' /proc/self/cgroup").await.stdout.text;
        // `.../dsh-bash-<pid>-<nonce>/c<N>`, a cgroup of this executor.
        let tag = ex
            .spill_dir()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        assert!(
            first.trim_end().rsplit('/').nth(1) == Some(tag.as_str()),
            "{first}"
        );
        assert_eq!(ex.containment(), Containment::Cgroup);
    }
    let ex = Executor::new(config(&dir, Containment::ProcessTree)).unwrap();
    assert_eq!(ex.containment(), Containment::ProcessTree);
}

// ------------------------------------------------------------------ long output

fn small(dir: &TempDir, max_output_bytes: usize) -> Executor {
    let mut cfg = config(dir, Containment::Auto);
    cfg.max_output_bytes = max_output_bytes;
    Executor::new(cfg).unwrap()
}

#[tokio::test]
async fn output_exactly_at_the_cap_is_whole() {
    let dir = TempDir::new("cap");
    let ex = small(&dir, 1000);
    let out = run(&ex, "head -c 1000 /dev/zero | tr '\\0' a").await;
    assert!(!out.stdout.truncated());
    assert_eq!(out.stdout.spill, None);
    assert_eq!(
        out.model_text(),
        format!("{}\n[exit code: 0]", "a".repeat(1000))
    );
    assert_eq!(fs::read_dir(ex.spill_dir()).unwrap().count(), 0);
}

#[tokio::test]
async fn one_byte_over_the_cap_is_truncated_and_spilled() {
    let dir = TempDir::new("over");
    let ex = small(&dir, 1000);
    let out = run(&ex, "head -c 1001 /dev/zero | tr '\\0' a").await;
    assert!(out.stdout.truncated());
    assert_eq!(out.stdout.omitted_bytes, 1);
    let spill = out.stdout.spill.clone().unwrap();
    assert!(spill.complete);
    assert_eq!(
        out.model_text(),
        format!(
            "{}\n[… 1 bytes omitted …]\n{}\n[stdout truncated; full output: {}]\n[exit code: 0]",
            "a".repeat(250),
            "a".repeat(750),
            spill.path.display()
        )
    );
    assert_eq!(fs::read(&spill.path).unwrap(), "a".repeat(1001).as_bytes());
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&spill.path), 0o600);
    assert_eq!(mode(ex.spill_dir()), 0o700);
    assert_eq!(spill.path.parent(), Some(ex.spill_dir()));

    let spill_dir = ex.spill_dir().to_path_buf();
    drop(ex);
    assert!(!spill.path.exists() && !spill_dir.exists());
}

#[tokio::test]
async fn head_and_tail_are_kept_and_spill_holds_everything() {
    let dir = TempDir::new("headtail");
    let ex = small(&dir, 1000);
    let out = run(&ex, "seq 1 100000; seq 1 10 >&2").await;
    let full: String = (1..=100000).map(|n| format!("{n}\n")).collect();
    let head = &full[..250];
    let tail = &full[full.len() - 750..];
    let omitted = full.len() - 1000;
    let spill = out.stdout.spill.clone().unwrap();
    assert_eq!(
        out.model_text(),
        format!(
            "{head}\n[… {omitted} bytes omitted …]\n{tail}[stderr]\n{}[stdout truncated; full output: {}]\n[exit code: 0]",
            (1..=10).map(|n| format!("{n}\n")).collect::<String>(),
            spill.path.display()
        )
    );
    assert_eq!(out.stdout.raw_bytes, full.len() as u64);
    assert_eq!(fs::read_to_string(&spill.path).unwrap(), full);
    assert_eq!(out.stderr.spill, None);
}

#[tokio::test]
async fn spill_files_are_capped() {
    let dir = TempDir::new("spillcap");
    let mut cfg = config(&dir, Containment::Auto);
    cfg.max_output_bytes = 100;
    cfg.spill_cap_bytes = 5000;
    let ex = Executor::new(cfg).unwrap();
    let out = run(&ex, "seq 1 10000").await;
    let spill = out.stdout.spill.clone().unwrap();
    assert!(!spill.complete);
    assert_eq!(spill.bytes, 5000);
    let full: String = (1..=10000).map(|n| format!("{n}\n")).collect();
    assert_eq!(fs::read_to_string(&spill.path).unwrap(), full[..5000]);
    assert!(out.model_text().ends_with(&format!(
        "\n[stdout truncated; its first 5000 bytes are in {}]\n[exit code: 0]",
        spill.path.display()
    )));
}

#[tokio::test]
async fn multibyte_characters_are_never_split() {
    let dir = TempDir::new("multibyte");
    // Budget 1003: head 250 bytes, tail 753; "a" + 1000 × "é" = 2001 bytes puts
    // both cuts inside a character.
    let ex = small(&dir, 1003);
    let out = run(&ex, "printf a; for i in $(seq 1000); do printf 'é'; done").await;
    assert!(!out.stdout.lossy);
    assert_eq!(out.stdout.omitted_bytes, 1000);
    let expected = format!(
        "a{}\n[… 1000 bytes omitted …]\n{}",
        "é".repeat(124),
        "é".repeat(376)
    );
    assert_eq!(out.stdout.text, expected);
}

// ------------------------------------------------------------------ background

#[tokio::test]
async fn background_reads_are_incremental() {
    let dir = TempDir::new("incremental");
    let ex = executor(&dir);
    let go = dir.file("go");
    let go2 = dir.file("go2");
    let command = format!(
        "echo one; while [ ! -e {go} ]; do sleep 0.01; done; echo two; \
         while [ ! -e {go2} ]; do sleep 0.01; done; exit 4"
    );
    let id = ex.spawn_background(&command, None, Some("a")).unwrap();
    assert_eq!(id.to_string(), "bash-1");
    let wait = Some(Duration::from_secs(10));
    let a = Some("a");
    assert_eq!(
        ex.read_output("bash-1", a, wait, None).await.unwrap(),
        "one\n[status: running]"
    );
    assert_eq!(
        ex.read_output("bash-1", a, None, None).await.unwrap(),
        "(no new output)\n[status: running]"
    );
    fs::write(&go, "").unwrap();
    let started = Instant::now();
    assert_eq!(
        ex.read_output("bash-1", a, wait, None).await.unwrap(),
        "two\n[status: running]"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the wait did not end on new output"
    );
    fs::write(&go2, "").unwrap();
    assert_eq!(
        ex.read_output("bash-1", a, wait, None).await.unwrap(),
        "(no new output)\n[status: completed, exit code: 4]"
    );
    assert_eq!(ex.task_exit("bash-1", a).unwrap(), Some(Exit::Code(4)));
    assert_eq!(
        ex.read_output("bash-1", a, None, None).await.unwrap(),
        "(no new output)\n[status: completed, exit code: 4]"
    );
    let second = ex.spawn_background("true", None, Some("a")).unwrap();
    assert_eq!(second.to_string(), "bash-2");
}

#[tokio::test]
async fn wait_is_bounded_and_capped() {
    let dir = TempDir::new("wait");
    let mut cfg = config(&dir, Containment::Auto);
    cfg.max_wait = Duration::from_millis(300);
    let ex = Executor::new(cfg).unwrap();
    ex.spawn_background("sleep 1000", None, None).unwrap();
    let started = Instant::now();
    let text = ex
        .read_output("bash-1", None, Some(Duration::from_millis(100)), None)
        .await
        .unwrap();
    assert_eq!(text, "(no new output)\n[status: running]");
    assert!(started.elapsed() >= Duration::from_millis(100));
    let started = Instant::now();
    ex.read_output("bash-1", None, Some(Duration::from_secs(3600)), None)
        .await
        .unwrap();
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

#[tokio::test]
async fn wait_ends_when_the_task_completes() {
    let dir = TempDir::new("wait-exit");
    let ex = executor(&dir);
    ex.spawn_background("exit 3", None, None).unwrap();
    let text = ex
        .read_output("bash-1", None, Some(Duration::from_secs(10)), None)
        .await
        .unwrap();
    assert_eq!(text, "(no new output)\n[status: completed, exit code: 3]");
}

#[tokio::test]
async fn filter_returns_matching_whole_lines() {
    let dir = TempDir::new("filter");
    let ex = executor(&dir);
    let (go, go2, go3) = (dir.file("go"), dir.file("go2"), dir.file("go3"));
    // `cat` of a file writes each batch of lines at once.
    fs::write(dir.path().join("first"), "error: a\ninfo: b\nerror: c\n").unwrap();
    fs::write(dir.path().join("second"), "info: d\nerror: partial").unwrap();
    let command = format!(
        "cat first; while [ ! -e {go} ]; do sleep 0.01; done; \
         cat second; while [ ! -e {go2} ]; do sleep 0.01; done; \
         echo ' end'; while [ ! -e {go3} ]; do sleep 0.01; done"
    );
    ex.spawn_background(&command, None, None).unwrap();
    let wait = Some(Duration::from_secs(10));
    let filter = Some("^error");
    assert_eq!(
        ex.read_output("bash-1", None, wait, filter).await.unwrap(),
        "error: a\nerror: c\n[status: running]"
    );
    fs::write(&go, "").unwrap();
    // "info: d" does not match and "error: partial" is not a whole line yet.
    assert_eq!(
        ex.read_output("bash-1", None, Some(Duration::from_millis(300)), filter)
            .await
            .unwrap(),
        "(no new output matching the filter)\n[status: running]"
    );
    fs::write(&go2, "").unwrap();
    assert_eq!(
        ex.read_output("bash-1", None, wait, filter).await.unwrap(),
        "error: partial end\n[status: running]"
    );
    fs::write(&go3, "").unwrap();

    let err = ex
        .read_output("bash-1", None, None, Some("("))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidFilter);
}

#[tokio::test]
async fn background_output_is_bounded_with_head_and_tail() {
    let dir = TempDir::new("bg-long");
    let ex = small(&dir, 1000);
    ex.spawn_background("seq 1 100000", None, None).unwrap();
    eventually("the task finishes", || {
        ex.task_exit("bash-1", None).unwrap().is_some()
    })
    .await;
    let text = ex.read_output("bash-1", None, None, None).await.unwrap();
    let full: String = (1..=100000).map(|n| format!("{n}\n")).collect();
    let path = ex.spill_dir().join("bash-1.log");
    assert_eq!(
        text,
        format!(
            "{}\n[… {} bytes omitted …]\n{}[output truncated; full output: {}]\n[status: completed, exit code: 0]",
            &full[..250],
            full.len() - 1000,
            &full[full.len() - 750..],
            path.display()
        )
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), full);
}

#[tokio::test]
async fn background_stdout_and_stderr_interleave() {
    let dir = TempDir::new("bg-interleave");
    let ex = executor(&dir);
    ex.spawn_background(
        "echo 1; echo 2 >&2; echo 3; printf '\\033[31mred\\033[0m\\n'",
        None,
        None,
    )
    .unwrap();
    eventually("the task finishes", || {
        ex.task_exit("bash-1", None).unwrap().is_some()
    })
    .await;
    assert_eq!(
        ex.read_output("bash-1", None, None, None).await.unwrap(),
        "1\n2\n3\nred\n[status: completed, exit code: 0]"
    );
}

#[tokio::test]
async fn at_most_64_running_tasks() {
    let dir = TempDir::new("cap64");
    let ex = executor(&dir);
    for n in 1..=64 {
        let id = ex.spawn_background("exec sleep 1000", None, None).unwrap();
        assert_eq!(id.to_string(), format!("bash-{n}"));
    }
    let err = ex.spawn_background("true", None, None).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TooManyTasks);
    assert_eq!(
        err.to_string(),
        "too many background tasks: 64 are running; stop one with bash_kill before starting another"
    );
    assert_eq!(
        ex.kill("bash-7", None).await.unwrap(),
        "killed background task bash-7"
    );
    // Finished tasks do not count.
    let id = ex.spawn_background("true", None, None).unwrap();
    assert_eq!(id.to_string(), "bash-65");
}

#[tokio::test]
async fn tasks_belong_to_their_agent() {
    let dir = TempDir::new("agents");
    let ex = executor(&dir);
    ex.spawn_background("exec sleep 1000", None, Some("alice"))
        .unwrap();
    for agent in [Some("bob"), None] {
        let err = ex
            .read_output("bash-1", agent, None, None)
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ForeignTask);
        assert_eq!(err.to_string(), "task bash-1 belongs to another agent");
        let err = ex.kill("bash-1", agent).await.unwrap_err();
        assert_eq!(err.to_string(), "task bash-1 belongs to another agent");
    }
    assert_eq!(
        ex.read_output("bash-1", Some("alice"), None, None)
            .await
            .unwrap(),
        "(no new output)\n[status: running]"
    );
    assert_eq!(
        ex.kill("bash-1", Some("alice")).await.unwrap(),
        "killed background task bash-1"
    );
}

#[tokio::test]
async fn kill_and_unknown_task_messages() {
    let dir = TempDir::new("kill");
    let ex = executor(&dir);
    ex.spawn_background("exec sleep 1000", None, None).unwrap();
    ex.spawn_background("echo done", None, None).unwrap();
    eventually("bash-2 finishes", || {
        ex.task_exit("bash-2", None).unwrap().is_some()
    })
    .await;

    assert_eq!(
        ex.kill("bash-1", None).await.unwrap(),
        "killed background task bash-1"
    );
    assert_eq!(
        ex.read_output("bash-1", None, None, None).await.unwrap(),
        "(no new output)\n[status: killed by SIGKILL]"
    );
    assert_eq!(
        ex.kill("bash-1", None).await.unwrap(),
        "task bash-1 had already finished"
    );
    assert_eq!(
        ex.kill("bash-2", None).await.unwrap(),
        "task bash-2 had already finished"
    );

    for id in ["bash-99", "nonsense", "bash-"] {
        let err = ex.kill(id, None).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownTask);
        assert_eq!(err.to_string(), format!("unknown bash task \"{id}\""));
        let err = ex.read_output(id, None, None, None).await.unwrap_err();
        assert_eq!(err.to_string(), format!("unknown bash task \"{id}\""));
    }
}

#[tokio::test]
async fn background_tasks_outlive_the_call_that_started_them() {
    let dir = TempDir::new("bg-cancel");
    let ex = executor(&dir);
    // spawn_background takes no cancellation token: cancelling the call's
    // token cannot reach the task.
    let cancel = CancellationToken::new();
    let id = ex
        .spawn_background("echo alive; exec sleep 1000", None, None)
        .unwrap();
    cancel.cancel();
    assert_eq!(
        ex.read_output(&id.to_string(), None, Some(Duration::from_secs(10)), None)
            .await
            .unwrap(),
        "alive\n[status: running]"
    );
}

#[tokio::test]
async fn configured_variables_reach_every_command_over_the_quiet_ones() {
    let dir = TempDir::new("env");
    let ex = Executor::new(ExecutorConfig {
        env: vec![
            ("DSH_FROM_CONFIG".into(), "set".into()),
            ("PAGER".into(), "more".into()),
        ],
        ..config(&dir, Containment::Auto)
    })
    .unwrap();
    let out = run(&ex, "echo $DSH_FROM_CONFIG $PAGER $NO_COLOR").await;
    assert_eq!(out.stdout.text, "set more 1\n");
}
