//! Options as a program reads them, from a one-line description of them.
//!
//! A program's options are written as a string, one entry per option,
//! separated by white space:
//!
//! | entry | means |
//! |---|---|
//! | `-a/--all` | a flag with a short and a long name (any number of names) |
//! | `-w/--width=` | it takes a value: attached (`-w80`, `--width=80`) or the next word |
//! | `--color[=]` | it takes a value only when attached (`--color=never`) |
//! | `=r`, `=w`, `=x`, `=p`, `=P` | the value is a file it reads, a file it writes, a program or code it runs, the pattern (so the first operand is not one), or a file it reads the pattern from |
//! | `=l` | the value is a `:`-separated list of files it reads |
//! | `--arg=dd`, `--rawfile=dr` | it takes two values (`d`: data) |
//! | `!-s/--set=` | using it is not read-only (it changes something that is no file) |
//! | `^--ext-diff` | using it runs code named elsewhere (configuration, a driver): no allow rule covers it |
//! | `-#` | numbers are options (`head -5`) |
//! | `-*` (first) | long options take one dash or two and nothing bundles (Go's `-exec=x`) |
//!
//! Words are read as getopt_long reads them: short options bundle (`-la`),
//! a value attaches (`-oFILE`, `--output=FILE`) or is the next word, a long
//! option may be abbreviated (`--out`), and — for programs that permute —
//! options may follow operands until `--`. An abbreviation counts as every
//! option it could stand for: it can write or run what any of them does,
//! and it is never read-only (a spelling nobody listed is not understood).

use crate::word::Arg;

/// What the value of an option (or an operand) is to the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Text: a number, a format, a name.
    Data,
    /// The pattern (for programs whose first operand is otherwise one).
    Pattern,
    /// A file it reads.
    Read,
    /// A file it reads the pattern from (`grep -f FILE`).
    PatternFile,
    /// Files it reads, separated by `:` (`file -m a:b`).
    ReadList,
    /// A file it writes.
    Write,
    /// A program or code it runs.
    Run,
}

impl Role {
    fn from_letter(c: Option<char>) -> Result<Role, String> {
        Ok(match c {
            None | Some('d') => Role::Data,
            Some('p') => Role::Pattern,
            Some('r') => Role::Read,
            Some('P') => Role::PatternFile,
            Some('l') => Role::ReadList,
            Some('w') => Role::Write,
            Some('x') => Role::Run,
            Some(other) => return Err(format!("unknown value role {other:?}")),
        })
    }
}

/// Whether and how an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// A flag.
    Nothing,
    /// Attached or the next word (and, for a second role, the word after:
    /// `jq --rawfile NAME FILE`).
    Value(Role, Option<Role>),
    /// Only attached (`--color=always`, `-i.bak`).
    Attached(Role),
}

impl Takes {
    /// The roles of its values.
    pub(crate) fn roles(self) -> impl Iterator<Item = Role> {
        let (a, b) = match self {
            Takes::Nothing => (None, None),
            Takes::Value(r, s) => (Some(r), s),
            Takes::Attached(r) => (Some(r), None),
        };
        a.into_iter().chain(b)
    }
}

/// One option of a program.
#[derive(Debug)]
pub(crate) struct Opt {
    pub shorts: Vec<char>,
    pub longs: Vec<&'static str>,
    pub takes: Takes,
    /// Using it is not read-only (`!` in the description).
    pub changes: bool,
    /// Using it runs code named elsewhere (configuration, a driver):
    /// `^` in the description (`git show ^--ext-diff`).
    pub runs: bool,
    /// How a write through it is named in reasons (`sort -o`).
    pub label: &'static str,
}

impl Opt {
    /// Whether it keeps a read-only program read-only.
    pub(crate) fn is_read_only(&self) -> bool {
        !self.changes
            && self.takes.roles().all(|r| {
                matches!(
                    r,
                    Role::Data | Role::Pattern | Role::Read | Role::PatternFile
                )
            })
    }
}

