//! Masking secrets out of a call's arguments before they are logged.
//!
//! What is masked (replaced by `[masked]`):
//!
//! * the whole value of every argument whose **name** is a secret's, at any
//!   depth (so the entries of an `env` object too): a name containing one of
//!   the [`Masking`]'s words (any case; the bash tool's `KEY`, `SECRET`,
//!   `TOKEN`, `PASSWORD` by default), or equal to one of its names;
//! * inside every string argument (a bash `command`, a file's content), the
//!   values of what reads as a secret's assignment or option:
//!   `NAME=value` and `--NAME=value` / `--NAME value` / `-NAME value` where
//!   NAME is a secret's name (`TOKEN=abc make`, `export GH_TOKEN=abc`,
//!   `--password x`, `--api-key=x`), `NAME: value` (`password: x` in YAML,
//!   `"api_key": "x"` in JSON text), the credential after `Bearer` or
//!   `Basic`, and the password of a URL (`https://user:pass@host`);
//! * every other occurrence, in the record's texts (the reason, the hook's
//!   say), of a value masked above that is at least four characters long.
//!
//! Not masked: secrets the text does not name as such (`mysql -pabc`,
//! `curl -u user:abc`, a key pasted as a bare word). The masking is a
//! courtesy to whoever reads the log, not a boundary: the settings' lists
//! (`audit.maskArguments`, `audit.maskPatterns`) extend it.

use serde_json::{Map, Value};

/// What replaces a masked value.
pub const MASKED: &str = "[masked]";

/// Strings longer than this many bytes are cut in the record (the rest
/// counted), so one `write` of a large file does not swell the log.
pub const MAX_STRING_BYTES: usize = 4096;

/// Which names are secrets'. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Masking {
    /// Upper-case words: a name containing one is a secret's.
    words: Vec<String>,
    /// Lower-case names: a name equal to one is a secret's.
    names: Vec<String>,
}

impl Masking {
    /// Names containing one of `words` (any case), or equal to one of
    /// `names` (any case), are secrets'.
    pub fn new<W, N>(words: W, names: N) -> Self
    where
        W: IntoIterator,
        W::Item: AsRef<str>,
        N: IntoIterator,
        N::Item: AsRef<str>,
    {
        Masking {
            words: words
                .into_iter()
                .map(|w| w.as_ref().to_ascii_uppercase())
                .filter(|w| !w.is_empty())
                .collect(),
            names: names
                .into_iter()
                .map(|n| n.as_ref().to_ascii_lowercase())
                .filter(|n| !n.is_empty())
                .collect(),
        }
    }

    /// Whether `name` (an argument's, a variable's, an option's without
    /// its dashes) is a secret's.
    pub fn is_secret_name(&self, name: &str) -> bool {
        let upper = name.to_ascii_uppercase();
        let lower = name.to_ascii_lowercase();
        self.words.iter().any(|w| upper.contains(w.as_str())) || self.names.contains(&lower)
    }

