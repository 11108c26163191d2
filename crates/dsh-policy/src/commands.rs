//! What the policy knows about particular programs, kept apart from the
//! walk over the syntax tree so that teaching it a program touches one place:
//!
//! * which programs take only data as arguments ([`takes_only_data`]): for
//!   every other program, deny and ask rules look for the denied command
//!   in its arguments, since it may run them (`flock L rm x`);
//! * which options and script arguments make a program run code or write
//!   files ([`effects`]): `git -c core.pager=…`, `rg --pre`, `tar
//!   --to-command`, `sed 'w FILE'`, `awk 'BEGIN{system(…)}'`, `sort -o`;
//! * which programs are interpreters whose code the policy cannot see
//!   into ([`interpreter_note`]).
//!
//! Options are read as getopt_long reads them: short options bundle
//! (`-ao FILE` is `-a -o FILE`), values attach (`-oFILE`, `--output=FILE`)
//! and a long option may be abbreviated (`--out`); an abbreviation counts
//! as every option it could stand for.

use crate::scripts::{self, ScriptEffect};
use crate::word::Arg;

/// What an option or script argument makes a program do.
#[derive(Debug, Clone)]
pub(crate) enum Effect {
    /// It writes this file: an edit of it, as a redirection is.
    Write(Arg, &'static str),
    /// It runs code the policy cannot see, or may: unanalysable.
    Code(&'static str),
}

/// The note for a script file or an interpreter.
pub(crate) const SCRIPT_NOTE: &str =
    "it runs a script the policy cannot see into; only a sandbox limits what that script does";

/// The note for an interpreter.
pub(crate) const INTERPRETER_NOTE: &str =
    "it is an interpreter: the policy cannot see into the code it runs; only a sandbox limits what that code does";

/// What `name args…` is told to do by its options and script arguments.
pub(crate) fn effects(name: &str, args: &[Arg]) -> Vec<Effect> {
    match name {
        "git" => git(args),
        "tar" => tar(args),
        "sed" => sed(args),
        "awk" | "gawk" | "mawk" | "nawk" => awk(args),
        "less" | "more" => less(args),
        "curl" => curl(args),
        "wget" => wget(args),
        "ssh" | "scp" | "sftp" => ssh(name, args),
        "zip" if args.iter().any(|a| a.value == "-TT") => {
            vec![Effect::Code("zip runs a test command named in an option")]
        }
        "zip" => code_options(
            args,
            &ZIP,
            &["unzip-command"],
            "",
            "zip runs a test command named in an option",
        ),
        _ => Vec::new(),
    }
}

/// How a program's options are spelled: which take a value.
pub(crate) struct Spec {
    /// Short options that take a value (the rest of the bundle or the next word).
    pub(crate) short_valued: &'static str,
    /// Short options whose value can only be attached (`-i.bak`).
    pub(crate) short_optional: &'static str,
    /// Long options (without `--`) that take a value.
    pub(crate) long_valued: &'static [&'static str],
    /// Long options whose value can only be attached (`--in-place=.bak`).
    pub(crate) long_optional: &'static [&'static str],
}

/// One option as given.
#[derive(Debug)]
pub(crate) struct Given {
    /// `Short('o')` or the long name as written (maybe abbreviated).
    pub(crate) short: Option<char>,
    pub(crate) long: Option<String>,
    pub(crate) value: Option<Arg>,
}

impl Given {
    /// Whether this is the short option `c` or (an abbreviation of) one of `longs`.
    pub(crate) fn is(&self, shorts: &str, longs: &[&str]) -> bool {
        match (&self.short, &self.long) {
            (Some(c), _) => shorts.contains(*c),
            (_, Some(l)) => longs.iter().any(|n| abbreviates(l, n)),
            _ => false,
        }
    }
}

/// Options and operands as getopt_long would read them.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a> {
    pub(crate) options: Vec<Given>,
    pub(crate) operands: Vec<&'a Arg>,
    /// A word the analysis cannot see that could be an option.
    pub(crate) unknown: bool,
}

