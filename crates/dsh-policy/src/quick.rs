//! A fast path for the plainest command lines: `git status`, `ls -la src/
//! | head -20`, `cargo test -p x -- --nocapture 2>&1 | tail -5`.
//!
//! Most command lines an agent sends are simple commands of plain words
//! joined by `|`, `&&`, `||` and `;`, with a few redirections. For those,
//! this module builds the same syntax tree brush-parser would, without its
//! general machinery (which tries every word as an assignment, a reserved
//! word, an expansion): a decision is then dominated by the policy, not by
//! parsing. Anything outside that subset — any `$`, backquote, backslash,
//! parenthesis, `#`, `!`, a lone `&`, a newline, a word that looks like an
//! assignment or a reserved word, a quote that does not close, a byte that
//! is not printable ASCII — returns `None`, and the line goes to
//! brush-parser. The subset is chosen so that bash splits it exactly as
//! this module does: a property test checks that both parsers give the
//! same analysis on generated lines.

use brush_parser::ast;

/// Reserved words and the words bash reads as syntax in command position.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for",
    "in", "select", "function", "time", "coproc", "{", "}", "[[", "]]", "!",
];

/// Bytes a word may hold outside quotes.
fn word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'-' | b'_'
                | b'.'
                | b'/'
                | b':'
                | b','
                | b'+'
                | b'@'
                | b'%'
                | b'^'
                | b'='
                | b'~'
                | b'*'
                | b'?'
                | b'['
                | b']'
                | b'{'
                | b'}'
        )
}

enum Token {
    Word(String),
    /// `>`, `>>`, `<` with an optional descriptor, or `N>&M`.
    Redirect(Option<i32>, ast::IoFileRedirectKind),
    /// `&>` (false) or `&>>` (true).
    Both(bool),
    And,
    Or,
    Pipe,
    Semi,
}

fn tokens(text: &str) -> Option<Vec<Token>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' => i += 1,
            b'|' if b.get(i + 1) == Some(&b'|') => {
                out.push(Token::Or);
                i += 2;
            }
            b'|' if b.get(i + 1) == Some(&b'&') => return None,
            b'|' => {
                out.push(Token::Pipe);
                i += 1;
            }
            b'&' if b.get(i + 1) == Some(&b'&') => {
                out.push(Token::And);
                i += 2;
            }
            b'&' if b.get(i + 1) == Some(&b'>') => {
                let append = b.get(i + 2) == Some(&b'>');
                out.push(Token::Both(append));
                i += if append { 3 } else { 2 };
            }
            b';' if matches!(b.get(i + 1), Some(b';' | b'&')) => return None,
            b';' => {
                out.push(Token::Semi);
                i += 1;
            }
            b'<' | b'>' => {
                let (kind, len) = redirect_at(b, i)?;
                out.push(Token::Redirect(None, kind));
                i += len;
            }
            b'0'..=b'9' if matches!(b.get(i + 1), Some(b'<' | b'>')) && starts_token(b, i) => {
                let (kind, len) = redirect_at(b, i + 1)?;
                out.push(Token::Redirect(Some(i32::from(c - b'0')), kind));
                i += 1 + len;
            }
            _ => {
                let (word, len) = word_at(b, i)?;
                out.push(Token::Word(word));
                i += len;
            }
        }
    }
    Some(out)
}

/// Whether a token may start at `i` (after a blank or an operator).
fn starts_token(b: &[u8], i: usize) -> bool {
    i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'|' | b'&' | b';')
}

/// A redirection operator at `i`: `<`, `>`, `>>`; `>&` is taken only
/// before a descriptor number (`2>&1`), which the word after checks.
fn redirect_at(b: &[u8], i: usize) -> Option<(ast::IoFileRedirectKind, usize)> {
    use ast::IoFileRedirectKind as K;
    match (b[i], b.get(i + 1)) {
        (b'>', Some(b'>')) => Some((K::Append, 2)),
        (b'>', Some(b'&')) => Some((K::DuplicateOutput, 2)),
        (b'>', Some(b'|')) | (b'<', Some(b'<' | b'>' | b'&' | b'(')) | (b'>', Some(b'(')) => None,
        (b'>', _) => Some((K::Write, 1)),
        (b'<', _) => Some((K::Read, 1)),
        _ => None,
    }
}

