//! Path rules against real directories: settings files on disk, symbolic
//! links, globs, `cd` into links, additional working directories, the
//! protected directories of `bypassPermissions`.

use dsh_policy::{Decision, Mode, PermissionPolicy, Settings, SettingsErrorKind};
use serde_json::json;
use std::path::{Path, PathBuf};

/// A fresh directory under the system's temp directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("dsh-paths-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Rules and working directories are compared on disk too; start from
        // the real path so the test states what it means.
        Scratch(std::fs::canonicalize(&dir).unwrap())
    }

    fn file(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn dir(&self, rel: &str) -> PathBuf {
        let path = self.0.join(rel);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    fn link(&self, rel: &str, target: &Path) {
        std::os::unix::fs::symlink(target, self.0.join(rel)).unwrap();
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn bash(policy: &PermissionPolicy, cmd: &str) -> Decision {
    policy.check("bash", &json!({ "command": cmd })).decision
}

#[track_caller]
fn expect(policy: &PermissionPolicy, rows: &[(&str, Decision)]) {
    let wrong: Vec<String> = rows
        .iter()
        .filter_map(|(cmd, want)| {
            let got = policy.check("bash", &json!({ "command": cmd }));
            (got.decision != *want).then(|| {
                format!(
                    "{cmd:?}: want {want:?}, got {:?} ({:?})",
                    got.decision, got.reason
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn load(project: &Path, text: &str) -> Settings {
    let file = project.join(".claude/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    Settings::load(&file).unwrap()
}

#[test]
fn a_slash_pattern_is_relative_to_the_project_of_its_settings_file() {
    let s = Scratch::new("slash");
    let proj = s.dir("proj");
    s.file("proj/secrets/key", "k");
    s.file("proj/sub/secrets/other", "o");
    s.file("proj/sub/notes.txt", "n");
    let settings = load(&proj, r#"{"permissions": {"deny": ["Read(/secrets/**)"]}}"#);
    // The working directory is a subdirectory of the project: `/secrets`
    // still means the project's, not the working directory's.
    let policy = settings.policy(proj.join("sub"), None);
    let key = proj.join("secrets/key");
    expect(
        &policy,
        &[
            ("cat ../secrets/key", Decision::Deny),
            (&format!("cat {}", key.display()), Decision::Deny),
            ("cd .. && head -1 secrets/key", Decision::Deny),
            ("cat secrets/other notes.txt", Decision::Allow),
        ],
    );
    // The same rule given on the command line (no file) is relative to the
    // working directory.
    let policy = PermissionPolicy::new(
        dsh_policy::PermissionRules::parse(
            Vec::<&str>::new(),
            Vec::<&str>::new(),
            ["Read(/secrets/**)"],
        )
        .unwrap(),
        Mode::Default,
        proj.join("sub"),
    );
    assert_eq!(bash(&policy, "cat secrets/other"), Decision::Deny);
}

#[test]
fn symbolic_links_are_followed_at_decision_time() {
    let s = Scratch::new("links");
    let proj = s.dir("proj");
    s.file("proj/.env", "TOKEN=1");
    s.file("proj/readme.md", "hi");
    let outside = s.file("outside/data.txt", "far");
    s.link("proj/config", &proj.join(".env"));
    s.link("proj/far", &outside);
    s.link("proj/elsewhere", outside.parent().unwrap());
    let settings = load(&proj, r#"{"permissions": {"deny": ["Read(./.env)"]}}"#);
    let policy = settings.policy(&proj, None);
    expect(
        &policy,
        &[
            // The link's name says nothing; where it leads is the `.env`.
            ("cat config", Decision::Deny),
            ("grep TOKEN config", Decision::Deny),
            ("wc -l < config", Decision::Deny),
            // A link inside that leads outside is a read outside: asked.
            ("cat far", Decision::Ask),
            ("cat elsewhere/data.txt", Decision::Ask),
            ("cd elsewhere && cat data.txt", Decision::Ask),
            ("cat readme.md", Decision::Allow),
        ],
    );
    // A link made after the decision cannot be seen by it; one made
    // before the next decision is.
    s.link("proj/late", &proj.join(".env"));
    assert_eq!(bash(&policy, "cat late"), Decision::Deny);
}

#[test]
fn globs_are_expanded_against_the_directory() {
    let s = Scratch::new("globs");
    let proj = s.dir("proj");
    s.file("proj/.env", "x");
    s.file("proj/a.md", "a");
    s.file("proj/b.md", "b");
    s.file("proj/keys/server.pem", "p");
    let settings = load(
        &proj,
        r#"{"permissions": {"deny": ["Read(./.env)", "Read(*.pem)"]}}"#,
    );
    let policy = settings.policy(&proj, None);
    expect(
        &policy,
        &[
            ("cat .e*", Decision::Deny),
            // Taken as if `dotglob` were set: a glob may mean more files, never fewer.
            ("cat ?env", Decision::Deny),
            ("cat .??v", Decision::Deny),
            ("cat keys/*", Decision::Deny),
            ("cat */server.*", Decision::Deny),
            ("cat *.md", Decision::Allow),
            ("head -n 3 [ab].md", Decision::Ask), // a bracket glob is not expanded: unplaced
        ],
    );
}

#[test]
fn additional_directories_are_working_directories() {
    let s = Scratch::new("extra");
    let proj = s.dir("proj");
    let docs = s.dir("docs");
    s.file("docs/guide.md", "g");
    s.file("other/x.txt", "x");
    let text = format!(
        r#"{{"permissions": {{"additionalDirectories": [{:?}]}}}}"#,
        docs.display().to_string()
    );
    let settings = load(&proj, &text);
    let default = settings.policy(&proj, None);
    expect(
        &default,
        &[
            (&format!("cat {}/guide.md", docs.display()), Decision::Allow),
            ("cat ../docs/guide.md", Decision::Allow),
            ("cat ../other/x.txt", Decision::Ask),
            ("touch ../docs/new.md", Decision::Ask),
        ],
    );
    let edits = settings.policy(&proj, Some(Mode::AcceptEdits));
    expect(
        &edits,
        &[
            ("touch ../docs/new.md", Decision::Allow),
            ("echo x > ../docs/new.md", Decision::Allow),
            ("cp ../docs/guide.md ../docs/copy.md", Decision::Allow),
            ("rm ../docs/guide.md", Decision::Allow),
            // Removing a working directory itself is no edit inside it.
            ("rm -r ../docs", Decision::Ask),
            ("rm -rf ..", Decision::Ask),
            ("touch ../other/y.txt", Decision::Ask),
        ],
    );
    // `--add-dir` adds to the file's.
    let more = settings
        .policy(&proj, None)
        .with_additional_directories([s.0.join("other")]);
    assert_eq!(bash(&more, "cat ../other/x.txt"), Decision::Allow);
}

#[test]
fn accept_edits_allows_file_commands_inside_but_not_into_git() {
    let s = Scratch::new("edits");
    let proj = s.dir("proj");
    s.file("proj/a.txt", "a");
    s.dir("proj/.git/hooks");
    s.link("proj/g", &proj.join(".git"));
    let settings = load(&proj, r#"{"permissions": {"defaultMode": "acceptEdits"}}"#);
    let policy = settings.policy(&proj, None);
    expect(
        &policy,
        &[
            ("mkdir -p build/out", Decision::Allow),
            ("touch b.txt", Decision::Allow),
            ("mv a.txt c.txt", Decision::Allow),
            ("cp a.txt d.txt", Decision::Allow),
            ("rm a.txt", Decision::Allow),
            ("sed -i s/a/b/ a.txt", Decision::Allow),
            ("cp /etc/hostname here.txt", Decision::Ask), // reads outside
            ("echo x > .git/hooks/pre-commit", Decision::Ask),
            ("echo x > g/config", Decision::Ask), // through a link
            ("touch .git/config", Decision::Ask),
            ("cp a.txt .git/hooks/post-checkout", Decision::Ask),
        ],
    );
}

#[test]
fn bypass_permissions_still_asks_for_protected_directories() {
    let s = Scratch::new("protected");
    let proj = s.dir("proj");
    s.dir("proj/.claude/commands");
    s.dir("proj/.vscode");
    s.link("proj/ide", &proj.join(".idea"));
    let policy = PermissionPolicy::new(Default::default(), Mode::BypassPermissions, &proj);
    expect(
        &policy,
        &[
            ("echo x > .git/config", Decision::Ask),
            ("echo '{}' > .claude/settings.json", Decision::Ask),
            ("echo '{}' > .vscode/settings.json", Decision::Ask),
            ("mkdir -p ide && touch ide/workspace.xml", Decision::Ask),
            ("echo x > .claude/commands/review.md", Decision::Allow),
            ("echo x > .claude/agents/a.md", Decision::Allow),
            ("echo x > .claude/skills/s.md", Decision::Allow),
            ("echo x > src.rs", Decision::Allow),
        ],
    );
}

#[test]
fn cdpath_cannot_redirect_cd_through_the_settings() {
    let e = r#"{"env": {"CDPATH": "/etc"}}"#.parse::<Settings>().unwrap_err();
    assert_eq!(e.key(), Some("env.CDPATH"));
    assert_eq!(e.kind(), SettingsErrorKind::Invalid);
}

/// A monorepo's project file and its local file, as teams keep them.
#[test]
fn a_monorepo_project_file_with_its_local_file() {
    let s = Scratch::new("monorepo");
    let proj = s.dir("repo");
    s.file("repo/packages/api/.env.production", "DB=x");
    s.file("repo/packages/api/src/main.ts", "x");
    s.file("repo/infra/terraform.tfstate", "{}");
    s.file("repo/infra/main.tf", "x");
    let project = load(
        &proj,
        r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(pnpm test:*)", "Bash(pnpm -r build)", "Bash(git log:*)"],
    "ask": ["Bash(pnpm publish:*)", "Read(/infra/**)"],
    "deny": ["Read(**/.env*)", "Read(*.tfstate)", "Edit(/packages/*/dist/**)", "Bash(git push --force:*)"]
  },
  "includeCoAuthoredBy": true,
  "cleanupPeriodDays": 30
}"#,
    );
    let local_file = proj.join(".claude/settings.local.json");
    std::fs::write(
        &local_file,
        r#"{"permissions": {"allow": ["Bash(docker compose up:*)"], "defaultMode": "acceptEdits"}}"#,
    )
    .unwrap();
    let local = Settings::load(&local_file).unwrap();
    let (settings, _) = Settings::merge(vec![
        (proj.join(".claude/settings.json"), project),
        (local_file, local),
    ]);
    assert_eq!(settings.mode(), Mode::AcceptEdits);
    let policy = settings.policy(proj.join("packages/api"), None);
    expect(
        &policy,
        &[
            ("pnpm test -- --watch=false", Decision::Allow),
            ("cat .env.production", Decision::Deny),
            ("grep DB= .env.production", Decision::Deny),
            (
                "cd ../.. && cat packages/api/.env.production",
                Decision::Deny,
            ),
            ("cat ../../infra/terraform.tfstate", Decision::Deny),
            ("cat src/main.ts", Decision::Allow),
            ("echo x > src/new.ts", Decision::Allow),
            ("mkdir -p dist/x && echo x > dist/x/a.js", Decision::Deny),
            ("docker compose up -d", Decision::Allow),
            ("git push --force origin main", Decision::Deny),
            // `/infra` is the project's, wherever the command runs from.
            ("cd ../.. && cat infra/main.tf", Decision::Ask),
        ],
    );
    let at_root = settings.policy(&proj, Some(Mode::Default));
    expect(
        &at_root,
        &[
            ("cat infra/main.tf", Decision::Ask),
            ("cat packages/api/src/main.ts", Decision::Allow),
            ("git log --oneline -5", Decision::Allow),
        ],
    );
}

#[test]
fn directory_patterns_file_command_rules_and_unknown_inputs() {
    let s = Scratch::new("forms");
    let proj = s.dir("proj");
    s.file("proj/secrets/key", "k");
    s.file("proj/list.txt", "a\n");
    let settings = load(
        &proj,
        r#"{"permissions": {"allow": ["Bash(mkdir:*)", "Bash(cat:*)"], "deny": ["Read(./secrets)"]}}"#,
    );
    let policy = settings.policy(&proj, None);
    expect(
        &policy,
        &[
            // A pattern naming a directory covers what is in it.
            ("cat secrets/key", Decision::Deny),
            ("cat secrets", Decision::Deny),
            // A file command's own writes are allowed by its Bash rule.
            ("mkdir build", Decision::Allow),
            ("mkdir secrets/sub", Decision::Allow),
            ("mkdir .git/x", Decision::Ask),
            // What xargs reads comes from its input: with deny Read rules, asked.
            ("cat list.txt | xargs cat", Decision::Ask),
        ],
    );
}
