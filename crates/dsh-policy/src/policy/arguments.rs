//! Another server's tool judged by what its arguments mean: a shell
//! argument as our own `bash` call, a path as our file tools' paths, text
//! typed into a running program as `bash_write`'s input.
//!
//! Rules naming the tool (`mcp__SERVER__TOOL`, `mcp__SERVER`,
//! `mcp__SERVER__*`, with or without a specifier) are read, for each
//! argument, as rules of the tool that judges it (`Bash`, `Read`, `Edit`),
//! beside the settings' own `Bash`/`Read`/`Edit` rules: a deny rule of
//! either kind holds, and the rule that decided is named as written.

use super::{
    Decision, Origin, Outcome, PartKind, PermissionPolicy, Verdict, PLAN_MODE_MESSAGE, READ_TOOL,
};
use crate::path;
use crate::rule::{PermissionRules, Rule, RuleList, SHELL_TOOL};
use crate::shell::FilePart;
use crate::word::PathWord;
use dsh_tools::{ArgumentMeaning, ArgumentMeanings};
use serde_json::Value;
use std::borrow::Cow;

/// The tool whose rules judge what a tool writes.
const EDIT_TOOL: &str = "edit";

/// How a path the tool reads or writes is named in the subject of a decision.
const PATH_OP: &str = "argument of a proxied tool";