/// A word at `i`: plain bytes and closed quotes, up to a blank or an
/// operator.
fn word_at(b: &[u8], start: usize) -> Option<(String, usize)> {
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                let close = b[i + 1..].iter().position(|&c| c == b'\'')?;
                let inner = &b[i + 1..i + 1 + close];
                if !inner.iter().all(|&c| (0x20..0x7f).contains(&c)) {
                    return None;
                }
                i += close + 2;
            }
            b'"' => {
                let close = b[i + 1..].iter().position(|&c| c == b'"')?;
                let inner = &b[i + 1..i + 1 + close];
                if !inner
                    .iter()
                    .all(|&c| (0x20..0x7f).contains(&c) && !matches!(c, b'$' | b'`' | b'\\' | b'!'))
                {
                    return None;
                }
                i += close + 2;
            }
            b' ' | b'\t' | b'|' | b'&' | b';' | b'<' | b'>' => break,
            c if word_byte(c) => i += 1,
            _ => return None,
        }
    }
    if i == start {
        return None;
    }
    // Digits right before `<` or `>` are a descriptor number (`22>f`).
    if matches!(b.get(i), Some(b'<' | b'>')) && b[start..i].iter().all(u8::is_ascii_digit) {
        return None;
    }
    // The parts between quotes are plain bytes, so the text is ASCII.
    let text = std::str::from_utf8(&b[start..i]).ok()?;
    Some((text.to_owned(), i - start))
}

/// Whether a word would be read as an assignment (`NAME=`, `NAME+=`,
/// `NAME[…]=`) anywhere in a simple command.
fn looks_like_assignment(word: &str) -> bool {
    let name_end = word
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b == b'_'))
        .unwrap_or(word.len());
    if name_end == 0 || word.as_bytes()[0].is_ascii_digit() {
        return false;
    }
    matches!(word.as_bytes().get(name_end), Some(b'=' | b'+' | b'['))
}

fn word(value: String) -> ast::Word {
    ast::Word { value, loc: None }
}

/// The syntax tree of a command line in the plain subset, or `None`.
pub(crate) fn parse(text: &str) -> Option<ast::Program> {
    if text.len() > 4096 {
        return None;
    }
    let tokens = tokens(text)?;
    let mut items: Vec<ast::CompoundListItem> = Vec::new();
    let mut and_or: Option<ast::AndOrList> = None;
    let mut pending: Option<fn(ast::Pipeline) -> ast::AndOr> = None;
    let mut pipeline: Vec<ast::Command> = Vec::new();
    let mut command = Command::default();
    let mut iter = tokens.into_iter().peekable();
    loop {
        let token = iter.next();
        match token {
            Some(Token::Word(w)) => command.word(w)?,
            Some(Token::Redirect(fd, kind)) => {
                let Some(Token::Word(target)) = iter.next() else {
                    return None;
                };
                let target = if matches!(kind, ast::IoFileRedirectKind::DuplicateOutput) {
                    if !target.bytes().all(|b| b.is_ascii_digit()) || target.is_empty() {
                        return None;
                    }
                    ast::IoFileRedirectTarget::Duplicate(word(target))
                } else {
                    if looks_like_assignment(&target) || target.starts_with('~') {
                        return None;
                    }
                    ast::IoFileRedirectTarget::Filename(word(target))
                };
                command.redirect(ast::IoRedirect::File(fd, kind, target));
            }
            Some(Token::Both(append)) => {
                let Some(Token::Word(target)) = iter.next() else {
                    return None;
                };
                if target.starts_with('~') {
                    return None;
                }
                command.redirect(ast::IoRedirect::OutputAndError(word(target), append));
            }
            Some(Token::Pipe) => {
                pipeline.push(std::mem::take(&mut command).finish()?);
            }
            Some(Token::And | Token::Or | Token::Semi) | None => {
                pipeline.push(std::mem::take(&mut command).finish()?);
                let p = ast::Pipeline {
                    timed: None,
                    bang: false,
                    seq: std::mem::take(&mut pipeline),
                };
                match (pending.take(), and_or.as_mut()) {
                    (Some(op), Some(list)) => list.additional.push(op(p)),
                    (None, None) => {
                        and_or = Some(ast::AndOrList {
                            first: p,
                            additional: Vec::new(),
                        })
                    }
                    _ => return None,
                }
                match token {
                    Some(Token::And) => pending = Some(ast::AndOr::And),
                    Some(Token::Or) => pending = Some(ast::AndOr::Or),
                    _ => {
                        let list = and_or.take()?;
                        items.push(ast::CompoundListItem(
                            list,
                            ast::SeparatorOperator::Sequence,
                        ));
                        // A trailing `;` ends the line.
                        if matches!(token, Some(Token::Semi)) && iter.peek().is_none() {
                            break;
                        }
                    }
                }
                if token.is_none() {
                    break;
                }
            }
        }
    }
    Some(ast::Program {
        complete_commands: vec![ast::CompoundList(items)],
    })
}

/// A simple command being read.
#[derive(Default)]
struct Command {
    prefix: Vec<ast::CommandPrefixOrSuffixItem>,
    name: Option<ast::Word>,
    suffix: Vec<ast::CommandPrefixOrSuffixItem>,
}

impl Command {
    fn word(&mut self, w: String) -> Option<()> {
        if looks_like_assignment(&w) || w.starts_with('#') {
            return None;
        }
        if self.name.is_none() {
            if RESERVED.contains(&w.as_str()) || w.contains(['{', '}']) {
                return None;
            }
            self.name = Some(word(w));
        } else {
            if matches!(w.as_str(), "{" | "}") {
                return None;
            }
            self.suffix
                .push(ast::CommandPrefixOrSuffixItem::Word(word(w)));
        }
        Some(())
    }

