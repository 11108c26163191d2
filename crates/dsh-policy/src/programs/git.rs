//! git's own grammar: what its configuration and the options of any
//! subcommand make it run or write. The subcommands' options (what is
//! read-only) are rows of the table.

use super::{Understanding, UNSEEN_ARGUMENT};
use crate::options::{may_be_option, Scan};
use crate::word::Arg;

/// Global options that take the next word as their value.
const GLOBAL_VALUED: &[&str] = &[
    "git-dir",
    "work-tree",
    "namespace",
    "config-env",
    "super-prefix",
    "list-cmds",
    "attr-source",
];

/// Whether `written` (a long option name as given) may stand for `name`.
fn abbreviates(written: &str, name: &str) -> bool {
    !written.is_empty() && name.starts_with(written)
}

/// `git -c` keys that name no program.
fn git_key_is_safe(key: &str, value: &str) -> bool {
    let key = key.to_ascii_lowercase();
    let section = key.split('.').next().unwrap_or("");
    matches!(section, "color" | "advice" | "i18n" | "column")
        || matches!(
            key.as_str(),
            "core.quotepath"
                | "user.name"
                | "user.email"
                | "init.defaultbranch"
                | "log.date"
                | "log.decorate"
                | "core.abbrev"
                | "diff.noprefix"
                | "diff.mnemonicprefix"
                | "diff.renames"
                | "commit.gpgsign"
                | "tag.gpgsign"
                | "pull.rebase"
                | "pull.ff"
                | "merge.ff"
                | "core.autocrlf"
                | "core.filemode"
                | "status.short"
        ) && !(key.ends_with("gpgsign") && value != "false")
        || (section == "pager" && matches!(value, "true" | "false"))
}

/// What git is told to run or write by its options, whatever the
/// subcommand: `-c` keys that name programs, `--exec-path`, options of
/// any subcommand that name a program or hook (`--upload-pack`,
/// `--exec`, `--template`), `--output` writes and configuration writes.
pub(super) fn git(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    u.subcommand_views.extend(alias_views(args));
    if args.iter().any(may_be_option) {
        return u.run(UNSEEN_ARGUMENT);
    }
    // Global options, before the subcommand.
    let (globals, at) = global_options(args);
    for (option, value) in &globals {
        let setting = match (*option, value) {
            ("-c" | "--config-env", Some(v)) => Some((*option, *v)),
            (o, _) if o.starts_with("--config-env=") => {
                Some(("--config-env", &o["--config-env=".len()..]))
            }
            _ => None,
        };
        if let Some((how, setting)) = setting {
            let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
            if how == "--config-env" || !git_key_is_safe(key, value) {
                return u.run("git -c sets configuration that can name a program to run (pager, editor, ssh command, alias, hook path, …)");
            }
        }
        if option.starts_with("--exec-path=") || option.starts_with("--ex") && option.contains('=')
        {
            return u.run("git --exec-path runs git commands from another directory");
        }
    }
    let Some(i) = at else {
        return;
    };
    let sub = args[i].value.as_str();
    let rest = &args[i + 1..];
    let mut runs = |why: &'static str| u.run(why);
    match sub {
        "bisect" if rest.first().is_some_and(|a| a.value == "run") => {
            return runs("git bisect run runs a command");
        }
        "submodule" if rest.iter().any(|a| a.value == "foreach") => {
            return runs("git submodule foreach runs shell code");
        }
        "filter-branch" | "difftool" | "mergetool" => {
            return runs("this git command runs programs named in its options or configuration");
        }
        _ => {}
    }
    let mut writes = Vec::new();
    for (k, a) in rest.iter().enumerate() {
        let v = a.value.as_str();
        if v == "--" {
            break;
        }
        let (name, attached) = match v.strip_prefix("--") {
            Some(long) => match long.split_once('=') {
                Some((n, val)) => (n, Some(val)),
                None => (long, None),
            },
            None => ("", None),
        };
        let next = || rest.get(k + 1).map(|a| a.value.as_str());
        let long_is =
            |names: &[&str]| !name.is_empty() && names.iter().any(|n| abbreviates(name, n));
        if long_is(&[
            "upload-pack",
            "receive-pack",
            "exec",
            "template",
            "open-files-in-pager",
            "extcmd",
        ]) || (sub == "clone" && (long_is(&["config"]) || v == "-c" || v == "-u"))
            || (matches!(sub, "fetch" | "pull" | "ls-remote") && v == "-u")
            || (sub == "rebase"
                && (v == "-x" || (v.starts_with('-') && !v.starts_with("--") && v.contains('x'))))
            || (sub == "grep" && v.starts_with('-') && !v.starts_with("--") && v.contains('O'))
        {
            return runs("a git option names a program or hook to run");
        }
        if long_is(&["output", "output-directory"])
            || (sub == "format-patch" && v == "-o")
            || (sub == "archive" && v == "-o")
        {
            let target = attached.or_else(next).unwrap_or("");
            writes.push(Arg::plain(target));
        }
    }
    for w in writes {
        u.write(w, "git --output");
    }
    if sub == "config" {
        if let Some(w) = config_write(rest) {
            u.write(w, "git config");
        }
    }
}

