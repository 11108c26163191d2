//! `workspace-write` through `dsh call`, on both ways of making a working
//! directory writable: the mount namespace (protected entries bound
//! read-only, the root writable) and the entry-by-entry fallback
//! (`DSH_SANDBOX_NO_NAMESPACES=1`). Each case checks what is on disk after
//! the call, not the verdict.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Project(PathBuf);

impl Project {
    fn new(name: &str) -> Project {
        let dir = std::env::temp_dir().join(format!("dsh-layout-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in [
            "proj/.git/hooks",
            "proj/src",
            "proj/sub/.claude",
            "proj/sub/deeper/.vscode",
            "proj/vendor/lib",
        ] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
        }
        std::fs::write(dir.join("proj/.git/config"), "[core]\n").unwrap();
        // A submodule's pointer file.
        std::fs::write(
            dir.join("proj/vendor/lib/.git"),
            "gitdir: ../../.git/modules/lib\n",
        )
        .unwrap();
        std::fs::write(dir.join("proj/README"), "hi\n").unwrap();
        let settings = json!({
            "permissions": {"allow": ["Bash"]},
            "sandbox": {"mode": "workspace-write"}
        });
        std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
        Project(std::fs::canonicalize(dir).unwrap())
    }

    fn proj(&self) -> PathBuf {
        self.0.join("proj")
    }

    fn call(&self, command: &str, fallback: bool) -> Value {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsh"));
        cmd.env("CLAUDE_CONFIG_DIR", "/nonexistent/dsh-tests-claude-config")
            .current_dir(self.proj())
            .args([
                "call",
                // Every ask allowed once, as by someone who does not look:
                // the settings' sandbox is what holds.
                "--yes",
                "--no-user-settings",
                "--settings-only",
                "--settings",
            ])
            .arg(self.0.join("settings.json"))
            .arg("bash")
            .arg(json!({ "command": command }).to_string())
            .stdin(Stdio::null());
        if fallback {
            cmd.env("DSH_SANDBOX_NO_NAMESPACES", "1");
        } else {
            cmd.env_remove("DSH_SANDBOX_NO_NAMESPACES");
        }
        let out = cmd.output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn status(fallback: bool) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsh"));
    cmd.args(["sandbox", "status"]);
    if fallback {
        cmd.env("DSH_SANDBOX_NO_NAMESPACES", "1");
    } else {
        cmd.env_remove("DSH_SANDBOX_NO_NAMESPACES");
    }
    String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
}

fn kernel_confines() -> bool {
    status(true).contains("TCP connect and bind (network: false; ABI 4): enforced")
}

fn namespaces_here() -> bool {
    status(false).contains("writes in the project root: mount namespace")
}

/// What must hold on both layouts: protected entries at any depth stay as
/// they are and cannot be created; subdirectories are writable.
fn protected_everywhere(p: &Project, fallback: bool) {
    let proj = p.proj();
    let r = p.call("echo x > src/new.txt", fallback);
    assert!(proj.join("src/new.txt").exists(), "{}", text(&r));
    for (line, gone_or_made) in [
        ("echo evil > .git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("echo '[core] fsmonitor=evil' >> .git/config", ""),
        (
            "mkdir .claude && echo {} > .claude/settings.json",
            ".claude",
        ),
        ("mkdir .vscode", ".vscode"),
        ("mkdir .idea", ".idea"),
        (
            "echo {} > sub/.claude/settings.json",
            "sub/.claude/settings.json",
        ),
        (
            "echo {} > sub/deeper/.vscode/tasks.json",
            "sub/deeper/.vscode/tasks.json",
        ),
        ("echo 'gitdir: /tmp/evil' > vendor/lib/.git", ""),
        ("rm -rf .git", ""),
        ("mv .git moved-git", "moved-git"),
        ("rm -rf sub/.claude", ""),
    ] {
        let r = p.call(line, fallback);
        if !gone_or_made.is_empty() {
            assert!(
                !proj.join(gone_or_made).exists(),
                "fallback={fallback}: {line}: {}",
                text(&r)
            );
        }
        assert_eq!(
            std::fs::read_to_string(proj.join(".git/config")).unwrap(),
            "[core]\n",
            "fallback={fallback}: {line}: {}",
            text(&r)
        );
        assert_eq!(
            std::fs::read_to_string(proj.join("vendor/lib/.git")).unwrap(),
            "gitdir: ../../.git/modules/lib\n",
            "fallback={fallback}: {line}"
        );
        assert!(
            proj.join("sub/.claude").is_dir(),
            "fallback={fallback}: {line}"
        );
    }
}

fn exists(p: &Path) -> bool {
    p.exists()
}

#[test]
fn the_mount_namespace_makes_the_root_writable_and_keeps_git_read_only() {
    if !kernel_confines() || !namespaces_here() {
        eprintln!("skipped: no mount namespace here");
        return;
    }
    let p = Project::new("ns");
    let r = p.call("echo x > notes.md && cat notes.md", false);
    assert!(text(&r).starts_with("x\n"), "{}", text(&r));
    assert!(exists(&p.proj().join("notes.md")));
    let r = p.call("rm notes.md", false);
    assert!(!exists(&p.proj().join("notes.md")), "{}", text(&r));
    // Existing root files are writable as before.
    let r = p.call("echo more >> README", false);
    assert_eq!(
        std::fs::read_to_string(p.proj().join("README")).unwrap(),
        "hi\nmore\n",
        "{}",
        text(&r)
    );
    // The binds cannot be undone from inside.
    let r = p.call(
        "umount .git; mount -o remount,rw .git; echo evil > .git/hooks/x",
        false,
    );
    assert!(!exists(&p.proj().join(".git/hooks/x")), "{}", text(&r));
    protected_everywhere(&p, false);
}

#[test]
fn the_fallback_protects_the_same_entries_and_names_itself() {
    if !kernel_confines() {
        eprintln!("skipped: this kernel cannot confine");
        return;
    }
    assert!(
        status(true).contains("writes in the project root: entry by entry"),
        "{}",
        status(true)
    );
    let p = Project::new("fallback");
    let r = p.call("echo x > notes.md", true);
    assert!(!exists(&p.proj().join("notes.md")), "{}", text(&r));
    assert!(text(&r).contains("[sandbox: write to"), "{}", text(&r));
    protected_everywhere(&p, true);
}
