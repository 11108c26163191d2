//! `read`, `write` and `edit` through a real `ToolRegistry`, on real files.

use dsh_tool_fs::{register_fs_tools, FileTools, FsConfig};
use dsh_tools::{ContentBlock, ToolExecution, ToolExecutionResult, ToolRegistry};
use serde_json::{json, Value};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::time::Duration;

/// A private directory removed at the end of the test.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-fs-tools-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        Dir(path.canonicalize().unwrap())
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// Names in the directory, to see that no temporary file is left.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn setup_with(dir: &Dir, config: impl FnOnce(&mut FsConfig)) -> ToolRegistry {
    let mut fs = FsConfig::new(&dir.0);
    config(&mut fs);
    let registry = ToolRegistry::new();
    register_fs_tools(&registry, &FileTools::new(fs)).unwrap();
    registry
}

fn setup(dir: &Dir) -> ToolRegistry {
    setup_with(dir, |_| {})
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolExecutionResult {
    call_as(registry, name, args, "agent-1").await
}

async fn call_as(
    registry: &ToolRegistry,
    name: &str,
    args: Value,
    agent: &str,
) -> ToolExecutionResult {
    let exec = ToolExecution::new("c", name, args).with_agent(agent);
    tokio::time::timeout(Duration::from_secs(60), registry.execute(exec))
        .await
        .expect("the call ended within a minute")
}

fn text(result: &ToolExecutionResult) -> String {
    result
        .content
        .iter()
        .filter_map(ContentBlock::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

async fn ok(registry: &ToolRegistry, name: &str, args: Value) -> String {
    let result = call(registry, name, args).await;
    assert!(!result.is_error, "{name} failed: {}", text(&result));
    text(&result)
}

async fn fails(registry: &ToolRegistry, name: &str, args: Value) -> String {
    let result = call(registry, name, args).await;
    assert!(
        result.is_error,
        "{name} should have failed: {}",
        text(&result)
    );
    text(&result)
}

// --- read ---------------------------------------------------------------------

#[tokio::test]
async fn read_numbers_lines_and_pages() {
    let dir = Dir::new();
    let lines: String = (1..=3000).map(|i| format!("line {i}\n")).collect();
    dir.write("big.txt", &lines);
    let registry = setup_with(&dir, |c| c.max_output_chars = 1_000_000);

    let first = ok(&registry, "read", json!({"file_path": "big.txt"})).await;
    assert!(
        first.starts_with("     1\tline 1\n     2\tline 2\n"),
        "{first}"
    );
    assert!(first.contains("  2000\tline 2000\n"), "{first}");
    assert!(!first.contains("line 2001"), "{first}");
    assert!(
        first.ends_with("[lines 1–2000 of 3000; read on with offset=2001]"),
        "{first}"
    );

    let page = ok(
        &registry,
        "read",
        json!({"file_path": "big.txt", "offset": 10, "limit": 2}),
    )
    .await;
    assert_eq!(
        page,
        "    10\tline 10\n    11\tline 11\n[lines 10–11 of 3000; read on with offset=12]"
    );

    let tail = ok(
        &registry,
        "read",
        json!({"file_path": "big.txt", "offset": -2}),
    )
    .await;
    assert_eq!(tail, "  2999\tline 2999\n  3000\tline 3000");

    let past = ok(
        &registry,
        "read",
        json!({"file_path": "big.txt", "offset": 5000}),
    )
    .await;
    assert_eq!(
        past,
        format!(
            "{} has 3000 lines: offset 5000 is past its end",
            dir.path("big.txt").display()
        )
    );
}

#[tokio::test]
async fn read_cuts_long_lines_and_keeps_within_the_budget() {
    let dir = Dir::new();
    let long = "é".repeat(2500);
    dir.write("long.txt", format!("short\n{long}\nend\n"));
    let registry = setup(&dir);
    let shown = ok(&registry, "read", json!({"file_path": "long.txt"})).await;
    let second = shown.lines().nth(1).unwrap();
    assert!(
        second.starts_with(&format!("     2\t{}", "é".repeat(2000))),
        "{second}"
    );
    assert!(
        second.ends_with("[… line cut at 2000 characters; the whole line is 5000 bytes]"),
        "{second}"
    );
    assert!(!second.contains(&"é".repeat(2001)));

    // 14 000 characters at most: the answer stops and says where to go on.
    let lines: String = (1..=3000).map(|i| format!("{i:>40}\n")).collect();
    dir.write("wide.txt", lines);
    let shown = ok(&registry, "read", json!({"file_path": "wide.txt"})).await;
    assert!(shown.chars().count() <= 14_000 + 200, "{}", shown.len());
    let last = shown.lines().last().unwrap();
    assert!(
        last.starts_with("[… answer cut to stay within 14000 characters: continue with offset="),
        "{last}"
    );
}

#[tokio::test]
async fn read_shows_images_and_refuses_binaries_and_special_files() {
    let dir = Dir::new();
    let png = [b"\x89PNG\r\n\x1a\n".as_slice(), &[0u8; 32]].concat();
    dir.write("pixel.png", &png);
    let registry = setup(&dir);
    let result = call(&registry, "read", json!({"file_path": "pixel.png"})).await;
    assert!(!result.is_error, "{}", text(&result));
    match &result.content[0] {
        ContentBlock::Image {
            mime_type, data, ..
        } => {
            assert_eq!(mime_type, "image/png");
            assert!(!data.is_empty());
        }
        other => panic!("not an image: {other:?}"),
    }

    dir.write(
        "prog",
        [b"\x7fELF\x02\x01\x01\x00".as_slice(), &[0u8; 100]].concat(),
    );
    let refused = fails(&registry, "read", json!({"file_path": "prog"})).await;
    assert!(
        refused.contains("is a binary file (an ELF executable or library, 108 bytes)"),
        "{refused}"
    );

    let empty = dir.write("empty.txt", "");
    assert_eq!(
        ok(&registry, "read", json!({"file_path": "empty.txt"})).await,
        format!("({} is empty)", empty.display())
    );

    std::fs::create_dir(dir.path("sub")).unwrap();
    let refused = fails(&registry, "read", json!({"file_path": "sub"})).await;
    assert!(
        refused.contains("is a directory: list it with glob"),
        "{refused}"
    );

    // Neither a FIFO without a writer nor a terminal device blocks the call.
    let fifo = dir.path("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let refused = fails(&registry, "read", json!({"file_path": "pipe"})).await;
    assert!(
        refused.contains("is a FIFO: read only reads regular files"),
        "{refused}"
    );
    let refused = fails(&registry, "read", json!({"file_path": "/dev/zero"})).await;
    assert!(refused.contains("is a character device"), "{refused}");

    let missing = fails(&registry, "read", json!({"file_path": "nope.txt"})).await;
    assert!(missing.ends_with("nope.txt does not exist"), "{missing}");
}

#[tokio::test]
async fn read_shows_invalid_utf8_lossily_and_says_so() {
    let dir = Dir::new();
    dir.write("latin1.txt", b"caf\xe9\nok\n");
    let registry = setup(&dir);
    let shown = ok(&registry, "read", json!({"file_path": "latin1.txt"})).await;
    assert_eq!(
        shown,
        "     1\tcaf\u{FFFD}\n     2\tok\n[the file is not valid UTF-8: invalid bytes are shown as \u{FFFD}]"
    );
}

// --- write and edit -----------------------------------------------------------

#[tokio::test]
async fn write_creates_files_and_replaces_only_what_was_read() {
    let dir = Dir::new();
    let registry = setup(&dir);
    let created = ok(
        &registry,
        "write",
        json!({"file_path": "new/dir/a.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert!(
        created.starts_with(&format!(
            "created {} (2 lines, 8 bytes)",
            dir.path("new/dir/a.txt").display()
        )),
        "{created}"
    );
    assert!(created.contains("+     1\tone"), "{created}");
    assert_eq!(
        std::fs::read_to_string(dir.path("new/dir/a.txt")).unwrap(),
        "one\ntwo\n"
    );

    dir.write("b.txt", "original\n");
    let refused = fails(
        &registry,
        "write",
        json!({"file_path": "b.txt", "content": "x\n"}),
    )
    .await;
    assert!(
        refused.ends_with(
            "b.txt exists and was not read in this session: read it first, then write it"
        ),
        "{refused}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path("b.txt")).unwrap(),
        "original\n"
    );

    // Another agent's read does not count.
    let other = call_as(&registry, "read", json!({"file_path": "b.txt"}), "agent-2").await;
    assert!(!other.is_error);
    fails(
        &registry,
        "write",
        json!({"file_path": "b.txt", "content": "x\n"}),
    )
    .await;

    ok(&registry, "read", json!({"file_path": "b.txt"})).await;
    let replaced = ok(
        &registry,
        "write",
        json!({"file_path": "b.txt", "content": "changed\n"}),
    )
    .await;
    assert!(
        replaced.contains("-     1\toriginal\n+     1\tchanged"),
        "{replaced}"
    );
    // Its own write counts as seen: a second write needs no new read.
    ok(
        &registry,
        "write",
        json!({"file_path": "b.txt", "content": "again\n"}),
    )
    .await;
    assert_eq!(
        std::fs::read_to_string(dir.path("b.txt")).unwrap(),
        "again\n"
    );
    assert_eq!(dir.names(), ["b.txt", "new"]);
}

#[tokio::test]
async fn a_file_changed_since_it_was_read_is_not_edited() {
    let dir = Dir::new();
    let path = dir.write("c.txt", "alpha\nbeta\n");
    let registry = setup(&dir);
    ok(&registry, "read", json!({"file_path": "c.txt"})).await;
    // Same length, same second: only the content tells.
    std::fs::write(&path, "alpha\nBETA\n").unwrap();
    let refused = fails(
        &registry,
        "edit",
        json!({"file_path": "c.txt", "old_string": "alpha", "new_string": "gamma"}),
    )
    .await;
    assert!(
        refused.ends_with("c.txt changed since you last read it: read it again, then edit it"),
        "{refused}"
    );
    ok(&registry, "read", json!({"file_path": "c.txt"})).await;
    ok(
        &registry,
        "edit",
        json!({"file_path": "c.txt", "old_string": "alpha", "new_string": "gamma"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "gamma\nBETA\n");
}

#[tokio::test]
async fn edit_replaces_a_unique_string_and_keeps_the_file_as_it_was() {
    let dir = Dir::new();
    // CRLF endings, a tab, no final newline, an executable mode.
    let path = dir.write("run.sh", "#!/bin/sh\r\nif true; then\r\n\techo old\r\nfi");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
    let registry = setup(&dir);
    ok(&registry, "read", json!({"file_path": "run.sh"})).await;
    let edited = ok(
        &registry,
        "edit",
        json!({"file_path": "run.sh", "old_string": "if true; then\n\techo old", "new_string": "if true; then\n\techo new\n\techo more"}),
    )
    .await;
    assert_eq!(
        std::fs::read(&path).unwrap(),
        b"#!/bin/sh\r\nif true; then\r\n\techo new\r\n\techo more\r\nfi"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o751
    );
    assert!(
        edited.starts_with(&format!("edited {}", path.display())),
        "{edited}"
    );
    assert!(edited.contains("-     3\t\techo old"), "{edited}");
    assert!(edited.contains("+     3\t\techo new"), "{edited}");
    assert!(edited.contains("+     4\t\techo more"), "{edited}");
    assert_eq!(dir.names(), ["run.sh"]);
}

#[tokio::test]
async fn edit_says_why_a_string_does_not_fit() {
    let dir = Dir::new();
    let path = dir.write("d.rs", "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n");
    let registry = setup(&dir);
    ok(&registry, "read", json!({"file_path": "d.rs"})).await;
    let many = fails(
        &registry,
        "edit",
        json!({"file_path": "d.rs", "old_string": "x();", "new_string": "y();"}),
    )
    .await;
    assert!(
        many.contains("old_string occurs 2 times (at lines 2, 5)"),
        "{many}"
    );
    let spacing = fails(
        &registry,
        "edit",
        json!({"file_path": "d.rs", "old_string": "\tx();", "new_string": "y();"}),
    )
    .await;
    assert!(
        spacing.contains("line 2 has its first line with other indentation"),
        "{spacing}"
    );
    let absent = fails(
        &registry,
        "edit",
        json!({"file_path": "d.rs", "old_string": "z();", "new_string": "y();"}),
    )
    .await;
    assert!(absent.contains("old_string was not found"), "{absent}");
    let same = fails(
        &registry,
        "edit",
        json!({"file_path": "d.rs", "old_string": "x();", "new_string": "x();"}),
    )
    .await;
    assert!(same.contains("the same"), "{same}");

    let all = ok(&registry, "edit", json!({"file_path": "d.rs", "old_string": "x();", "new_string": "y();", "replace_all": true})).await;
    assert!(all.contains("2 occurrences replaced"), "{all}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "fn a() {\n    y();\n}\nfn b() {\n    y();\n}\n"
    );

    let missing = fails(
        &registry,
        "edit",
        json!({"file_path": "none.rs", "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert!(
        missing.ends_with("none.rs does not exist: create it with write"),
        "{missing}"
    );
}

#[tokio::test]
async fn writes_follow_links_only_inside_the_writable_roots() {
    let dir = Dir::new();
    let outside = Dir::new();
    let secret = outside.write("target.txt", "outside\n");
    std::os::unix::fs::symlink(&secret, dir.path("link.txt")).unwrap();
    std::fs::create_dir(dir.path("inner")).unwrap();
    let inner = dir.write("inner/real.txt", "inner\n");
    std::os::unix::fs::symlink(&inner, dir.path("inner-link.txt")).unwrap();
    let root = dir.0.clone();
    let registry = setup_with(&dir, |c| c.writable_roots = Some(vec![root]));

    ok(&registry, "read", json!({"file_path": "link.txt"})).await;
    let refused = fails(
        &registry,
        "write",
        json!({"file_path": "link.txt", "content": "changed\n"}),
    )
    .await;
    assert!(
        refused.contains(&format!("[sandbox: writing {} is denied", secret.display())),
        "{refused}"
    );
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "outside\n");

    // A link inside the roots is written through: the file changes, the
    // link stays a link.
    ok(&registry, "read", json!({"file_path": "inner-link.txt"})).await;
    ok(
        &registry,
        "edit",
        json!({"file_path": "inner-link.txt", "old_string": "inner", "new_string": "edited"}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(&inner).unwrap(), "edited\n");
    assert!(std::fs::symlink_metadata(dir.path("inner-link.txt"))
        .unwrap()
        .file_type()
        .is_symlink());

    let refused = fails(
        &registry,
        "write",
        json!({"file_path": outside.path("new.txt").display().to_string(), "content": "x"}),
    )
    .await;
    assert!(refused.contains("[sandbox: writing"), "{refused}");
    assert!(!outside.path("new.txt").exists());
}

#[test]
fn the_tools_are_registered_together() {
    let dir = Dir::new();
    let mut names = setup(&dir).names();
    names.sort();
    assert_eq!(
        names,
        ["apply_patch", "edit", "glob", "grep", "read", "write"]
    );
}

#[tokio::test]
async fn an_edit_deep_in_a_long_file_shows_its_own_line_numbers() {
    let dir = Dir::new();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    dir.write("long.txt", &text);
    let registry = setup(&dir);
    ok(
        &registry,
        "read",
        json!({"file_path": "long.txt", "limit": 1}),
    )
    .await;
    let edited = ok(
        &registry,
        "edit",
        json!({"file_path": "long.txt", "old_string": "line 4000\n", "new_string": "line 4000\nadded\n"}),
    )
    .await;
    let shown: Vec<&str> = edited.lines().skip(1).collect();
    assert_eq!(
        shown,
        [
            "   3999\tline 3999",
            "   4000\tline 4000",
            "+  4001\tadded",
            "   4002\tline 4001",
            "   4003\tline 4002"
        ],
        "{edited}"
    );
}
