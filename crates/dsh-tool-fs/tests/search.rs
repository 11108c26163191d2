//! `glob` and `grep` through a real `ToolRegistry`, on real temporary
//! directories: ignore files, hidden files, order, limits, every output
//! mode, the answer's budget, binary files, and read deny rules.

use dsh_tool_fs::{FileTools, FsConfig, GlobTool, GrepTool};
use dsh_tools::{
    Dialect, ErrorCode, ToolCallKind, ToolExecution, ToolExecutionResult, ToolRegistry, TypedTool,
};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// A private directory removed at the end of the test.
struct Dir {
    path: PathBuf,
}

impl Dir {
    fn new() -> Dir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "dsh-fs-search-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir {
            path: path.canonicalize().unwrap(),
        }
    }

    /// Writes `text` to `relative`, creating directories.
    fn write(&self, relative: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.path.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes a file and sets its modification time to `age` seconds ago.
    fn write_aged(&self, relative: &str, text: &str, age: u64) -> PathBuf {
        let path = self.write(relative, text);
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(age))
            .unwrap();
        path
    }

    fn abs(&self, relative: &str) -> String {
        self.path.join(relative).display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn registry_with(config: FsConfig) -> ToolRegistry {
    let tools = FileTools::new(config);
    let registry = ToolRegistry::new();
    registry
        .register(TypedTool::new(GlobTool::new(tools.clone())))
        .unwrap();
    registry
        .register(TypedTool::new(GrepTool::new(tools)))
        .unwrap();
    registry
}

fn registry(dir: &Dir) -> ToolRegistry {
    registry_with(FsConfig::new(&dir.path))
}

/// Tools whose `Read` deny rules cover every `.env` file and `secret/`.
fn denying_registry(dir: &Dir) -> ToolRegistry {
    let mut config = FsConfig::new(&dir.path);
    config.read_denied = Some(Arc::new(|path: &Path| {
        path.file_name().is_some_and(|n| n == ".env")
            || path.components().any(|c| c.as_os_str() == "secret")
    }));
    registry_with(config)
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolExecutionResult {
    registry
        .execute(ToolExecution::new("c", name, args.to_string()))
        .await
}

/// The answer of a call that must succeed.
async fn ok(registry: &ToolRegistry, name: &str, args: Value) -> String {
    let result = call(registry, name, args.clone()).await;
    assert!(!result.is_error, "{name} {args}: {}", result.text());
    result.text()
}

/// The code and message of a call that must fail.
async fn fails(registry: &ToolRegistry, name: &str, args: Value) -> (ErrorCode, String) {
    let result = call(registry, name, args.clone()).await;
    assert!(
        result.is_error,
        "{name} {args} succeeded: {}",
        result.text()
    );
    (result.error.as_ref().unwrap().code, result.text())
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

// ------------------------------------------------------------------ glob

#[tokio::test]
async fn glob_respects_ignore_files_and_skips_hidden_entries() {
    let dir = Dir::new();
    dir.write(".gitignore", "target/\n*.log\n");
    dir.write(".ignore", "vendor/\n");
    dir.write("a.rs", "");
    dir.write("src/b.rs", "");
    dir.write("target/c.rs", "");
    dir.write("vendor/d.rs", "");
    dir.write(".hidden/e.rs", "");
    dir.write(".f.rs", "");
    dir.write("g.log", "");
    let registry = registry(&dir);

    let mut found = lines(&ok(&registry, "glob", json!({"pattern": "**/*.rs"})).await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    found.sort();
    assert_eq!(found, [dir.abs("a.rs"), dir.abs("src/b.rs")]);

    // No `/`: the file name at any depth, as in .gitignore.
    let mut found = lines(&ok(&registry, "glob", json!({"pattern": "*.rs"})).await)
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    found.sort();
    assert_eq!(found, [dir.abs("a.rs"), dir.abs("src/b.rs")]);

    // With a `/`: relative to the root, `*` within one directory.
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "src/*.rs"})).await,
        dir.abs("src/b.rs")
    );
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "*.rs", "path": "src"})).await,
        dir.abs("src/b.rs")
    );
    // A pattern naming a hidden directory walks hidden entries.
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": ".hidden/*.rs"})).await,
        dir.abs(".hidden/e.rs")
    );
    // An absolute pattern walks from its literal directories.
    assert_eq!(
        ok(
            &registry,
            "glob",
            json!({"pattern": format!("{}/src/**/*.rs", dir.path.display())})
        )
        .await,
        dir.abs("src/b.rs")
    );
    // `./` or an absolute pattern anchors a name at the top.
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "./*.rs"})).await,
        dir.abs("a.rs")
    );
    assert_eq!(
        ok(
            &registry,
            "glob",
            json!({"pattern": format!("{}/b.rs", dir.path.display())})
        )
        .await,
        "No files found"
    );
    assert_eq!(
        ok(
            &registry,
            "glob",
            json!({"pattern": dir.abs("src/b.rs"), "path": "."})
        )
        .await,
        dir.abs("src/b.rs")
    );
    let (code, text) = fails(
        &registry,
        "glob",
        json!({"pattern": "/elsewhere/*.rs", "path": "src"}),
    )
    .await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("is outside path"), "{text}");
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "*.py"})).await,
        "No files found"
    );
}