    fn redirect(&mut self, r: ast::IoRedirect) {
        let item = ast::CommandPrefixOrSuffixItem::IoRedirect(r);
        if self.name.is_none() {
            self.prefix.push(item);
        } else {
            self.suffix.push(item);
        }
    }

    /// The command, or `None` when it has no name (`&& ls`, `> f`).
    fn finish(self) -> Option<ast::Command> {
        let name = self.name?;
        Some(ast::Command::Simple(ast::SimpleCommand {
            prefix: (!self.prefix.is_empty()).then_some(ast::CommandPrefix(self.prefix)),
            word_or_name: Some(name),
            suffix: (!self.suffix.is_empty()).then_some(ast::CommandSuffix(self.suffix)),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use crate::shell::{analyze, analyze_without_quick};
    use proptest::prelude::*;

    #[test]
    fn everyday_lines_take_the_fast_path() {
        for line in [
            "git status",
            "git diff --stat HEAD~1 | head -20",
            "cargo test -p dsh-policy -- --nocapture",
            "cd crates/dsh && cargo build --release 2>&1 | tail -5",
            "rg -n 'fn main' --type rust",
            "find . -name '*.rs' -not -path './target/*' | xargs wc -l",
            "git add -A && git commit -m 'fix: handle empty input'",
            "ls src; cat \"a b\" > out.txt",
        ] {
            assert!(parse(line).is_some(), "{line}");
        }
        for line in [
            "echo $HOME",
            "a=1 ls",
            "ls &",
            "ls # x",
            "if true; then ls; fi",
            "ls\nrm x",
            "echo `id`",
            "echo \"$(id)\"",
            "cat <(ls)",
            "ls >| f",
            "ls |& cat",
            "{ ls; }",
            "ls 'unclosed",
            "é",
        ] {
            assert!(parse(line).is_none(), "{line:?}");
        }
    }

    /// Words and operators, everyday and tricky, that the generator joins.
    const PIECES: &[&str] = &[
        "ls", "git", "status", "-la", "--x=y", "a=b", "x+=1", "'a b'", "\"c d\"", "*.rs", "{a,b}",
        "{}", "~", "~/x", "2", "if", "then", "fi", "for", "do", "done", "{", "}", "[[", "]]", "!",
        "time", "|", "||", "&&", ";", ";;", "&", "2>&1", ">&2", ">", ">>", "<", "&>", "&>>", "2>",
        "<>", ">|", "#", "$x", "\\", "(", ")", "'", "\"", "rm", "-rf", "/", "a'b'c", "x\"y\"",
        "a[1]", "b]", "@", "%", "^", ":", "...", "--", "-",
    ];

    /// What the fast path takes, mostly: plain words, quotes, the
    /// operators and redirections it reads.
    const PLAIN: &[&str] = &[
        "ls", "git", "status", "-la", "--x=y", "'a b'", "\"c d\"", "*.rs", "{a,b}", "{}", "~/x",
        "2", "|", "||", "&&", ";", "2>&1", ">&2", ">", ">>", "<", "&>", "&>>", "2>", "rm", "-rf",
        "/", "a'b'c", "x\"y\"", "b]", "@", "%", ":", "--", "-", "cat", "out.txt", "[x]", "a?",
        "if", "a=b", "#",
    ];

    fn join(pieces: &[&str], picks: Vec<(usize, usize)>) -> String {
        let mut line = String::new();
        for (k, sep) in picks {
            line.push_str(pieces[k % pieces.len()]);
            line.push_str(["", " ", "  "][sep]);
        }
        line
    }

    fn same(line: &str) -> Result<(), TestCaseError> {
        if parse(line).is_some() {
            let quick = format!("{:?}", analyze(line).parts);
            let brush = format!("{:?}", analyze_without_quick(line).parts);
            prop_assert_eq!(quick, brush, "line {:?}", line);
        }
        Ok(())
    }

    #[test]
    fn the_plain_generator_mostly_takes_the_fast_path() {
        let mut taken = 0;
        for n in 0..400usize {
            let picks: Vec<(usize, usize)> = (0..6)
                .map(|k| ((n * 7 + k * 13) % PLAIN.len(), 1))
                .collect();
            taken += usize::from(parse(&join(PLAIN, picks)).is_some());
        }
        assert!(taken > 100, "only {taken} of 400 lines took the fast path");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Plain lines: the fast path takes most of them.
        #[test]
        fn plain_lines_parse_as_brush_does(
            picks in proptest::collection::vec((0..PLAIN.len(), 0..3usize), 1..12)
        ) {
            same(&join(PLAIN, picks))?;
        }

        /// Whatever the fast path accepts, brush-parser accepts too and the
        /// analysis is the same.
        #[test]
        fn the_fast_path_parses_as_brush_does(
            picks in proptest::collection::vec((0..PIECES.len(), 0..3usize), 1..10)
        ) {
            same(&join(PIECES, picks))?;
        }
    }
}
