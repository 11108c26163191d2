//! `cargo bench -p dsh-tool-fs --bench grep`: our `grep` tool, called
//! through a `ToolRegistry`, against the `rg` binary on the same tree with
//! the same number of threads, for a literal and a regular expression, in
//! files-with-matches (`rg -l`) and content (`rg -n`) modes.
//!
//! The tree (20 000 source-like files, about 60 MB, the same bytes on
//! every run) is generated once under the target directory and reused.
//! `rg` is looked up on `PATH`, then under `target/rg/bin`; when it is in
//! neither, `cargo install ripgrep --locked --root target/rg` is tried, and
//! when that fails too the comparison is skipped with a message.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::Criterion;
use dsh_tool_fs::{FileTools, FsConfig, GrepTool};
use dsh_tools::{ToolExecution, ToolRegistry, TypedTool};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Bump when the generator changes, so an old tree is not reused.
const TREE_VERSION: u32 = 1;
const FILES: usize = 20_000;

/// What is looked for, and how many files should match (checked against
/// `rg` before timing).
const CASES: [(&str, &str); 2] = [
    // A literal in about 1% of the files.
    ("literal", "ERR_QUOTA_EXCEEDED"),
    // A regex with an alternation and classes, in a few % of the lines.
    ("regex", r"fn (load|save)_[a-z]+_v[0-9]\("),
];

/// The target directory this bench was built into (`target/release/deps/grep-…`).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the bench's own path");
    exe.ancestors()
        .nth(3)
        .map(Path::to_path_buf)
        .unwrap_or_else(std::env::temp_dir)
}

/// xorshift64*: the same pseudo-random stream on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "config", "buffer", "request", "response", "handler", "session", "token", "parser", "reader",
    "writer", "index", "cache", "queue", "worker", "state", "event", "record", "batch", "stream",
    "client", "server", "route", "policy", "schema", "value", "result", "error", "context", "path",
    "file", "line", "count", "offset", "limit", "timeout", "retry", "user", "account",
];
const TYPES: &[&str] = &[
    "u32",
    "u64",
    "usize",
    "String",
    "&str",
    "bool",
    "Vec<u8>",
    "Option<String>",
    "Duration",
    "PathBuf",
    "Result<(), Error>",
    "HashMap<String, u64>",
];
const COMMENTS: &[&str] = &[
    "// The caller holds the lock for the whole batch.",
    "// TODO: move this to the shared configuration.",
    "// Retries are bounded so a dead peer cannot stall the queue.",
    "/// Returns the number of records written so far.",
    "// SAFETY: the buffer outlives every reader.",
    "// Keep the order stable: clients rely on it.",
];

fn ident(rng: &mut Rng) -> String {
    format!("{}_{}", rng.pick(WORDS), rng.pick(WORDS))
}

/// One source-like file of `blocks` items (a line, or a function of a
/// few lines).
fn source_file(rng: &mut Rng, blocks: usize) -> String {
    let mut out = String::with_capacity(blocks * 80);
    out.push_str("use std::collections::HashMap;\nuse crate::error::Error;\n\n");
    for _ in 0..blocks {
        match rng.below(10) {
            0 => {
                out.push_str(rng.pick(COMMENTS));
                out.push('\n');
            }
            1 => {
                // The regex case: about one function in 12 is a loader or saver.
                let verb = ["load", "save", "read", "write", "parse", "check"][rng.below(6)];
                let fresh = if rng.below(2) == 0 { verb } else { "make" };
                out.push_str(&format!(
                    "pub fn {fresh}_{}_v{}({}: {}) -> {} {{\n",
                    rng.pick(WORDS),
                    rng.below(10),
                    rng.pick(WORDS),
                    rng.pick(TYPES),
                    rng.pick(TYPES)
                ));
                for _ in 0..rng.below(6) + 2 {
                    out.push_str(&format!(
                        "    let {} = {}.{}({});\n",
                        ident(rng),
                        rng.pick(WORDS),
                        ident(rng),
                        rng.below(1000)
                    ));
                }
                out.push_str("}\n\n");
            }
            2 => out.push_str(&format!(
                "const {}: {} = {};\n",
                ident(rng).to_uppercase(),
                rng.pick(TYPES),
                rng.below(1 << 20)
            )),
            3 => out.push_str(&format!(
                "        return Err(Error::new(\"{} {} failed\"));\n",
                rng.pick(WORDS),
                rng.pick(WORDS)
            )),
            _ => out.push_str(&format!(
                "    if {}.{} > {} {{ {}.{}(); }}\n",
                rng.pick(WORDS),
                ident(rng),
                rng.below(100),
                rng.pick(WORDS),
                ident(rng)
            )),
        }
    }
    if rng.below(100) == 0 {
        out.push_str("        return Err(Error::code(\"ERR_QUOTA_EXCEEDED\"));\n");
    }
    out
}

