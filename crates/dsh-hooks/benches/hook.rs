//! Added latency of one no-op `sh` hook per call: the same no-op tool
//! called through a registry without hooks and through one whose settings
//! hold one `PreToolUse` command hook (`true`), interleaved in one process.
//!
//! Prints `RESULT one no-op sh hook: … added per call` (the aim: the
//! process spawn and little else) after criterion's figures.

use criterion::{criterion_group, Criterion};
use dsh_hooks::{Hooks, HooksMiddleware, Session};
use dsh_policy::Settings;
use dsh_tools::{define_tool, ContentBlock, ToolArgs, ToolExecution, ToolRegistry};
use std::hint::black_box;
use std::time::{Duration, Instant};

#[derive(ToolArgs, serde::Deserialize)]
struct Noop {
    /// Ignored.
    #[allow(dead_code)]
    text: Option<String>,
}

fn registry(with_hook: bool) -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry
        .register(define_tool("noop", "Does nothing.", |_a: Noop, _c| async {
            Ok(vec![ContentBlock::text("ok")])
        }))
        .expect("register");
    if with_hook {
        let settings: Settings =
            r#"{"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#
                .parse()
                .expect("settings");
        let hooks = Hooks::from_settings(&settings).expect("hooks");
        registry.use_middleware(HooksMiddleware::new(
            hooks,
            Session::new(std::env::temp_dir()),
        ));
    }
    registry
}

fn call(rt: &tokio::runtime::Runtime, registry: &ToolRegistry) {
    let r = rt.block_on(registry.execute(ToolExecution::new("c", "noop", r#"{"text": "x"}"#)));
    assert!(!r.is_error, "{}", r.text());
    black_box(r);
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (plain, hooked) = (registry(false), registry(true));
    let mut group = c.benchmark_group("one call");
    group.bench_function("no hook", |b| b.iter(|| call(&rt, &plain)));
    group.bench_function("one no-op sh hook", |b| b.iter(|| call(&rt, &hooked)));
    group.finish();
}

/// Both sides interleaved, call by call, for the RESULT line.
fn report() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (plain, hooked) = (registry(false), registry(true));
    let (mut t_plain, mut t_hooked) = (Duration::ZERO, Duration::ZERO);
    let rounds = 300;
    for _ in 0..rounds {
        let start = Instant::now();
        call(&rt, &plain);
        t_plain += start.elapsed();
        let start = Instant::now();
        call(&rt, &hooked);
        t_hooked += start.elapsed();
    }
    let per = |t: Duration| t.as_secs_f64() * 1e6 / f64::from(rounds);
    println!(
        "RESULT one no-op sh hook: {:.0} µs per call vs {:.1} µs without, {:.0} µs added per call",
        per(t_hooked),
        per(t_plain),
        per(t_hooked) - per(t_plain)
    );
    // The spawn alone, for scale: `sh -c true` from tokio.
    let start = Instant::now();
    for _ in 0..rounds {
        rt.block_on(async {
            tokio::process::Command::new("sh")
                .arg("-c")
                .arg("true")
                .status()
                .await
                .expect("sh")
        });
    }
    println!(
        "RESULT spawning `sh -c true` alone: {:.0} µs",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(rounds)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    if std::env::args().any(|a| a == "--bench") {
        report();
    }
}