    /// The arguments with secrets masked and long strings cut; the values
    /// masked are added to `found`.
    pub fn arguments(&self, value: &Value, found: &mut Vec<String>) -> Value {
        match value {
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, v) in map {
                    let masked = if self.is_secret_name(key) {
                        collect_strings(v, found);
                        Value::String(MASKED.to_owned())
                    } else {
                        self.arguments(v, found)
                    };
                    out.insert(key.clone(), masked);
                }
                Value::Object(out)
            }
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.arguments(v, found)).collect())
            }
            Value::String(s) => Value::String(cut(&self.text(s, found))),
            other => other.clone(),
        }
    }

    /// `text` with the values of secret assignments, options, credentials
    /// and URL passwords masked; the values masked are added to `found`.
    pub fn text(&self, text: &str, found: &mut Vec<String>) -> String {
        let b = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let mut mask_next = false;
        while i < b.len() {
            if is_separator(b[i]) {
                // A newline or `;` ends what an option could take.
                if !b[i].is_ascii_whitespace() || b[i] == b'\n' {
                    mask_next = false;
                }
                out.push(char::from(b[i]));
                i += 1;
                continue;
            }
            let end = word_end(b, i);
            let word = &text[i..end];
            i = end;
            if mask_next {
                mask_next = false;
                // Punctuation after the value (`"x",` in JSON) stays.
                let core = word.trim_end_matches([',', '}', ']']);
                found.push(unquote(core).to_owned());
                out.push_str(&requote(core, MASKED));
                out.push_str(&word[core.len()..]);
                continue;
            }
            let (open, inner, close) = split_quotes(word);
            if !open.is_empty() && inner.contains(|c: char| c.is_ascii_whitespace()) {
                // A quoted phrase (`"TOKEN=abc make"` in a message): its words.
                out.push_str(open);
                out.push_str(&self.text(inner, found));
                out.push_str(close);
                continue;
            }
            if let Some((name, value)) = inner.split_once('=') {
                let bare = name.trim_start_matches('-');
                if is_name(bare) && self.is_secret_name(bare) {
                    found.push(unquote(value).to_owned());
                    out.push_str(open);
                    out.push_str(name);
                    out.push('=');
                    out.push_str(MASKED);
                    out.push_str(close);
                    continue;
                }
            }
            if inner.starts_with('-') && !inner.contains('=') {
                let bare = inner.trim_start_matches('-').replace('-', "_");
                if is_name(&bare) && self.is_secret_name(&bare) {
                    mask_next = true;
                    out.push_str(word);
                    continue;
                }
            }
            // `password: x` (YAML, a header), `"api_key": "x"` (JSON).
            if let Some(key) = word.strip_suffix(':') {
                let key = key.trim_matches(|c| matches!(c, '"' | '\'' | '{' | '[' | ','));
                if is_name(key) && self.is_secret_name(key) {
                    mask_next = true;
                    out.push_str(word);
                    continue;
                }
            }
            if inner.eq_ignore_ascii_case("bearer") || inner.eq_ignore_ascii_case("basic") {
                mask_next = true;
                out.push_str(word);
                continue;
            }
            out.push_str(&mask_within(word, found));
        }
        out
    }

    /// `text` with every value of `found` at least four characters long
    /// masked, wherever it occurs.
    pub fn scrub(text: &str, found: &[String]) -> String {
        let mut out = text.to_owned();
        for secret in found {
            if secret.chars().count() >= 4 && out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), MASKED);
            }
        }
        out
    }
}

/// Credentials inside one word: after `Bearer `/`Basic ` (a quoted header),
/// and a URL's password.
fn mask_within(word: &str, found: &mut Vec<String>) -> String {
    let mut out = word.to_owned();
    for scheme in ["bearer ", "basic "] {
        let lower = out.to_ascii_lowercase();
        if let Some(at) = lower.find(scheme) {
            let start = at + scheme.len();
            let len = out[start..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || "._~+/=-".contains(c)))
                .unwrap_or(out.len() - start);
            if len > 0 {
                found.push(out[start..start + len].to_owned());
                out.replace_range(start..start + len, MASKED);
            }
        }
    }
    if let Some(scheme_end) = out.find("://") {
        let rest_start = scheme_end + 3;
        let authority_end = out[rest_start..]
            .find(['/', '?', '#', '"', '\''])
            .map_or(out.len(), |e| rest_start + e);
        if let Some(at) = out[rest_start..authority_end].rfind('@') {
            let userinfo = &out[rest_start..rest_start + at];
            if let Some(colon) = userinfo.find(':') {
                let start = rest_start + colon + 1;
                let end = rest_start + at;
                if end > start {
                    found.push(out[start..end].to_owned());
                    out.replace_range(start..end, MASKED);
                }
            }
        }
    }
    out
}

fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b';' | b'&' | b'|' | b'(' | b')' | b'`')
}

/// Where the shell word starting at `i` ends: at an unquoted separator.
fn word_end(b: &[u8], mut i: usize) -> usize {
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(b'"') if c == b'\\' => i += 1,
            Some(_) => {}
            None if c == b'\\' => i += 1,
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if is_separator(c) => return i,
            None => {}
        }
        i += 1;
    }
    b.len()
}

/// A word's opening quote, inside and closing quote (when it is quoted whole).
fn split_quotes(word: &str) -> (&str, &str, &str) {
    for q in ["'", "\""] {
        if word.len() >= 2 && word.starts_with(q) && word.ends_with(q) {
            return (q, &word[1..word.len() - 1], q);
        }
    }
    ("", word, "")
}

