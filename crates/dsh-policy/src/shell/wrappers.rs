//! The wrappers the walk looks through (`timeout`, `nice`, `env`,
//! `xargs`, `sudo`, `time`, `watch`, …): their options, spelled exactly
//! as each program takes them, and where the wrapped command starts.

use crate::word::Arg;

/// What a wrapper leaves to run.
pub(super) enum Skip {
    /// The wrapped command starts this many words after the wrapper's name.
    Inner(usize),
    /// The wrapper runs no command (`env` alone, `command -v x`).
    NoCommand,
    /// A plain positional argument starts this many words after the
    /// wrapper's name, and the wrapped command follows it.
    Positional(usize),
    /// We cannot tell what it runs.
    Opaque(&'static str),
}

/// A wrapper's options: exact spellings only (no bundling, no abbreviated
/// long options).
pub(super) struct OptSpec {
    /// Options without a value.
    flags: &'static [&'static str],
    /// Options with a value: the next word, or attached (`-n5`, `--name=5`).
    valued: &'static [&'static str],
    /// Options whose value can only be attached (`-iR`, `--replace=R`).
    optional: &'static [&'static str],
    /// `-N` (nice's `-10`).
    numeric: bool,
}

pub(super) const NO_OPTIONS: OptSpec = OptSpec {
    flags: &[],
    valued: &[],
    optional: &[],
    numeric: false,
};

pub(super) const TIMEOUT: OptSpec = OptSpec {
    flags: &["--foreground", "--preserve-status", "-v", "--verbose"],
    valued: &["-s", "--signal", "-k", "--kill-after"],
    optional: &[],
    numeric: false,
};

pub(super) const NICE: OptSpec = OptSpec {
    flags: &[],
    valued: &["-n", "--adjustment"],
    optional: &[],
    numeric: true,
};

pub(super) const STDBUF: OptSpec = OptSpec {
    flags: &[],
    valued: &["-i", "-o", "-e", "--input", "--output", "--error"],
    optional: &[],
    numeric: false,
};

pub(super) const SETSID: OptSpec = OptSpec {
    flags: &["-c", "--ctty", "-f", "--fork", "-w", "--wait"],
    valued: &[],
    optional: &[],
    numeric: false,
};

pub(super) const IONICE: OptSpec = OptSpec {
    flags: &[
        "-t", "--ignore", "-p", "-P", "-u", "--pid", "--pgid", "--uid",
    ],
    valued: &["-c", "-n", "--class", "--classdata"],
    optional: &[],
    numeric: false,
};

pub(super) const TASKSET: OptSpec = OptSpec {
    flags: &[
        "-a",
        "--all-tasks",
        "-c",
        "--cpu-list",
        "-p",
        "--pid",
        "-pc",
        "-cp",
    ],
    valued: &[],
    optional: &[],
    numeric: false,
};

pub(super) const COMMAND: OptSpec = OptSpec {
    flags: &["-p", "-v", "-V"],
    valued: &[],
    optional: &[],
    numeric: false,
};

pub(super) const EXEC: OptSpec = OptSpec {
    flags: &["-c", "-l"],
    valued: &["-a"],
    optional: &[],
    numeric: false,
};

pub(super) const XARGS: OptSpec = OptSpec {
    flags: &[
        "-0",
        "--null",
        "-r",
        "--no-run-if-empty",
        "-t",
        "--verbose",
        "-p",
        "--interactive",
        "-x",
        "--exit",
        "-o",
        "--open-tty",
        "--show-limits",
    ],
    valued: &[
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "-d",
        "-E",
        "-a",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--process-slot-var",
    ],
    optional: &["-i", "-e", "-l", "--replace", "--eof", "--max-lines"],
    numeric: false,
};

pub(super) const SUDO: OptSpec = OptSpec {
    flags: &[
        "-A",
        "--askpass",
        "-b",
        "--background",
        "-E",
        "-H",
        "--set-home",
        "-n",
        "--non-interactive",
        "-P",
        "--preserve-groups",
        "-S",
        "--stdin",
        "-B",
        "--bell",
        "-N",
        "--no-update",
        "-k",
        "--reset-timestamp",
    ],
    valued: &[
        "-u",
        "--user",
        "-g",
        "--group",
        "-C",
        "--close-from",
        "-D",
        "--chdir",
        "-p",
        "--prompt",
        "-r",
        "--role",
        "-t",
        "--type",
        "-U",
        "--other-user",
        "-T",
        "--command-timeout",
    ],
    optional: &["--preserve-env"],
    numeric: false,
};

pub(super) const DOAS: OptSpec = OptSpec {
    flags: &["-n"],
    valued: &["-u"],
    optional: &[],
    numeric: false,
};