/// Whether `written` (a long option name as given) may stand for `name`.
fn abbreviates(written: &str, name: &str) -> bool {
    !written.is_empty() && name.starts_with(written)
}

/// A word whose value is not known and could start with `-`.
fn may_be_option(a: &Arg) -> bool {
    if a.literal {
        return false;
    }
    let first = a.raw.trim_start_matches(['"', '\'']).chars().next();
    !first.is_some_and(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '~' | '+' | ',')
    })
}

pub(crate) fn scan<'a>(args: &'a [Arg], spec: &Spec) -> Scan<'a> {
    let mut out = Scan::default();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if may_be_option(a) {
            out.unknown = true;
            continue;
        }
        let v = a.value.as_str();
        if v == "--" {
            out.operands.extend(&args[i..]);
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, val)) => (n, Some(Arg::plain(val))),
                None => (long, None),
            };
            let takes = spec.long_valued.iter().any(|n| abbreviates(name, n));
            let value = match attached {
                Some(val) => Some(val),
                None if takes && !spec.long_optional.iter().any(|n| abbreviates(name, n)) => {
                    let next = args.get(i).cloned();
                    i += 1;
                    next
                }
                None => None,
            };
            out.options.push(Given {
                short: None,
                long: Some(name.to_owned()),
                value,
            });
            continue;
        }
        if v.len() > 1 && v.starts_with('-') {
            let bundle = &v[1..];
            for (k, c) in bundle.char_indices() {
                let rest = &bundle[k + c.len_utf8()..];
                if spec.short_valued.contains(c) {
                    let value = if rest.is_empty() {
                        let next = args.get(i).cloned();
                        i += 1;
                        next
                    } else {
                        Some(Arg::plain(rest))
                    };
                    out.options.push(Given {
                        short: Some(c),
                        long: None,
                        value,
                    });
                    break;
                }
                if spec.short_optional.contains(c) {
                    let value = (!rest.is_empty()).then(|| Arg::plain(rest));
                    out.options.push(Given {
                        short: Some(c),
                        long: None,
                        value,
                    });
                    break;
                }
                out.options.push(Given {
                    short: Some(c),
                    long: None,
                    value: None,
                });
            }
            continue;
        }
        out.operands.push(a);
    }
    out
}

const UNKNOWN_ARGUMENT: &str =
    "an argument the analysis cannot see could be an option that runs code or writes a file";

/// Options that run code: `longs`/`shorts` name them.
fn code_options(
    args: &[Arg],
    spec: &Spec,
    longs: &[&str],
    shorts: &str,
    why: &'static str,
) -> Vec<Effect> {
    let s = scan(args, spec);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    if s.options.iter().any(|o| o.is(shorts, longs)) {
        return vec![Effect::Code(why)];
    }
    Vec::new()
}

/// Options that write the file they name.
fn write_options(
    args: &[Arg],
    spec: &Spec,
    shorts: &str,
    longs: &[&str],
    op: &'static str,
) -> Vec<Effect> {
    let s = scan(args, spec);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    s.options
        .iter()
        .filter(|o| o.is(shorts, longs))
        .map(|o| Effect::Write(o.value.clone().unwrap_or_else(|| Arg::plain("")), op))
        .collect()
}

const ZIP: Spec = Spec {
    short_valued: "bntxiP",
    short_optional: "",
    long_valued: &[
        "unzip-command",
        "temp-path",
        "suffixes",
        "exclude",
        "include",
        "password",
        "out",
    ],
    long_optional: &[],
};

const LESS: Spec = Spec {
    short_valued: "bhjkoOpPtTxyz#",
    short_optional: "",
    long_valued: &[
        "log-file",
        "LOG-FILE",
        "lesskey-file",
        "tag",
        "tag-file",
        "prompt",
        "pattern",
        "shift",
        "tabs",
        "max-back-scroll",
        "max-forw-scroll",
        "window",
        "jump-target",
    ],
    long_optional: &[],
};

