//! The executor against plain `tokio::process`, in the same run:
//!
//! * (a) running `true`: `Executor::run` (containment, environment scrubbing,
//!   output pipeline) vs spawning `bash -c true` directly — target ratio ≤ 1.2;
//! * (c) running `true` confined by a `workspace-write` sandbox vs the same
//!   executor unconfined — target ratio ≤ 1.1;
//! * (d) a read-only call (`wc -l README.md`) held read-only by the kernel,
//!   with 10 `Read` deny rules on a real project directory (this
//!   repository's tracked files), vs the same call unconfined — target
//!   ratio ≤ 1.15; and the two `workspace-write` layouts side by side
//!   (mount namespace vs entry by entry);
//! * (b) a command printing 1 GiB: throughput through the executor vs draining
//!   the same command's pipe directly, and the executor's peak memory growth
//!   (target: under 32 MiB).
//!
//! `cargo bench -p dsh-tool-bash` prints `RATIO` and `RESULT` lines.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use std::hint::black_box;
use std::process::Stdio;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use dsh_tool_bash::{Confine, Executor, ExecutorConfig, ReadDenialsSource, RunRequest};
use tokio::io::AsyncReadExt;
use tokio::runtime::Runtime;

const GIB: u64 = 1 << 30;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn direct_true() {
    let out = tokio::process::Command::new("bash")
        .arg("-c")
        .arg("true")
        .stdin(Stdio::null())
        .output()
        .await
        .expect("bash -c true");
    assert!(out.status.success());
}

async fn executor_true(executor: &Executor) {
    let out = executor.run(RunRequest::new("true")).await.expect("run");
    assert_eq!(out.model_text(), "(no output)\n[exit code: 0]");
}

fn bench(c: &mut Criterion) {
    let rt = runtime();
    let executor = Executor::new(ExecutorConfig::default()).expect("executor");
    let mut group = c.benchmark_group("spawn true");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("executor.run", |b| {
        b.iter(|| rt.block_on(executor_true(black_box(&executor))))
    });
    group.bench_function("tokio::process bash -c", |b| {
        b.iter(|| rt.block_on(direct_true()))
    });
    group.finish();
}

fn spawn_ratio() {
    let rt = runtime();
    let executor = Executor::new(ExecutorConfig::default()).expect("executor");
    println!("containment in use: {:?}", executor.containment());
    let (direct, ours) = ratio::compare(
        || rt.block_on(direct_true()),
        || rt.block_on(executor_true(&executor)),
        11,
        Duration::from_millis(300),
    );
    ratio::report(
        "bash true",
        "tokio::process bash -c true",
        "executor.run",
        (direct, ours),
    );
}

