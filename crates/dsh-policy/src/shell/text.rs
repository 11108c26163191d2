//! Words as text: rendering a command in the normal form rules match,
//! brace expansion as bash does it, glob and brace detection, and the
//! shapes of arithmetic and parameter expansion that evaluate values.

use crate::word::Arg;
use brush_parser::ast;

pub(super) fn render(args: &[Arg]) -> String {
    render_from("", args).0
}

/// Renders `prefix` and the words in normal form; returns the text and
/// where each word starts in it.
pub(super) fn render_from(prefix: &str, args: &[Arg]) -> (String, Vec<usize>) {
    let mut out =
        String::with_capacity(prefix.len() + args.iter().map(|a| a.raw.len() + 1).sum::<usize>());
    out.push_str(prefix);
    let mut offsets = Vec::with_capacity(args.len());
    for a in args {
        if !out.is_empty() {
            out.push(' ');
        }
        offsets.push(out.len());
        out.push_str(&a.display());
    }
    (out, offsets)
}

/// The words' values joined by single spaces, white space inside them
/// collapsed: the text deny rules search for commands a program may run.
pub(super) fn flat(args: &[Arg]) -> String {
    let mut out = String::with_capacity(args.iter().map(|a| a.value.len() + 1).sum::<usize>());
    for a in args {
        for w in a.value.split_whitespace() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    }
    out
}

/// The words with each one the analysis cannot see cut where its first
/// expansion starts (quotes dropped): what deny rules can still recognise.
pub(super) fn literal_starts(args: &[Arg]) -> String {
    let mut out = String::new();
    for a in args {
        let text = if a.literal {
            a.value.as_str()
        } else {
            a.raw.split(['$', '`']).next().unwrap_or("")
        };
        for w in text.split(|c: char| c.is_whitespace() || c == '"' || c == '\'') {
            if !w.is_empty() {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(w);
            }
        }
    }
    out
}

/// Bytes that make a string argument worth parsing as shell code.
pub(super) const SHELL_CODE_BYTES: &[char] =
    &[' ', '\t', '\n', ';', '&', '|', '(', '`', '$', '<', '>'];

/// Longest word whose brace expansion is followed.
pub(super) const MAX_BRACE_WORD: usize = 4096;

/// Most words a command's brace expansions may make.
pub(super) const MAX_BRACE_WORDS: usize = 256;

/// Expands the braces of a word (no quotes or expansions in it) into
/// `out`, as bash does: `a{b,c}d` → `abd acd`, `{1..3}`, `{a..c}`,
/// `{1..9..2}`, nested groups. `false` when it would make more than
/// `limit` words.
pub(super) fn brace_expand(word: &str, out: &mut Vec<String>, limit: usize) -> bool {
    let b = word.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            let mut depth = 0usize;
            let mut commas = Vec::new();
            let mut close = None;
            for (j, &c) in b.iter().enumerate().skip(i) {
                match c {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            close = Some(j);
                            break;
                        }
                    }
                    b',' if depth == 1 => commas.push(j),
                    _ => {}
                }
            }
            let Some(close) = close else {
                // Bash skips a `{` that never closes and expands the next
                // group, keeping the stray `{` in every word (`{{a,b}` is
                // `{a {b`).
                i += 1;
                continue;
            };
            let inner = &word[i + 1..close];
            let alternatives: Vec<String> = if !commas.is_empty() {
                let mut parts = Vec::with_capacity(commas.len() + 1);
                let mut from = i + 1;
                for &c in &commas {
                    parts.push(word[from..c].to_owned());
                    from = c + 1;
                }
                parts.push(word[from..close].to_owned());
                parts
            } else if let Some(seq) = brace_sequence(inner, limit) {
                seq
            } else {
                i += 1;
                continue;
            };
            let (prefix, suffix) = (&word[..i], &word[close + 1..]);
            for alt in alternatives {
                if !brace_expand(&format!("{prefix}{alt}{suffix}"), out, limit) {
                    return false;
                }
            }
            return true;
        }
        i += 1;
    }
    if out.len() >= limit {
        return false;
    }
    out.push(word.to_owned());
    true
}