fn less(args: &[Arg]) -> Vec<Effect> {
    // `+cmd` runs a less command at start; `!` and `|` among them run a shell.
    if args
        .iter()
        .any(|a| a.value.starts_with('+') && a.value.contains(['!', '|']))
    {
        return vec![Effect::Code("less runs a shell command given with +")];
    }
    let mut out = code_options(
        args,
        &LESS,
        &["lesskey-file"],
        "k",
        "less reads key bindings that can run commands",
    );
    if out.is_empty() {
        out = write_options(args, &LESS, "oO", &["log-file", "LOG-FILE"], "less -o");
    }
    out
}

const CURL: Spec = Spec {
    short_valued: "oDcKbdFHuUxXeEAmrTwyYzCQtPhsS",
    short_optional: "",
    long_valued: &[
        "output",
        "dump-header",
        "cookie-jar",
        "config",
        "cookie",
        "data",
        "data-raw",
        "data-binary",
        "data-urlencode",
        "form",
        "header",
        "user",
        "proxy",
        "request",
        "referer",
        "cert",
        "key",
        "user-agent",
        "max-time",
        "connect-timeout",
        "retry",
        "upload-file",
        "write-out",
        "output-dir",
        "trace",
        "trace-ascii",
        "libcurl",
        "stderr",
        "etag-save",
        "hsts",
        "alt-svc",
        "url",
        "resolve",
        "cacert",
        "capath",
        "range",
        "limit-rate",
        "max-filesize",
        "json",
        "oauth2-bearer",
    ],
    long_optional: &[],
};

fn curl(args: &[Arg]) -> Vec<Effect> {
    let s = scan(args, &CURL);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    let mut out = Vec::new();
    for o in &s.options {
        if o.is("K", &["config"]) {
            return vec![Effect::Code(
                "curl reads a configuration file that can set any option",
            )];
        }
        if o.is(
            "oDc",
            &[
                "output",
                "dump-header",
                "cookie-jar",
                "trace",
                "trace-ascii",
                "libcurl",
                "stderr",
                "etag-save",
                "hsts",
                "alt-svc",
            ],
        ) {
            let target = o.value.clone().unwrap_or_else(|| Arg::plain(""));
            if target.value != "-" {
                out.push(Effect::Write(target, "curl -o"));
            }
        } else if o.is(
            "OJ",
            &[
                "remote-name",
                "remote-name-all",
                "remote-header-name",
                "output-dir",
            ],
        ) {
            out.push(Effect::Write(
                unknown_target("the name the server gives"),
                "curl -O",
            ));
        }
    }
    out
}

const WGET: Spec = Spec {
    short_valued: "oaOPeiBTtwQUYlAR",
    short_optional: "",
    long_valued: &[
        "output-file",
        "append-output",
        "output-document",
        "directory-prefix",
        "execute",
        "input-file",
        "base",
        "config",
        "timeout",
        "tries",
        "wait",
        "quota",
        "user-agent",
        "user",
        "password",
        "header",
        "post-data",
        "post-file",
        "use-askpass",
        "level",
        "accept",
        "reject",
        "domains",
        "load-cookies",
        "save-cookies",
        "method",
        "body-data",
        "body-file",
        "limit-rate",
    ],
    long_optional: &[],
};

fn wget(args: &[Arg]) -> Vec<Effect> {
    let s = scan(args, &WGET);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    let mut out = Vec::new();
    let mut named_output = false;
    for o in &s.options {
        if o.is("e", &["execute", "config", "use-askpass"]) {
            return vec![Effect::Code(
                "wget runs commands or reads a configuration named in an option",
            )];
        }
        if o.is(
            "Oo",
            &[
                "output-document",
                "output-file",
                "append-output",
                "save-cookies",
            ],
        ) || o.is("a", &[])
        {
            let target = o.value.clone().unwrap_or_else(|| Arg::plain(""));
            if o.is("O", &["output-document"]) {
                named_output = true;
            }
            if target.value != "-" {
                out.push(Effect::Write(target, "wget -O"));
            }
        }
    }
    if !named_output && !s.operands.is_empty() {
        out.push(Effect::Write(
            unknown_target("the name the server gives"),
            "wget",
        ));
    }
    out
}