impl PermissionPolicy {
    /// The verdict on a call of a proxied tool whose argument meanings are
    /// known. The strictest of its arguments' verdicts wins; an argument
    /// the call carries without a known meaning asks (plan mode refuses
    /// it); a call whose arguments are all harmless data runs.
    pub(crate) fn evaluate_arguments(
        &self,
        tool: &str,
        aliases: &[String],
        meanings: &ArgumentMeanings,
        args: &Value,
    ) -> Verdict {
        let subject = format!("{tool} call");
        let mut outcomes = Vec::new();
        let mut grants = Vec::new();
        let mut denials = Vec::new();
        // Every call of the tool: a tool-wide deny rule needs no argument.
        let tool_wide = |r: &Rule| r.is_tool_wide() && aliases.iter().any(|a| a == r.tool());
        if let Some(o) = self.first_match(RuleList::Deny, &tool_wide, &subject) {
            outcomes.push(o.part(PartKind::Call, tool));
            return self.finish(outcomes);
        }
        let Some(fields) = args.as_object() else {
            let o = Outcome::opaque(
                &subject,
                "its arguments are not an object".into(),
                self.mode,
            );
            return self.finish(vec![o.part(PartKind::Unanalysable, tool)]);
        };
        let workdir = meanings
            .arguments
            .iter()
            .filter(|(_, m)| *m == ArgumentMeaning::Workdir)
            .find_map(|(name, _)| fields.get(name).and_then(Value::as_str))
            .map(|dir| path::absolute(dir, &self.ws.cwd));
        // Relative paths are the server's: its working directory when known.
        let base = match (&workdir, &meanings.base) {
            (Some(dir), _) => dir.clone(),
            (None, Some(dir)) => path::absolute(&dir.to_string_lossy(), &self.ws.cwd),
            (None, None) => self.ws.cwd.clone(),
        };
        for (name, value) in fields {
            let about = format!("argument {name:?} of {tool}");
            let Some(meaning) = meanings.get(name) else {
                let why = format!(
                    "it has no known meaning (the meanings come from {})",
                    meanings.from
                );
                outcomes.push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                continue;
            };
            match meaning {
                ArgumentMeaning::Data | ArgumentMeaning::Workdir => {}
                ArgumentMeaning::Operand => {
                    // A number reaches the program as its text (`-1`).
                    let words: Option<Vec<String>> = match value {
                        Value::Number(n) => Some(vec![n.to_string()]),
                        Value::Null => Some(Vec::new()),
                        other => strings(other).map(|w| w.into_iter().map(str::to_owned).collect()),
                    };
                    let Some(words) = words else {
                        let why = "an operand that is neither text nor a number".to_owned();
                        outcomes.push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                        continue;
                    };
                    for word in &words {
                        if word.starts_with('-') {
                            let why =
                                format!("{word:?} starts with \"-\": an option nobody listed");
                            outcomes
                                .push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                        } else if let Some((_, file)) = word.split_once(':') {
                            // `REV:PATH` reads a file of the repository.
                            for root in self.path_roots(meanings, fields, &base) {
                                let denied = self.read_denial(&file_part(file), &root);
                                outcomes.extend(denied.map(|o| o.part(PartKind::Read, file)));
                            }
                        }
                    }
                }
                ArgumentMeaning::Shell | ArgumentMeaning::Argv | ArgumentMeaning::Input => {
                    let line = match (meaning, value) {
                        (ArgumentMeaning::Argv, Value::Array(_)) => match strings(value) {
                            Some(words) => match argv_line(&words) {
                                Ok(line) => Some(line),
                                Err(why) => {
                                    outcomes.push(
                                        self.unknown(&about, why)
                                            .part(PartKind::Unanalysable, name),
                                    );
                                    Some(words.join(" "))
                                }
                            },
                            None => None,
                        },
                        (_, Value::String(s)) => Some(s.clone()),
                        _ => None,
                    };
                    let Some(line) = line else {
                        let why = format!("a {meaning} argument that is not text");
                        outcomes.push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                        continue;
                    };
                    let judge = self.judging(aliases, SHELL_TOOL);
                    let mut call = serde_json::Map::new();
                    call.insert("command".into(), Value::String(line));
                    call.insert(
                        "workdir".into(),
                        Value::String(base.to_string_lossy().into_owned()),
                    );
                    let line = call["command"].as_str().unwrap_or_default().to_owned();
                    let verdict = judge.evaluate_bash(tool, &Value::Object(call));
                    let analysis_alone = super::runs_on_analysis_alone(&verdict.outcomes);
                    // Read as bash; but the server's shell may be zsh, dash
                    // or fish, which read some constructs as code where
                    // bash does not: only what every shell reads alike runs
                    // unasked (unless the tool is allowed as a whole).
                    // Words run without a shell need no such care.
                    let without_shell = meaning == ArgumentMeaning::Argv && value.is_array();
                    if verdict.evaluation.decision != Decision::Deny
                        && !without_shell
                        && !self.allows_whole_tool(aliases)
                    {
                        if let Err(why) = portable(&line) {
                            outcomes
                                .push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                        }
                    }
                    grants.extend(
                        verdict
                            .grants
                            .iter()
                            .filter_map(|g| as_tools_rule(g, aliases)),
                    );
                    denials.extend(
                        verdict
                            .denials
                            .iter()
                            .filter_map(|g| as_tools_rule(g, aliases)),
                    );
                    outcomes.extend(verdict.outcomes);
                    if meaning == ArgumentMeaning::Input {
                        if let Some(o) = self.typed_text(&about, analysis_alone) {
                            outcomes.push(o.part(PartKind::Call, name));
                        }
                    }
                }
                ArgumentMeaning::Read | ArgumentMeaning::Tree | ArgumentMeaning::Write => {
                    let Some(paths) = strings(value) else {
                        let why = format!("a {meaning} argument that is not a path");
                        outcomes.push(self.unknown(&about, why).part(PartKind::Unanalysable, name));
                        continue;
                    };
                    let (kind, judged_by) = match meaning {
                        ArgumentMeaning::Write => (PartKind::Write, EDIT_TOOL),
                        _ => (PartKind::Read, READ_TOOL),
                    };
                    let judge = self.judging(aliases, judged_by);
                    for p in paths {
                        let part = file_part(p);
                        // Every file below a searched directory counts.
                        let below = (meaning == ArgumentMeaning::Tree)
                            .then(|| judge.denied_below_path(&part, &base))
                            .flatten();
                        let outcome = match below {
                            Some(denied) => denied,
                            None if kind == PartKind::Read => judge.read_part(&part, &base),
                            None => judge.write_part(&part, &base),
                        };
                        if let Some(g) = outcome.grant.as_ref().and_then(|g| g.rule()) {
                            grants.extend(as_tools_rule(&g, aliases));
                        }
                        if let Some(g) = outcome.denial.as_ref().and_then(|g| g.rule()) {
                            denials.extend(as_tools_rule(&g, aliases));
                        }
                        outcomes.push(outcome.part(kind, p));
                    }
                }
            }
        }
        if outcomes.is_empty() {
            outcomes.push(
                Outcome::mode(
                    Decision::Allow,
                    format!(
                        "{tool}: every argument is data (the meanings come from {})",
                        meanings.from
                    ),
                )
                .about(&subject)
                .part(PartKind::Call, tool),
            );
        }
        let mut verdict = self.finish(outcomes);
        if verdict.evaluation.decision == Decision::Ask {
            // Nothing narrower could be granted: the tool itself.
            if grants.is_empty() {
                grants.extend(aliases.first().and_then(|a| Rule::tool_name(a).ok()));
            }
            verdict.grants = dedup(grants);
            verdict.denials = dedup(denials);
        }
        verdict
    }

