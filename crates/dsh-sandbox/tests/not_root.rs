//! The namespaces of a caller that is not root: a user namespace mapping
//! only its own ids. Run as root, the test runs itself again as `nobody`
//! (uid 65534), where the other side does the checks.

use dsh_sandbox::{confine, support, ChildConfig, ChildPlan, SandboxMode, SandboxPolicy};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const NOBODY: u32 = 65534;
const CHILD: &str = "DSH_SANDBOX_NOT_ROOT_DIR";

/// The checks, as a user that is not root, in `base` (which it owns).
fn as_not_root(base: &Path) {
    let project = base.join("proj");
    let git = project.join(".git");
    let policy = SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable_roots: vec![project.clone()],
        ..SandboxPolicy::default()
    };
    let tmp = base.join("tmp");
    let ruleset = confine(&policy, &[], &tmp)
        .unwrap()
        .ruleset(support())
        .unwrap();
    let plan = ChildPlan::prepare(ChildConfig {
        ruleset: Some(Arc::new(ruleset)),
        read_only_binds: vec![git.clone()],
        read_only_root: true,
        writable_paths: vec![project.clone(), tmp],
        ..ChildConfig::default()
    })
    .unwrap();
    assert!(plan.namespaces() && plan.seccomp());
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(
            "echo x > .git/hooks/pre-commit; echo notes > notes.md; id -u; \
             grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status; unshare -r true && echo userns",
        )
        .current_dir(&project);
    plan.attach_std(&mut cmd);
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let all = format!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(!git.join("hooks/pre-commit").exists(), "{all}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.md")).unwrap_or_default(),
        "notes\n",
        "{all}"
    );
    assert!(stdout.starts_with(&format!("{NOBODY}\n")), "{all}");
    assert_eq!(stdout.matches("0000000000000000").count(), 3, "{all}");
    assert!(!stdout.contains("userns"), "{all}");
}

#[test]
fn a_caller_that_is_not_root_gets_a_user_namespace() {
    if let Some(dir) = std::env::var_os(CHILD) {
        as_not_root(Path::new(&dir));
        return;
    }
    // SAFETY: `geteuid` cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        let base = std::env::temp_dir().join(format!("dsh-not-root-{}", std::process::id()));
        std::fs::create_dir_all(base.join("proj/.git/hooks")).unwrap();
        std::fs::create_dir_all(base.join("tmp")).unwrap();
        as_not_root(&base);
        let _ = std::fs::remove_dir_all(&base);
        return;
    }
    let base: PathBuf = std::env::temp_dir().join(format!("dsh-not-root-{}", std::process::id()));
    std::fs::create_dir_all(base.join("proj/.git/hooks")).unwrap();
    std::fs::create_dir_all(base.join("tmp")).unwrap();
    struct Remove(PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _remove = Remove(base.clone());
    for d in ["", "proj", "proj/.git", "proj/.git/hooks", "tmp"] {
        std::os::unix::fs::chown(base.join(d), Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_caller_that_is_not_root_gets_a_user_namespace",
            "--nocapture",
        ])
        .env(CHILD, &base)
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "as nobody: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 passed"));
}