/// A write target the policy cannot know.
fn unknown_target(what: &str) -> Arg {
    let mut a = Arg::plain(what);
    a.literal = false;
    a
}

const SSH: Spec = Spec {
    short_valued: "BbcDEeFIiJLlmOopQRSWw",
    short_optional: "",
    long_valued: &[],
    long_optional: &[],
};

/// `ssh -o` keys that name no program and no configuration file.
const SSH_SAFE_OPTIONS: &[&str] = &[
    "stricthostkeychecking",
    "userknownhostsfile",
    "connecttimeout",
    "batchmode",
    "serveraliveinterval",
    "serveralivecountmax",
    "loglevel",
    "port",
    "user",
    "identityfile",
    "identitiesonly",
    "compression",
    "requesttty",
    "controlmaster",
    "controlpath",
    "controlpersist",
    "hostname",
    "addressfamily",
    "connectionattempts",
    "passwordauthentication",
    "pubkeyauthentication",
    "preferredauthentications",
    "forwardagent",
    "tcpkeepalive",
    "globalknownhostsfile",
    "updatehostkeys",
    "checkhostip",
    "hashknownhosts",
    "exitonforwardfailure",
];

fn ssh(name: &str, args: &[Arg]) -> Vec<Effect> {
    let s = scan(args, &SSH);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    for o in &s.options {
        if o.is("F", &[]) {
            return vec![Effect::Code(
                "ssh reads a configuration file that can run commands",
            )];
        }
        if name != "ssh" && o.is("S", &[]) {
            return vec![Effect::Code("scp runs the program named by -S")];
        }
        if o.is("o", &[]) {
            let value = o.value.as_ref().map(|v| v.value.as_str()).unwrap_or("");
            let key = value
                .split(['=', ' ', '\t'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            if !SSH_SAFE_OPTIONS.contains(&key.as_str()) {
                return vec![Effect::Code("an ssh -o option we do not know can run a command (ProxyCommand, LocalCommand, Match exec, …)")];
            }
        }
    }
    Vec::new()
}

// ---------------------------------------------------------------- git

const GIT_GLOBAL: Spec = Spec {
    short_valued: "Cc",
    short_optional: "",
    long_valued: &[
        "git-dir",
        "work-tree",
        "namespace",
        "config-env",
        "super-prefix",
        "list-cmds",
        "attr-source",
    ],
    long_optional: &["exec-path"],
};

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
                | "log.showsignature"
        ) && !(key.ends_with("gpgsign") && value != "false")
        || (section == "pager" && matches!(value, "true" | "false"))
}

fn git(args: &[Arg]) -> Vec<Effect> {
    if args.iter().any(may_be_option) {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    // Global options, before the subcommand.
    let mut i = 0;
    while i < args.len() {
        let v = args[i].value.as_str();
        if v == "-c" || v == "--config-env" || v.starts_with("--config-env=") {
            let setting = if v == "-c" || v == "--config-env" {
                args.get(i + 1).map(|a| a.value.as_str()).unwrap_or("")
            } else {
                &v["--config-env=".len()..]
            };
            let (key, value) = setting.split_once('=').unwrap_or((setting, "true"));
            if v.starts_with("--config-env") || !git_key_is_safe(key, value) {
                return vec![Effect::Code("git -c sets configuration that can name a program to run (pager, editor, ssh command, alias, hook path, …)")];
            }
            i += if v.contains('=') { 1 } else { 2 };
            continue;
        }
        if v.starts_with("--exec-path=") || v.starts_with("--ex") && v.contains('=') {
            return vec![Effect::Code(
                "git --exec-path runs git commands from another directory",
            )];
        }
        if matches!(v, "-C")
            || GIT_GLOBAL
                .long_valued
                .iter()
                .any(|n| v.strip_prefix("--") == Some(*n))
        {
            i += 2;
            continue;
        }
        if v.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let Some(sub) = args.get(i).map(|a| a.value.as_str()) else {
        return Vec::new();
    };
    let rest = &args[i + 1..];
    let mut out = Vec::new();
    let runs = |why: &'static str| vec![Effect::Code(why)];
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
            out.push(Effect::Write(Arg::plain(target), "git --output"));
        }
    }
    if sub == "config" {
        if let Some(w) = git_config_write(rest) {
            out.push(w);
        }
    }
    out
}

