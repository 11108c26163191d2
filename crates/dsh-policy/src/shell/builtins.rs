//! Shell builtins the walk treats specially: those that change how the
//! rest of the line is read or run, those that may evaluate a subscript,
//! `cd` and its targets, and the shells whose scripts are walked.

use super::text::expands_unseen_value;
use super::variables::shell_variable_is_risky;
use crate::word::{Arg, Dirs, PathWord};

/// Where `cd`/`pushd` ARGS goes: `None` when the analysis cannot tell
/// (`cd -`, `popd`, `pushd +1`, a word it cannot see).
pub(super) fn cd_target(name: &str, args: &[Arg]) -> Option<String> {
    if name == "popd" {
        return None;
    }
    // `-P` resolves links on the way (`up/..` through a link is not the
    // directory `up` is in), which the analysis does not follow.
    if args
        .iter()
        .take_while(|a| a.value.starts_with('-') && a.value != "--")
        .any(|a| a.value.contains('P'))
    {
        return None;
    }
    let mut rest = args
        .iter()
        .skip_while(|a| matches!(a.value.as_str(), "-L" | "-e" | "-@"));
    let first = match rest.next() {
        Some(a) if a.value == "--" => rest.next(),
        other => other,
    };
    match first {
        None if name == "cd" => Some("~".to_owned()),
        None => None,
        Some(a) => match PathWord::of(a) {
            PathWord::Literal(v) if v != "-" && !v.starts_with(['+', '-']) && !v.is_empty() => {
                Some(v)
            }
            PathWord::Home(rest) if rest.is_empty() => Some("~".to_owned()),
            PathWord::Home(rest) => Some(format!("~/{rest}")),
            _ => None,
        },
    }
}

/// `dir` then `cd target` (a candidate of [`Dirs`]).
pub(super) fn join_dir(dir: &str, target: &str) -> String {
    if target.starts_with('/') || target.starts_with('~') || dir.is_empty() {
        target.to_owned()
    } else {
        format!("{}/{target}", dir.trim_end_matches('/'))
    }
}

/// Every directory either may be.
pub(super) fn union_dirs(a: &Dirs, b: &Dirs) -> Dirs {
    let (Some(a), Some(b)) = (a, b) else {
        return None;
    };
    let mut out = a.clone();
    for d in b {
        if !out.contains(d) {
            out.push(d.clone());
        }
    }
    Some(out)
}

/// Commands that may evaluate an argument as an array subscript, which runs
/// any command substitution in it.
pub(super) const SUBSCRIPT_COMMANDS: &[&str] = &[
    "[",
    "test",
    "let",
    "printf",
    "declare",
    "local",
    "typeset",
    "read",
    "export",
    "readonly",
    "unset",
    "mapfile",
    "readarray",
    "wait",
];

/// Builtins that change how the shell reads or runs the rest of the line
/// (globbing, options, history, completion hooks, integer and reference
/// variables), or that run a string: the analysis does not model what
/// follows them.
pub(super) fn builtin_changes_the_shell(base: &str, args: &[Arg]) -> Option<&'static str> {
    let option = |a: &Arg| a.value.starts_with(['-', '+']) && a.value.len() > 1;
    let flags = |letters: &[char]| {
        args.iter()
            .take_while(|a| option(a))
            .any(|a| a.value[1..].contains(letters))
    };
    match base {
        "shopt" if args.iter().any(|a| !a.literal || matches!(a.value.as_str(), "-s" | "-u" | "-o") || a.value.starts_with("-s") || a.value.starts_with("-u")) => {
            Some("shopt changes how the shell expands globs or runs commands")
        }
        "set" => {
            // Options scripts set for their own safety; anything else
            // (allexport, keyword, history, noglob, …) changes how the
            // rest of the line runs.
            const SAFE: &[&str] = &[
                "-e", "+e", "-u", "+u", "-x", "+x", "-v", "+v", "-eu", "-ue", "-ex", "-xe", "-eux",
                "-euo", "-eo", "-uo", "-o", "+o",
            ];
            const SAFE_NAMES: &[&str] = &["errexit", "nounset", "xtrace", "verbose", "pipefail"];
            let mut words = args.iter();
            while let Some(a) = words.next() {
                if !a.literal {
                    return Some("set with a word the analysis cannot see");
                }
                let v = a.value.as_str();
                if v == "--" || v == "-" || !option(a) {
                    // Positional parameters: values arithmetic could run.
                    return Some("set gives the positional parameters values");
                }
                if !SAFE.contains(&v) {
                    return Some("set changes how the shell expands words or runs commands");
                }
                if v.ends_with('o') {
                    match words.next() {
                        Some(n) if n.literal && SAFE_NAMES.contains(&n.value.as_str()) => {}
                        Some(_) => {
                            return Some("set -o changes how the shell expands words or runs commands")
                        }
                        None => {}
                    }
                }
            }
            None
        }
        "history" if args.iter().any(|a| !a.literal || option(a)) => {
            Some("history with an option changes or expands the shell's history")
        }
        "fc" => Some("fc runs commands from the shell's history"),
        "test" | "[" if args.iter().any(Arg::may_split) => Some(
            "a word the analysis cannot see may split into -v NAME[…], whose subscript runs code",
        ),
        "test" | "["
            if args
                .windows(2)
                .any(|w| matches!(w[0].value.as_str(), "-v" | "-R") && !w[1].literal) =>
        {
            Some("-v evaluates the subscript of a name the analysis cannot see, which can run code")
        }
        "compgen" | "complete" | "bind" => {
            Some("it installs or runs completion and key-binding commands")
        }
        "mapfile" | "readarray" if flags(&['C']) => Some("mapfile -C runs a callback"),
        "declare" | "typeset" | "local" | "readonly" | "export" if flags(&['n', 'i']) => {
            Some("a reference or integer variable evaluates or redirects what is assigned to it")
        }
        "let" if args.iter().any(|a| !a.literal || expands_unseen_value(&a.raw)) => {
            Some("let evaluates a value the analysis cannot see as arithmetic, which can run code stored in it")
        }
        _ => None,
    }
}

/// `printf -v NAME` (or `-vNAME`) with a dangerous or non-literal NAME.
pub(super) fn printf_sets_dangerous_variable(args: &[Arg]) -> bool {
    let mut i = 0;
    while i < args.len() {
        let v = args[i].value.as_str();
        if v == "--" || !v.starts_with('-') {
            break;
        }
        let name = if v == "-v" {
            args.get(i + 1)
        } else if v.starts_with("-v") {
            Some(&args[i])
        } else {
            None
        };
        if let Some(a) = name {
            let n = if v == "-v" { a.value.as_str() } else { &v[2..] };
            if !a.literal || a.pattern || shell_variable_is_risky(n) {
                return true;
            }
            i += if v == "-v" { 2 } else { 1 };
            continue;
        }
        i += 1;
    }
    false
}

/// A script path that names a stream (standard input, a descriptor), not a file.
pub(super) fn reads_a_stream(path: &str) -> bool {
    path == "/dev/stdin"
        || path.starts_with("/dev/fd/")
        || path.starts_with("/proc/")
        || path.starts_with("/dev/pts/")
        || path == "/dev/tty"
}

pub(super) const SHELLS: &[&str] = &["bash", "sh", "dash", "zsh", "ksh", "mksh", "ash"];

pub(super) const FOREIGN_SHELLS: &[&str] =
    &["fish", "csh", "tcsh", "nu", "pwsh", "xonsh", "elvish"];
