//! Decisions per second for realistic commands with 50 rules loaded, and
//! the worst shapes of command line known (wrapper chains, many parts, long
//! words against star rules, nesting, deep paths, repeated globs) at the
//! 1 MiB input limit and at the largest size still analysed in full, in a
//! real project directory.
//!
//! Run twice: with `Bash` and `Edit` rules on a working directory that does
//! not exist, and with `Read` deny, ask and allow rules added on a real
//! project directory, so every file operand is resolved on disk (symbolic
//! links followed, globs expanded).
//!
//! Prints `RESULT decisions/s: N` for each (target: at least 100 000) and a `RESULT
//! worst shape` line for each shape and size, with its time and peak memory
//! (target: under 100 ms and 64 MiB). The allocation counter shared with
//! the memory test is this binary's allocator, so every figure includes its
//! (small) cost.

#[path = "../tests/shapes/mod.rs"]
mod shapes;

use criterion::{criterion_group, Criterion};
use dsh_policy::{Mode, PermissionPolicy, PermissionRules};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::{Duration, Instant};

const COMMANDS: &[&str] = &[
    "git status",
    "git diff --stat HEAD~1 | head -20",
    "ls -la src/",
    "cargo test -p dsh-policy -- --nocapture",
    "npm test -- --watch=false",
    "cd crates/dsh && cargo build --release 2>&1 | tail -5",
    "rg -n 'fn main' --type rust",
    "find . -name '*.rs' -not -path './target/*' | xargs wc -l",
    "git log --oneline -n 20",
    "cat Cargo.toml",
    "grep -rn TODO src/ | wc -l",
    "python3 -m pytest tests/ -x -q",
    "echo \"build finished at $(date)\" >> build.log",
    "docker compose up -d",
    "rm -rf target/debug/incremental",
    "git add -A && git commit -m 'fix: handle empty input'",
    "make -j4 && ./bin/run --config config.toml",
    "for f in src/*.rs; do rustfmt --check \"$f\"; done",
    "curl -s https://example.invalid/api | jq '.items[] | .name'",
    "timeout 30 npm run lint -- --fix",
];

fn rules() -> PermissionRules {
    let allow = [
        "Bash(git status)",
        "Bash(git diff:*)",
        "Bash(git log:*)",
        "Bash(git show:*)",
        "Bash(git add:*)",
        "Bash(git commit:*)",
        "Bash(ls:*)",
        "Bash(cat:*)",
        "Bash(head:*)",
        "Bash(tail:*)",
        "Bash(grep:*)",
        "Bash(rg:*)",
        "Bash(find:*)",
        "Bash(wc:*)",
        "Bash(cd:*)",
        "Bash(echo:*)",
        "Bash(date)",
        "Bash(cargo test:*)",
        "Bash(cargo build:*)",
        "Bash(cargo check:*)",
        "Bash(cargo clippy:*)",
        "Bash(npm test:*)",
        "Bash(npm run lint:*)",
        "Bash(npm run build)",
        "Bash(python3 -m pytest:*)",
        "Bash(make:*)",
        "Bash(jq:*)",
        "Bash(rustfmt --check *)",
        "Bash(sort:*)",
        "Bash(uniq:*)",
        "Read",
        "Edit(src/**)",
        "Edit(docs/**)",
    ];
    let ask = [
        "Bash(git push:*)",
        "Bash(npm publish:*)",
        "Bash(cargo publish:*)",
        "Bash(docker:*)",
        "Bash(kubectl:*)",
        "Bash(git reset --hard:*)",
        "Bash(git rebase:*)",
    ];
    let deny = [
        "Bash(rm -rf /:*)",
        "Bash(rm -rf ~:*)",
        "Bash(curl:*)",
        "Bash(wget:*)",
        "Bash(sudo:*)",
        "Bash(git push --force:*)",
        "Bash(dd:*)",
        "Bash(mkfs:*)",
        "Edit(/etc/**)",
        "Edit(~/.ssh/**)",
    ];
    let rules = PermissionRules::parse(allow, ask, deny).expect("bench rules parse");
    assert_eq!(rules.allow.len() + rules.ask.len() + rules.deny.len(), 50);
    rules
}

/// `rules()` and the path rules a project keeps for its secrets.
fn rules_with_paths() -> PermissionRules {
    let mut rules = rules();
    let paths = PermissionRules::parse(
        ["Read(~/notes/**)", "Read(//opt/docs/**)"],
        ["Read(./private/**)", "Read(/infra/**)"],
        [
            "Read(./.env)",
            "Read(**/.env.*)",
            "Read(*.pem)",
            "Read(~/.ssh/**)",
            "Read(//etc/shadow)",
            "Read(/secrets/**)",
            "Edit(/.github/workflows/**)",
            "Write(//usr/**)",
        ],
    )
    .expect("bench path rules parse");
    rules.allow.extend(paths.allow);
    rules.ask.extend(paths.ask);
    rules.deny.extend(paths.deny);
    rules
}