/// A program's options, parsed from their description.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub opts: Vec<Opt>,
    /// `-5` is an option (a count).
    pub numeric: bool,
    /// Long options take one dash or two, and nothing bundles (Go's
    /// `-exec`, terraform's `-chdir=`): written `-exec=x`.
    pub single_dash: bool,
}

impl Options {
    /// Parses a description (see the module doc) of `program`'s options.
    pub(crate) fn parse(program: &str, spec: &'static str) -> Result<Options, String> {
        let mut out = Options::default();
        for entry in spec.split_whitespace() {
            if entry == "-#" {
                out.numeric = true;
                continue;
            }
            if entry == "-*" {
                out.single_dash = true;
                continue;
            }
            let (changes, entry) = match entry.strip_prefix('!') {
                Some(e) => (true, e),
                None => (false, entry),
            };
            let (runs, entry) = match entry.strip_prefix('^') {
                Some(e) => (true, e),
                None => (false, entry),
            };
            let (names, takes) = if let Some((n, v)) = entry.split_once("[=]") {
                (n, Takes::Attached(Role::from_letter(single(v, entry)?)?))
            } else if let Some((n, v)) = entry.split_once('=') {
                let mut letters = v.chars();
                let first = Role::from_letter(letters.next())?;
                let second = letters
                    .next()
                    .map(|c| Role::from_letter(Some(c)))
                    .transpose()?;
                if letters.next().is_some() {
                    return Err(format!("at most two values in {entry:?}"));
                }
                (n, Takes::Value(first, second))
            } else {
                (entry, Takes::Nothing)
            };
            let mut opt = Opt {
                shorts: Vec::new(),
                longs: Vec::new(),
                takes,
                changes: changes || runs,
                runs,
                label: "",
            };
            for name in names.split('/') {
                if let Some(long) = name.strip_prefix("--") {
                    if long.is_empty() {
                        return Err(format!("empty long option in {entry:?}"));
                    }
                    opt.longs.push(long);
                } else if let Some(short) = name.strip_prefix('-') {
                    let mut chars = short.chars();
                    match (chars.next(), chars.next()) {
                        (Some(c), None) => opt.shorts.push(c),
                        (Some(_), Some(_)) if out.single_dash => opt.longs.push(short),
                        _ => return Err(format!("bad short option {name:?} in {entry:?}")),
                    }
                } else {
                    return Err(format!("an option name must start with - in {entry:?}"));
                }
            }
            if opt.takes.roles().any(|r| r == Role::Write) {
                // Made once per option of the table, which is built once.
                let name = names.split('/').next().unwrap_or(names);
                opt.label = Box::leak(format!("{program} {name}").into_boxed_str());
            }
            for o in &out.opts {
                if o.shorts.iter().any(|c| opt.shorts.contains(c))
                    || o.longs.iter().any(|l| opt.longs.contains(l))
                {
                    return Err(format!("{entry:?} repeats an option"));
                }
            }
            out.opts.push(opt);
        }
        Ok(out)
    }

    fn short(&self, c: char) -> Option<&Opt> {
        self.opts.iter().find(|o| o.shorts.contains(&c))
    }

    fn long(&self, name: &str) -> Option<&Opt> {
        self.opts.iter().find(|o| o.longs.contains(&name))
    }

    /// Every option whose long name starts with `prefix`.
    fn abbreviated(&self, prefix: &str) -> Vec<&Opt> {
        self.opts
            .iter()
            .filter(|o| o.longs.iter().any(|l| l.starts_with(prefix)))
            .collect()
    }
}

fn single(v: &str, entry: &'static str) -> Result<Option<char>, String> {
    let mut c = v.chars();
    match (c.next(), c.next()) {
        (first, None) => Ok(first),
        _ => Err(format!("bad value role in {entry:?}")),
    }
}

/// One option as given on a command line.
#[derive(Debug)]
pub(crate) struct Given<'o> {
    /// The option it is; several when an abbreviation could stand for
    /// several; none when it is not known.
    pub opts: Vec<&'o Opt>,
    /// Written as an abbreviation of a long name.
    pub abbreviated: bool,
    /// As written (`-o`, `--out`).
    pub written: String,
    /// Its values, when it takes any (fewer when they are missing).
    pub values: Vec<Arg>,
}

