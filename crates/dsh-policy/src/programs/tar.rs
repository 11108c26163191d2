//! tar's grammar: a first bundle without a dash, options whose values
//! come from the next words in order, and what it creates or extracts.

use super::{Understanding, UNSEEN_ARGUMENT};
use crate::options::{may_be_option, Scan};
use crate::word::Arg;

/// Whether `written` (a long option name as given) may stand for `name`.
fn abbreviates(written: &str, name: &str) -> bool {
    !written.is_empty() && name.starts_with(written)
}

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

/// tar's words: a first bundle without a dash (`tar czf out.tgz`), what
/// it creates (`-f`) or extracts into (`-C`, else `.`), and the options
/// that run programs.
pub(super) fn tar(_scan: &Scan, args: &[Arg], u: &mut Understanding) {
    if args.iter().any(may_be_option) {
        return u.run(UNSEEN_ARGUMENT);
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
                return u.run("tar runs a program named in an option");
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
                return u.run(why);
            }
            if VALUED.contains(c) && !dashless {
                break;
            }
        }
    }
    if t.create {
        if let Some(f) = t.file.filter(|f| f.value != "-") {
            u.write(f, "tar -f");
        }
    }
    if t.extract {
        u.write(t.dir.unwrap_or_else(|| Arg::plain(".")), "tar -x");
    }
}
