//! Permission rules: `Tool` or `Tool(specifier)`, in an allow, ask or deny list.

use crate::path::PathPattern;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// The name of the shell tool whose specifiers are command patterns.
pub(crate) const SHELL_TOOL: &str = "bash";

/// Which list a rule sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleList {
    /// Calls it matches run without asking.
    Allow,
    /// Calls it matches need approval.
    Ask,
    /// Calls it matches are refused.
    Deny,
}

impl RuleList {
    /// `"allow"`, `"ask"` or `"deny"`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleList::Allow => "allow",
            RuleList::Ask => "ask",
            RuleList::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A rule that could not be parsed: names the rule and says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed rule {rule:?}: {problem}")]
pub struct RuleError {
    rule: String,
    problem: String,
}

impl RuleError {
    fn new(rule: &str, problem: impl Into<String>) -> Self {
        RuleError {
            rule: rule.to_owned(),
            problem: problem.into(),
        }
    }

    /// The rule as written.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// What is wrong with it.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

/// One permission rule: `Tool` (every call of the tool) or `Tool(specifier)`.
///
/// * Tool names compare case-insensitively: `Bash(npm test:*)` and
///   `bash(npm test:*)` are the same rule.
/// * For `Bash` the specifier is a [command pattern](crate#command-patterns),
///   matched against each simple command of a shell command line.
/// * For any other tool the specifier is a [path glob](crate#path-globs),
///   matched against the call's path argument (`file_path`, `path`,
///   `notebook_path` or `filePath`). `Edit(glob)` and `Write(glob)` also
///   match every file-edit tool and every file a bash command writes to.
///
/// ```
/// use dsh_policy::Rule;
///
/// let rule: Rule = "Bash(npm test:*)".parse().unwrap();
/// assert_eq!(rule.tool(), "bash");
/// assert_eq!(rule.specifier(), Some("npm test:*"));
/// assert_eq!(rule.to_string(), "Bash(npm test:*)");
/// assert!("Bash(npm test".parse::<Rule>().is_err());
/// ```
#[derive(Clone)]
pub struct Rule {
    text: String,
    tool: String,
    specifier: Option<String>,
    matcher: Matcher,
}

#[derive(Clone, Debug)]
pub(crate) enum Matcher {
    /// No specifier: every call of the tool.
    Any,
    /// A bash command pattern.
    Command(CommandPattern),
    /// A path glob for any other tool.
    Path(PathPattern),
    /// For another server's tool (`mcp__…`): the specifier read both ways,
    /// since what it matches depends on what the tool's arguments mean — a
    /// command pattern for a shell argument, a path glob for a path.
    Argument {
        command: Option<Box<CommandPattern>>,
        path: Option<Box<PathPattern>>,
    },
}

impl Rule {
    /// Parses `Tool` or `Tool(specifier)`.
    ///
    /// # Errors
    /// A [`RuleError`] naming the rule: an empty or invalid tool name, a
    /// missing `)`, an empty specifier, or `:*` anywhere but at the end of a
    /// command pattern.
    pub fn parse(text: &str) -> Result<Rule, RuleError> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(RuleError::new(text, "empty rule"));
        }
        let (name, specifier) = match trimmed.find('(') {
            None => {
                if trimmed.contains(')') {
                    return Err(RuleError::new(text, "\")\" without \"(\""));
                }
                (trimmed, None)
            }
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(RuleError::new(
                        text,
                        "missing closing \")\" at the end of the rule",
                    ));
                };
                (trimmed[..open].trim_end(), Some(inner))
            }
        };
        if name.is_empty() {
            return Err(RuleError::new(text, "missing tool name before \"(\""));
        }
        // `mcp__server__*`: every tool of a server, as Claude Code writes it.
        let plain = match name.strip_suffix("__*") {
            Some(server) if name.starts_with("mcp__") && server.len() > "mcp_".len() => server,
            _ => name,
        };
        if let Some(bad) = plain
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
        {
            return Err(RuleError::new(
                text,
                format!("invalid character {bad:?} in tool name {name:?}"),
            ));
        }
        let tool = name.to_ascii_lowercase();
        let matcher = match specifier {
            None => Matcher::Any,
            Some(spec) => {
                if spec.trim().is_empty() {
                    return Err(RuleError::new(
                        text,
                        "empty specifier; write the tool name alone to match every call",
                    ));
                }
                if tool == SHELL_TOOL {
                    Matcher::Command(
                        CommandPattern::parse(spec).map_err(|p| RuleError::new(text, p))?,
                    )
                } else if tool.starts_with("mcp__") {
                    let path = PathPattern::parse(spec);
                    let command = CommandPattern::parse(spec).ok().map(Box::new);
                    match (command, path) {
                        (None, Err(p)) => return Err(RuleError::new(text, p)),
                        (command, path) => Matcher::Argument {
                            command,
                            path: path.ok().map(Box::new),
                        },
                    }
                } else {
                    Matcher::Path(PathPattern::parse(spec).map_err(|p| RuleError::new(text, p))?)
                }
            }
        };
        Ok(Rule {
            text: trimmed.to_owned(),
            tool,
            specifier: specifier.map(str::to_owned),
            matcher,
        })
    }

    /// `Tool`: every call of a tool.
    ///
    /// # Errors
    /// The name is empty or has characters a tool name cannot have.
    pub fn tool_name(tool: &str) -> Result<Rule, RuleError> {
        Rule::parse(tool)
    }

    /// `Bash(command)` matching exactly this simple command (wildcard
    /// characters in it are escaped, so they match only themselves).
    pub fn bash_exact(command: &str) -> Rule {
        let normalised = normalise_space(command);
        let mut escaped = String::with_capacity(normalised.len() + 8);
        for c in normalised.chars() {
            if c == '*' || c == '\\' {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        Rule {
            text: format!("Bash({escaped})"),
            tool: SHELL_TOOL.to_owned(),
            specifier: Some(escaped),
            matcher: Matcher::Command(CommandPattern::exact(normalised)),
        }
    }

    /// `Edit(//path)` matching exactly one file (an absolute path).
    pub fn edit_path(path: &str) -> Rule {
        let specifier = format!("/{path}");
        Rule {
            text: format!("Edit({specifier})"),
            tool: "edit".to_owned(),
            specifier: Some(specifier),
            matcher: Matcher::Path(PathPattern::literal(path)),
        }
    }

    /// The rule with a `/path` pattern anchored at `project`: the
    /// directory a settings file's rules are relative to (the one holding
    /// its `.claude`). Other rules are returned as they are.
    pub fn with_root(mut self, project: &Path) -> Rule {
        match &mut self.matcher {
            Matcher::Path(p) => p.set_root(project),
            Matcher::Argument { path: Some(p), .. } => p.set_root(project),
            _ => {}
        }
        self
    }

    /// This rule of a proxied tool as a rule of `tool` (`bash`, `read` or
    /// `edit`), for judging the tool's argument of that kind: a tool-wide
    /// rule covers every such argument, a specifier the argument it
    /// matches. `None` when the specifier cannot be read that way. The
    /// text stays the rule as written, so a decision names it.
    pub(crate) fn as_rule_of(&self, tool: &str) -> Option<Rule> {
        let matcher = match &self.matcher {
            Matcher::Any => Matcher::Any,
            Matcher::Argument {
                command: Some(c), ..
            } if tool == SHELL_TOOL => Matcher::Command((**c).clone()),
            Matcher::Argument { path: Some(p), .. } if tool != SHELL_TOOL => {
                Matcher::Path((**p).clone())
            }
            _ => return None,
        };
        Some(Rule {
            text: self.text.clone(),
            tool: tool.to_owned(),
            specifier: self.specifier.clone(),
            matcher,
        })
    }

    /// Where a `/path` pattern is anchored, when it was given a project.
    pub fn root(&self) -> Option<&Path> {
        match &self.matcher {
            Matcher::Path(p) => p.root(),
            Matcher::Argument { path: Some(p), .. } => p.root(),
            _ => None,
        }
    }

    /// The tool name, lower-cased.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The specifier between the parentheses, when there is one.
    pub fn specifier(&self) -> Option<&str> {
        self.specifier.as_deref()
    }

    /// The rule as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// Whether the rule has no specifier (matches every call of its tool).
    pub fn is_tool_wide(&self) -> bool {
        matches!(self.matcher, Matcher::Any)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Rule({})", self.text)
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool && self.specifier == other.specifier && self.root() == other.root()
    }
}

impl Eq for Rule {}

impl FromStr for Rule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Rule::parse(s)
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Rule::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The three rule lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRules {
    /// Calls these match run without asking (unless a deny or ask rule matches).
    #[serde(default)]
    pub allow: Vec<Rule>,
    /// Calls these match need approval (unless a deny rule matches).
    #[serde(default)]
    pub ask: Vec<Rule>,
    /// Calls these match are refused.
    #[serde(default)]
    pub deny: Vec<Rule>,
}

impl PermissionRules {
    /// No rules.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses the three lists.
    ///
    /// # Errors
    /// The first malformed rule, named, with its list.
    pub fn parse<A, B, C>(allow: A, ask: B, deny: C) -> Result<Self, RuleError>
    where
        A: IntoIterator,
        A::Item: AsRef<str>,
        B: IntoIterator,
        B::Item: AsRef<str>,
        C: IntoIterator,
        C::Item: AsRef<str>,
    {
        fn list<I>(items: I) -> Result<Vec<Rule>, RuleError>
        where
            I: IntoIterator,
            I::Item: AsRef<str>,
        {
            items.into_iter().map(|s| Rule::parse(s.as_ref())).collect()
        }
        Ok(PermissionRules {
            allow: list(allow)?,
            ask: list(ask)?,
            deny: list(deny)?,
        })
    }

    /// The rules of one list.
    pub fn list(&self, list: RuleList) -> &[Rule] {
        match list {
            RuleList::Allow => &self.allow,
            RuleList::Ask => &self.ask,
            RuleList::Deny => &self.deny,
        }
    }

    /// Adds a rule to a list (no-op when an equal rule is already there).
    pub fn add(&mut self, list: RuleList, rule: Rule) {
        let rules = match list {
            RuleList::Allow => &mut self.allow,
            RuleList::Ask => &mut self.ask,
            RuleList::Deny => &mut self.deny,
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }

    /// Whether all three lists are empty.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }
}

/// Collapses runs of white space to one space and trims.
pub(crate) fn normalise_space(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// One piece of a command pattern while it is parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Seg {
    Lit(String),
    Star,
}

/// A bash command pattern: `*` matches any characters (spaces too); a
/// trailing `:*` or ` *` means "this prefix, then a word boundary".
///
/// Matching is linear in the text: the literals between stars are found
/// leftmost, one after another, which finds a match whenever one exists.
#[derive(Clone, Debug)]
pub(crate) struct CommandPattern {
    /// The literal the text must start with (empty when the pattern starts with `*`).
    head: String,
    /// Whether a `*` follows the head.
    starred: bool,
    /// Literals between stars, in order.
    middles: Vec<String>,
    /// The literal after the last star, when the pattern does not end with
    /// one, and the same followed by a space (a prefix pattern's boundary).
    last: Option<(String, String)>,
    /// Prefix form: the pattern, then the end or a space and anything.
    prefix: bool,
}

/// Bytes after which a word may start, for the checks that look for a
/// command anywhere in a text: white space, a path separator (`/bin/rm`),
/// shell operators and quotes (`x;rm`, `'rm …'`), `=` (`--exec=rm`), and
/// the `!` and `:` that editors and pagers put before a shell command
/// (`vim -c '!rm x'`, `:!rm x`).
fn starts_word_after(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b'/'
            | b';'
            | b'&'
            | b'|'
            | b'('
            | b'`'
            | b'\''
            | b'"'
            | b'{'
            | b'='
            | b'!'
            | b':'
    )
}

impl CommandPattern {
    fn exact(text: String) -> Self {
        CommandPattern {
            head: text,
            starred: false,
            middles: Vec::new(),
            last: None,
            prefix: false,
        }
    }

    fn parse(spec: &str) -> Result<Self, String> {
        let normalised = normalise_space(spec);
        // Tokenise: `\*` and `\\` are escapes; an unescaped `*` is a wildcard.
        let mut segs: Vec<Seg> = Vec::new();
        let mut lit = String::new();
        let mut chars = normalised.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\\' if matches!(chars.peek(), Some('*') | Some('\\')) => {
                    if let Some(next) = chars.next() {
                        lit.push(next);
                    }
                }
                '*' => {
                    if !lit.is_empty() {
                        segs.push(Seg::Lit(std::mem::take(&mut lit)));
                    }
                    if segs.last() != Some(&Seg::Star) {
                        segs.push(Seg::Star);
                    }
                }
                _ => lit.push(c),
            }
        }
        if !lit.is_empty() {
            segs.push(Seg::Lit(lit));
        }
        // A `:*` (literal ending in ':' then a star) anywhere but at the end is an error.
        for (i, seg) in segs.iter().enumerate() {
            if let Seg::Lit(l) = seg {
                if l.ends_with(':') && segs.get(i + 1) == Some(&Seg::Star) && i + 2 < segs.len() {
                    return Err("\":*\" is only allowed at the end of a command pattern".into());
                }
            }
        }
        let mut prefix = false;
        if segs.len() >= 2 && segs.last() == Some(&Seg::Star) {
            let n = segs.len();
            if let Seg::Lit(l) = &mut segs[n - 2] {
                if let Some(stripped) = l.strip_suffix(':') {
                    *l = stripped.trim_end().to_owned();
                    prefix = true;
                } else if let Some(stripped) = l.strip_suffix(' ') {
                    *l = stripped.to_owned();
                    prefix = true;
                }
            }
            if prefix {
                segs.pop();
                if segs.last() == Some(&Seg::Lit(String::new())) {
                    segs.pop();
                }
            }
        }
        if segs.is_empty() {
            return Err("empty command pattern".into());
        }
        let mut rest = &segs[..];
        let head = match rest.first() {
            Some(Seg::Lit(l)) => {
                rest = &rest[1..];
                l.clone()
            }
            _ => String::new(),
        };
        let starred = !rest.is_empty();
        let ends_with_star = rest.last() == Some(&Seg::Star);
        let mut middles: Vec<String> = rest
            .iter()
            .filter_map(|s| match s {
                Seg::Lit(l) => Some(l.clone()),
                Seg::Star => None,
            })
            .collect();
        let last = if ends_with_star {
            None
        } else {
            middles.pop().map(|l| {
                let spaced = format!("{l} ");
                (l, spaced)
            })
        };
        Ok(CommandPattern {
            head,
            starred,
            middles,
            last,
            prefix,
        })
    }

    /// Whether `text` (a simple command, words joined by single spaces) matches.
    pub(crate) fn matches(&self, text: &str) -> bool {
        let Some(mut rest) = text.strip_prefix(self.head.as_str()) else {
            return false;
        };
        if !self.starred {
            return rest.is_empty() || (self.prefix && rest.starts_with(' '));
        }
        for lit in &self.middles {
            match rest.find(lit.as_str()) {
                Some(at) => rest = &rest[at + lit.len()..],
                None => return false,
            }
        }
        match &self.last {
            None => true,
            // The last literal ends the text, or (prefix form) a word.
            Some((lit, spaced)) => {
                rest.ends_with(lit.as_str()) || (self.prefix && rest.contains(spaced.as_str()))
            }
        }
    }

    /// Whether the pattern matches `text` from its start or from some byte
    /// after which a word may start, before byte `limit`: is the command
    /// the pattern names anywhere in `text`?
    ///
    /// Linear in `text`: when the pattern starts with `*`, or with a literal
    /// and then `*`, a match from a later start implies one from the first
    /// start where the head fits, so only that start is tried.
    pub(crate) fn matches_from_any_start(&self, text: &str, limit: usize) -> bool {
        if self.head.is_empty() {
            return self.matches(text);
        }
        let bytes = text.as_bytes();
        let limit = limit.min(bytes.len());
        // Only where the head occurs can a match start: a substring search
        // finds those places faster than trying every word start.
        let head = self.head.as_bytes();
        let first = head[0];
        let mut from = 0;
        let mut starts = std::iter::from_fn(|| {
            // Every occurrence, overlapping ones included: a scan for the
            // first byte, then a comparison (the texts are short, and a
            // substring searcher costs more to set up than this).
            loop {
                let j = from + bytes.get(from..)?.iter().position(|&b| b == first)?;
                from = j + 1;
                if bytes[j..].starts_with(head) {
                    return Some(j);
                }
            }
        })
        .take_while(|&j| j == 0 || j < limit)
        .filter(|&j| j == 0 || starts_word_after(bytes[j - 1]));
        if !self.starred {
            return starts.any(|j| self.matches(&text[j..]));
        }
        // With a star after the head, the leftmost start matches whenever
        // any later one does.
        match starts.next() {
            Some(j) => self.matches(&text[j..]),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        match Rule::parse(&format!("Bash({pattern})")).map(|r| r.matcher) {
            Ok(Matcher::Command(p)) => p.matches(text),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn exact_and_whitespace() {
        assert!(m("git status", "git status"));
        assert!(m("git   status ", "git status"));
        assert!(!m("git status", "git status -s"));
        assert!(!m("git status", "git statu"));
    }

    #[test]
    fn prefix_colon_star() {
        assert!(m("npm test:*", "npm test"));
        assert!(m("npm test:*", "npm test --watch"));
        assert!(!m("npm test:*", "npm testing"));
        assert!(m("rm -rf:*", "rm -rf /"));
        assert!(!m("rm -rf:*", "rm -r f"));
    }

    #[test]
    fn space_star_is_a_word_boundary() {
        assert!(m("ls *", "ls -la"));
        assert!(m("ls *", "ls"));
        assert!(!m("ls *", "lsof"));
        assert!(m("ls*", "lsof"));
    }

    #[test]
    fn middle_and_leading_stars() {
        assert!(m("git * main", "git push origin main"));
        assert!(!m("git * main", "git push origin main2"));
        assert!(m("* --version", "cargo --version"));
        assert!(m("*", "anything at all"));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYYcd"));
        assert!(m("a*c", "ac"));
    }

    #[test]
    fn escaped_star_is_literal() {
        assert!(m(r"ls \*.txt", "ls *.txt"));
        assert!(!m(r"ls \*.txt", "ls a.txt"));
        let exact = Rule::bash_exact("ls *.txt");
        assert_eq!(exact.as_str(), r"Bash(ls \*.txt)");
        let reparsed = Rule::parse(exact.as_str()).unwrap();
        match reparsed.matcher {
            Matcher::Command(p) => {
                assert!(p.matches("ls *.txt"));
                assert!(!p.matches("ls a.txt"));
            }
            _ => panic!(),
        }
    }

    #[test]
    fn malformed_rules_are_named() {
        for bad in [
            "",
            "Bash(",
            "Bash(ls",
            "(ls)",
            "Bash()",
            "Ba sh",
            "Bash(a:*b)",
            "Bash)",
        ] {
            let err = Rule::parse(bad).unwrap_err();
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    /// A reference matcher by backtracking: `*` any run of characters.
    fn naive_glob(segs: &[Seg], text: &str) -> bool {
        match segs.split_first() {
            None => text.is_empty(),
            Some((Seg::Lit(l), rest)) => text
                .strip_prefix(l.as_str())
                .is_some_and(|t| naive_glob(rest, t)),
            Some((Seg::Star, rest)) => (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .any(|i| naive_glob(rest, &text[i..])),
        }
    }

    fn naive(segs: &[Seg], prefix: bool, text: &str) -> bool {
        naive_glob(segs, text)
            || (prefix
                && text
                    .match_indices(' ')
                    .any(|(i, _)| naive_glob(segs, &text[..i])))
    }

    proptest::proptest! {
        /// The linear matcher agrees with backtracking, from the start and
        /// from any word start.
        #[test]
        fn linear_matching_agrees_with_backtracking(
            lits in proptest::collection::vec("[ab]{1,2}( [ab])?", 1..4),
            stars in proptest::collection::vec(proptest::bool::ANY, 4),
            lead in proptest::bool::ANY,
            prefix in proptest::bool::ANY,
            text in "[ab /;]{0,12}",
            limit in 0usize..14,
        ) {
            let mut segs = Vec::new();
            let mut spec = String::new();
            if lead {
                segs.push(Seg::Star);
                spec.push('*');
            }
            for (i, l) in lits.iter().enumerate() {
                if i > 0 && stars[i] {
                    segs.push(Seg::Star);
                    spec.push('*');
                } else if i > 0 {
                    // Adjacent literals are one literal.
                    if let Some(Seg::Lit(prev)) = segs.last_mut() {
                        prev.push_str(l);
                        spec.push_str(l);
                        continue;
                    }
                }
                segs.push(Seg::Lit(l.clone()));
                spec.push_str(l);
            }
            if stars[0] && !prefix {
                segs.push(Seg::Star);
                spec.push('*');
            }
            if prefix {
                spec.push_str(":*");
            }
            let Ok(Matcher::Command(p)) = Rule::parse(&format!("Bash({spec})")).map(|r| r.matcher) else {
                return Ok(());
            };
            let text = normalise_space(&text);
            proptest::prop_assert_eq!(p.matches(&text), naive(&segs, prefix, &text), "{} vs {:?}", spec, text);
            let b = text.as_bytes();
            for limit in [text.len(), limit.min(text.len())] {
                let starts = std::iter::once(0).chain((0..limit.saturating_sub(1)).filter(|&i| starts_word_after(b[i])).map(|i| i + 1));
                let any = starts.collect::<Vec<_>>().into_iter().any(|j| naive(&segs, prefix, &text[j..]));
                proptest::prop_assert_eq!(p.matches_from_any_start(&text, limit), any, "{} within {:?} up to {}", spec, text, limit);
            }
        }
    }

    #[test]
    fn commands_are_found_anywhere_in_a_text() {
        let p = match Rule::parse("Bash(rm:*)").unwrap().matcher {
            Matcher::Command(p) => p,
            _ => unreachable!(),
        };
        assert!(p.matches_from_any_start("flock l rm x", 12));
        assert!(p.matches_from_any_start("strace /bin/rm x", 16));
        assert!(p.matches_from_any_start("sh -c cd;rm x", 13));
        assert!(!p.matches_from_any_start("flock l rmdir x", 15));
        assert!(!p.matches_from_any_start("charm x", 7));
        // Only starts before the limit count.
        assert!(!p.matches_from_any_start("nohup echo rm x", 10));
    }

    #[test]
    fn tool_names_are_case_insensitive() {
        assert_eq!(
            Rule::parse("BASH(ls)").unwrap(),
            Rule::parse("bash(ls)").unwrap()
        );
        assert_eq!(Rule::parse("Read").unwrap().tool(), "read");
        assert!(Rule::parse("mcp__server__tool").is_ok());
        assert_eq!(
            Rule::parse("mcp__Server__*").unwrap().tool(),
            "mcp__server__*"
        );
        assert!(Rule::parse("mcp__*").is_err());
        assert!(Rule::parse("Bash__*").is_err());
        assert!(Rule::parse("mcp__a*__*").is_err());
    }
}