impl Given<'_> {
    /// Whether any option it may be is a short option in `shorts` or has
    /// a long name in `longs`.
    pub(crate) fn is(&self, shorts: &str, longs: &[&str]) -> bool {
        self.opts.iter().any(|o| {
            o.shorts.iter().any(|c| shorts.contains(*c))
                || o.longs.iter().any(|l| longs.contains(l))
        })
    }

    /// Whether it is known exactly and keeps a program read-only.
    pub(crate) fn is_read_only(&self) -> bool {
        !self.abbreviated && self.opts.len() == 1 && self.opts[0].is_read_only()
    }

    /// Its values with the role each may have (every role an
    /// abbreviation's options give it).
    pub(crate) fn valued(&self) -> impl Iterator<Item = (&Arg, Role)> + '_ {
        self.opts
            .iter()
            .flat_map(move |o| o.takes.roles().zip(self.values.iter()).map(|(r, v)| (v, r)))
    }
}

/// A command's words read as options and operands.
#[derive(Debug, Default)]
pub(crate) struct Scan<'a, 'o> {
    pub options: Vec<Given<'o>>,
    /// Operands, in order.
    pub operands: Vec<&'a Arg>,
    /// A word the analysis cannot see that could be an option.
    pub unseen: bool,
    /// An option that is not known, or a bundle whose rest could not be read.
    pub unknown: bool,
}

impl Scan<'_, '_> {
    /// Every option given is known exactly and read-only.
    pub(crate) fn read_only_options(&self) -> bool {
        !self.unknown && !self.unseen && self.options.iter().all(Given::is_read_only)
    }
}

/// How many words an option's values take when none is attached.
fn words_taken(takes: Takes) -> usize {
    match takes {
        Takes::Nothing | Takes::Attached(_) => 0,
        Takes::Value(_, None) => 1,
        Takes::Value(_, Some(_)) => 2,
    }
}

/// Whether a word whose value is not known could start with `-`.
pub(crate) fn may_be_option(a: &Arg) -> bool {
    if a.literal {
        return false;
    }
    // Split, its later words can be anything.
    if a.may_split() {
        return true;
    }
    let first = a.raw.trim_start_matches(['"', '\'']).chars().next();
    !first.is_some_and(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '_' | '~' | '+' | ',')
    })
}