#[tokio::test]
async fn glob_lists_newest_first_and_at_most_100() {
    let dir = Dir::new();
    for i in 0..105u64 {
        // f000 is the newest.
        dir.write_aged(&format!("d/f{i:03}.txt"), "x", 100 + i * 10);
    }
    let registry = registry(&dir);
    let text = ok(&registry, "glob", json!({"pattern": "**/*.txt"})).await;
    let all = lines(&text);
    assert_eq!(all.len(), 101, "{text}");
    let expected: Vec<String> = (0..100)
        .map(|i| dir.abs(&format!("d/f{i:03}.txt")))
        .collect();
    assert_eq!(
        all[..100],
        expected.iter().map(String::as_str).collect::<Vec<_>>()[..]
    );
    assert!(
        all[100].starts_with("[5 more files not shown"),
        "{}",
        all[100]
    );

    // Touching an old file puts it first.
    dir.write_aged("d/f104.txt", "y", 0);
    let text = ok(&registry, "glob", json!({"pattern": "d/*.txt"})).await;
    assert_eq!(lines(&text)[0], dir.abs("d/f104.txt"));
}

#[tokio::test]
async fn glob_keeps_within_the_character_budget() {
    let dir = Dir::new();
    for i in 0..60 {
        dir.write(
            &format!("a-rather-long-directory-name/file-number-{i:03}.md"),
            "",
        );
    }
    let mut config = FsConfig::new(&dir.path);
    config.max_output_chars = 2_000;
    let registry = registry_with(config);
    let text = ok(&registry, "glob", json!({"pattern": "**/*.md"})).await;
    assert!(text.chars().count() <= 2_000, "{}", text.len());
    let last = text.lines().last().unwrap();
    assert!(last.contains("more files not shown"), "{last}");
    let shown = text.lines().count() - 1;
    assert!(last.starts_with(&format!("[{} more", 60 - shown)), "{last}");
}

#[tokio::test]
async fn glob_errors_are_clear() {
    let dir = Dir::new();
    dir.write("a.rs", "");
    let registry = registry(&dir);
    let (code, text) = fails(&registry, "glob", json!({"pattern": "src/[a.rs"})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("\"pattern\" is not a valid glob"), "{text}");

    let (code, text) = fails(
        &registry,
        "glob",
        json!({"pattern": "*", "path": "nowhere"}),
    )
    .await;
    assert_eq!(code, ErrorCode::ToolError);
    assert!(
        text.contains(&format!("{} does not exist", dir.abs("nowhere"))),
        "{text}"
    );

    let (_, text) = fails(&registry, "glob", json!({"pattern": "*", "path": "a.rs"})).await;
    assert!(text.contains("is not a directory"), "{text}");

    let (code, text) = fails(&registry, "glob", json!({"pattern": "*", "paths": "."})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("paths"), "{text}");
}

#[tokio::test]
async fn glob_never_lists_a_denied_file() {
    let dir = Dir::new();
    dir.write(".env", "TOKEN=hunter2");
    dir.write("app/.env", "TOKEN=hunter2");
    dir.write("app/main.rs", "");
    dir.write("secret/key.rs", "");
    let registry = denying_registry(&dir);
    for pattern in ["**/*", "**/.env", ".env", "*", "**/*.rs", "secret/*"] {
        let text = ok(&registry, "glob", json!({"pattern": pattern})).await;
        assert!(!text.contains(".env"), "{pattern}: {text}");
        assert!(!text.contains("secret"), "{pattern}: {text}");
    }
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "**/*.rs"})).await,
        dir.abs("app/main.rs")
    );
    let (code, text) = fails(&registry, "glob", json!({"pattern": "*", "path": "secret"})).await;
    assert_eq!(code, ErrorCode::PermissionDenied);
    assert!(text.contains(&dir.abs("secret")), "{text}");
}

