//! What the bypass-hunt corpora share: a real working directory holding a
//! few files (a secret among them), the rule sets, the settings a case is
//! decided in and what each must decide, and failure reports that list
//! every failing case at once.

// Each corpus is its own test crate and uses part of this module.
#![allow(dead_code)]

use dsh_policy::{Decision, Mode, PermissionPolicy, PermissionRules};
use serde_json::json;
use std::path::{Path, PathBuf};

/// The home directory the policies use (for `~` and `cd` with no argument).
pub const HOME: &str = "/home/u";

/// The files every working directory holds.
pub const FILES: &[(&str, &str)] = &[
    ("README.md", "# demo\nTODO: write docs\n"),
    ("hex.txt", "6563686f2068690a\n"),
    ("src/main.rs", "fn main() {}\n"),
    (".env", "TOKEN=secret\n"),
    ("secrets/key", "secret\n"),
    ("secrets/creds.json", "{\"token\": \"secret\"}\n"),
    ("pre-commit", "#!/bin/sh\ntouch /tmp/pwned\n"),
    (
        "prog.jq",
        "import \"creds\" as $c {search: \"./secrets\"}; $c\n",
    ),
    (
        "home.jq",
        "import \"config\" as $c {search: \"/home/u/.docker\"}; $c\n",
    ),
];

/// A working directory: a fresh one under the system's temp directory
/// (removed on drop), or the test process's own working directory.
pub struct Workdir {
    pub path: PathBuf,
    remove: bool,
}

impl Workdir {
    pub fn new(name: &str) -> Workdir {
        let dir = std::env::temp_dir().join(format!("dsh-bypass-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // Places are compared on disk too: start from the real path.
        let dir = std::fs::canonicalize(&dir).unwrap();
        for (rel, text) in FILES {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, text).unwrap();
        }
        Workdir {
            path: dir,
            remove: true,
        }
    }

    /// The directory this test process runs in (as an agent's harness
    /// usually runs in its project): never written, never removed.
    pub fn process_cwd() -> Workdir {
        Workdir {
            path: std::fs::canonicalize(std::env::current_dir().unwrap()).unwrap(),
            remove: false,
        }
    }

    /// A symbolic link inside the working directory.
    pub fn link(&self, rel: &str, target: &Path) {
        let path = self.path.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
    }

    pub fn policy(&self, rules: &Rules, mode: Mode) -> PermissionPolicy {
        let rules = PermissionRules::parse(rules.allow, rules.ask, rules.deny).unwrap();
        PermissionPolicy::new(rules, mode, &self.path).with_home(Some(HOME.into()))
    }
}

impl Drop for Workdir {
    fn drop(&mut self) {
        if self.remove {
            // Does not follow the symbolic links the test made.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A rule set.
pub struct Rules {
    pub label: &'static str,
    pub allow: &'static [&'static str],
    pub ask: &'static [&'static str],
    pub deny: &'static [&'static str],
}

pub const NO_RULES: Rules = Rules {
    label: "no rules",
    allow: &[],
    ask: &[],
    deny: &[],
};

/// Realistic rules: secrets and /etc unreadable, `rm` and `git push` denied,
/// two prefix allow rules.
pub const REALISTIC: Rules = Rules {
    label: "deny Read(./.env), Read(./secrets/**), Read(//etc/**), Bash(rm:*), Bash(git push:*); allow Bash(npm test:*), Bash(git diff:*)",
    allow: &["Bash(npm test:*)", "Bash(git diff:*)"],
    ask: &[],
    deny: &[
        "Read(./.env)",
        "Read(./secrets/**)",
        "Read(//etc/**)",
        "Bash(rm:*)",
        "Bash(git push:*)",
    ],
};

/// What a setting must decide.
#[derive(Clone, Copy)]
pub enum Expect {
    /// Anything but `allow`.
    NotAllow,
    /// Exactly `deny`.
    Deny,
}

/// Rules, a mode and what they must decide.
pub struct Setting {
    pub rules: &'static Rules,
    pub mode: Mode,
    pub expect: Expect,
}

/// Lines that look read-only: with or without rules, in `default` and in
/// `plan` mode, they must not run unasked.
pub const NOT_UNASKED: &[Setting] = &[
    Setting {
        rules: &NO_RULES,
        mode: Mode::Default,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &NO_RULES,
        mode: Mode::Plan,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::Default,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::Plan,
        expect: Expect::NotAllow,
    },
];

/// Lines a deny rule names: denied in every mode, `bypassPermissions`
/// included (where an `ask` runs unmatched commands).
pub const DENIED: &[Setting] = &[
    Setting {
        rules: &REALISTIC,
        mode: Mode::Default,
        expect: Expect::Deny,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::Plan,
        expect: Expect::Deny,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::BypassPermissions,
        expect: Expect::Deny,
    },
];

/// Lines whose denied file only a run would show (a word the analysis
/// cannot see, a link followed at run time, a name on standard input):
/// never run unasked where deny rules exist, `bypassPermissions` included.
/// Exactly `deny` would need the analysis to run the command.
pub const NEVER_UNASKED: &[Setting] = &[
    Setting {
        rules: &REALISTIC,
        mode: Mode::Default,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::Plan,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::BypassPermissions,
        expect: Expect::NotAllow,
    },
];

/// Edits `acceptEdits` must not allow unasked (a write outside the working
/// directory, a read outside it, code that runs), with or without rules.
pub const NOT_AN_EDIT: &[Setting] = &[
    Setting {
        rules: &NO_RULES,
        mode: Mode::AcceptEdits,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::AcceptEdits,
        expect: Expect::NotAllow,
    },
];

/// Writes into a protected directory (`.git`, `.claude`): asked about in
/// every mode, `bypassPermissions` included.
pub const PROTECTED: &[Setting] = &[
    Setting {
        rules: &NO_RULES,
        mode: Mode::AcceptEdits,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::AcceptEdits,
        expect: Expect::NotAllow,
    },
    Setting {
        rules: &NO_RULES,
        mode: Mode::BypassPermissions,
        expect: Expect::NotAllow,
    },
];

/// File commands that move a denied file's content where no rule covers
/// it: denied as `mv .env x` is, in `acceptEdits` and `bypassPermissions`.
pub const DENIED_EDITS: &[Setting] = &[
    Setting {
        rules: &REALISTIC,
        mode: Mode::AcceptEdits,
        expect: Expect::Deny,
    },
    Setting {
        rules: &REALISTIC,
        mode: Mode::BypassPermissions,
        expect: Expect::Deny,
    },
];

/// Checks every case under every setting; returns the failures.
pub fn failures(wd: &Workdir, cases: &[(&str, &str)], settings: &[Setting]) -> Vec<String> {
    let mut out = Vec::new();
    for setting in settings {
        let policy = wd.policy(setting.rules, setting.mode);
        for (cmd, why) in cases {
            let eval = policy.check("bash", &json!({ "command": cmd }));
            let ok = match setting.expect {
                Expect::NotAllow => eval.decision != Decision::Allow,
                Expect::Deny => eval.decision == Decision::Deny,
            };
            if !ok {
                let wanted = match setting.expect {
                    Expect::NotAllow => "not allow",
                    Expect::Deny => "deny",
                };
                out.push(format!(
                    "{cmd:?}\n    [{} / {}] decision: {} (wanted {wanted}); reason: {}\n    dangerous because: {why}",
                    setting.mode, setting.rules.label, eval.decision, eval.reason
                ));
            }
        }
    }
    out
}

pub fn assert_none(class: &str, failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{class}: {} failing case(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