/// `git config` that sets a value writes a configuration file (which can
/// name programs later git commands run).
fn git_config_write(rest: &[Arg]) -> Option<Effect> {
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
            "get" | "list" | "--get" | "--get-all" | "--get-regexp" | "--get-urlmatch"
            | "--list" | "-l" | "--show-origin" | "--show-scope" | "--name-only" | "get-color"
            | "--get-color" => {
                reading |= v.starts_with("--get")
                    || matches!(v, "get" | "list" | "--list" | "-l" | "get-color");
            }
            "set" | "unset" | "rename-section" | "remove-section" | "edit" | "--add"
            | "--replace-all" | "--unset" | "--unset-all" | "--rename-section"
            | "--remove-section" | "--edit" | "-e" => writing = true,
            _ if v.starts_with("--file=") => file = v["--file=".len()..].to_owned(),
            _ if v.starts_with('-') => {}
            _ => operands += 1,
        }
        k += 1;
    }
    (writing || (!reading && operands >= 2)).then(|| {
        let target = if file.starts_with("~/") {
            unknown_target(&file)
        } else {
            Arg::plain(&file)
        };
        Effect::Write(target, "git config")
    })
}

// ---------------------------------------------------------------- tar

/// What a tar command line says so far.
#[derive(Default)]
struct Tar {
    file: Option<Arg>,
    dir: Option<Arg>,
    create: bool,
    extract: bool,
}

impl Tar {
    /// A short option; `Err` when it runs a program.
    fn short(&mut self, c: char, value: Option<Arg>) -> Result<(), &'static str> {
        match c {
            'c' | 'r' | 'u' | 'A' => self.create = true,
            'x' => self.extract = true,
            'f' => self.file = value,
            'C' => self.dir = value,
            'I' | 'F' => return Err("tar runs a program named in an option"),
            _ => {}
        }
        Ok(())
    }
}

fn tar(args: &[Arg]) -> Vec<Effect> {
    if args.iter().any(may_be_option) {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    // Short options that take a value.
    const VALUED: &str = "fCbFgHIKLNTVX";
    let mut t = Tar::default();
    let mut i = 0;
    while i < args.len() {
        let v = args[i].value.clone();
        i += 1;
        if v == "--" {
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, val)) => (n.to_owned(), Some(val.to_owned())),
                None => (long.to_owned(), None),
            };
            let is = |n: &str| abbreviates(&name, n);
            if [
                "to-command",
                "use-compress-program",
                "info-script",
                "new-volume-script",
                "rsh-command",
                "rmt-command",
            ]
            .iter()
            .any(|n| is(n))
                || (is("checkpoint-action")
                    && attached.as_deref().is_none_or(|a| a.contains("exec")))
            {
                return vec![Effect::Code("tar runs a program named in an option")];
            }
            let mut value = || {
                attached.clone().map(|a| Arg::plain(&a)).or_else(|| {
                    let next = args.get(i).cloned();
                    i += 1;
                    next
                })
            };
            if ["create", "append", "update", "concatenate", "delete"]
                .iter()
                .any(|n| is(n))
            {
                t.create = true;
            } else if is("extract") || name == "get" {
                t.extract = true;
            } else if is("file") {
                t.file = value();
            } else if is("directory") {
                t.dir = value();
            }
            continue;
        }
        // The first word may be a bundle without a dash (`tar czf out.tgz`),
        // whose options take their values from the next words in order.
        let dashless = !v.starts_with('-');
        let bundle: Vec<char> = match v.strip_prefix('-') {
            Some(b) => b.chars().collect(),
            None if i == 1 => v.chars().collect(),
            None => continue,
        };
        for (k, &c) in bundle.iter().enumerate() {
            let value = if VALUED.contains(c) {
                if !dashless && k + 1 < bundle.len() {
                    Some(Arg::plain(&bundle[k + 1..].iter().collect::<String>()))
                } else {
                    let next = args.get(i).cloned();
                    i += 1;
                    next
                }
            } else {
                None
            };
            if let Err(why) = t.short(c, value) {
                return vec![Effect::Code(why)];
            }
            if VALUED.contains(c) && !dashless {
                break;
            }
        }
    }
    let mut out = Vec::new();
    if t.create {
        if let Some(f) = t.file.filter(|f| f.value != "-") {
            out.push(Effect::Write(f, "tar -f"));
        }
    }
    if t.extract {
        out.push(Effect::Write(
            t.dir.unwrap_or_else(|| Arg::plain(".")),
            "tar -x",
        ));
    }
    out
}