// ------------------------------------------------------------------ grep

/// A small project: three sources, one ignored, one hidden.
fn project() -> Dir {
    let dir = Dir::new();
    dir.write(".gitignore", "build/\n");
    dir.write_aged(
        "src/main.rs",
        "fn main() {\n    // TODO: parse args\n    run();\n}\n",
        300,
    );
    dir.write_aged(
        "src/lib.rs",
        "pub fn run() {\n    let todo = 1;\n    // TODO: more\n    println!(\"{todo}\");\n}\n",
        100,
    );
    dir.write_aged("tools/gen.py", "# TODO: python\nprint('x')\n", 200);
    dir.write("build/out.rs", "// TODO: generated\n");
    dir.write(".cache/x.rs", "// TODO: hidden\n");
    dir
}

#[tokio::test]
async fn grep_lists_matching_files_newest_first() {
    let dir = project();
    let registry = registry(&dir);
    let text = ok(&registry, "grep", json!({"pattern": "TODO"})).await;
    assert_eq!(
        lines(&text),
        [
            "Found 3 files",
            &dir.abs("src/lib.rs"),
            &dir.abs("tools/gen.py"),
            &dir.abs("src/main.rs"),
        ]
    );
    assert_eq!(
        ok(&registry, "grep", json!({"pattern": "nothing like it"})).await,
        "No files found"
    );
}

#[tokio::test]
async fn grep_content_numbers_lines_and_shows_context() {
    let dir = project();
    let registry = registry(&dir);
    let main = dir.abs("src/main.rs");
    let lib = dir.abs("src/lib.rs");

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "TODO", "path": "src", "output_mode": "content"}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{lib}:3:    // TODO: more"),
            format!("{main}:2:    // TODO: parse args"),
        ]
    );

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "TODO", "path": "src/main.rs", "output_mode": "content", "-n": false}),
    )
    .await;
    assert_eq!(text, format!("{main}:    // TODO: parse args"));

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "TODO", "path": "src", "output_mode": "content", "-C": 1}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{lib}-2-    let todo = 1;"),
            format!("{lib}:3:    // TODO: more"),
            format!("{lib}-4-    println!(\"{{todo}}\");"),
            "--".to_owned(),
            format!("{main}-1-fn main() {{"),
            format!("{main}:2:    // TODO: parse args"),
            format!("{main}-3-    run();"),
        ]
    );

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "^\\s*(fn|pub|let)", "path": "src/lib.rs", "output_mode": "content", "-A": 0, "-B": 0}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{lib}:1:pub fn run() {{"),
            format!("{lib}:2:    let todo = 1;")
        ]
    );

    // Groups of one file apart from each other are separated too.
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "pub fn|println", "path": "src/lib.rs", "output_mode": "content", "-A": 0}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{lib}:1:pub fn run() {{"),
            format!("{lib}:4:    println!(\"{{todo}}\");")
        ]
    );
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "pub fn|println", "path": "src/lib.rs", "output_mode": "content", "-B": 1}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{lib}:1:pub fn run() {{"),
            "--".to_owned(),
            format!("{lib}-3-    // TODO: more"),
            format!("{lib}:4:    println!(\"{{todo}}\");"),
        ]
    );
}

#[tokio::test]
async fn grep_counts_and_ignores_case() {
    let dir = project();
    let registry = registry(&dir);
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "todo", "output_mode": "count"}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            "Found 2 matching lines in 1 file".to_owned(),
            format!("{}:2", dir.abs("src/lib.rs")),
        ]
    );
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "todo", "output_mode": "count", "-i": true}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            "Found 5 matching lines in 3 files".to_owned(),
            format!("{}:3", dir.abs("src/lib.rs")),
            format!("{}:1", dir.abs("src/main.rs")),
            format!("{}:1", dir.abs("tools/gen.py")),
        ]
    );
}