pub(super) const TIME: OptSpec = OptSpec {
    flags: &[
        "-p",
        "--portability",
        "-a",
        "--append",
        "-v",
        "--verbose",
        "-q",
        "--quiet",
    ],
    valued: &["-f", "--format", "-o", "--output"],
    optional: &[],
    numeric: false,
};

/// The variable an `env` argument assigns (`NAME=…`, the name literal as
/// written), if it is an assignment.
pub(super) fn assignment_name(a: &Arg) -> Option<String> {
    let text = if a.literal { &a.value } else { &a.raw };
    let (name, _) = text.split_once('=')?;
    (!name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| name.to_owned())
}

/// A literal word with no expansion of any kind, not even `$'…'`.
pub(super) fn plain_word(a: &Arg) -> Option<&str> {
    a.exact().filter(|_| !a.raw.contains(['$', '`']))
}

/// Options found: each option's name and its value.
pub(super) type Options = Vec<(String, Option<String>)>;

/// Parses a wrapper's options strictly: returns where the operands start and
/// the options, or why it cannot be analysed (an unknown option, a word
/// that is not a plain literal).
pub(super) fn strict_options(
    rest: &[Arg],
    spec: &OptSpec,
) -> Result<(usize, Options), &'static str> {
    let mut opts = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let Some(v) = plain_word(&rest[i]) else {
            return Err("a wrapper's option is not a plain literal word");
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        if spec.numeric && v[1..].bytes().all(|b| b.is_ascii_digit()) {
            opts.push((v.to_owned(), None));
            i += 1;
            continue;
        }
        if spec.flags.contains(&v) || spec.optional.contains(&v) {
            opts.push((v.to_owned(), None));
            i += 1;
            continue;
        }
        if spec.valued.contains(&v) {
            let Some(value) = rest.get(i + 1) else {
                return Ok((rest.len(), opts));
            };
            let Some(value) = plain_word(value) else {
                return Err("a wrapper's option value is not a plain literal word");
            };
            opts.push((v.to_owned(), Some(value.to_owned())));
            i += 2;
            continue;
        }
        let attached = if v.starts_with("--") {
            v.split_once('=')
        } else {
            v.get(..2).map(|n| (n, &v[2..]))
        };
        match attached {
            Some((n, value)) if spec.valued.contains(&n) || spec.optional.contains(&n) => {
                opts.push((n.to_owned(), Some(value.to_owned())));
                i += 1;
            }
            _ => return Err("a wrapper has an option we do not know"),
        }
    }
    Ok((i, opts))
}

impl From<Result<(usize, Options), &'static str>> for Skip {
    fn from(r: Result<(usize, Options), &'static str>) -> Skip {
        match r {
            Ok((i, _)) => Skip::Inner(i),
            Err(why) => Skip::Opaque(why),
        }
    }
}

/// Options, then one plain positional argument, then the command.
pub(super) fn with_positional(r: Result<(usize, Options), &'static str>) -> Skip {
    match r {
        Ok((i, _)) => Skip::Positional(i),
        Err(why) => Skip::Opaque(why),
    }
}

/// What `watch [options] COMMAND…` runs.
pub(super) enum WatchUse {
    /// Its arguments joined, run by `sh -c`.
    Script(String),
    /// `-x`: its arguments as a command.
    Exec(Vec<Arg>),
    /// No command.
    Nothing,
    /// A command that is not literal.
    Opaque,
}

pub(super) const WATCH: OptSpec = OptSpec {
    flags: &[
        "-b",
        "--beep",
        "-c",
        "--color",
        "-C",
        "--no-color",
        "-e",
        "--errexit",
        "-g",
        "--chgexit",
        "-p",
        "--precise",
        "-r",
        "--no-rerun",
        "-t",
        "--no-title",
        "-w",
        "--no-wrap",
        "-x",
        "--exec",
    ],
    valued: &["-n", "--interval", "-q", "--equexit"],
    optional: &["-d", "--differences"],
    numeric: false,
};

pub(super) fn watch_command(argv: &[Arg]) -> WatchUse {
    let rest = &argv[1..];
    let Ok((i, opts)) = strict_options(rest, &WATCH) else {
        return WatchUse::Opaque;
    };
    let exec = opts
        .iter()
        .any(|(n, _)| matches!(n.as_str(), "-x" | "--exec"));
    let words = &rest[i.min(rest.len())..];
    if words.is_empty() {
        return WatchUse::Nothing;
    }
    if exec {
        return WatchUse::Exec(words.to_vec());
    }
    if words.iter().any(|a| !a.literal) {
        return WatchUse::Opaque;
    }
    let script: Vec<&str> = words.iter().map(|a| a.value.as_str()).collect();
    WatchUse::Script(script.join(" "))
}