// ---------------------------------------------------------------- sed and awk

pub(crate) const SED: Spec = Spec {
    short_valued: "efl",
    short_optional: "i",
    long_valued: &["expression", "file", "line-length"],
    long_optional: &["in-place"],
};

fn script_effects(found: Vec<ScriptEffect>, op: &'static str) -> Vec<Effect> {
    let mut out = Vec::new();
    for e in found {
        match e {
            ScriptEffect::Writes(f) => out.push(Effect::Write(Arg::plain(&f), op)),
            ScriptEffect::RunsCode(why) | ScriptEffect::Unknown(why) => {
                return vec![Effect::Code(why)]
            }
        }
    }
    out
}

fn sed(args: &[Arg]) -> Vec<Effect> {
    let s = scan(args, &SED);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    let sandboxed = s
        .options
        .iter()
        .any(|o| o.long.as_deref().is_some_and(|l| abbreviates(l, "sandbox")));
    let mut scripts: Vec<&Arg> = Vec::new();
    let mut in_place = false;
    for o in &s.options {
        if o.is("f", &["file"]) {
            return vec![Effect::Code(
                "sed runs a script from a file the analysis cannot see",
            )];
        }
        if o.is("e", &["expression"]) {
            match &o.value {
                Some(v) => scripts.push(v),
                None => return vec![Effect::Code("sed -e without a script")],
            }
        }
        if o.is("i", &["in-place"]) {
            in_place = true;
        }
    }
    let mut operands = s.operands.iter().copied();
    if scripts.is_empty() {
        match operands.next() {
            Some(script) => scripts.push(script),
            None => return Vec::new(),
        }
    }
    if scripts.iter().any(|s| !s.literal) {
        return vec![Effect::Code("sed runs a script the analysis cannot see")];
    }
    let mut out = Vec::new();
    if !sandboxed {
        // sed joins its -e scripts with newlines and reads them as one.
        let joined: Vec<&str> = scripts.iter().map(|s| s.value.as_str()).collect();
        let found = script_effects(scripts::sed_script(&joined.join("\n")), "sed w");
        if found.iter().any(|e| matches!(e, Effect::Code(_))) {
            return found;
        }
        out.extend(found);
    }
    if in_place {
        for f in operands {
            out.push(Effect::Write(f.clone(), "sed -i"));
        }
    }
    out
}

pub(crate) const AWK: Spec = Spec {
    short_valued: "FvfeEiIlW",
    short_optional: "opdDL",
    long_valued: &[
        "field-separator",
        "assign",
        "file",
        "source",
        "exec",
        "include",
        "load",
    ],
    long_optional: &["pretty-print", "profile", "dump-variables", "debug", "lint"],
};