#[tokio::test]
async fn grep_multiline_matches_across_lines() {
    let dir = project();
    let registry = registry(&dir);
    let main = dir.abs("src/main.rs");
    let args = json!({"pattern": "args\\n\\s+run", "output_mode": "content"});
    let (code, text) = fails(&registry, "grep", args).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("multiline: true"), "{text}");

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "args\\n\\s+run", "output_mode": "content", "multiline": true}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{main}:2:    // TODO: parse args"),
            format!("{main}:3:    run();"),
        ]
    );
    // `.` crosses lines in multiline mode.
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "fn main.*run", "multiline": true}),
    )
    .await;
    assert_eq!(lines(&text), ["Found 1 file", &main]);
    assert_eq!(
        ok(&registry, "grep", json!({"pattern": "fn main.*run"})).await,
        "No files found"
    );
}

#[tokio::test]
async fn grep_filters_by_type_and_glob() {
    let dir = project();
    let registry = registry(&dir);
    let py = dir.abs("tools/gen.py");
    assert_eq!(
        lines(&ok(&registry, "grep", json!({"pattern": "TODO", "type": "py"})).await),
        ["Found 1 file", &py]
    );
    assert_eq!(
        ok(
            &registry,
            "grep",
            json!({"pattern": "TODO", "type": "rust"})
        )
        .await,
        format!(
            "Found 2 files\n{}\n{}",
            dir.abs("src/lib.rs"),
            dir.abs("src/main.rs")
        )
    );
    assert_eq!(
        lines(
            &ok(
                &registry,
                "grep",
                json!({"pattern": "TODO", "glob": "*.py"})
            )
            .await
        ),
        ["Found 1 file", &py]
    );
    assert_eq!(
        lines(
            &ok(
                &registry,
                "grep",
                json!({"pattern": "TODO", "glob": "*.{py,toml}"})
            )
            .await
        ),
        ["Found 1 file", &py]
    );
    assert_eq!(
        ok(
            &registry,
            "grep",
            json!({"pattern": "TODO", "glob": "!*.rs"})
        )
        .await,
        format!("Found 1 file\n{py}")
    );
    assert_eq!(
        ok(
            &registry,
            "grep",
            json!({"pattern": "TODO", "glob": "src/m*.rs tools/*"})
        )
        .await,
        format!("Found 2 files\n{py}\n{}", dir.abs("src/main.rs"))
    );
    let (code, text) = fails(
        &registry,
        "grep",
        json!({"pattern": "x", "type": "rustacean"}),
    )
    .await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("\"rustacean\" is not a file type"), "{text}");
    let (code, text) = fails(&registry, "grep", json!({"pattern": "x", "glob": "{a"})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("\"glob\" is not a valid glob"), "{text}");
}

#[tokio::test]
async fn grep_head_limit_and_offset_page_the_answer() {
    let dir = Dir::new();
    let body: String = (1..=30).map(|i| format!("match {i}\n")).collect();
    let file = dir.write("many.txt", &body);
    let registry = registry(&dir);
    let file = file.display().to_string();

    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "match", "output_mode": "content", "head_limit": 3}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            format!("{file}:1:match 1"),
            format!("{file}:2:match 2"),
            format!("{file}:3:match 3"),
            "[27 more lines not shown (head_limit 3); offset 3 shows the next ones]".to_owned(),
        ]
    );
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "match", "output_mode": "content", "head_limit": 2, "offset": 28}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [format!("{file}:29:match 29"), format!("{file}:30:match 30")]
    );
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "match", "output_mode": "count", "offset": 5}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            "Found 30 matching lines in 1 file",
            "[no more files after offset 5]"
        ]
    );

    for i in 0..5 {
        dir.write_aged(&format!("f{i}.txt"), "match", 10 + i);
    }
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "match", "head_limit": 2}),
    )
    .await;
    assert_eq!(
        lines(&text),
        [
            "Found 6 files".to_owned(),
            file.clone(),
            dir.abs("f0.txt"),
            "[4 more files not shown (head_limit 2); offset 2 shows the next ones]".to_owned(),
        ]
    );
}