/// `{1..5}`, `{a..e}`, `{10..1..3}`: the sequence, when short enough.
pub(super) fn brace_sequence(inner: &str, limit: usize) -> Option<Vec<String>> {
    let mut parts = inner.split("..");
    let (from, to) = (parts.next()?, parts.next()?);
    let step: i64 = match parts.next() {
        Some(s) => s.parse().ok()?,
        None => 1,
    };
    if parts.next().is_some() {
        return None;
    }
    let step = step.unsigned_abs().max(1);
    let range = |a: i64, b: i64| -> Option<Vec<i64>> {
        let n = a.abs_diff(b) / step + 1;
        if n > limit as u64 {
            return None;
        }
        let mut v = Vec::with_capacity(n as usize);
        let mut x = a;
        for _ in 0..n {
            v.push(x);
            x = if a <= b {
                x + step as i64
            } else {
                x - step as i64
            };
        }
        Some(v)
    };
    if let (Ok(a), Ok(b)) = (from.parse::<i64>(), to.parse::<i64>()) {
        return Some(range(a, b)?.into_iter().map(|x| x.to_string()).collect());
    }
    let (mut fa, mut fb) = (from.chars(), to.chars());
    match (fa.next(), fa.next(), fb.next(), fb.next()) {
        (Some(a), None, Some(b), None) if a.is_ascii_alphabetic() && b.is_ascii_alphabetic() => {
            Some(
                range(a as i64, b as i64)?
                    .into_iter()
                    .filter_map(|x| u8::try_from(x).ok().map(|c| (c as char).to_string()))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// Unquoted text that the shell would expand: a glob (`*`, `?`, `[…]`) or a
/// brace expansion (`{a,b}`, `{1..3}`).
pub(super) fn has_glob_or_brace(s: &str) -> bool {
    has_glob(s) || has_brace(s)
}

/// A glob: `*`, `?` or a bracket expression.
pub(super) fn has_glob(s: &str) -> bool {
    if s.contains(['*', '?']) {
        return true;
    }
    match s.find('[') {
        Some(open) => s[open + 1..].contains(']'),
        None => false,
    }
}

/// A brace group with a `,` or `..` in it (one pass, any nesting).
pub(super) fn has_brace(s: &str) -> bool {
    let b = s.as_bytes();
    // For each open group: whether it has a separator yet.
    let mut open: Vec<bool> = Vec::new();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => open.push(false),
            b',' => {
                if let Some(top) = open.last_mut() {
                    *top = true;
                }
            }
            b'.' if b.get(i + 1) == Some(&b'.') => {
                if let Some(top) = open.last_mut() {
                    *top = true;
                }
            }
            b'}' if open.pop() == Some(true) => return true,
            _ => {}
        }
    }
    false
}

pub(super) fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// Whether an arithmetic command (`keyword` empty) or arithmetic `for`
/// (its source in `span`) is provably real `((…))` arithmetic that cannot
/// run code: it starts with two adjacent `((` (after `keyword`), runs to
/// the `))` bash would end it at, uses only operator characters (no `[`,
/// `$`, backtick, quote, backslash), and holds exactly the expressions
/// parsed.
pub(super) fn plain_arithmetic(span: &str, keyword: &str, exprs: &[&str]) -> bool {
    let Some(rest) = span.strip_prefix(keyword) else {
        return false;
    };
    let rest = if keyword.is_empty() {
        rest
    } else {
        rest.trim_start_matches([' ', '\t'])
    };
    let Some(body) = rest.strip_prefix("((") else {
        return false;
    };
    let bytes = body.as_bytes();
    let mut depth = 0usize;
    let mut end = None;
    for (i, &c) in bytes.iter().enumerate() {
        let safe = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b' ' | b'\t'
                    | b'_'
                    | b'+'
                    | b'-'
                    | b'*'
                    | b'/'
                    | b'%'
                    | b'<'
                    | b'>'
                    | b'='
                    | b'!'
                    | b'&'
                    | b'|'
                    | b'^'
                    | b'~'
                    | b'?'
                    | b':'
                    | b','
                    | b'('
                    | b')'
            )
            || (c == b';' && !keyword.is_empty());
        if !safe {
            return false;
        }
        match c {
            b'(' => depth += 1,
            b')' if depth > 0 => depth -= 1,
            b')' => {
                if bytes.get(i + 1) == Some(&b')') {
                    end = Some(i);
                    break;
                }
                return false;
            }
            _ => {}
        }
    }
    let Some(end) = end else {
        return false;
    };
    // Every byte up to `end` is ASCII, so these are character boundaries.
    let inner = &body[..end];
    if keyword.is_empty() {
        // The command ends right after the `))`.
        return body[end + 2..].trim().is_empty() && exprs.len() == 1 && inner.trim() == exprs[0];
    }
    let pieces: Vec<&str> = inner.split(';').map(str::trim).collect();
    let parsed: Vec<&str> = exprs.iter().copied().filter(|e| !e.is_empty()).collect();
    let written: Vec<&str> = pieces.iter().copied().filter(|e| !e.is_empty()).collect();
    pieces.len() == 3 && parsed == written
}

/// Whether text that bash evaluates as arithmetic expands something
/// whose value the analysis cannot see: a substitution, or a parameter
/// other than the ones that always hold a number (`$?`, `$#`, `$$`, `$!`).
pub(super) fn expands_unseen_value(text: &str) -> bool {
    if text.contains('`') {
        return true;
    }
    let b = text.as_bytes();
    b.iter()
        .enumerate()
        .any(|(i, &c)| c == b'$' && !matches!(b.get(i + 1), Some(b'?' | b'#' | b'$' | b'!')))
}

/// Whether the offset, length or subscript of `${…}` (the text inside
/// the braces) expands a value: bash evaluates it as arithmetic.
pub(super) fn arithmetic_part_expands(inner: &str) -> bool {
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'#' || *b == b'!')
        .count();
    let mut rest = &inner[name_len..];
    if let Some(sub) = rest.strip_prefix('[') {
        let (sub, after) = sub.split_once(']').unwrap_or((sub, ""));
        if expands_unseen_value(sub) {
            return true;
        }
        rest = after;
    }
    match rest.strip_prefix(':') {
        Some(r) if !r.starts_with(['-', '=', '?', '+']) => expands_unseen_value(r),
        _ => false,
    }
}