fn awk(args: &[Arg]) -> Vec<Effect> {
    let s = scan(args, &AWK);
    if s.unknown {
        return vec![Effect::Code(UNKNOWN_ARGUMENT)];
    }
    let mut programs: Vec<&Arg> = Vec::new();
    let mut out = Vec::new();
    for o in &s.options {
        if o.is("fEiIl", &["file", "exec", "include", "load"]) {
            return vec![Effect::Code(
                "awk runs a program from a file the analysis cannot see",
            )];
        }
        if o.is("W", &[]) {
            return vec![Effect::Code("awk -W options the analysis does not follow")];
        }
        if o.is("e", &["source"]) {
            match &o.value {
                Some(v) => programs.push(v),
                None => return vec![Effect::Code("awk -e without a program")],
            }
        }
        if o.is("opd", &["pretty-print", "profile", "dump-variables"]) {
            let target = o
                .value
                .clone()
                .unwrap_or_else(|| unknown_target("awk's default output file"));
            out.push(Effect::Write(target, "awk -o"));
        }
    }
    if programs.is_empty() {
        match s.operands.first() {
            Some(p) => programs.push(p),
            None => return out,
        }
    }
    for program in programs {
        if !program.literal {
            return vec![Effect::Code("awk runs a program the analysis cannot see")];
        }
        let found = script_effects(scripts::awk_program(&program.value), "awk print >");
        if found.iter().any(|e| matches!(e, Effect::Code(_))) {
            return found;
        }
        out.extend(found);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::plain(w)).collect()
    }

    // Through the program table, which names these grammars.
    fn code(name: &str, words: &[&str]) -> bool {
        crate::programs::understand(name, &args(words))
            .runs
            .is_some()
    }

    fn writes(name: &str, words: &[&str]) -> Vec<String> {
        crate::programs::understand(name, &args(words))
            .writes
            .into_iter()
            .map(|(a, _)| a.value)
            .collect()
    }

    #[test]
    fn options_that_run_code() {
        for (name, words) in [
            ("git", &["-c", "core.pager=sh -c id", "log"][..]),
            ("git", &["-c", "alias.x=!rm -rf ~", "x"]),
            ("git", &["--config-env=core.pager=X", "log"]),
            ("git", &["fetch", "--upload-pack=touch /tmp/x", "origin"]),
            ("git", &["push", "--rec=evil", "origin"]),
            ("git", &["rebase", "-x", "rm x", "HEAD~2"]),
            ("git", &["grep", "-Oless", "x"]),
            ("git", &["bisect", "run", "rm", "x"]),
            ("git", &["submodule", "foreach", "rm x"]),
            ("git", &["clone", "--template=/tmp/t", "url"]),
            ("git", &["clone", "-c", "core.fsmonitor=id", "url"]),
            ("rg", &["--pre", "sh", "x"]),
            ("rg", &["--pre=sh", "x"]),
            ("rg", &["--hostname-bin", "id", "x"]),
            ("tar", &["-cf", "x.tar", "--checkpoint-action=exec=id", "."]),
            ("tar", &["--to-command=sh", "-xf", "x.tar"]),
            ("tar", &["-I", "sh -c id", "-xf", "x.tar"]),
            ("tar", &["--use-comp=id", "-xf", "x"]),
            ("sed", &["1e id", "f"]),
            ("sed", &["-n", "-e", "s/x/id/e", "f"]),
            ("sed", &["-f", "script.sed", "f"]),
            ("awk", &["BEGIN{system(\"id\")}"]),
            ("awk", &["-f", "prog.awk", "x"]),
            ("sort", &["--compress-program=sh", "x"]),
            ("fd", &["-x", "rm"]),
            ("fd", &["-Hx", "rm"]),
            ("fd", &["--exec-batch", "rm"]),
            ("man", &["-P", "sh -c id", "ls"]),
            ("less", &["+!id", "f"]),
            ("ssh", &["-o", "ProxyCommand=sh -c id", "host"]),
            ("ssh", &["-oLocalCommand=id", "host"]),
            ("ssh", &["-F", "cfg", "host"]),
            ("rsync", &["-e", "sh -c id", "a", "b:"]),
            ("rsync", &["--rsync-path=id", "a", "b:"]),
            ("cargo", &["test", "--config", "target.x.runner='sh'"]),
            ("curl", &["-K", "cfg", "url"]),
            ("wget", &["-e", "x=y", "url"]),
            ("zip", &["-T", "--unzip-command", "sh", "a.zip", "f"]),
        ] {
            assert!(code(name, words), "{name} {words:?}");
        }
    }

    #[test]
    fn options_that_write() {
        assert_eq!(writes("git", &["log", "--output=out.txt"]), ["out.txt"]);
        assert_eq!(writes("git", &["diff", "--out", "o"]), ["o"]);
        assert_eq!(
            writes("git", &["format-patch", "-o", "dir", "HEAD~1"]),
            ["dir"]
        );
        assert_eq!(
            writes("git", &["config", "core.pager", "less"]),
            [".git/config"]
        );
        assert_eq!(
            writes("git", &["config", "--file", "f", "--add", "a.b", "c"]),
            ["f"]
        );
        assert_eq!(writes("tree", &["-ao", "out"]), ["out"]);
        assert_eq!(writes("tree", &["-aoout"]), ["out"]);
        assert_eq!(writes("sort", &["-no", "out", "in"]), ["out"]);
        assert_eq!(writes("sort", &["--outp=out", "in"]), ["out"]);
        assert_eq!(writes("sed", &["-i", "s/a/b/", "f1", "f2"]), ["f1", "f2"]);
        assert_eq!(writes("sed", &["-ni.bak", "s/a/b/p", "f"]), ["f"]);
        assert_eq!(writes("sed", &["w out", "f"]), ["out"]);
        assert_eq!(writes("tar", &["czf", "out.tgz", "dir"]), ["out.tgz"]);
        assert_eq!(writes("tar", &["-c", "-f", "out.tar", "dir"]), ["out.tar"]);
        assert_eq!(writes("tar", &["--create", "--file=o.tar", "d"]), ["o.tar"]);
        assert_eq!(writes("tar", &["xzf", "a.tgz", "-C", "dest"]), ["dest"]);
        assert_eq!(writes("curl", &["-o", "page.html", "url"]), ["page.html"]);
        assert_eq!(writes("awk", &["{print > \"out\"}", "f"]), ["out"]);
    }

    #[test]
    fn everyday_forms_do_nothing_more() {
        for (name, words) in [
            ("git", &["log", "--oneline", "-n", "5"][..]),
            ("git", &["-c", "color.ui=always", "log"]),
            ("git", &["commit", "-m", "rm old files"]),
            ("git", &["config", "--get", "user.name"]),
            ("git", &["config", "user.name"]),
            ("git", &["grep", "-n", "x"]),
            ("git", &["rebase", "-i", "HEAD~2"]),
            ("rg", &["-n", "--pre-glob", "*.gz", "foo"]),
            ("rg", &["--pretty", "foo"]),
            ("tar", &["tzf", "a.tgz"]),
            ("tar", &["-tvf", "a.tar"]),
            ("sed", &["-n", "s/a/b/p", "f"]),
            ("sed", &["s/we/ew/g", "f"]),
            ("awk", &["{print $1}", "f"]),
            ("awk", &["-F:", "$3 > 100", "/etc/passwd"]),
            ("sort", &["-n", "-k2", "f"]),
            ("tree", &["-a", "-L", "2"]),
            ("fd", &["-e", "rs", "x"]),
            ("ssh", &["-o", "StrictHostKeyChecking=no", "host", "ls"]),
            ("curl", &["-s", "-H", "Accept: x", "url"]),
            ("curl", &["-o", "-", "url"]),
            ("cargo", &["test", "-p", "x"]),
        ] {
            let u = crate::programs::understand(name, &args(words));
            assert!(
                u.runs.is_none() && u.writes.is_empty(),
                "{name} {words:?}: {u:?}"
            );
        }
    }

    #[test]
    fn data_commands() {
        let data =
            |name: &str, words: &[&str]| crate::programs::understand(name, &args(words)).data;
        assert!(data("echo", &["rm", "x"]));
        assert!(data("git", &["commit", "-m", "rm x"]));
        assert!(data("git", &["-C", "d", "rm", "x"]));
        assert!(!data("git", &["bisect", "run", "rm", "x"]));
        assert!(!data("git", &["my-alias"]));
        assert!(!data("flock", &["l", "rm", "x"]));
    }
}