#[tokio::test]
async fn grep_keeps_within_the_character_budget() {
    let dir = Dir::new();
    for f in 0..20 {
        let body: String = (0..200)
            .map(|i| format!("needle {f} {i} {}\n", "x".repeat(40)))
            .collect();
        dir.write(&format!("data/f{f:02}.txt"), body);
    }
    let mut config = FsConfig::new(&dir.path);
    config.max_output_chars = 3_000;
    let registry = registry_with(config);
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    assert!(text.chars().count() <= 3_000, "{} characters", text.len());
    let last = text.lines().last().unwrap();
    let shown = text.lines().count() - 1;
    assert!(
        last.starts_with(&format!(
            "[{} more lines not shown: an answer holds at most 3000 characters",
            4000 - shown
        )),
        "{last}"
    );
    assert!(last.contains("head_limit"), "{last}");
    assert!(text.starts_with(&format!("{}:1:needle 0 0 ", dir.abs("data/f00.txt"))));

    // A long line is cut.
    dir.write("long.txt", format!("needle{}\n", "y".repeat(5_000)));
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "needle", "path": "long.txt", "output_mode": "content"}),
    )
    .await;
    assert!(text.len() < 1_000, "{}", text.len());
    assert!(
        text.ends_with("[… line cut, 4506 more characters]"),
        "{text}"
    );
}

#[tokio::test]
async fn grep_skips_binary_files_and_links() {
    let dir = Dir::new();
    dir.write("text.txt", "needle\n");
    dir.write("blob.bin", b"needle\x00\x01\x02needle\n");
    let outside = Dir::new();
    outside.write("far.txt", "needle\n");
    std::os::unix::fs::symlink(&outside.path, dir.path.join("link")).unwrap();
    std::os::unix::fs::symlink(outside.path.join("far.txt"), dir.path.join("far-link.txt"))
        .unwrap();
    let registry = registry(&dir);
    assert_eq!(
        ok(&registry, "grep", json!({"pattern": "needle"})).await,
        format!("Found 1 file\n{}", dir.abs("text.txt"))
    );
    assert_eq!(
        ok(&registry, "glob", json!({"pattern": "**/*.txt"})).await,
        dir.abs("text.txt")
    ); // Named explicitly, a binary file is still not searched, and the
       // answer says why.
    assert_eq!(
        ok(
            &registry,
            "grep",
            json!({"pattern": "needle", "path": "blob.bin"})
        )
        .await,
        format!(
            "No matches found: {} is a binary file, which grep does not search",
            dir.abs("blob.bin")
        )
    );
}

#[tokio::test]
async fn grep_never_searches_or_names_a_denied_file() {
    let dir = Dir::new();
    dir.write(".env", "TOKEN=hunter2\n");
    dir.write("app/.env", "TOKEN=hunter2\n");
    dir.write("secret/key.txt", "TOKEN=hunter2\n");
    dir.write("app/config.txt", "TOKEN=from-env\n");
    let registry = denying_registry(&dir);
    for args in [
        json!({"pattern": "TOKEN"}),
        json!({"pattern": "hunter2", "output_mode": "content"}),
        json!({"pattern": "TOKEN", "output_mode": "count"}),
        json!({"pattern": "TOKEN", "glob": ".env"}),
        json!({"pattern": "TOKEN", "glob": "**/.env"}),
        json!({"pattern": "TOKEN", "glob": "*"}),
        json!({"pattern": "TOKEN", "path": "app", "output_mode": "content", "-C": 5}),
    ] {
        let text = ok(&registry, "grep", args.clone()).await;
        assert!(!text.contains(".env"), "{args}: {text}");
        assert!(!text.contains("hunter2"), "{args}: {text}");
        assert!(!text.contains("secret"), "{args}: {text}");
    }
    for path in [
        ".env",
        "app/.env",
        "secret",
        "secret/key.txt",
        "app/../.env",
    ] {
        let (code, text) =
            fails(&registry, "grep", json!({"pattern": "TOKEN", "path": path})).await;
        assert_eq!(code, ErrorCode::PermissionDenied, "{path}: {text}");
        assert!(text.contains("denied by a Read deny rule"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
    // A link to a denied directory, walked as the root, is refused; a
    // link to a directory holding denied files hides them as well.
    std::os::unix::fs::symlink(dir.path.join("secret"), dir.path.join("door")).unwrap();
    let (code, _) = fails(
        &registry,
        "grep",
        json!({"pattern": "TOKEN", "path": "door"}),
    )
    .await;
    assert_eq!(code, ErrorCode::PermissionDenied);
    std::os::unix::fs::symlink(&dir.path, dir.path.join("app/up")).unwrap();
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "TOKEN", "path": "app/up"}),
    )
    .await;
    assert_eq!(
        text,
        format!("Found 1 file\n{}/app/up/app/config.txt", dir.path.display())
    );

    // A link to a denied file, named explicitly, is refused too.
    std::os::unix::fs::symlink(dir.path.join(".env"), dir.path.join("innocent.txt")).unwrap();
    let (code, _) = fails(
        &registry,
        "grep",
        json!({"pattern": "TOKEN", "path": "innocent.txt"}),
    )
    .await;
    assert_eq!(code, ErrorCode::PermissionDenied);
}

