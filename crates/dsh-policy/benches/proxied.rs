//! `cargo bench -p dsh-policy --bench proxied`: what judging another
//! server's shell argument costs beside judging our own `bash` call, on the
//! same command lines in a real project directory, interleaved.
//!
//! Prints `RATIO` (proxied/bash) and the time per decision of each.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::{criterion_group, Criterion};
use dsh_policy::{Mode, PermissionPolicy, PermissionRules};
use dsh_tools::{ArgumentMeaning, ArgumentMeanings};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Duration;

const LINES: &[&str] = &[
    "git status",
    "git diff --stat HEAD~1 | head -20",
    "ls -la src/",
    "cd src && git status --short && ls -la | grep -v target | head -n 20",
    "cat Cargo.toml",
    "git log --oneline -n 20",
    "find . -name '*.rs' | head -n 5",
    "npm test -- --watch=false",
];

fn policy(dir: &std::path::Path) -> PermissionPolicy {
    let rules = PermissionRules::parse(
        ["Bash(npm test:*)", "Bash(cargo test:*)"],
        ["Bash(git push:*)"],
        [
            "Bash(rm:*)",
            "Read(./.env)",
            "mcp__dc__start_process(curl:*)",
        ],
    )
    .unwrap();
    PermissionPolicy::new(rules, Mode::Default, dir)
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("dsh-bench-proxied-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), "[package]").unwrap();
    let policy = policy(&dir);
    let aliases: Vec<String> = ["mcp__dc__start_process", "mcp__dc", "mcp__dc__*"]
        .map(String::from)
        .to_vec();
    let meanings = ArgumentMeanings {
        arguments: vec![
            ("command".into(), ArgumentMeaning::Shell),
            ("timeout_ms".into(), ArgumentMeaning::Data),
        ],
        from: "bench".into(),
        base: Some(dir.clone()),
    };
    let ours: Vec<Value> = LINES.iter().map(|l| json!({ "command": l })).collect();
    let theirs: Vec<Value> = LINES
        .iter()
        .map(|l| json!({ "command": l, "timeout_ms": 5000 }))
        .collect();
    let bash = || {
        for args in &ours {
            black_box(policy.check("bash", black_box(args)));
        }
    };
    let proxied = || {
        for args in &theirs {
            black_box(policy.check_proxied(
                "dc__start_process",
                &aliases,
                &meanings,
                black_box(args),
            ));
        }
    };
    let mut group = c.benchmark_group("proxied shell argument");
    group.bench_function("our bash, 8 lines", |b| b.iter(bash));
    group.bench_function("a proxied start_process, 8 lines", |b| b.iter(proxied));
    group.finish();
    let (ours_time, theirs_time) = ratio::compare(bash, proxied, 15, Duration::from_millis(200));
    ratio::report(
        "judging a proxied shell argument vs our bash call, 8 lines",
        "bash",
        "proxied",
        (ours_time, theirs_time),
    );
    println!(
        "RESULT per decision: bash {:?}, proxied {:?}",
        ours_time / LINES.len() as u32,
        theirs_time / LINES.len() as u32
    );
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
