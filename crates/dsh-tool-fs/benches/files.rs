//! `cargo bench -p dsh-tool-fs --bench files`:
//!
//! - `read` of the last 2 000 lines of a 1 GiB file, against `tail -n 2000`
//!   on the same file, and the growth of this process's peak memory over
//!   the reads (target < 16 MiB);
//! - `edit` of a 10 MB file against `sed -i` making the same replacement,
//!   interleaved, both from the same file content.
//!
//! The files live in a directory under the system's temporary directory,
//! removed at the end.

#[path = "../../../bench/ratio.rs"]
mod ratio;

use criterion::Criterion;
use dsh_tool_fs::{register_fs_tools, FileTools, FsConfig};
use dsh_tools::{ToolExecution, ToolRegistry};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// A 1 GiB text file: source-like lines, the last 2 000 of them numbered.
fn gigabyte_file(dir: &Path) -> PathBuf {
    let path = dir.join("big.log");
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).unwrap());
    let line =
        b"2026-12-04T10:00:00Z INFO request handled path=/api/v1/items status=200 took=12ms\n";
    let mut written = 0u64;
    while written < (1 << 30) {
        out.write_all(line).unwrap();
        written += line.len() as u64;
    }
    for i in 0..2000 {
        writeln!(out, "tail line {i}").unwrap();
    }
    out.flush().unwrap();
    path
}

/// A 10 MB source-like file with one unique marker in the middle.
fn ten_megabyte_file(dir: &Path) -> PathBuf {
    let path = dir.join("big.rs");
    let mut text = String::new();
    let mut i = 0;
    while text.len() < 10_000_000 {
        if i == 60_000 {
            text.push_str("    let marker = \"needle-A\";\n");
        }
        text.push_str(&format!("    let value_{i} = compute({i}, \"text\");\n"));
        i += 1;
    }
    std::fs::write(&path, text).unwrap();
    path
}

fn main() {
    let dir = std::env::temp_dir().join(format!("dsh-fs-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = ToolRegistry::new();
    // Room for the whole page asked for: the budget is not what is timed.
    let mut config = FsConfig::new(&dir);
    config.max_output_chars = 1 << 20;
    register_fs_tools(&registry, &FileTools::new(config)).unwrap();
    let call = |name: &str, args: serde_json::Value| {
        let result =
            rt.block_on(registry.execute(ToolExecution::new("b", name, args).with_agent("bench")));
        assert!(!result.is_error, "{name}: {:?}", result.content);
        result
    };

    // --- read the end of a gigabyte ---------------------------------------
    let big = gigabyte_file(&dir);
    let before = peak_kib();
    let read_tail = || {
        let result = call("read", json!({"file_path": "big.log", "offset": -2000}));
        let text = result.content[0].as_text().unwrap().to_owned();
        assert!(
            text.contains("tail line 1999"),
            "{}",
            &text[text.len().saturating_sub(200)..]
        );
        ratio::keep(text);
    };
    read_tail();
    let tail = || {
        let out = Command::new("tail")
            .arg("-n")
            .arg("2000")
            .arg(&big)
            .output()
            .unwrap();
        assert!(out.status.success());
        ratio::keep(out.stdout);
    };
    let times = ratio::compare(read_tail, tail, 11, Duration::from_millis(200));
    ratio::report(
        "read the last 2000 lines of 1 GiB",
        "dsh read",
        "tail -n 2000",
        times,
    );
    let grown = peak_kib().saturating_sub(before);
    println!(
        "RESULT read of 1 GiB: peak memory grew by {:.1} MiB (target < 16 MiB)",
        grown as f64 / 1024.0
    );
    std::fs::remove_file(&big).unwrap();

    // --- edit ten megabytes -----------------------------------------------
    let file = ten_megabyte_file(&dir);
    let theirs = dir.join("theirs.rs");
    std::fs::copy(&file, &theirs).unwrap();
    call("read", json!({"file_path": "big.rs", "limit": 1}));
    // Each side swaps the marker back and forth, so every call changes the file.
    let mut forward = true;
    let mut edit = || {
        let (old, new) = if forward {
            ("needle-A", "needle-B")
        } else {
            ("needle-B", "needle-A")
        };
        forward = !forward;
        ratio::keep(call(
            "edit",
            json!({"file_path": "big.rs", "old_string": old, "new_string": new}),
        ));
    };
    let mut sed_forward = true;
    let mut sed = || {
        let expr = if sed_forward {
            "s/needle-A/needle-B/"
        } else {
            "s/needle-B/needle-A/"
        };
        sed_forward = !sed_forward;
        let status = Command::new("sed")
            .arg("-i")
            .arg(expr)
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(status.success());
    };
    let mut criterion = Criterion::default().sample_size(10).configure_from_args();
    {
        let mut group = criterion.benchmark_group("edit 10 MB");
        group.bench_function("dsh edit", |b| b.iter(&mut edit));
        group.bench_function("sed -i", |b| b.iter(&mut sed));
        group.finish();
    }
    let times = ratio::compare(&mut edit, &mut sed, 11, Duration::from_millis(300));
    ratio::report("edit of a 10 MB file", "dsh edit", "sed -i", times);
    criterion.final_summary();
    let _ = std::fs::remove_dir_all(&dir);
}
