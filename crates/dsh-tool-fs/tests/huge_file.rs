//! `read` of a gigabyte file, alone in its test process so that the
//! process's peak memory is this read's.

use dsh_tool_fs::{register_fs_tools, FileTools, FsConfig};
use dsh_tools::{ContentBlock, ToolExecution, ToolRegistry};
use serde_json::{json, Value};

async fn read(registry: &ToolRegistry, args: Value) -> String {
    let result = registry
        .execute(ToolExecution::new("c", "read", args))
        .await;
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect();
    assert!(!result.is_error, "read failed: {}", text.join("\n"));
    text.join("\n")
}

/// The peak resident memory of this process, in KiB.
fn peak_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn a_one_gigabyte_file_is_read_at_its_end_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("dsh-fs-huge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("huge.log");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = std::fs::File::create(&path).unwrap();
        // Text first, so that the file reads as text.
        for i in 1..=200 {
            writeln!(file, "head {i:>60}").unwrap();
        }
        // A 1 GiB hole: zeros that take no disk, one endless line.
        file.seek(SeekFrom::Current(1 << 30)).unwrap();
        file.write_all(b"\ntail 1\ntail 2\n").unwrap();
    }
    let registry = ToolRegistry::new();
    register_fs_tools(&registry, &FileTools::new(FsConfig::new(&dir))).unwrap();
    let before = peak_kib();
    let tail = read(&registry, json!({"file_path": "huge.log", "offset": -2})).await;
    assert!(tail.ends_with("    -2\ttail 1\n    -1\ttail 2"), "{tail}");
    assert!(tail.starts_with("[the last 2 lines of"), "{tail}");
    // Streaming through the endless line to the lines after it.
    let late = read(
        &registry,
        json!({"file_path": "huge.log", "offset": 201, "limit": 3}),
    )
    .await;
    let mut late_lines = late.lines();
    let cut = late_lines.next().unwrap();
    assert!(cut.starts_with("   201\t"), "{cut}");
    assert!(
        cut.ends_with(&format!("the whole line is {} bytes]", 1u64 << 30)),
        "{cut}"
    );
    assert_eq!(late_lines.next().unwrap(), "   202\ttail 1");
    let grown_mib = (peak_kib().saturating_sub(before)) / 1024;
    let _ = std::fs::remove_dir_all(&dir);
    assert!(grown_mib < 16, "memory grew by {grown_mib} MiB");
}