/// `-eq`, `-ne`, `-lt`, `-le`, `-gt`, `-ge`: both sides are arithmetic.
pub(super) fn is_arithmetic_test(op: &ast::BinaryPredicate) -> bool {
    use ast::BinaryPredicate as B;
    matches!(
        op,
        B::ArithmeticEqualTo
            | B::ArithmeticNotEqualTo
            | B::ArithmeticLessThan
            | B::ArithmeticLessThanOrEqualTo
            | B::ArithmeticGreaterThan
            | B::ArithmeticGreaterThanOrEqualTo
    )
}

/// Whether arithmetic text may evaluate a variable's value: it names one
/// (bash evaluates the value of a name as an expression) or expands one.
pub(super) fn names_a_variable(text: &str) -> bool {
    text.bytes()
        .any(|b| b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'`'))
}

/// A value that stays harmless when bash evaluates it as arithmetic or as
/// a name: no subscript, expansion or escape in it.
pub(super) fn value_is_inert(value: &str) -> bool {
    !value.contains(['[', '$', '`', '\\'])
}

/// Whether word `i` ends a `find -exec`: `;`, or `+` right after `{}`
/// (find takes any other `+` as an argument of the command).
pub(super) fn ends_exec(args: &[Arg], i: usize) -> bool {
    let w = &args[i];
    w.literal
        && (w.value == ";"
            || (w.value == "+" && i > 0 && args[i - 1].literal && args[i - 1].value == "{}"))
}

/// Whether the inside of `${…}` makes bash evaluate a value as code:
/// indirection (`${!x}`, whose value may name `a[$(…)]`), prompt expansion
/// (`${x@P}`), or a subscript or offset (arithmetic) naming a variable.
pub(super) fn evaluates_value(inner: &str) -> bool {
    if inner.starts_with('!') && !inner.ends_with(['*', '@']) {
        return true;
    }
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let mut rest = &inner[name_len..];
    if rest.contains("@P") {
        return true;
    }
    if let Some(sub) = rest.strip_prefix('[') {
        let (sub, after) = sub.split_once(']').unwrap_or((sub, ""));
        if !matches!(sub, "@" | "*") && names_a_variable(sub) {
            return true;
        }
        rest = after;
    }
    // `${x:offset:length}`, but not `${x:-word}` and friends.
    match rest.strip_prefix(':') {
        Some(r) if !r.starts_with(['-', '=', '?', '+']) => names_a_variable(r),
        _ => false,
    }
}

/// A read target whose first character is literal and not `/`: it cannot
/// be a `/dev/tcp/…` path, whatever it expands to.
pub(super) fn starts_with_literal_name(raw: &str) -> bool {
    raw.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '~' | '-'))
}

#[cfg(test)]
mod tests {
    use super::brace_expand;

    fn expand(word: &str) -> Vec<String> {
        let mut out = Vec::new();
        assert!(brace_expand(word, &mut out, 256), "{word}");
        out
    }

    /// What bash 5.2 prints for `echo WORD`.
    #[test]
    fn braces_expand_as_bash_does() {
        assert_eq!(expand("{a,b}"), ["a", "b"]);
        assert_eq!(expand("x{1..3}"), ["x1", "x2", "x3"]);
        // A `{` that never closes stays in every word.
        assert_eq!(expand("{{a,b}"), ["{a", "{b"]);
        assert_eq!(expand("x{y{a,b}"), ["x{ya", "x{yb"]);
        assert_eq!(expand("{a,b}{"), ["a{", "b{"]);
        assert_eq!(expand("{{/../.env,README.md}"), ["{/../.env", "{README.md"]);
    }
}