/// The same `true` through a `workspace-write` executor (network off, so
/// TCP and scoping rules too) and through an unconfined one.
fn sandbox_ratio() {
    let rt = runtime();
    let dir = std::env::temp_dir().join(format!("dsh-bench-sandbox-{}", std::process::id()));
    for d in [".git", "src", "target"] {
        std::fs::create_dir_all(dir.join(d)).expect("bench project");
    }
    let config = |sandbox| ExecutorConfig {
        cwd: dir.clone(),
        sandbox,
        ..ExecutorConfig::default()
    };
    let plain = Executor::new(config(None)).expect("executor");
    let confined =
        Executor::new(config(Some(dsh_sandbox::SandboxPolicy::default()))).expect("executor");
    let (unconfined, sandboxed) = ratio::compare(
        || rt.block_on(executor_true(&plain)),
        || rt.block_on(executor_true(&confined)),
        11,
        Duration::from_millis(300),
    );
    ratio::report(
        "bash true, workspace-write sandbox",
        "executor.run unconfined",
        "executor.run workspace-write",
        (unconfined, sandboxed),
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same `true` under `workspace-write` with a filtering proxy's port
/// reachable: held by Landlock's port rule alone, and joining the
/// executor's network namespace (made once, with only loopback): what the
/// stronger mechanism costs a call.
fn netns_ratio() {
    if !dsh_sandbox::network_namespaces_available() {
        println!("RESULT network namespace: not available here");
        return;
    }
    let rt = runtime();
    let dir = std::env::temp_dir().join(format!("dsh-bench-netns-{}", std::process::id()));
    std::fs::create_dir_all(dir.join(".git")).expect("bench project");
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = proxy.local_addr().expect("its address").port();
    let config = |serve: Option<dsh_tool_bash::ServeListeners>| ExecutorConfig {
        cwd: dir.clone(),
        sandbox: Some(dsh_sandbox::SandboxPolicy::default()),
        network_proxy: Some(dsh_tool_bash::NetworkProxy {
            ports: vec![port],
            env: std::sync::Arc::new(|_: &str| Vec::new()),
            denials: std::sync::Arc::new(|_: &str| Vec::new()),
            started: None,
            ended: None,
            serve,
            local_binding: false,
        }),
        ..ExecutorConfig::default()
    };
    let ports_only = Executor::new(config(None)).expect("executor");
    // The listeners are taken and let go: what is measured is the spawn.
    let served: dsh_tool_bash::ServeListeners = std::sync::Arc::new(|listeners, ends| {
        drop((listeners, ends));
        Ok(())
    });
    let namespace = Executor::new(config(Some(served))).expect("executor");
    let (ports, netns) = ratio::compare(
        || rt.block_on(executor_true(&ports_only)),
        || rt.block_on(executor_true(&namespace)),
        11,
        Duration::from_millis(300),
    );
    ratio::report(
        "bash true, proxy port reachable",
        "Landlock port rule",
        "network namespace",
        (ports, netns),
    );
    println!(
        "RESULT network namespace: {:.0} µs per call vs {:.0} µs, {:.0} µs added",
        netns.as_secs_f64() * 1e6,
        ports.as_secs_f64() * 1e6,
        (netns.as_secs_f64() - ports.as_secs_f64()) * 1e6
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A copy of this repository's tracked files (a real project: a few
/// hundred files in a few dozen directories), with a `.git`, secrets the
/// deny rules name, and nothing built.
fn bench_project() -> std::path::PathBuf {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = std::env::temp_dir().join(format!("dsh-bench-project-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let listed = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["ls-files", "-z"])
        .output()
        .expect("git ls-files");
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name).into_owned();
        let to = dir.join(&name);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("bench project");
        let _ = std::fs::copy(repo.join(&name), &to);
    }
    std::fs::create_dir_all(dir.join(".git/hooks")).expect("bench project");
    std::fs::create_dir_all(dir.join("secrets")).expect("bench project");
    for secret in [".env", "crates/dsh/.env", "secrets/key.pem", "deploy.key"] {
        std::fs::write(dir.join(secret), "TOKEN=x\n").expect("bench project");
    }
    dir
}

/// Ten `Read` deny rules of the kinds users write, as the permission layer
/// hands them to the executor.
fn ten_denials(project: &std::path::Path) -> ReadDenialsSource {
    let deny = [
        "Read(./.env)",
        "Read(**/.env)",
        "Read(.env.*)",
        "Read(*.pem)",
        "Read(*.key)",
        "Read(./secrets/**)",
        "Read(~/.ssh/**)",
        "Read(~/.aws/credentials)",
        "Read(//etc/shadow)",
        "Read(./config/credentials.json)",
    ];
    let rules = dsh_policy::PermissionRules::parse(
        std::iter::empty::<&str>(),
        std::iter::empty::<&str>(),
        deny,
    )
    .expect("rules");
    let policy = dsh_policy::PermissionPolicy::new(rules, dsh_policy::Mode::Default, project);
    let paths = policy.read_denial_paths().expect("read denials");
    ReadDenialsSource::new(move || {
        let paths = paths.clone();
        Some(dsh_sandbox::ReadDenials {
            literal: paths.literal.clone(),
            search: paths.search.clone(),
            key: paths.key().to_owned(),
            matcher: std::sync::Arc::new(move |p: &std::path::Path| paths.is_denied(p)),
        })
    })
}

async fn read_only_call(executor: &Executor, confine: Confine) {
    let out = executor
        .run(RunRequest::new("wc -l README.md").confine(confine))
        .await
        .expect("run");
    assert!(
        out.model_text().contains("README.md"),
        "{}",
        out.model_text()
    );
}

/// (d): the read-only hold with ten deny rules vs the same call unconfined,
/// and the two `workspace-write` layouts.
fn hold_ratio() {
    let rt = runtime();
    let project = bench_project();
    let held = Executor::new(ExecutorConfig {
        cwd: project.clone(),
        read_denials: Some(ten_denials(&project)),
        ..ExecutorConfig::default()
    })
    .expect("executor");
    let plain = Executor::new(ExecutorConfig {
        cwd: project.clone(),
        ..ExecutorConfig::default()
    })
    .expect("executor");
    // The secret stays unread under the hold: the bench measures the real thing.
    let out = rt
        .block_on(held.run(RunRequest::new("cat .env").confine(Confine::ReadOnly)))
        .expect("run");
    assert!(!out.model_text().contains("TOKEN"), "{}", out.model_text());
    let (unconfined, confined) = ratio::compare(
        || rt.block_on(read_only_call(&plain, Confine::Unconfined)),
        || rt.block_on(read_only_call(&held, Confine::ReadOnly)),
        11,
        Duration::from_millis(300),
    );
    ratio::report(
        "read-only call, held read-only with 10 Read deny rules on a real project",
        "executor.run unconfined",
        "executor.run held read-only",
        (unconfined, confined),
    );
    if dsh_sandbox::namespaces_available() {
        let layout = |namespaces| {
            Executor::new(ExecutorConfig {
                cwd: project.clone(),
                sandbox: Some(dsh_sandbox::SandboxPolicy::default()),
                mount_namespaces: namespaces,
                read_denials: Some(ten_denials(&project)),
                ..ExecutorConfig::default()
            })
            .expect("executor")
        };
        let (fallback, namespace) = (layout(false), layout(true));
        let (entry_by_entry, mount_namespace) = ratio::compare(
            || rt.block_on(read_only_call(&fallback, Confine::Configured)),
            || rt.block_on(read_only_call(&namespace, Confine::Configured)),
            11,
            Duration::from_millis(300),
        );
        ratio::report(
            "workspace-write layouts, 10 Read deny rules, real project",
            "entry by entry",
            "mount namespace",
            (entry_by_entry, mount_namespace),
        );
    } else {
        println!("RESULT workspace-write layouts: no mount namespace on this machine");
    }
    let _ = std::fs::remove_dir_all(&project);
}

/// Calls 100 ms apart, as an agent makes them: cgroup containment then pays
/// for moving the shell into its cgroup (about one RCU grace period), which
/// back-to-back calls mostly do not see.
fn spaced() {
    let rt = runtime();
    let executor = Executor::new(ExecutorConfig::default()).expect("executor");
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..15 {
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        rt.block_on(direct_true());
        theirs.push(start.elapsed());
        std::thread::sleep(Duration::from_millis(100));
        let start = Instant::now();
        rt.block_on(executor_true(&executor));
        ours.push(start.elapsed());
    }
    ours.sort();
    theirs.sort();
    let (ours, theirs) = (ours[ours.len() / 2], theirs[theirs.len() / 2]);
    println!(
        "RESULT bash true, calls 100 ms apart ({:?}): tokio::process {theirs:?}/call, executor.run {ours:?}/call, executor.run/tokio::process = {:.2}x",
        executor.containment(),
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}

/// `VmRSS` or `VmHWM` of this process, in bytes.
fn vm(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Resets `VmHWM` to the current RSS (Linux: `echo 5 > /proc/self/clear_refs`).
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn big_output() {
    let rt = runtime();
    let command = format!("head -c {GIB} /dev/zero");
    let executor = Executor::new(ExecutorConfig::default()).expect("executor");
    // Warm up both paths (page cache, allocator).
    rt.block_on(executor.run(RunRequest::new("head -c 1000000 /dev/zero")))
        .expect("warm-up");

    let direct = |rt: &Runtime| {
        rt.block_on(async {
            let mut child = tokio::process::Command::new("bash")
                .arg("-c")
                .arg(&command)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn");
            let mut stdout = child.stdout.take().expect("stdout");
            let mut buf = vec![0u8; 64 * 1024];
            let mut total = 0u64;
            loop {
                let n = stdout.read(&mut buf).await.expect("read");
                if n == 0 {
                    break;
                }
                total += n as u64;
            }
            child.wait().await.expect("wait");
            assert_eq!(total, GIB);
        })
    };

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut growth = 0u64;
    for _ in 0..3 {
        let start = Instant::now();
        direct(&rt);
        theirs.push(start.elapsed());

        let before = vm("VmRSS");
        let peak_tracked = reset_peak();
        let start = Instant::now();
        let out = rt
            .block_on(executor.run(RunRequest::new(command.as_str())))
            .expect("run");
        ours.push(start.elapsed());
        assert_eq!(out.stdout.raw_bytes, GIB);
        assert!(out.stdout.truncated());
        let after = if peak_tracked {
            vm("VmHWM")
        } else {
            vm("VmRSS")
        };
        growth = growth.max(after.saturating_sub(before));
        // Spill files are per call; keep the disk use of the bench small.
        if let Some(spill) = &out.stdout.spill {
            let _ = std::fs::remove_file(&spill.path);
        }
    }
    ours.sort();
    theirs.sort();
    let (ours, theirs) = (ours[1], theirs[1]);
    let gibs = |d: Duration| 1.0 / d.as_secs_f64();
    println!(
        "RESULT 1 GiB of output: executor.run {:.2} GiB/s ({ours:?}), direct pipe drain {:.2} GiB/s ({theirs:?}), executor/direct time = {:.2}x",
        gibs(ours),
        gibs(theirs),
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
    println!(
        "RESULT 1 GiB of output: peak RSS growth during executor.run {:.1} MiB (target < 32 MiB)",
        growth as f64 / (1024.0 * 1024.0)
    );

    // The same without a spill file, to tell the pipeline from the disk.
    let no_spill = Executor::new(ExecutorConfig {
        spill_cap_bytes: 0,
        ..ExecutorConfig::default()
    })
    .expect("executor");
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let start = Instant::now();
            let out = rt
                .block_on(no_spill.run(RunRequest::new(command.as_str())))
                .expect("run");
            assert_eq!(out.stdout.raw_bytes, GIB);
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "RESULT 1 GiB of output, spill cap 0 (pipeline only): executor.run {:.2} GiB/s ({:?})",
        gibs(times[1]),
        times[1]
    );
}

criterion_group!(benches, bench);

fn main() {
    // `DSH_BENCH_ONLY=hold` (a comma list of spawn, sandbox, hold, netns,
    // spaced, output, criterion) runs part of the bench.
    let only = std::env::var("DSH_BENCH_ONLY").ok();
    let run = |name: &str| {
        only.as_deref()
            .is_none_or(|o| o.split(',').any(|n| n == name))
    };
    if run("spawn") {
        spawn_ratio();
    }
    if run("sandbox") {
        sandbox_ratio();
    }
    if run("hold") {
        hold_ratio();
    }
    if run("netns") {
        netns_ratio();
    }
    if run("spaced") {
        spaced();
    }
    if run("output") {
        big_output();
    }
    if !run("criterion") {
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