#[tokio::test]
async fn a_rule_on_real_paths_holds_through_a_linked_root() {
    let dir = Dir::new();
    dir.write("vault/key.txt", "TOKEN=hunter2\n");
    dir.write("app/config.txt", "TOKEN=from-env\n");
    std::os::unix::fs::symlink(&dir.path, dir.path.join("alias")).unwrap();
    let vault = dir.path.join("vault");
    let mut config = FsConfig::new(&dir.path);
    config.read_denied = Some(Arc::new(move |path: &Path| path.starts_with(&vault)));
    let registry = registry_with(config);
    let text = ok(
        &registry,
        "grep",
        json!({"pattern": "TOKEN", "path": "alias"}),
    )
    .await;
    assert_eq!(
        text,
        format!("Found 1 file\n{}", dir.abs("alias/app/config.txt"))
    );
    let text = ok(
        &registry,
        "glob",
        json!({"pattern": "**/*.txt", "path": "alias"}),
    )
    .await;
    assert_eq!(text, dir.abs("alias/app/config.txt"));
    let (code, _) = fails(
        &registry,
        "grep",
        json!({"pattern": "TOKEN", "path": "alias/vault/key.txt"}),
    )
    .await;
    assert_eq!(code, ErrorCode::PermissionDenied);
}

#[tokio::test]
async fn grep_errors_are_clear() {
    let dir = project();
    let registry = registry(&dir);
    let (code, text) = fails(&registry, "grep", json!({"pattern": "fn (main"})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(
        text.starts_with("Error: invalid arguments: \"pattern\" is not a valid regular expression"),
        "{text}"
    );
    let (code, text) = fails(
        &registry,
        "grep",
        json!({"pattern": "x", "path": "gone/away"}),
    )
    .await;
    assert_eq!(code, ErrorCode::ToolError);
    assert!(
        text.contains(&format!("{} does not exist", dir.abs("gone/away"))),
        "{text}"
    );
    let (code, text) = fails(
        &registry,
        "grep",
        json!({"pattern": "x", "output_mode": "lines"}),
    )
    .await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("output_mode"), "{text}");
    let (code, text) = fails(&registry, "grep", json!({"pattern": "x", "-A": -1})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("\"-A\""), "{text}");
    let (code, text) = fails(&registry, "grep", json!({"pattern": "x", "-C": 5000})).await;
    assert_eq!(code, ErrorCode::InvalidArgs);
    assert!(text.contains("\"-C\" must be at most 1000"), "{text}");
    let (code, _) = fails(
        &registry,
        "grep",
        json!({"pattern": "x", "case_insensitive": true}),
    )
    .await;
    assert_eq!(code, ErrorCode::InvalidArgs);
}

#[tokio::test]
async fn schemas_annotations_and_presentations() {
    let dir = Dir::new();
    let registry = registry(&dir);
    let schemas = registry.schemas(Dialect::Anthropic);
    let grep = schemas.iter().find(|s| s.name == "grep").unwrap();
    let properties = grep.parameters["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "pattern",
            "path",
            "glob",
            "type",
            "output_mode",
            "-i",
            "-n",
            "-A",
            "-B",
            "-C",
            "multiline",
            "head_limit",
            "offset"
        ]
    );
    assert_eq!(grep.parameters["required"], json!(["pattern"]));
    assert_eq!(
        properties["output_mode"]["enum"],
        json!(["files_with_matches", "content", "count"])
    );
    assert!(grep.description.contains("14000 characters"));
    let glob = schemas.iter().find(|s| s.name == "glob").unwrap();
    assert_eq!(glob.parameters["required"], json!(["pattern"]));

    for name in ["glob", "grep"] {
        let annotations = registry.get(name).unwrap().annotations();
        assert_eq!(annotations.read_only, Some(true));
    }
    let call = registry.present_call("glob", &json!({"pattern": "src/**/*.rs"}));
    assert_eq!(call.title, "glob src/**/*.rs");
    assert_eq!(call.kind, ToolCallKind::Search);
    let call = registry.present_call("grep", &json!({"pattern": "TODO", "path": "src"}));
    assert_eq!(call.title, "grep TODO in src");
    assert_eq!(call.kind, ToolCallKind::Search);
}