fn unquote(word: &str) -> &str {
    split_quotes(word).1
}

fn requote(word: &str, with: &str) -> String {
    let (open, _, close) = split_quotes(word);
    format!("{open}{with}{close}")
}

/// A variable or option name: letters, digits, `_` (and `-` inside an
/// option's), not starting with a digit.
fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn collect_strings(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::String(s) => found.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, found)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, found)),
        Value::Number(n) => found.push(n.to_string()),
        _ => {}
    }
}

/// `s` cut to [`MAX_STRING_BYTES`] on a character boundary, saying how
/// much was left out.
fn cut(s: &str) -> String {
    if s.len() <= MAX_STRING_BYTES {
        return s.to_owned();
    }
    let mut end = MAX_STRING_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[{} more bytes]", &s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn masking() -> Masking {
        Masking::new(["KEY", "SECRET", "TOKEN", "PASSWORD"], ["auth"])
    }

    fn text(s: &str) -> (String, Vec<String>) {
        let mut found = Vec::new();
        (masking().text(s, &mut found), found)
    }

    #[test]
    fn assignments_options_and_credentials_in_a_command_are_masked() {
        for (command, kept) in [
            ("GH_TOKEN=abc123 gh pr list", "GH_TOKEN=[masked] gh pr list"),
            (
                "export API_KEY='s e c' && make",
                "export API_KEY=[masked] && make",
            ),
            (
                "mysql --password hunter22 db",
                "mysql --password [masked] db",
            ),
            ("tool --api-key=zzz9 run", "tool --api-key=[masked] run"),
            (
                r#"curl -H "Authorization: Bearer tok.en-1" https://x"#,
                r#"curl -H "Authorization: Bearer [masked]" https://x"#,
            ),
            (
                "git clone https://me:pw0rd@host/r.git",
                "git clone https://me:[masked]@host/r.git",
            ),
            ("echo KEYBOARD", "echo KEYBOARD"),
            (
                "ls -la; secret_thing=1 true",
                "ls -la; secret_thing=[masked] true",
            ),
            (
                r#"{"api_key": "k-1", "name": "n"}"#,
                r#"{"api_key": "[masked]", "name": "n"}"#,
            ),
            (
                "db:\n  password: pw1\n  host: h",
                "db:\n  password: [masked]\n  host: h",
            ),
        ] {
            assert_eq!(text(command).0, kept, "{command}");
        }
        assert_eq!(text("A_TOKEN=abc123 x").1, ["abc123"]);
        assert_eq!(
            text(r#"no rule matches "GH_TOKEN=abc123 echo hi""#).0,
            r#"no rule matches "GH_TOKEN=[masked] echo hi""#
        );
        // An option's value ends at the end of the line.
        assert_eq!(text("cmd --token\necho hi").0, "cmd --token\necho hi");
    }

    #[test]
    fn secret_names_are_masked_at_any_depth_and_scrubbed_elsewhere() {
        let mut found = Vec::new();
        let args = json!({
            "command": "deploy",
            "env": {"GH_TOKEN": "ghp_abcdef", "HOME": "/h"},
            "Auth": {"user": "u", "pass": "p4ss"},
            "nested": [{"db_password": 42}],
        });
        let masked = masking().arguments(&args, &mut found);
        assert_eq!(
            masked,
            json!({
                "command": "deploy",
                "env": {"GH_TOKEN": MASKED, "HOME": "/h"},
                "Auth": MASKED,
                "nested": [{"db_password": MASKED}],
            })
        );
        assert!(found.contains(&"ghp_abcdef".to_owned()));
        assert_eq!(
            Masking::scrub("denied: deploy ghp_abcdef now", &found),
            "denied: deploy [masked] now"
        );
    }

    #[test]
    fn long_strings_are_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_STRING_BYTES);
        let mut found = Vec::new();
        let out = masking().arguments(&json!({"content": long}), &mut found);
        let s = out["content"].as_str().unwrap();
        assert!(s.ends_with(&format!("…[{} more bytes]", MAX_STRING_BYTES)));
    }
}