/// A real project directory for the path rules to be resolved in.
fn project() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("dsh-bench-proj-{}", std::process::id()));
    for d in ["src", "crates/dsh", "tests", "docs", "private"] {
        std::fs::create_dir_all(dir.join(d)).expect("bench project");
    }
    for f in [
        "Cargo.toml",
        ".env",
        "src/main.rs",
        "src/lib.rs",
        "build.log",
        "config.toml",
    ] {
        std::fs::write(dir.join(f), "x").expect("bench project");
    }
    let _ = std::os::unix::fs::symlink(dir.join(".env"), dir.join("config.link"));
    dir
}

fn path_policy(dir: &std::path::Path) -> PermissionPolicy {
    PermissionPolicy::new(rules_with_paths(), Mode::Default, dir)
}

fn inputs() -> Vec<Value> {
    COMMANDS.iter().map(|c| json!({ "command": c })).collect()
}

fn decide(c: &mut Criterion) {
    let policy = PermissionPolicy::new(rules(), Mode::Default, "/work/proj");
    let inputs = inputs();
    c.bench_function("decide 20 realistic commands, 50 rules", |b| {
        b.iter(|| {
            for args in &inputs {
                black_box(policy.check("bash", black_box(args)));
            }
        })
    });
    let dir = project();
    let policy = path_policy(&dir);
    c.bench_function(
        "decide 20 realistic commands, 50 rules + 12 path rules, real directory",
        |b| {
            b.iter(|| {
                for args in &inputs {
                    black_box(policy.check("bash", black_box(args)));
                }
            })
        },
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Measures decisions per second directly and prints the RESULT lines.
fn report() {
    report_one(
        "",
        &PermissionPolicy::new(rules(), Mode::Default, "/work/proj"),
    );
    let dir = project();
    report_one(" with path rules", &path_policy(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

fn report_one(label: &str, policy: &PermissionPolicy) {
    let inputs = inputs();
    // Warm up.
    for args in &inputs {
        black_box(policy.check("bash", args));
    }
    let mut decisions = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(2) {
        for args in &inputs {
            black_box(policy.check("bash", black_box(args)));
        }
        decisions += inputs.len() as u64;
    }
    let per_second = decisions as f64 / start.elapsed().as_secs_f64();
    println!("RESULT decisions/s{label}: {per_second:.0}");
}

/// Every worst shape at both sizes, with the decision it must get.
fn worst_inputs() -> Vec<(String, String, dsh_policy::Decision)> {
    let mut v = Vec::new();
    for shape in shapes::shapes() {
        v.push((
            format!("{}, in full", shape.name),
            shape.largest_analysed(),
            shape.full,
        ));
        v.push((
            format!("{}, at the limit", shape.name),
            shape.at_limit(),
            shape.whole,
        ));
    }
    v
}

fn worst_shapes(c: &mut Criterion) {
    let project = shapes::Project::new();
    let policy = project.policy();
    let mut group = c.benchmark_group("worst shapes");
    for (name, command, _) in worst_inputs() {
        let args = json!({ "command": command });
        group.bench_function(&name, |b| {
            b.iter(|| black_box(policy.check("bash", black_box(&args))))
        });
    }
    group.finish();
}

/// Time (the median of five) and peak memory of each worst shape.
fn report_worst_shapes() {
    const TIME_TARGET: Duration = Duration::from_millis(100);
    let project = shapes::Project::new();
    let policy = project.policy();
    let (mut slowest, mut largest) = ((Duration::ZERO, String::new()), (0, String::new()));
    for (name, command, expect) in worst_inputs() {
        let mut times = Vec::new();
        let mut peak = 0;
        for _ in 0..5 {
            let (decision, _, took, used) = shapes::measure(&policy, &command);
            assert_eq!(decision, expect, "{name}");
            times.push(took);
            peak = peak.max(used);
        }
        times.sort();
        let took = times[2];
        println!(
            "RESULT worst shape {name} ({} KiB): {:.1} ms, peak {:.1} MiB",
            command.len() >> 10,
            took.as_secs_f64() * 1e3,
            peak as f64 / (1 << 20) as f64
        );
        if took > slowest.0 {
            slowest = (took, name.clone());
        }
        if peak > largest.0 {
            largest = (peak, name);
        }
    }
    println!(
        "RESULT worst shapes: slowest {:.1} ms ({}), largest peak {:.1} MiB ({}); targets {} ms, {} MiB",
        slowest.0.as_secs_f64() * 1e3,
        slowest.1,
        largest.0 as f64 / (1 << 20) as f64,
        largest.1,
        TIME_TARGET.as_millis(),
        shapes::MEMORY_TARGET >> 20
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = decide
}

criterion_group! {
    name = worst;
    config = Criterion::default().sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = worst_shapes
}

fn main() {
    benches();
    worst();
    Criterion::default().configure_from_args().final_summary();
    // `cargo bench` passes `--bench`; a test run of the target only smoke-tests.
    if std::env::args().any(|a| a == "--bench") {
        report();
        report_worst_shapes();
    }
}
