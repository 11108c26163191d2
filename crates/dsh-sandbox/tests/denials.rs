//! Read denials and protected names, held by Landlock against real
//! processes: each test builds a layout and runs shell commands confined
//! by its ruleset.

use dsh_sandbox::{
    confine, support, ConfineError, Confinement, LayoutCache, ReadDenials, SandboxMode,
    SandboxPolicy, WriteMechanism,
};
use std::fs;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// Removes a test's directories, whether it passed or not.
struct Cleanup(PathBuf);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// A fresh directory: (project, private temp dir, what removes both).
fn dirs(tag: &str) -> (PathBuf, PathBuf, Cleanup) {
    let base = std::env::temp_dir().join(format!(
        "dsh-denials-{tag}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    let proj = base.join("proj");
    let tmp = base.join("tmp");
    fs::create_dir_all(&proj).unwrap();
    fs::create_dir_all(&tmp).unwrap();
    (
        fs::canonicalize(proj).unwrap(),
        fs::canonicalize(tmp).unwrap(),
        Cleanup(base),
    )
}

/// `.env` at any depth and any directory named `secrets`, as `Read(.env)`
/// and `Read(secrets)` deny them.
fn env_denials(proj: &Path) -> ReadDenials {
    ReadDenials {
        literal: vec![],
        search: vec![proj.to_owned()],
        matcher: Arc::new(|p: &Path| {
            p.components()
                .any(|c| c.as_os_str() == ".env" || c.as_os_str() == "secrets")
        }),
        key: "Read(.env) Read(secrets)".into(),
    }
}

fn confinement(mode: SandboxMode, proj: &Path, tmp: &Path) -> Confinement {
    confine(
        &SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        },
        &[proj.to_owned()],
        tmp,
    )
    .unwrap()
}

/// Runs `script` under `sh -c`, confined by `ruleset`, in `proj`; whether
/// it succeeded, and its output.
fn run(ruleset: &OwnedFd, proj: &Path, tmp: &Path, script: &str) -> (bool, String) {
    let fd = ruleset.as_raw_fd();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .current_dir(proj)
        .env("TMPDIR", tmp)
        .env("P", proj)
        .env("T", tmp);
    // SAFETY: the closure makes only the two system calls of
    // `restrict_self` (async-signal-safe, no allocation), as `pre_exec`
    // requires in a multi-threaded test process.
    unsafe {
        cmd.pre_exec(move || dsh_sandbox::restrict_self(fd));
    }
    output_of(&mut cmd)
}

/// Whether `cmd` succeeded, and what it printed on both streams.
fn output_of(cmd: &mut Command) -> (bool, String) {
    // A child that refuses to confine itself does not start: that is a
    // failure of the command, with the reason.
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => return (false, format!("did not start: {e}")),
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn ok(r: &OwnedFd, p: &Path, t: &Path, s: &str) -> String {
    let (good, out) = run(r, p, t, s);
    assert!(good, "`{s}` should succeed: {out}");
    out
}

fn refused(r: &OwnedFd, p: &Path, t: &Path, s: &str) {
    let (good, out) = run(r, p, t, s);
    assert!(!good, "`{s}` should fail, it printed: {out}");
}

#[test]
fn denied_files_are_unreadable_by_any_means_and_siblings_are_not() {
    let (p, t, _clean_p) = dirs("env");
    fs::write(p.join(".env"), "TOKEN=root-secret").unwrap();
    fs::write(p.join("README"), "hello").unwrap();
    fs::create_dir_all(p.join("sub/deep")).unwrap();
    fs::write(p.join("sub/deep/.env"), "TOKEN=deep-secret").unwrap();
    fs::write(p.join("sub/deep/code.rs"), "fn main() {}").unwrap();
    fs::create_dir_all(p.join("secrets")).unwrap();
    fs::write(p.join("secrets/key"), "KEY").unwrap();
    std::os::unix::fs::symlink(".env", p.join("link")).unwrap();
    let mut c = confinement(SandboxMode::ReadOnly, &p, &t);
    c.read_denials = Some(env_denials(&p));
    let layout = c.layout(support()).unwrap();
    let r = &*layout.ruleset;

    // Unconfined, all of it is readable: the refusals below are the sandbox's.
    assert!(fs::read_to_string(p.join(".env")).is_ok());

    for script in [
        "cat .env",
        "cat \"$P/.env\"",
        "cat sub/deep/.env",
        "cat link",
        "cp .env \"$T/copy\"",
        "python3 -c 'open(\".env\").read()'",
        "python3 -c 'open(\"sub/deep/.env\").read()'",
        "ln .env \"$T/hard\"",
        "ln sub/deep/.env \"$T/hard2\"",
        "ln -s \"$P/.env\" \"$T/soft\" && cat \"$T/soft\"",
        "cat secrets/key",
        "cd sub/deep && cat .env",
    ] {
        refused(r, &p, &t, script);
    }
    assert!(!t.join("hard").exists(), "a hard link escapes the denial");
    assert_eq!(ok(r, &p, &t, "cat README"), "hello");
    assert_eq!(ok(r, &p, &t, "cat sub/deep/code.rs"), "fn main() {}");
    ok(r, &p, &t, "ls -a . sub sub/deep");
    ok(r, &p, &t, "cat /etc/passwd >/dev/null && ls / >/dev/null");
    // The private temp directory stays usable.
    assert_eq!(ok(r, &p, &t, "echo x > \"$T/f\" && cat \"$T/f\""), "x\n");
    // No writes in read-only mode.
    refused(r, &p, &t, "echo x > README");
}

#[test]
fn literal_denials_and_their_links_are_held() {
    let (p, t, _clean_p) = dirs("literal");
    fs::create_dir_all(p.join("conf")).unwrap();
    fs::write(p.join("conf/db.key"), "KEY").unwrap();
    fs::write(p.join("conf/db.toml"), "ok").unwrap();
    let mut c = confinement(SandboxMode::WorkspaceWrite, &p, &t);
    c.read_denials = Some(ReadDenials {
        literal: vec![p.join("conf/db.key"), p.join("missing/file")],
        search: vec![],
        matcher: Arc::new(|_: &Path| false),
        key: "literal".into(),
    });
    let layout = c.layout(support()).unwrap();
    let r = &*layout.ruleset;
    refused(r, &p, &t, "cat conf/db.key");
    assert_eq!(ok(r, &p, &t, "cat conf/db.toml"), "ok");
}

#[test]
fn the_cache_reuses_a_ruleset_until_a_new_denied_file_appears() {
    let (p, t, _clean_p) = dirs("cache");
    fs::create_dir_all(p.join("sub")).unwrap();
    fs::write(p.join("sub/a"), "a").unwrap();
    let mut c = confinement(SandboxMode::ReadOnly, &p, &t);
    c.read_denials = Some(env_denials(&p));
    // Directories changed less than two seconds ago are not trusted.
    std::thread::sleep(Duration::from_millis(2100));
    let cache = LayoutCache::default();
    let first = cache.layout(&c, support()).unwrap();
    let second = cache.layout(&c, support()).unwrap();
    assert!(
        Arc::ptr_eq(&first.ruleset, &second.ruleset),
        "nothing changed: the ruleset is reused"
    );
    // Another confinement is another entry.
    let mut other = c.clone();
    other.read_denials = None;
    let third = cache.layout(&other, support()).unwrap();
    assert!(!Arc::ptr_eq(&first.ruleset, &third.ruleset));

    fs::write(p.join("sub/.env"), "TOKEN=new").unwrap();
    let fresh = cache.layout(&c, support()).unwrap();
    assert!(
        !Arc::ptr_eq(&first.ruleset, &fresh.ruleset),
        "a new file below a walked directory rebuilds"
    );
    refused(&fresh.ruleset, &p, &t, "cat sub/.env");
    assert_eq!(ok(&fresh.ruleset, &p, &t, "cat sub/a"), "a");
    // The stale ruleset did not know the file: this is why it is rebuilt.
    assert_eq!(ok(&first.ruleset, &p, &t, "cat sub/.env"), "TOKEN=new");
    // Just rebuilt from a racy directory: not trusted on the next use.
    let again = cache.layout(&c, support()).unwrap();
    assert!(!Arc::ptr_eq(&fresh.ruleset, &again.ruleset));
}

#[test]
fn the_walk_bound_fails_denials_and_cuts_only_protection() {
    let (p, t, _clean_p) = dirs("bound");
    for i in 0..30 {
        fs::create_dir_all(p.join(format!("d{i}"))).unwrap();
        fs::write(p.join(format!("d{i}/f")), "").unwrap();
    }
    let mut c = confinement(SandboxMode::WorkspaceWrite, &p, &t);
    c.walk_bound = 20;
    c.read_denials = Some(env_denials(&p));
    match c.layout(support()) {
        Err(ConfineError::WalkBound { dir, entries }) => {
            assert_eq!(dir, p);
            assert_eq!(entries, 21);
        }
        other => panic!("expected the bound error, got {other:?}"),
    }
    let e = c.ruleset(support()).unwrap_err();
    assert!(e.0.contains("cannot be held"), "{e}");
    c.read_denials = None;
    let layout = c.layout(support()).unwrap();
    assert!(!layout.complete);
    // What is directly in the working directory stays protected.
    refused(&layout.ruleset, &p, &t, "mkdir .git");
    c.walk_bound = dsh_sandbox::WALK_BOUND;
    assert!(c.layout(support()).unwrap().complete);
}

#[test]
fn entry_by_entry_protects_names_at_any_depth() {
    let (p, t, _clean_p) = dirs("entry");
    fs::create_dir_all(p.join("sub/.claude")).unwrap();
    fs::write(p.join("sub/.claude/settings.json"), "{}").unwrap();
    fs::write(p.join("sub/.git"), "gitdir: /elsewhere").unwrap();
    fs::write(p.join("sub/file"), "old").unwrap();
    fs::create_dir_all(p.join("other/.idea")).unwrap();
    fs::create_dir_all(p.join("free")).unwrap();
    fs::create_dir_all(p.join(".git/hooks")).unwrap();
    let c = confinement(SandboxMode::WorkspaceWrite, &p, &t);
    assert!(!c.namespaces);
    let layout = c.layout(support()).unwrap();
    assert_eq!(layout.mechanism, WriteMechanism::EntryByEntry);
    assert!(layout.read_only_binds.is_empty());
    assert!(layout.complete);
    let r = &*layout.ruleset;
    for script in [
        "echo x > sub/.claude/settings.json",
        "touch sub/.claude/new",
        "echo 'gitdir: /tmp/evil' > sub/.git",
        "rm sub/.git",
        "mv sub/.git sub/g",
        "touch sub/new",
        "mkdir other/.idea/x",
        "touch .git/hooks/pre-commit",
        "mkdir .vscode",
        "touch notes.md",
        "mknod \"$T/null\" c 1 3",
        "mknod free/null c 1 3",
    ] {
        refused(r, &p, &t, script);
    }
    assert_eq!(
        fs::read_to_string(p.join("sub/.git")).unwrap(),
        "gitdir: /elsewhere"
    );
    assert!(!p.join("notes.md").exists());
    ok(r, &p, &t, "echo new > sub/file");
    ok(r, &p, &t, "mkdir free/d && touch free/d/x && rm -r free/d");
    ok(r, &p, &t, "touch free/n");
    // A directory holding a protected entry is split: nothing new in it.
    refused(r, &p, &t, "touch other/n");
    ok(r, &p, &t, "echo x > \"$T/x\"");
}

#[test]
fn namespace_layout_lets_files_be_made_at_the_root_and_lists_binds() {
    let (p, t, _clean_p) = dirs("ns");
    fs::create_dir_all(p.join(".git/hooks")).unwrap();
    fs::create_dir_all(p.join("sub/deeper")).unwrap();
    fs::write(p.join("sub/deeper/.git"), "gitdir: x").unwrap();
    fs::create_dir_all(p.join("sub/.vscode")).unwrap();
    std::os::unix::fs::symlink("/etc", p.join("sub/.idea")).unwrap();
    let mut c = confinement(SandboxMode::WorkspaceWrite, &p, &t);
    c.namespaces = true;
    let layout = c.layout(support()).unwrap();
    assert_eq!(layout.mechanism, WriteMechanism::Namespace);
    assert_eq!(
        layout.read_only_binds,
        [
            p.join(".git"),
            p.join("sub/.vscode"),
            p.join("sub/deeper/.git")
        ],
        "existing protected entries at any depth, links left out"
    );
    let r = &*layout.ruleset;
    ok(
        r,
        &p,
        &t,
        "echo x > notes.md && cat notes.md && rm notes.md",
    );
    ok(
        r,
        &p,
        &t,
        "mkdir sub/d && ln -s d sub/l && rm sub/l && rmdir sub/d",
    );
    for script in [
        "mkdir .claude",
        "mkdir .vscode",
        "ln -s /tmp .idea",
        "mkdir newdir",
        "mknod dev c 1 3",
        "mknod sub/dev c 1 3",
        "mknod \"$T/dev\" c 1 3",
    ] {
        refused(r, &p, &t, script);
    }
    assert!(!p.join(".claude").exists());

    // Without a `.git`, a file made at the root could be one: no files there.
    let (q, u, _clean_q) = dirs("ns-nogit");
    fs::create_dir_all(q.join("sub")).unwrap();
    let mut c = confinement(SandboxMode::WorkspaceWrite, &q, &u);
    c.namespaces = true;
    let layout = c.layout(support()).unwrap();
    assert!(layout.read_only_binds.is_empty());
    refused(&layout.ruleset, &q, &u, "echo 'gitdir: /tmp/x' > .git");
    refused(&layout.ruleset, &q, &u, "touch notes.md");
    ok(&layout.ruleset, &q, &u, "touch sub/notes.md");
}

#[test]
fn read_denials_hold_in_workspace_write_too() {
    let (p, t, _clean_p) = dirs("ww");
    fs::write(p.join(".env"), "S").unwrap();
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/.env"), "S").unwrap();
    // Entry by entry, Landlock grants reads around the denied files.
    let mut c = confinement(SandboxMode::WorkspaceWrite, &p, &t);
    c.read_denials = Some(env_denials(&p));
    let layout = c.layout(support()).unwrap();
    assert!(layout.masked.is_empty());
    let r = &*layout.ruleset;
    refused(r, &p, &t, "cat .env");
    refused(r, &p, &t, "cat src/.env");
    refused(r, &p, &t, "ln src/.env \"$T/h\"");
    ok(r, &p, &t, "echo y > src/new.rs");
    // Made during the call directly in a split directory: no rule covers
    // it until the layout is built again.
    refused(r, &p, &t, "cat src/new.rs");
    let next = c.layout(support()).unwrap();
    assert_eq!(ok(&next.ruleset, &p, &t, "cat src/new.rs"), "y\n");
    refused(&next.ruleset, &p, &t, "cat src/.env");
    if !dsh_sandbox::namespaces_available() {
        return;
    }
    // In a mount namespace, they are hidden under empty mounts instead:
    // nothing is split, so new files are readable at once.
    c.namespaces = true;
    let layout = c.layout(support()).unwrap();
    assert_eq!(layout.masked.len(), 2, "{:?}", layout.masked);
    let plan = dsh_sandbox::ChildPlan::prepare(dsh_sandbox::ChildConfig {
        ruleset: Some(layout.ruleset.clone()),
        masks: layout.masked.clone(),
        read_only_binds: layout.read_only_binds.clone(),
        ..dsh_sandbox::ChildConfig::default()
    })
    .unwrap();
    let masked = |script: &str| {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(script)
            .current_dir(&p)
            .env("TMPDIR", &t)
            .env("T", &t);
        plan.attach_std(&mut cmd);
        output_of(&mut cmd)
    };
    for script in [
        "cat .env",
        "cat src/.env",
        "cat ./src/../.env",
        "ln src/.env \"$T/h2\" && cat \"$T/h2\"",
        "mv .env \"$T/moved\" && cat \"$T/moved\"",
        "umount .env; cat .env",
        "python3 -c 'print(open(\"/proc/self/root\" + __import__(\"os\").getcwd() + \"/.env\").read())'",
    ] {
        let (_, out) = masked(script);
        assert!(!out.contains('S'), "`{script}` read the secret: {out}");
    }
    let (good, out) = masked("echo z > src/newer.rs && cat src/newer.rs");
    assert!(good && out == "z\n", "{out}");
    assert_eq!(fs::read_to_string(p.join(".env")).unwrap(), "S");
    // Whoever writes where the empty masks live (the same user, unconfined)
    // can neither swap one for a link to the secret nor fill it.
    use std::os::unix::fs::PermissionsExt;
    let uid = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m))
        .unwrap();
    let source = std::env::temp_dir().join(format!("dsh-masks-{uid}/file"));
    let aside = source.with_file_name("file.aside");
    fs::rename(&source, &aside).unwrap();
    std::os::unix::fs::symlink(p.join(".env"), &source).unwrap();
    let (_, out) = masked("cat .env");
    fs::remove_file(&source).unwrap();
    fs::rename(&aside, &source).unwrap();
    assert!(
        !out.contains('S'),
        "a swapped mask showed the secret: {out}"
    );
    fs::set_permissions(&source, fs::Permissions::from_mode(0o644)).unwrap();
    fs::write(&source, "planted").unwrap();
    let (good, out) = masked("cat .env");
    fs::write(&source, "").unwrap();
    fs::set_permissions(&source, fs::Permissions::from_mode(0o000)).unwrap();
    assert!(
        !good && !out.contains("planted"),
        "a filled mask was used: {out}"
    );
}

#[test]
fn a_search_directory_named_through_a_link_is_matched_as_named() {
    let (p, t, _clean_p) = dirs("alias");
    fs::create_dir_all(p.join("keys")).unwrap();
    fs::write(p.join("keys/a.pem"), "K").unwrap();
    fs::write(p.join("keys/readme"), "r").unwrap();
    let link = p.parent().unwrap().join("link");
    std::os::unix::fs::symlink(&p, &link).unwrap();
    let named = link.join("keys");
    let matcher_root = named.clone();
    let mut c = confinement(SandboxMode::ReadOnly, &p, &t);
    // As `Read(//…/link/keys/*.pem)` matches: only the spelling it names.
    c.read_denials = Some(ReadDenials {
        literal: vec![],
        search: vec![named],
        matcher: Arc::new(move |q: &Path| {
            q.parent() == Some(matcher_root.as_path()) && q.extension().is_some_and(|e| e == "pem")
        }),
        key: "pem via link".into(),
    });
    let layout = c.layout(support()).unwrap();
    refused(&layout.ruleset, &p, &t, "cat keys/a.pem");
    assert_eq!(ok(&layout.ruleset, &p, &t, "cat keys/readme"), "r");
}