/// Reads `args` as options and operands. `permute`: options may follow
/// operands (GNU); otherwise the first operand ends the options.
pub(crate) fn scan<'a, 'o>(args: &'a [Arg], options: &'o Options, permute: bool) -> Scan<'a, 'o> {
    let mut out = Scan::default();
    let mut i = 0;
    let mut ended = false;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if ended {
            out.operands.push(a);
            continue;
        }
        if may_be_option(a) {
            out.unseen = true;
            out.operands.push(a);
            continue;
        }
        let v = a.value.as_str();
        if v == "--" {
            ended = true;
            continue;
        }
        let long = match v.strip_prefix("--") {
            Some(l) => Some(l),
            None if options.single_dash && v.len() > 1 => v.strip_prefix('-'),
            None => None,
        };
        if let Some(long) = long {
            let single = options.single_dash && long.chars().count() == 1;
            let (name, attached) = match long.split_once('=') {
                Some((n, val)) => (n, Some(Arg::plain(val))),
                None => (long, None),
            };
            let exact = match (options.long(name), single) {
                (Some(o), _) => Some(o),
                (None, true) => name.chars().next().and_then(|c| options.short(c)),
                (None, false) => None,
            };
            let (opts, abbreviated): (Vec<&Opt>, bool) = match exact {
                Some(o) => (vec![o], false),
                None if options.single_dash => (Vec::new(), false),
                None if name.is_empty() => (Vec::new(), false),
                None => (options.abbreviated(name), true),
            };
            if opts.is_empty() {
                out.unknown = true;
            }
            let words = opts.iter().map(|o| words_taken(o.takes)).max().unwrap_or(0);
            let mut values: Vec<Arg> = attached.into_iter().collect();
            while values.len() < words && i < args.len() {
                if args[i].may_split() {
                    out.unseen = true;
                    out.operands.push(&args[i]);
                }
                values.push(args[i].clone());
                i += 1;
            }
            out.options.push(Given {
                opts,
                abbreviated,
                written: format!("--{name}"),
                values,
            });
            continue;
        }
        if v.len() > 1 && v.starts_with('-') {
            let bundle = &v[1..];
            if options.numeric && bundle.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            for (k, c) in bundle.char_indices() {
                let rest = &bundle[k + c.len_utf8()..];
                let Some(opt) = options.short(c) else {
                    // The rest of the bundle could be this option's value.
                    out.unknown = true;
                    out.options.push(Given {
                        opts: Vec::new(),
                        abbreviated: false,
                        written: format!("-{c}"),
                        values: Vec::new(),
                    });
                    break;
                };
                let mut values: Vec<Arg> = Vec::new();
                if !rest.is_empty() && opt.takes != Takes::Nothing {
                    values.push(Arg::plain(rest));
                }
                while values.len() < words_taken(opt.takes) && i < args.len() {
                    // A value that may split gives the words after it to
                    // the program as options or files (`sort -k $k`).
                    if args[i].may_split() {
                        out.unseen = true;
                        out.operands.push(&args[i]);
                    }
                    values.push(args[i].clone());
                    i += 1;
                }
                let ends = opt.takes != Takes::Nothing;
                out.options.push(Given {
                    opts: vec![opt],
                    abbreviated: false,
                    written: format!("-{c}"),
                    values,
                });
                if ends {
                    break;
                }
            }
            continue;
        }
        out.operands.push(a);
        if !permute {
            ended = true;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Arg> {
        words.iter().map(|w| Arg::plain(w)).collect()
    }

    #[test]
    fn descriptions_parse() {
        let o = Options::parse(
            "t",
            "-a/--all -w/--width= --color[=] -o/--output=w !-s/--set= --rawfile=dr -#",
        )
        .unwrap_or_default();
        assert_eq!(o.opts.len(), 6);
        assert!(o.numeric);
        assert_eq!(o.opts[3].takes, Takes::Value(Role::Write, None));
        assert_eq!(o.opts[5].takes, Takes::Value(Role::Data, Some(Role::Read)));
        assert!(o.opts[4].changes);
        assert!(Options::parse("t", "a").is_err());
        assert!(Options::parse("t", "-ab").is_err());
        assert!(Options::parse("t", "-a -a").is_err());
        assert!(Options::parse("t", "-o=q").is_err());
    }

    #[test]
    fn words_read_as_getopt_long_reads_them() {
        let o = Options::parse("t", "-a/--all -o/--output=w -n= --color[=] -#").unwrap_or_default();
        let a = args(&["-ao", "out", "x", "--col=never", "-n5", "-3", "--", "-a"]);
        let s = scan(&a, &o, true);
        let names: Vec<&str> = s.options.iter().map(|g| g.written.as_str()).collect();
        assert_eq!(names, ["-a", "-o", "--col", "-n"]);
        assert_eq!(
            s.options[1].values.first().map(|v| v.value.as_str()),
            Some("out")
        );
        assert!(s.options[2].abbreviated);
        assert_eq!(
            s.operands
                .iter()
                .map(|a| a.value.as_str())
                .collect::<Vec<_>>(),
            ["x", "-a"]
        );
        assert!(!s.unknown);
        assert!(!s.read_only_options(), "-o writes, --col is abbreviated");

        let a = args(&["x", "-a"]);
        let s = scan(&a, &o, false);
        assert_eq!(s.operands.len(), 2, "without permutation -a is an operand");

        let a = args(&["-az"]);
        let s = scan(&a, &o, true);
        assert!(s.unknown);
        let a = args(&["--out=f"]);
        let s = scan(&a, &o, true);
        assert!(s.options[0].valued().any(|(_, r)| r == Role::Write));
    }
}