    /// This policy with the rules naming the proxied tool added as rules of
    /// `judged_by` (`bash`, `read`, `edit`); itself when none names it.
    fn judging(&self, aliases: &[String], judged_by: &str) -> Cow<'_, PermissionPolicy> {
        let names = |r: &Rule| aliases.iter().any(|a| a == r.tool());
        let any = [RuleList::Allow, RuleList::Ask, RuleList::Deny]
            .iter()
            .any(|&l| {
                self.rules
                    .list(l)
                    .iter()
                    .chain(self.session.list(l))
                    .any(names)
            });
        if !any {
            return Cow::Borrowed(self);
        }
        let translate = |from: &PermissionRules, into: &mut PermissionRules| {
            for list in [RuleList::Allow, RuleList::Ask, RuleList::Deny] {
                for rule in from.list(list).iter().filter(|r| names(r)) {
                    if let Some(r) = rule.as_rule_of(judged_by) {
                        into.add(list, r);
                    }
                }
            }
        };
        let mut judge = self.clone();
        translate(&self.rules, &mut judge.rules);
        translate(&self.session, &mut judge.session);
        Cow::Owned(judge)
    }

    /// The directories a `REV:PATH` operand's path may be relative to: the
    /// call's path arguments (a repository) and the server's directory.
    fn path_roots(
        &self,
        meanings: &ArgumentMeanings,
        fields: &serde_json::Map<String, Value>,
        base: &std::path::Path,
    ) -> Vec<std::path::PathBuf> {
        let mut roots: Vec<std::path::PathBuf> = meanings
            .arguments
            .iter()
            .filter(|(_, m)| matches!(m, ArgumentMeaning::Read | ArgumentMeaning::Write))
            .filter_map(|(n, _)| fields.get(n).and_then(Value::as_str))
            .map(|dir| path::absolute(dir, base))
            .collect();
        roots.push(base.to_path_buf());
        roots
    }

    /// A deny `Read` rule's verdict on a file, if one names it.
    fn read_denial(&self, part: &FilePart, base: &std::path::Path) -> Option<Outcome> {
        let outcome = self.read_part(part, base);
        (outcome.decision == Decision::Deny).then_some(outcome)
    }

    /// A deny `Read` rule naming a file below the directory `part` names.
    fn denied_below_path(&self, part: &FilePart, base: &std::path::Path) -> Option<Outcome> {
        let places = self.ws.places(&part.path, &part.dirs, base, false).ok()?;
        let subject = format!("read of every file under {}", part.path.text());
        self.denied_below(&places, &subject)
            .map(|o| o.about(&subject))
    }

    /// Whether an allow rule (configured or of the session) names the tool
    /// without a specifier: every call of it is allowed but what deny and
    /// ask rules name.
    fn allows_whole_tool(&self, aliases: &[String]) -> bool {
        self.rules
            .allow
            .iter()
            .chain(&self.session.allow)
            .any(|r| r.is_tool_wide() && aliases.iter().any(|a| a == r.tool()))
    }

    /// An argument the policy cannot judge: asked (denied in dontAsk,
    /// refused in plan mode, where the tool could do anything with it).
    fn unknown(&self, about: &str, why: String) -> Outcome {
        if self.mode == super::Mode::Plan {
            return Outcome::plan(format!("{PLAN_MODE_MESSAGE} ({about}: {why})")).about(about);
        }
        Outcome::opaque(about, why, self.mode).about(about)
    }

    /// Text typed into a program the policy cannot see: refused in plan
    /// mode; asked when only the analysis would allow it (a rule's allow
    /// stands), since what reads it may not be a shell.
    fn typed_text(&self, about: &str, analysis_alone: bool) -> Option<Outcome> {
        if self.mode == super::Mode::Plan {
            return Some(
                Outcome::plan(format!(
                    "{PLAN_MODE_MESSAGE} (input to a running program can make it do anything)"
                ))
                .about(about),
            );
        }
        if !analysis_alone || self.mode == super::Mode::BypassPermissions {
            return None;
        }
        let mut o = Outcome::mode(
            Decision::Ask,
            format!("{about}: text typed into a running program runs unasked only when a rule allows it (what reads it may not be a shell)"),
        );
        o.origin = Origin::Mode;
        Some(o.about(about))
    }
}