/// `git config` that sets a value writes a configuration file (which can
/// name programs later git commands run).
fn config_write(rest: &[Arg]) -> Option<Arg> {
    let mut file = ".git/config".to_owned();
    let mut operands = 0;
    let mut reading = false;
    let mut writing = false;
    let mut k = 0;
    while k < rest.len() {
        let v = rest[k].value.as_str();
        match v {
            "--global" => file = "~/.gitconfig".into(),
            "--system" => file = "/etc/gitconfig".into(),
            "-f" | "--file" => {
                file = rest.get(k + 1).map(|a| a.value.clone()).unwrap_or_default();
                k += 1;
            }
            // Subcommands of the newer syntax count only as the first word.
            "get" | "list" | "get-color" if k == 0 => reading = true,
            "set" | "unset" | "rename-section" | "remove-section" | "edit" if k == 0 => {
                writing = true
            }
            "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch" | "--list" | "-l"
            | "--get-color" => reading = true,
            "--show-origin" | "--show-scope" | "--name-only" => {}
            "--add" | "--replace-all" | "--unset" | "--unset-all" | "--rename-section"
            | "--remove-section" | "--edit" | "-e" => writing = true,
            _ if v.starts_with("--file=") => file = v["--file=".len()..].to_owned(),
            _ if v.starts_with('-') => {}
            _ => operands += 1,
        }
        k += 1;
    }
    (writing || (!reading && operands >= 2)).then(|| {
        if file.starts_with("~/") {
            Arg::unknown(&file)
        } else {
            Arg::plain(&file)
        }
    })
}

/// What an alias runs, for deny and ask rules: `git -c alias.pp=push pp`
/// is `git push`, and `git config alias.pp push` defines a later `git
/// push` (a `!` alias is the shell command it names).
fn alias_views(args: &[Arg]) -> Vec<Vec<Arg>> {
    let expand = |value: &str, rest: &[Arg]| -> Vec<Arg> {
        let mut view = Vec::new();
        match value.strip_prefix('!') {
            Some(shell) => view.extend(shell.split_whitespace().map(Arg::plain)),
            None => {
                view.push(Arg::plain("git"));
                view.extend(value.split_whitespace().map(Arg::plain));
            }
        }
        view.extend(rest.iter().cloned());
        view
    };
    let (globals, at) = global_options(args);
    let aliases: Vec<(String, &str)> = globals
        .iter()
        .filter(|(option, _)| *option == "-c")
        .filter_map(|(_, value)| (*value)?.split_once('='))
        .filter_map(|(key, value)| {
            let name = key.to_ascii_lowercase().strip_prefix("alias.")?.to_owned();
            Some((name, value))
        })
        .collect();
    let mut views = Vec::new();
    if let Some(i) = at {
        let v = args[i].value.as_str();
        let rest = &args[i + 1..];
        // The plumbing under `git push`.
        if matches!(v, "send-pack" | "http-push") {
            let mut view = vec![Arg::plain("git"), Arg::plain("push")];
            view.extend(rest.iter().cloned());
            views.push(view);
        }
        if let Some((_, value)) = aliases.iter().find(|(name, _)| name.as_str() == v) {
            views.push(expand(value, rest));
        }
        if v == "config" {
            let words: Vec<&Arg> = rest.iter().filter(|w| !w.value.starts_with('-')).collect();
            if let [key, value, ..] = words.as_slice() {
                if key.value.to_ascii_lowercase().starts_with("alias.") {
                    views.push(expand(&value.value, &[]));
                }
            }
        }
    }
    views
}

/// git's global options before the subcommand, each with the word it
/// takes, and where the subcommand is.
fn global_options(args: &[Arg]) -> (Vec<(&str, Option<&str>)>, Option<usize>) {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let v = a.value.as_str();
        let takes_next = matches!(v, "-c" | "-C")
            || GLOBAL_VALUED
                .iter()
                .any(|n| v.strip_prefix("--") == Some(*n));
        if takes_next {
            out.push((v, args.get(i + 1).map(|n| n.value.as_str())));
            i += 2;
        } else if v.starts_with('-') {
            out.push((v, None));
            i += 1;
        } else {
            return (out, Some(i));
        }
    }
    (out, None)
}