/// The tree, generated on the first run; `(root, bytes)`.
fn tree() -> PathBuf {
    let root = target_dir()
        .join("bench-data")
        .join(format!("grep-tree-v{TREE_VERSION}"));
    let done = root.join(".complete");
    if done.exists() {
        return root;
    }
    let _ = std::fs::remove_dir_all(&root);
    eprintln!("generating {FILES} files under {} …", root.display());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0;
    for i in 0..FILES {
        let dir = root.join(format!("crate{:02}/src/module{:02}", i % 40, (i / 40) % 25));
        std::fs::create_dir_all(&dir).expect("bench tree directory");
        let blocks = 15 + rng.below(45);
        let text = source_file(&mut rng, blocks);
        bytes += text.len();
        let ext = ["rs", "rs", "rs", "py", "ts", "go"][rng.below(6)];
        std::fs::write(dir.join(format!("file{i:05}.{ext}")), text).expect("bench tree file");
    }
    std::fs::write(&done, "").expect("bench tree marker");
    eprintln!("generated {} MB", bytes / 1_000_000);
    root
}

/// The `rg` binary: on PATH, under target/rg, or installed there now.
fn ripgrep() -> Option<PathBuf> {
    let works = |path: &Path| {
        Command::new(path)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(Path::new("rg")) {
        return Some(PathBuf::from("rg"));
    }
    let root = target_dir().join("rg");
    let local = root.join("bin").join("rg");
    if works(&local) {
        return Some(local);
    }
    eprintln!(
        "rg not found: trying `cargo install ripgrep --locked --root {}`",
        root.display()
    );
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let installed = Command::new(cargo)
        .args(["install", "ripgrep", "--locked", "--root"])
        .arg(&root)
        .status()
        .is_ok_and(|s| s.success());
    (installed && works(&local)).then_some(local)
}

struct Setup {
    root: PathBuf,
    registry: ToolRegistry,
    runtime: tokio::runtime::Runtime,
    threads: usize,
    rg: Option<PathBuf>,
}

impl Setup {
    fn new() -> Setup {
        let root = tree();
        // A budget large enough that the content answers are not cut: both
        // sides produce every matching line.
        let mut config = FsConfig::new(&root);
        config.max_output_chars = 10_000_000;
        let registry = ToolRegistry::new();
        registry
            .register(TypedTool::new(GrepTool::new(FileTools::new(config))))
            .expect("register grep");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(12);
        Setup {
            root,
            registry,
            runtime,
            threads,
            rg: ripgrep(),
        }
    }

    fn ours(&self, pattern: &str, mode: &str) -> String {
        let args = json!({"pattern": pattern, "output_mode": mode}).to_string();
        let result = self
            .runtime
            .block_on(self.registry.execute(ToolExecution::new("b", "grep", args)));
        assert!(!result.is_error, "{}", result.text());
        result.text()
    }

    fn theirs(&self, rg: &Path, pattern: &str, mode: &str) -> Vec<u8> {
        let flag = if mode == "content" { "-n" } else { "-l" };
        let output = Command::new(rg)
            .arg("-j")
            .arg(self.threads.to_string())
            .arg(flag)
            .arg("-e")
            .arg(pattern)
            .arg(&self.root)
            .output()
            .expect("run rg");
        assert!(output.status.code().is_some_and(|c| c <= 1), "rg failed");
        output.stdout
    }
}

const MODES: [&str; 2] = ["files_with_matches", "content"];

fn criterion_benches(setup: &Setup, c: &mut Criterion) {
    for (label, pattern) in CASES {
        for mode in MODES {
            let mut group = c.benchmark_group(format!("grep/{label}/{mode}"));
            group
                .sample_size(10)
                .warm_up_time(Duration::from_secs(1))
                .measurement_time(Duration::from_secs(4));
            group.bench_function("dsh-tool-fs", |b| b.iter(|| setup.ours(pattern, mode)));
            if let Some(rg) = &setup.rg {
                group.bench_function("rg", |b| b.iter(|| setup.theirs(rg, pattern, mode)));
            }
            group.finish();
        }
    }
}

fn ratios(setup: &Setup) {
    let Some(rg) = &setup.rg else {
        println!(
            "rg is not available and could not be installed: the comparison with rg is skipped"
        );
        return;
    };
    println!(
        "tree: {FILES} files under {}, {} threads on both sides",
        setup.root.display(),
        setup.threads
    );
    for (label, pattern) in CASES {
        for mode in MODES {
            // The same answer first: the same files, the same lines.
            let ours = setup.ours(pattern, mode);
            let theirs = String::from_utf8_lossy(&setup.theirs(rg, pattern, mode)).into_owned();
            let mut ours_lines: Vec<&str> = ours.lines().collect();
            if mode == "files_with_matches" {
                ours_lines.remove(0); // "Found N files"
            }
            let mut theirs_lines: Vec<&str> = theirs.lines().collect();
            ours_lines.sort_unstable();
            theirs_lines.sort_unstable();
            assert_eq!(
                ours_lines.len(),
                theirs_lines.len(),
                "{label}/{mode}: a different number of results than rg"
            );
            assert!(
                ours_lines == theirs_lines,
                "{label}/{mode}: different results from rg"
            );
            println!(
                "{label}/{mode}: {} result lines on both sides",
                ours_lines.len()
            );
            let times = ratio::compare(
                || {
                    ratio::keep(setup.ours(pattern, mode));
                },
                || {
                    ratio::keep(setup.theirs(rg, pattern, mode));
                },
                21,
                Duration::from_millis(300),
            );
            ratio::report(&format!("grep/{label}/{mode}"), "dsh-tool-fs", "rg", times);
            // Wall time on a loaded machine is noisy; the processor time
            // both sides spend (all threads; rg's process and our spawning
            // it) is steadier.
            const CALLS: u32 = 5;
            let start = cpu_time();
            for _ in 0..CALLS {
                ratio::keep(setup.ours(pattern, mode));
            }
            let ours = (cpu_time() - start) / CALLS;
            let start = cpu_time();
            for _ in 0..CALLS {
                ratio::keep(setup.theirs(rg, pattern, mode));
            }
            let theirs = (cpu_time() - start) / CALLS;
            println!(
                "CPU grep/{label}/{mode}: dsh-tool-fs {ours:?}/call, rg {theirs:?}/call, rg/dsh-tool-fs = {:.2}x",
                theirs.as_secs_f64() / ours.as_secs_f64().max(1e-9)
            );
        }
    }
}

/// Processor time (user and system) of this process's threads and of its
/// children that have ended.
fn cpu_time() -> Duration {
    fn of(who: libc::c_int) -> Duration {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage fills in the struct it is given, which is
        // zeroed and the right size either way.
        let usage = unsafe {
            libc::getrusage(who, usage.as_mut_ptr());
            usage.assume_init()
        };
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        time(usage.ru_utime) + time(usage.ru_stime)
    }
    of(libc::RUSAGE_SELF) + of(libc::RUSAGE_CHILDREN)
}

fn main() {
    let setup = Setup::new();
    let mut criterion = Criterion::default().configure_from_args();
    criterion_benches(&setup, &mut criterion);
    // Profiling one bench (`--profile-time`) is not the place for the ratios.
    if !std::env::args().any(|arg| arg == "--profile-time") {
        ratios(&setup);
    }
    criterion.final_summary();
}