/// Whether every POSIX-like shell (bash, dash, zsh, ksh) and fish read a
/// command line alike, as far as code is concerned: plain words, `*`, `?`,
/// `~`, the operators `| & ; < >`, newlines, single quotes without `\`,
/// double quotes without `$`, `` ` ``, `\` or `!`. Anything else — `$`
/// (zsh's `${(e)…}` evaluates), parentheses (zsh's `*(e:…:)` glob
/// qualifiers and `=(…)`, fish's `(…)` command substitution), braces,
/// backslashes, `#`, `[` — is the first construct said.
fn portable(line: &str) -> Result<(), String> {
    #[derive(PartialEq)]
    enum Quote {
        None,
        Single,
        Double,
    }
    let mut quote = Quote::None;
    for c in line.chars() {
        let plain = match quote {
            Quote::None => match c {
                '\'' => {
                    quote = Quote::Single;
                    true
                }
                '"' => {
                    quote = Quote::Double;
                    true
                }
                // fish before 3.3 reads `^` as a redirection.
                '^' => false,
                c if c.is_ascii() && crate::word::is_plain_byte(c as u8) => true,
                ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '*' | '?' | '~' => true,
                _ => false,
            },
            Quote::Single => match c {
                '\'' => {
                    quote = Quote::None;
                    true
                }
                '\\' => false,
                _ => true,
            },
            Quote::Double => match c {
                '"' => {
                    quote = Quote::None;
                    true
                }
                '$' | '`' | '\\' | '!' => false,
                _ => true,
            },
        };
        if !plain {
            let place = match quote {
                Quote::None => "",
                Quote::Single => " in single quotes",
                Quote::Double => " in double quotes",
            };
            return Err(format!(
                "{c:?}{place}: the server's shell is not known to be bash, and other shells (zsh, fish) may read it as code; only plain words run unasked"
            ));
        }
    }
    Ok(())
}

/// A string, or an array of strings, as strings.
fn strings(value: &Value) -> Option<Vec<&str>> {
    match value {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(items) => items.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// A file a proxied tool reads or writes, as the analysis's file part:
/// relative to the call's directory, no `cd` before it.
fn file_part(p: &str) -> FilePart {
    FilePart {
        path: path_word(p),
        op: PATH_OP,
        maybe: false,
        dirs: Some(vec![String::new()]),
        removes: false,
        by: None,
    }
}

/// The shell line that runs these words, read the strictest way: a word
/// the server may take for a redirection (`>`, `>>`, `<`, `>file`) or a
/// pipe stays an operator; a plain word (`*`, `?` and `~` included) stays
/// bare, so the analysis expands it as a shell would; any other word is
/// quoted, one argument as an exec passes it. `Err` for a word with `$` or
/// `` ` ``: whether the server expands it is not known.
fn argv_line(words: &[&str]) -> Result<String, String> {
    let mut line = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            line.push(' ');
        }
        if w.contains(['$', '`']) {
            return Err(format!(
                "the word {w:?}: whether the server expands `$` or `` ` `` is not known"
            ));
        }
        let (operator, rest) = match w.find(|c| c != '>' && c != '<') {
            Some(0) => ("", *w),
            Some(at) => w.split_at(at),
            None => (*w, ""),
        };
        let operator = match operator {
            "" => "",
            ">" | ">>" | "<" => operator,
            _ => {
                return Err(format!(
                    "the word {w:?}: not a redirection any shell reads alike"
                ))
            }
        };
        line.push_str(operator);
        if matches!(rest, "|") && operator.is_empty() {
            line.push('|');
        } else if rest
            .bytes()
            .all(|b| crate::word::is_plain_byte(b) && b != b'^' || matches!(b, b'*' | b'?' | b'~'))
        {
            line.push_str(rest);
        } else {
            line.push('\'');
            line.push_str(&rest.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    Ok(line)
}

/// A path argument as the analysis's word: `~/…` is the home directory.
fn path_word(p: &str) -> PathWord {
    match p.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => {
            PathWord::Home(rest.trim_start_matches('/').to_owned())
        }
        _ => PathWord::Literal(p.to_owned()),
    }
}

/// A rule granted for a `Bash`/`Read`/`Edit` judgement, as a rule of the
/// proxied tool (its first alias, `mcp__SERVER__TOOL`): *allow always*
/// on another server's shell must not widen our own.
fn as_tools_rule(rule: &Rule, aliases: &[String]) -> Option<Rule> {
    let name = aliases.first()?;
    match rule.specifier() {
        Some(spec) => Rule::parse(&format!("{name}({spec})")).ok(),
        None => Rule::tool_name(name).ok(),
    }
}

fn dedup(rules: Vec<Rule>) -> Vec<Rule> {
    let mut out: Vec<Rule> = Vec::with_capacity(rules.len());
    for r in rules {
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}
