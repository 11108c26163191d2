//! `apply_patch` through a real `ToolRegistry`, on real files in a
//! private temporary directory.

use dsh_tool_fs::{
    content_hash, patch_paths, ApplyPatchTool, FileTools, FsConfig, PatchOperation, PatchedPath,
};
use dsh_tools::{Dialect, ErrorCode, ToolCallKind, ToolExecution, ToolRegistry, TypedTool};
use serde_json::json;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A private directory removed at the end of the test.
struct Dir {
    path: PathBuf,
}

impl Dir {
    fn new() -> Dir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-apply-patch-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).unwrap();
        Dir {
            path: path.canonicalize().unwrap(),
        }
    }

    fn join(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    fn write(&self, name: &str, content: impl AsRef<[u8]>) {
        let path = self.join(name);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, content).unwrap();
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.join(name)).unwrap()
    }

    /// Every entry below the directory, relative, sorted.
    fn listing(&self) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for entry in fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                out.push(path.strip_prefix(root).unwrap().display().to_string());
                if path.is_dir() && !path.is_symlink() {
                    walk(root, &path, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.path, &self.path, &mut out);
        out.sort();
        out
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

struct Setup {
    registry: ToolRegistry,
    tools: FileTools,
    dir: Dir,
}

fn setup_with(config: impl FnOnce(&mut FsConfig)) -> Setup {
    let dir = Dir::new();
    let mut fs_config = FsConfig::new(&dir.path);
    config(&mut fs_config);
    let tools = FileTools::new(fs_config);
    let registry = ToolRegistry::new();
    registry
        .register(TypedTool::new(ApplyPatchTool::new(tools.clone())))
        .unwrap();
    Setup {
        registry,
        tools,
        dir,
    }
}

fn setup() -> Setup {
    setup_with(|_| {})
}

impl Setup {
    async fn patch(&self, patch: &str) -> dsh_tools::ToolExecutionResult {
        self.registry
            .execute(
                ToolExecution::new("c", "apply_patch", json!({ "patch": patch })).with_agent("a"),
            )
            .await
    }

    async fn ok(&self, patch: &str) -> String {
        let result = self.patch(patch).await;
        assert!(!result.is_error, "{}", result.text());
        result.text()
    }

    async fn fails(&self, patch: &str, code: ErrorCode) -> String {
        let result = self.patch(patch).await;
        assert!(result.is_error, "{}", result.text());
        assert_eq!(result.code(), Some(code), "{}", result.text());
        result.text()
    }

    fn seen(&self, name: &str) -> Result<(), dsh_tool_fs::Unseen> {
        let path = self.dir.join(name);
        let current = content_hash(&fs::read(&path).unwrap());
        self.tools.records().check(Some("a"), &path, &current)
    }
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[tokio::test]
async fn adds_deletes_updates_and_moves_in_one_patch() {
    let s = setup();
    s.dir.write("keep.txt", "one\ntwo\nthree\n");
    s.dir.write("gone.txt", "bye\n");
    s.dir.write("old.txt", "alpha\nbeta\n");
    let text = s
        .ok("*** Begin Patch
*** Add File: new/dir/hello.txt
+hello
+
+world
*** Delete File: gone.txt
*** Update File: keep.txt
@@
 one
-two
+2
 three
*** Update File: old.txt
*** Move to: moved/renamed.txt
@@
 alpha
-beta
+gamma
*** End Patch")
        .await;
    assert_eq!(
        text,
        "A new/dir/hello.txt
D gone.txt
M keep.txt
-    2 | two
+    2 | 2
R old.txt -> moved/renamed.txt
-    2 | beta
+    2 | gamma"
    );
    assert_eq!(s.dir.read("new/dir/hello.txt"), "hello\n\nworld\n");
    assert_eq!(mode(&s.dir.join("new/dir/hello.txt")), 0o644);
    assert_eq!(s.dir.read("keep.txt"), "one\n2\nthree\n");
    assert_eq!(s.dir.read("moved/renamed.txt"), "alpha\ngamma\n");
    assert_eq!(
        s.dir.listing(),
        [
            "keep.txt",
            "moved",
            "moved/renamed.txt",
            "new",
            "new/dir",
            "new/dir/hello.txt"
        ]
    );
    // The agent saw what it wrote, so a later write needs no new read.
    s.seen("keep.txt").unwrap();
    s.seen("new/dir/hello.txt").unwrap();
    s.seen("moved/renamed.txt").unwrap();
}

#[tokio::test]
async fn several_hunks_report_new_line_numbers() {
    let s = setup();
    let lines: Vec<String> = (1..=30).map(|n| format!("line {n}")).collect();
    s.dir.write("f.txt", lines.join("\n") + "\n");
    let text = s
        .ok("*** Begin Patch
*** Update File: f.txt
@@
 line 3
 line 4
+inserted a
+inserted b
 line 5
@@
 line 19
-line 20
-line 21
+twenty
 line 22
*** End Patch")
        .await;
    assert_eq!(
        text,
        "M f.txt
+    5 | inserted a
+    6 | inserted b
-   22 | line 20
-   22 | line 21
+   22 | twenty"
    );
    let content = s.dir.read("f.txt");
    let got: Vec<&str> = content.lines().collect();
    assert_eq!(got[4], "inserted a");
    assert_eq!(got[21], "twenty");
    assert_eq!(got.len(), 31);
}

#[tokio::test]
async fn context_line_after_at_at_anchors_the_hunk() {
    let s = setup();
    s.dir.write(
        "lib.rs",
        "fn a() {\n    work();\n}\n\nfn b() {\n    work();\n}\n",
    );
    s.ok("*** Begin Patch
*** Update File: lib.rs
@@ fn b() {
-    work();
+    rest();
*** End Patch")
        .await;
    assert_eq!(
        s.dir.read("lib.rs"),
        "fn a() {\n    work();\n}\n\nfn b() {\n    rest();\n}\n"
    );
    // An anchor not in the file is named in the error.
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: lib.rs
@@ fn c() {
-    work();
+    rest();
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(err.contains("lib.rs: hunk 1"), "{err}");
    assert!(err.contains("`@@ fn c() {` line was not found"), "{err}");
    // A partial line is not an anchor, but the error shows the whole one.
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: lib.rs
@@ fn b
-    work();
+    rest();
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(
        err.contains("Lines containing that text:\n     5 | fn b() {"),
        "{err}"
    );
    // Only added lines below an anchor go right below it.
    s.ok("*** Begin Patch
*** Update File: lib.rs
@@ fn a() {
+    first();
*** End Patch")
        .await;
    assert!(s
        .dir
        .read("lib.rs")
        .starts_with("fn a() {\n    first();\n    work();\n"));
}

#[tokio::test]
async fn end_of_file_hunk_matches_only_the_end() {
    let s = setup();
    s.dir.write("f.txt", "x\nend\nmiddle\nend\n");
    s.ok("*** Begin Patch
*** Update File: f.txt
@@
-end
+END
*** End of File
*** End Patch")
        .await;
    assert_eq!(s.dir.read("f.txt"), "x\nend\nmiddle\nEND\n");
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: f.txt
@@
-middle
+MIDDLE
*** End of File
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(err.contains("not the end of the file"), "{err}");
    // Only added lines at the end of the file are appended.
    s.ok("*** Begin Patch
*** Update File: f.txt
@@
+appended
*** End of File
*** End Patch")
        .await;
    assert_eq!(s.dir.read("f.txt"), "x\nend\nmiddle\nEND\nappended\n");
}

#[tokio::test]
async fn whitespace_differences_are_tolerated_and_the_file_keeps_its_own() {
    let s = setup();
    s.dir
        .write("f.py", "def f():\n\tif x:   \n\t\treturn 1\n\treturn 2\n");
    // The context's indentation and trailing spaces differ from the file's.
    s.ok("*** Begin Patch
*** Update File: f.py
@@
 def f():
     if x:
-        return 1
+\t\treturn 10
     return 2
*** End Patch")
        .await;
    assert_eq!(
        s.dir.read("f.py"),
        "def f():\n\tif x:   \n\t\treturn 10\n\treturn 2\n"
    );
}

#[tokio::test]
async fn crlf_files_stay_crlf() {
    let s = setup();
    s.dir.write("win.txt", "one\r\ntwo\r\nthree\r\n");
    s.ok("*** Begin Patch
*** Update File: win.txt
@@
 one
-two
+2
+2b
 three
*** End Patch")
        .await;
    assert_eq!(s.dir.read("win.txt"), "one\r\n2\r\n2b\r\nthree\r\n");
}

#[tokio::test]
async fn a_missing_final_newline_stays_missing_unless_the_last_line_changes() {
    let s = setup();
    s.dir.write("f.txt", "a\nb\nc");
    s.ok("*** Begin Patch
*** Update File: f.txt
@@
-a
+A
 b
*** End Patch")
        .await;
    assert_eq!(s.dir.read("f.txt"), "A\nb\nc");
    // The last line as context only: still no final newline.
    s.ok("*** Begin Patch
*** Update File: f.txt
@@
-b
+B
 c
*** End Patch")
        .await;
    assert_eq!(s.dir.read("f.txt"), "A\nB\nc");
    // The patch rewrites the last line: it is a whole line now.
    s.ok("*** Begin Patch
*** Update File: f.txt
@@
 B
-c
+C
*** End Patch")
        .await;
    assert_eq!(s.dir.read("f.txt"), "A\nB\nC\n");
}

#[tokio::test]
async fn an_updated_or_moved_file_keeps_its_mode() {
    let s = setup();
    s.dir.write("run.sh", "#!/bin/sh\necho hi\n");
    fs::set_permissions(s.dir.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    s.dir.write("tool.sh", "#!/bin/sh\n");
    fs::set_permissions(s.dir.join("tool.sh"), fs::Permissions::from_mode(0o700)).unwrap();
    s.ok("*** Begin Patch
*** Update File: run.sh
@@
-echo hi
+echo hello
*** Update File: tool.sh
*** Move to: bin/tool.sh
*** End Patch")
        .await;
    assert_eq!(s.dir.read("run.sh"), "#!/bin/sh\necho hello\n");
    assert_eq!(mode(&s.dir.join("run.sh")), 0o755);
    assert_eq!(s.dir.read("bin/tool.sh"), "#!/bin/sh\n");
    assert_eq!(mode(&s.dir.join("bin/tool.sh")), 0o700);
    assert!(!s.dir.join("tool.sh").exists());
}

#[tokio::test]
async fn one_hunk_that_does_not_apply_changes_nothing() {
    let s = setup();
    s.dir.write("first.txt", "a\nb\nc\n");
    s.dir.write(
        "second.rs",
        "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n",
    );
    let before = s.dir.listing();
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: first.txt
@@
-a
+A
*** Add File: third.txt
+new
*** Delete File: first.txt
*** Add File: first.txt
+re-created
*** Update File: second.rs
@@
 fn main() {
-    let x = 1;
+    let x = 2;
@@
     let x = 1;
-    println!(\"{y}\");
+    println!(\"{x}!\");
 }
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(err.contains("does not apply; nothing was changed"), "{err}");
    assert!(err.contains("second.rs: hunk 2 does not apply"), "{err}");
    // The expected lines, and where the file comes closest.
    assert!(err.contains("    println!(\"{y}\");"), "{err}");
    assert!(
        err.contains("Nearest: line 2 (2 of 3 lines match)"),
        "{err}"
    );
    assert!(err.contains("     3 |     println!(\"{x}\");"), "{err}");
    assert_eq!(s.dir.read("first.txt"), "a\nb\nc\n");
    assert_eq!(
        s.dir.listing(),
        before,
        "no file and no temporary file left"
    );
}

#[tokio::test]
async fn hunks_out_of_order_are_explained() {
    let s = setup();
    s.dir.write("f.txt", "a\nb\nc\nd\n");
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: f.txt
@@
-c
+C
@@
-a
+A
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(err.contains("hunk 2 does not apply"), "{err}");
    assert!(
        err.contains("at line 1, before where the search started"),
        "{err}"
    );
    assert_eq!(s.dir.read("f.txt"), "a\nb\nc\nd\n");
}

/// Makes `path` impossible to delete, even for root when the file system
/// and capabilities allow the immutable attribute; undone on drop.
struct Undeletable {
    path: PathBuf,
    how: &'static str,
}

impl Undeletable {
    fn new(path: &Path) -> Option<Undeletable> {
        let immutable = std::process::Command::new("chattr")
            .arg("+i")
            .arg(path)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if immutable {
            return Some(Undeletable {
                path: path.to_path_buf(),
                how: "immutable",
            });
        }
        // Without the attribute, a read-only directory, unless permissions
        // do not hold for this user.
        let dir = path.parent()?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).ok()?;
        let probe = dir.join(".probe");
        if fs::write(&probe, "").is_ok() {
            let _ = fs::remove_file(&probe);
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
            return None;
        }
        Some(Undeletable {
            path: path.to_path_buf(),
            how: "read-only directory",
        })
    }
}

impl Drop for Undeletable {
    fn drop(&mut self) {
        if self.how == "immutable" {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.path)
                .status();
        } else if let Some(dir) = self.path.parent() {
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o755));
        }
    }
}

#[tokio::test]
async fn a_step_failing_midway_is_undone() {
    let s = setup();
    s.dir.write("a.txt", "a\n");
    s.dir.write("locked/b.txt", "b\n");
    s.dir.write("c.txt", "c\n");
    let Some(lock) = Undeletable::new(&s.dir.join("locked/b.txt")) else {
        eprintln!("skipped: neither chattr +i nor a read-only directory stops this user");
        return;
    };
    // The writes commit first, then the deletions: deleting b.txt fails
    // after a.txt was replaced, new.txt created and c.txt deleted.
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Add File: new/new.txt
+new
*** Delete File: c.txt
*** Delete File: locked/b.txt
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    drop(lock);
    assert!(err.contains("deleting"), "{err}");
    assert!(err.contains("locked/b.txt failed"), "{err}");
    assert!(err.contains("so nothing was changed"), "{err}");
    assert!(err.contains("a.txt: old content put back"), "{err}");
    assert!(err.contains("c.txt: deleted file put back"), "{err}");
    assert!(err.contains("new.txt: new file removed"), "{err}");
    assert_eq!(s.dir.read("a.txt"), "a\n");
    assert_eq!(s.dir.read("c.txt"), "c\n");
    assert_eq!(s.dir.read("locked/b.txt"), "b\n");
    assert_eq!(
        s.dir.listing(),
        ["a.txt", "c.txt", "locked", "locked/b.txt"]
    );
}

#[tokio::test]
async fn a_target_below_a_regular_file_is_refused_before_any_change() {
    let s = setup();
    s.dir.write("a.txt", "a\n");
    s.dir.write("plain", "not a directory\n");
    let err = s
        .fails(
            "*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Add File: plain/inner.txt
+x
*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(err.contains("plain is not a directory"), "{err}");
    assert_eq!(s.dir.read("a.txt"), "a\n");
    assert_eq!(s.dir.listing(), ["a.txt", "plain"]);
}

#[tokio::test]
async fn malformed_patches_are_invalid_args_with_the_line() {
    let s = setup();
    s.dir.write("f.txt", "a\n");
    let cases = [
        ("", "line 1: the patch is empty"),
        ("  \n\n", "line 1: the patch is empty"),
        (
            "*** Update File: f.txt\n@@\n-a\n+b\n*** End Patch",
            "line 1: the patch must start with `*** Begin Patch`",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b",
            "line 5: the patch ends without `*** End Patch`",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\nb\n*** End Patch",
            "line 6: every line of a hunk starts with ` ` (context), `-` (removed) or `+` (added); found `b`",
        ),
        (
            "*** Begin Patch\n*** Add File: n.txt\n+x\ny\n*** End Patch",
            "line 4: every line of an added file starts with `+`",
        ),
        (
            "*** Begin Patch\n*** End Patch",
            "line 2: the patch changes no file",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n*** End Patch",
            "line 2: `*** Update File: f.txt` has no hunk",
        ),
        (
            "*** Begin Patch\n*** Update File: f.txt\n@@\n@@\n-a\n*** End Patch",
            "line 3: empty hunk",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: f.txt\n*** End Patch",
            "line 2: expected `*** Add File: PATH`",
        ),
        (
            "*** Begin Patch\n*** Delete File: \n*** End Patch",
            "line 2: `*** Delete File:` names no path",
        ),
        (
            "*** Begin Patch\n*** Delete File: f.txt\n*** End Patch\nmore",
            "line 4: text after `*** End Patch`",
        ),
    ];
    for (patch, expected) in cases {
        let err = s.fails(patch, ErrorCode::InvalidArgs).await;
        assert!(
            err.starts_with(&format!("Error: invalid patch at {expected}")),
            "{patch:?}: {err}"
        );
    }
    assert_eq!(s.dir.read("f.txt"), "a\n");
}

#[tokio::test]
async fn preconditions_of_each_operation() {
    let s = setup();
    s.dir.write("exists.txt", "x\n");
    s.dir.write("other.txt", "o\n");
    fs::create_dir(s.dir.join("adir")).unwrap();
    let cases = [
        (
            "*** Add File: exists.txt\n+y",
            "exists.txt: cannot add: the file already exists",
        ),
        (
            "*** Delete File: missing.txt",
            "missing.txt: cannot delete: no such file",
        ),
        (
            "*** Update File: missing.txt\n@@\n-a\n+b",
            "missing.txt: cannot update: no such file",
        ),
        (
            "*** Update File: exists.txt\n*** Move to: other.txt",
            "exists.txt: cannot move to other.txt: it already exists",
        ),
        (
            "*** Delete File: adir",
            "adir: is not a regular file (a directory)",
        ),
        (
            "*** Delete File: exists.txt\n*** Delete File: exists.txt",
            "exists.txt: cannot delete: no such file",
        ),
    ];
    for (body, expected) in cases {
        let err = s
            .fails(
                &format!("*** Begin Patch\n{body}\n*** End Patch"),
                ErrorCode::ToolError,
            )
            .await;
        assert!(err.contains(expected), "{body:?}: {err}");
    }
    assert_eq!(s.dir.read("exists.txt"), "x\n");
    assert_eq!(s.dir.read("other.txt"), "o\n");
    // Later sections see earlier ones: delete then add again is fine.
    let text = s
        .ok("*** Begin Patch\n*** Delete File: exists.txt\n*** Add File: exists.txt\n+new\n*** End Patch")
        .await;
    assert_eq!(text, "D exists.txt\nA exists.txt");
    assert_eq!(s.dir.read("exists.txt"), "new\n");
}

#[tokio::test]
async fn updates_need_utf8_but_deletes_and_renames_do_not() {
    let s = setup();
    s.dir.write("bin.dat", [0xffu8, 0xfe, b'\n', b'a', b'\n']);
    s.dir.write("bin2.dat", [0xffu8, 0x00]);
    let err = s
        .fails(
            "*** Begin Patch\n*** Update File: bin.dat\n@@\n-a\n+b\n*** End Patch",
            ErrorCode::ToolError,
        )
        .await;
    assert!(
        err.contains("bin.dat: is not UTF-8 text (invalid byte at offset 0)"),
        "{err}"
    );
    s.ok("*** Begin Patch\n*** Update File: bin.dat\n*** Move to: moved.dat\n*** Delete File: bin2.dat\n*** End Patch")
        .await;
    assert_eq!(
        fs::read(s.dir.join("moved.dat")).unwrap(),
        [0xffu8, 0xfe, b'\n', b'a', b'\n']
    );
    assert_eq!(s.dir.listing(), ["moved.dat"]);
}

#[tokio::test]
async fn an_update_writes_through_a_symbolic_link() {
    let s = setup();
    s.dir.write("real/target.txt", "a\n");
    std::os::unix::fs::symlink(s.dir.join("real/target.txt"), s.dir.join("link.txt")).unwrap();
    s.ok("*** Begin Patch\n*** Update File: link.txt\n@@\n-a\n+b\n*** End Patch")
        .await;
    assert!(s.dir.join("link.txt").is_symlink());
    assert_eq!(s.dir.read("real/target.txt"), "b\n");
}

#[tokio::test]
async fn writes_outside_the_writable_roots_are_refused_before_any_change() {
    let outside = Dir::new();
    outside.write("o.txt", "o\n");
    let s = setup_with(|config| {
        config.writable_roots = Some(vec![config.cwd.join("ok")]);
    });
    s.dir.write("ok/in.txt", "i\n");
    let patch = format!(
        "*** Begin Patch
*** Update File: ok/in.txt
@@
-i
+I
*** Update File: {}
@@
-o
+O
*** End Patch",
        outside.join("o.txt").display()
    );
    let err = s.fails(&patch, ErrorCode::PermissionDenied).await;
    assert!(
        err.contains("outside the sandbox's writable directories"),
        "{err}"
    );
    assert_eq!(s.dir.read("ok/in.txt"), "i\n");
    assert_eq!(outside.read("o.txt"), "o\n");
    // A link inside the roots does not carry a write outside them.
    std::os::unix::fs::symlink(outside.join("o.txt"), s.dir.join("ok/link.txt")).unwrap();
    s.fails(
        "*** Begin Patch\n*** Update File: ok/link.txt\n@@\n-o\n+O\n*** End Patch",
        ErrorCode::PermissionDenied,
    )
    .await;
    assert_eq!(outside.read("o.txt"), "o\n");
    // Inside them, it works.
    s.ok("*** Begin Patch\n*** Update File: ok/in.txt\n@@\n-i\n+I\n*** End Patch")
        .await;
    assert_eq!(s.dir.read("ok/in.txt"), "I\n");
}

#[tokio::test]
async fn deleting_forgets_the_read_record() {
    let s = setup();
    s.dir.write("f.txt", "a\n");
    s.ok("*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+b\n*** End Patch")
        .await;
    s.seen("f.txt").unwrap();
    let path = s.dir.join("f.txt");
    let hash = content_hash(b"b\n");
    s.ok("*** Begin Patch\n*** Delete File: f.txt\n*** End Patch")
        .await;
    assert_eq!(
        s.tools.records().check(Some("a"), &path, &hash),
        Err(dsh_tool_fs::Unseen::NeverRead)
    );
}

#[tokio::test]
async fn the_answer_keeps_within_the_budget() {
    let s = setup_with(|config| config.max_output_chars = 400);
    let old: String = (0..200).map(|n| format!("old {n}\n")).collect();
    s.dir.write("big.txt", &old);
    let mut patch = String::from("*** Begin Patch\n*** Update File: big.txt\n@@\n");
    for n in 0..200 {
        patch.push_str(&format!("-old {n}\n"));
    }
    for n in 0..200 {
        patch.push_str(&format!("+new {n}\n"));
    }
    patch.push_str("*** Add File: small.txt\n+x\n*** End Patch");
    let text = s.ok(&patch).await;
    assert!(text.chars().count() <= 400, "{}", text.chars().count());
    assert!(text.starts_with("M big.txt\n-    1 | old 0\n"), "{text}");
    assert!(text.contains("\nA small.txt\n"), "{text}");
    assert!(
        text.ends_with("changed lines not shown: the answer's budget is spent]"),
        "{text}"
    );
}

#[tokio::test]
async fn errors_keep_within_the_budget() {
    let s = setup_with(|config| config.max_output_chars = 300);
    let old: String = (0..100).map(|n| format!("line {n}\n")).collect();
    s.dir.write("f.txt", &old);
    let mut patch = String::from("*** Begin Patch\n*** Update File: f.txt\n@@\n");
    for n in 0..100 {
        patch.push_str(&format!("-line {n} but not quite\n"));
    }
    patch.push_str("*** End Patch");
    let err = s.fails(&patch, ErrorCode::ToolError).await;
    // "Error: " and the message.
    assert!(err.chars().count() <= 300 + 7, "{}", err.chars().count());
    assert!(err.ends_with("the answer's budget is spent]"), "{err}");
    assert_eq!(s.dir.read("f.txt"), old);
}

#[tokio::test]
async fn later_sections_see_earlier_ones() {
    let s = setup();
    s.dir.write("a.txt", "1\n2\n3\n");
    // A patch sent with CRLF line endings reads the same.
    let patch = "*** Begin Patch
*** Update File: a.txt
@@
-1
+one
*** Update File: a.txt
*** Move to: b.txt
@@
 one
-2
+two
*** Update File: b.txt
@@
-3
+three
*** End Patch"
        .replace('\n', "\r\n");
    let text = s.ok(&patch).await;
    assert_eq!(
        text,
        "M a.txt\n-    1 | 1\n+    1 | one\nR a.txt -> b.txt\n-    2 | 2\n+    2 | two\nM b.txt\n-    3 | 3\n+    3 | three"
    );
    assert_eq!(s.dir.listing(), ["b.txt"]);
    assert_eq!(s.dir.read("b.txt"), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn moving_onto_a_hard_link_of_the_same_file() {
    let s = setup();
    s.dir.write("a.txt", "a\n");
    fs::hard_link(s.dir.join("a.txt"), s.dir.join("b.txt")).unwrap();
    s.ok("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n*** End Patch")
        .await;
    assert_eq!(s.dir.listing(), ["b.txt"]);
    assert_eq!(s.dir.read("b.txt"), "A\n");
}

#[tokio::test]
async fn a_file_read_rules_deny_is_not_updated() {
    let s = setup_with(|config| {
        config.read_denied = Some(std::sync::Arc::new(|path: &Path| {
            path.file_name().is_some_and(|n| n == ".env")
        }));
    });
    s.dir.write(".env", "SECRET=1\n");
    let err = s
        .fails(
            "*** Begin Patch\n*** Update File: .env\n@@\n-SECRET=2\n+SECRET=3\n*** End Patch",
            ErrorCode::PermissionDenied,
        )
        .await;
    assert!(!err.contains("SECRET=1"), "{err}");
    assert_eq!(s.dir.read(".env"), "SECRET=1\n");
}

#[test]
fn patch_paths_lists_every_path_with_its_operation() {
    let paths = patch_paths(
        "*** Begin Patch
*** Add File: a.txt
+a
*** Delete File: /abs/b.txt
*** Update File: c.txt
@@
-c
+C
*** Update File: d.txt
*** Move to: e/d.txt
@@
-d
+D
*** End Patch",
    )
    .unwrap();
    let p = |path: &str, operation| PatchedPath {
        path: path.into(),
        operation,
    };
    assert_eq!(
        paths,
        [
            p("a.txt", PatchOperation::Add),
            p("/abs/b.txt", PatchOperation::Delete),
            p("c.txt", PatchOperation::Update),
            p("d.txt", PatchOperation::MoveFrom),
            p("e/d.txt", PatchOperation::MoveTo),
        ]
    );
    let err = patch_paths("*** Begin Patch\n*** Add File: a\n+a\n").unwrap_err();
    assert_eq!(err.line(), 4);
}

#[tokio::test]
async fn schema_and_presentation() {
    let s = setup();
    let schema = s
        .registry
        .schemas(Dialect::Mcp)
        .into_iter()
        .find(|t| t.name == "apply_patch")
        .unwrap();
    assert_eq!(schema.parameters["required"], json!(["patch"]));
    let description = schema.parameters["properties"]["patch"]["description"]
        .as_str()
        .unwrap();
    assert!(description.contains("*** Begin Patch"), "{description}");
    assert!(schema.description.contains("all or nothing"));
    // A missing or unknown argument is refused by the schema.
    let result = s
        .registry
        .execute(ToolExecution::new(
            "c",
            "apply_patch",
            json!({"input": "x"}),
        ))
        .await;
    assert_eq!(result.code(), Some(ErrorCode::InvalidArgs));

    let args = json!({"patch": "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Update File: b.txt\n*** Move to: c.txt\n*** End Patch"});
    let shown = s.registry.present_call("apply_patch", &args);
    assert_eq!(shown.kind, ToolCallKind::Edit);
    assert_eq!(shown.title, "Patch a.txt, b.txt -> c.txt");
    let shown = s
        .registry
        .present_call("apply_patch", &json!({"patch": "nonsense"}));
    assert_eq!(shown.kind, ToolCallKind::Edit);
}

#[tokio::test]
async fn marker_text_inside_a_hunk_is_content() {
    let s = setup();
    s.dir.write(
        "doc.md",
        "Example:\n*** End Patch\n@@ header\n*** Add File: x\nend\n",
    );
    s.ok("*** Begin Patch
*** Update File: doc.md
@@
 Example:
 *** End Patch
-@@ header
+@@ anchor line
 *** Add File: x
*** End Patch")
        .await;
    assert_eq!(
        s.dir.read("doc.md"),
        "Example:\n*** End Patch\n@@ anchor line\n*** Add File: x\nend\n"
    );
    assert_eq!(s.dir.listing(), ["doc.md"]);
}

#[tokio::test]
async fn unified_diff_headers_and_blank_separators_are_accepted() {
    let s = setup();
    s.dir.write("f.txt", "a\n\nb\nc\n");
    s.ok("\n*** Begin Patch\n*** Update File: f.txt\n@@ -1,4 +1,4 @@\n a\n \n-b\n+B\n c\n\n*** End Patch\n\n")
        .await;
    assert_eq!(s.dir.read("f.txt"), "a\n\nB\nc\n");
}
