//! `apply_patch`: Codex's patch format, applied all or nothing.
//!
//! A call goes through three phases:
//!
//! 1. **Parse** the whole patch ([`patch_paths`] stops here): a malformed
//!    patch is `INVALID_ARGS` with the line number of the problem.
//! 2. **Plan**, in memory: read every file the patch touches, apply every
//!    hunk, and check every precondition (an added file must not exist, an
//!    updated or deleted one must be a regular file, a move's destination
//!    must be free, every target must be inside the sandbox's writable
//!    roots). Sections see the effect of earlier sections on the same file,
//!    as if applied one after the other. Nothing on disk has changed if
//!    anything fails here.
//! 3. **Commit**: missing parent directories are created and every new
//!    content is staged in a temporary file beside its target; then the
//!    renames and deletions run. If one of them fails, what was already
//!    done is undone in reverse order from copies kept in memory, and the
//!    error says what happened.
//!
//! Hunks are found as Codex finds them: exact lines first, then ignoring
//! trailing whitespace, then ignoring surrounding whitespace, then also
//! treating typographic dashes, quotes and spaces as their ASCII kin. A
//! hunk's context and unchanged lines are kept as the file has them, so a
//! loose match never rewrites the whitespace of lines the patch did not
//! change. CRLF files stay CRLF, a missing final newline stays missing
//! unless the patch changes the last line, and a file's mode is kept.

use crate::atomic::{self, Staged};
use crate::{content_hash, FileTools};
use dsh_tools::{
    ContentBlock, ErrorCode, Tool, ToolAnnotations, ToolArgs, ToolCallKind, ToolCallPresentation,
    ToolContext, ToolError,
};
use serde::Deserialize;
use std::fmt;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

const DESCRIPTION: &str = "\
Applies a patch that adds, deletes, updates or renames files; all or nothing: if any part does \
not apply, no file changes.

Format (paths relative to the working directory, or absolute):
*** Begin Patch
*** Add File: path/new.txt
+every line of the new file, each prefixed with +
*** Delete File: path/old.txt
*** Update File: path/file.py
*** Move to: path/renamed.py   (optional: rename the file)
@@ def enclosing_function():   (optional after @@: a line above the hunk that anchors it)
 context line (space prefix; about 3 lines before and after each change)
-removed line
+added line
*** End of File   (optional: the hunk must match at the end of the file)
*** End Patch

Start every hunk with @@; several hunks per file go in file order. Context and removed lines \
must match the file (whitespace differences are tolerated). A hunk of only + lines goes right \
below its @@ line, or at the end of the file without one. Missing directories are created. The \
answer lists each file like git's name-status (A, M, D, R old -> new) and the changed lines \
with their new line numbers.";

/// Arguments of `apply_patch`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`: file
    /// sections `*** Add File: P` (then `+` lines), `*** Delete File: P`,
    /// `*** Update File: P` (optionally `*** Move to: Q`, then hunks
    /// starting with `@@`, lines prefixed ` `, `-` or `+`).
    pub patch: String,
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// A patch that cannot be parsed: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    line: usize,
    message: String,
}

impl PatchError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        PatchError {
            line,
            message: message.into(),
        }
    }

    /// The 1-based line of the patch where the problem is.
    pub fn line(&self) -> usize {
        self.line
    }

    /// What is wrong there.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid patch at line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for PatchError {}

impl From<PatchError> for ToolError {
    fn from(err: PatchError) -> Self {
        ToolError::new(ErrorCode::InvalidArgs, err.to_string())
    }
}

/// What a patch does to one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatchOperation {
    /// The file is created (`*** Add File`).
    Add,
    /// The file is removed (`*** Delete File`).
    Delete,
    /// The file's content changes in place (`*** Update File`).
    Update,
    /// The file is renamed away from this path (`*** Update File` with
    /// `*** Move to`); its content may change too.
    MoveFrom,
    /// The renamed file lands at this path (`*** Move to`).
    MoveTo,
}

/// A path a patch touches, as written in the patch (relative to the
/// working directory, or absolute).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PatchedPath {
    /// The path as written.
    pub path: String,
    /// What the patch does to it.
    pub operation: PatchOperation,
}

/// Every path `patch` touches, in the patch's order, with what it does to
/// each: what the permission layer checks before the call runs. A move
/// gives two entries, [`PatchOperation::MoveFrom`] then
/// [`PatchOperation::MoveTo`].
///
/// # Errors
///
/// A malformed patch, with the line of the problem (the same error the
/// tool gives).
pub fn patch_paths(patch: &str) -> Result<Vec<PatchedPath>, PatchError> {
    let parsed = parse(patch)?;
    let mut paths = Vec::new();
    for section in &parsed {
        let path = section.path.clone();
        match &section.kind {
            SectionKind::Add { .. } => paths.push(PatchedPath {
                path,
                operation: PatchOperation::Add,
            }),
            SectionKind::Delete => paths.push(PatchedPath {
                path,
                operation: PatchOperation::Delete,
            }),
            SectionKind::Update {
                move_to: None,
                hunks: _,
            } => paths.push(PatchedPath {
                path,
                operation: PatchOperation::Update,
            }),
            SectionKind::Update {
                move_to: Some(dest),
                hunks: _,
            } => {
                paths.push(PatchedPath {
                    path,
                    operation: PatchOperation::MoveFrom,
                });
                paths.push(PatchedPath {
                    path: dest.clone(),
                    operation: PatchOperation::MoveTo,
                });
            }
        }
    }
    Ok(paths)
}

#[derive(Debug)]
struct Section {
    path: String,
    kind: SectionKind,
}

#[derive(Debug)]
enum SectionKind {
    Add {
        content: String,
    },
    Delete,
    Update {
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Keep,
    Remove,
    Insert,
}

#[derive(Debug)]
struct Hunk {
    /// The text after `@@`, anchoring the hunk below that line.
    anchor: Option<String>,
    lines: Vec<(Op, String)>,
    end_of_file: bool,
}

impl Hunk {
    fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(op, _)| *op != Op::Insert)
            .map(|(_, l)| l.as_str())
            .collect()
    }
}

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File:";
const DELETE: &str = "*** Delete File:";
const UPDATE: &str = "*** Update File:";
const MOVE: &str = "*** Move to:";
const END_OF_FILE: &str = "*** End of File";

/// Whether `line` opens a section or ends the patch. Only a line starting
/// with `***` counts: inside a hunk, ` *** End Patch` is a context line (of
/// a file that documents this very format).
fn section_header(line: &str) -> bool {
    let t = line.trim_end();
    t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE) || t == END
}

fn header_path(rest: &str, number: usize, what: &str) -> Result<String, PatchError> {
    let path = rest.trim();
    if path.is_empty() {
        return Err(PatchError::new(number, format!("{what} names no path")));
    }
    Ok(path.to_owned())
}

/// The anchor of a hunk header: `@@` alone gives none; a unified diff's
/// `@@ -12,5 +12,6 @@ fn f()` gives the text after the ranges (line
/// numbers are not used: hunks are found by their lines).
fn hunk_anchor(header: &str) -> Option<String> {
    let rest = header.strip_prefix("@@")?.trim();
    let rest = match rest.strip_prefix('-') {
        Some(after) if after.starts_with(|c: char| c.is_ascii_digit()) => match rest.find("@@") {
            Some(i) => rest[i + 2..].trim(),
            None => "",
        },
        _ => rest,
    };
    (!rest.is_empty()).then(|| rest.to_owned())
}

fn parse(patch: &str) -> Result<Vec<Section>, PatchError> {
    // Numbered lines, a carriage return before each newline dropped.
    let lines: Vec<(usize, &str)> = patch
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .collect();
    let mut i = 0;
    while i < lines.len() && lines[i].1.trim().is_empty() {
        i += 1;
    }
    let Some(&(first_number, first)) = lines.get(i) else {
        return Err(PatchError::new(
            1,
            "the patch is empty; it starts with `*** Begin Patch` and ends with `*** End Patch`",
        ));
    };
    if first.trim() != BEGIN {
        return Err(PatchError::new(
            first_number,
            format!(
                "the patch must start with `{BEGIN}`, not `{}`",
                clip(first.trim(), 80)
            ),
        ));
    }
    i += 1;
    let last_number = lines.last().map(|l| l.0).unwrap_or(1);
    let mut sections = Vec::new();
    loop {
        // Blank lines between sections are tolerated.
        while i < lines.len() && lines[i].1.trim().is_empty() {
            i += 1;
        }
        let Some(&(number, line)) = lines.get(i) else {
            return Err(PatchError::new(
                last_number,
                format!("the patch ends without `{END}`"),
            ));
        };
        let trimmed = line.trim();
        if trimmed == END {
            if let Some(&(n, extra)) = lines[i + 1..].iter().find(|(_, l)| !l.trim().is_empty()) {
                return Err(PatchError::new(
                    n,
                    format!("text after `{END}`: `{}`", clip(extra.trim(), 80)),
                ));
            }
            if sections.is_empty() {
                return Err(PatchError::new(
                    number,
                    "the patch changes no file: add `*** Add File:`, `*** Delete File:` or `*** Update File:` sections",
                ));
            }
            return Ok(sections);
        }
        i += 1;
        if let Some(rest) = trimmed.strip_prefix(ADD) {
            let path = header_path(rest, number, "`*** Add File:`")?;
            let mut content = String::new();
            while let Some(&(n, l)) = lines.get(i) {
                if let Some(text) = l.strip_prefix('+') {
                    content.push_str(text);
                    content.push('\n');
                    i += 1;
                } else if section_header(l) {
                    break;
                } else if l.trim().is_empty() && next_is_header(&lines[i..]) {
                    i += 1;
                } else {
                    return Err(PatchError::new(
                        n,
                        format!(
                            "every line of an added file starts with `+` (a lone `+` for an empty line), not `{}`",
                            clip(l, 80)
                        ),
                    ));
                }
            }
            sections.push(Section {
                path,
                kind: SectionKind::Add { content },
            });
        } else if let Some(rest) = trimmed.strip_prefix(DELETE) {
            let path = header_path(rest, number, "`*** Delete File:`")?;
            sections.push(Section {
                path,
                kind: SectionKind::Delete,
            });
        } else if let Some(rest) = trimmed.strip_prefix(UPDATE) {
            let path = header_path(rest, number, "`*** Update File:`")?;
            let mut move_to = None;
            if let Some(&(n, l)) = lines.get(i) {
                if let Some(rest) = l.trim().strip_prefix(MOVE) {
                    move_to = Some(header_path(rest, n, "`*** Move to:`")?);
                    i += 1;
                }
            }
            let hunks = parse_hunks(&lines, &mut i)?;
            if hunks.is_empty() && move_to.is_none() {
                return Err(PatchError::new(
                    number,
                    format!("`*** Update File: {path}` has no hunk (each starts with `@@`)"),
                ));
            }
            sections.push(Section {
                path,
                kind: SectionKind::Update { move_to, hunks },
            });
        } else {
            return Err(PatchError::new(
                number,
                format!(
                    "expected `*** Add File: PATH`, `*** Delete File: PATH`, `*** Update File: PATH` or `{END}`, not `{}`",
                    clip(trimmed, 80)
                ),
            ));
        }
    }
}

/// Whether only blank lines stand between here and a section header (or
/// the end of the text).
fn next_is_header(rest: &[(usize, &str)]) -> bool {
    rest.iter()
        .find(|(_, l)| !l.trim().is_empty())
        .is_none_or(|(_, l)| section_header(l))
}

fn parse_hunks(lines: &[(usize, &str)], i: &mut usize) -> Result<Vec<Hunk>, PatchError> {
    let mut hunks: Vec<Hunk> = Vec::new();
    // The line number of the current hunk's header, once one is open.
    let mut open: Option<usize> = None;
    let mut closed_by_eof = false;
    while let Some(&(n, line)) = lines.get(*i) {
        if section_header(line) {
            break;
        }
        let trimmed = line.trim_end();
        if trimmed.starts_with("@@") {
            if let (Some(h), Some(header)) = (hunks.last(), open) {
                if h.lines.is_empty() {
                    return Err(PatchError::new(header, "empty hunk: no line after `@@`"));
                }
            }
            hunks.push(Hunk {
                anchor: hunk_anchor(trimmed),
                lines: Vec::new(),
                end_of_file: false,
            });
            open = Some(n);
            closed_by_eof = false;
            *i += 1;
            continue;
        }
        if trimmed == END_OF_FILE {
            match (hunks.last_mut(), closed_by_eof) {
                (Some(h), false) if !h.lines.is_empty() => {
                    h.end_of_file = true;
                    closed_by_eof = true;
                    *i += 1;
                    continue;
                }
                _ => {
                    return Err(PatchError::new(
                        n,
                        format!("`{END_OF_FILE}` must follow the lines of a hunk"),
                    ))
                }
            }
        }
        if trimmed.is_empty() && next_is_header(&lines[*i..]) {
            // A blank line before the next section.
            *i += 1;
            continue;
        }
        if closed_by_eof {
            return Err(PatchError::new(
                n,
                format!("after `{END_OF_FILE}` a new hunk starts with `@@`"),
            ));
        }
        let (op, text) = match line.chars().next() {
            Some(' ') => (Op::Keep, &line[1..]),
            Some('-') => (Op::Remove, &line[1..]),
            Some('+') => (Op::Insert, &line[1..]),
            // An empty line: an empty context line whose space was lost.
            None => (Op::Keep, ""),
            Some(_) => {
                let hint = if line.starts_with("***") {
                    "an unknown `***` marker".to_owned()
                } else {
                    format!("`{}`", clip(line, 80))
                };
                return Err(PatchError::new(
                    n,
                    format!(
                        "every line of a hunk starts with ` ` (context), `-` (removed) or `+` (added); found {hint}"
                    ),
                ));
            }
        };
        if hunks.is_empty() {
            // The first hunk may leave out its `@@`.
            hunks.push(Hunk {
                anchor: None,
                lines: Vec::new(),
                end_of_file: false,
            });
            open = Some(n);
        }
        if let Some(h) = hunks.last_mut() {
            h.lines.push((op, text.to_owned()));
        }
        *i += 1;
    }
    if let (Some(h), Some(header)) = (hunks.last(), open) {
        if h.lines.is_empty() {
            return Err(PatchError::new(header, "empty hunk: no line after `@@`"));
        }
    }
    // Blank lines ending a hunk are separators, not context.
    for h in &mut hunks {
        while h.lines.len() > 1
            && h.lines
                .last()
                .is_some_and(|(op, l)| *op == Op::Keep && l.is_empty())
        {
            h.lines.pop();
        }
    }
    Ok(hunks)
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

// ---------------------------------------------------------------------------
// Text: lines, line endings, seeking hunks
// ---------------------------------------------------------------------------

/// A text file as lines, with what is needed to write it back the same way.
struct Text {
    lines: Vec<String>,
    crlf: bool,
    final_newline: bool,
    bom: bool,
}

impl Text {
    fn parse(content: &str) -> Text {
        let (bom, content) = match content.strip_prefix('\u{feff}') {
            Some(rest) => (true, rest),
            None => (false, content),
        };
        let newlines = content.matches('\n').count();
        let crlf = newlines > 0 && content.matches("\r\n").count() == newlines;
        let final_newline = content.ends_with('\n');
        let body = content.strip_suffix('\n').unwrap_or(content);
        let lines = if content.is_empty() {
            Vec::new()
        } else {
            body.split('\n')
                .map(|l| {
                    if crlf {
                        l.strip_suffix('\r').unwrap_or(l).to_owned()
                    } else {
                        l.to_owned()
                    }
                })
                .collect()
        };
        Text {
            lines,
            crlf,
            final_newline,
            bom,
        }
    }

    fn render(&self) -> String {
        let eol = if self.crlf { "\r\n" } else { "\n" };
        let mut out = String::new();
        if self.bom {
            out.push('\u{feff}');
        }
        out.push_str(&self.lines.join(eol));
        if self.final_newline && !self.lines.is_empty() {
            out.push_str(eol);
        }
        out
    }
}

/// The ways two lines may be equal, strictest first.
const LOOSENESS: [fn(&str) -> std::borrow::Cow<'_, str>; 4] = [
    |s| s.into(),
    |s| s.trim_end().into(),
    |s| s.trim().into(),
    |s| plain(s).into(),
];

/// `s` trimmed, with typographic dashes, quotes and spaces as ASCII.
fn plain(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}'..='\u{201B}' => '\'',
            '\u{201C}'..='\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

/// Where `pattern` first occurs in `lines` at or after `from` (only at the
/// very end when `at_end`), trying each looseness in turn over the whole
/// range before the next.
fn seek(lines: &[String], pattern: &[&str], from: usize, at_end: bool) -> Option<usize> {
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let range = if at_end {
        if last < from {
            return None;
        }
        last..=last
    } else {
        if from > last {
            return None;
        }
        from..=last
    };
    for norm in LOOSENESS {
        let wanted: Vec<_> = pattern.iter().map(|p| norm(p)).collect();
        // Each line normalised once, not once per place tried.
        let normed: Vec<_> = lines[*range.start()..].iter().map(|l| norm(l)).collect();
        let base = *range.start();
        for start in range.clone() {
            if wanted
                .iter()
                .zip(&normed[start - base..])
                .all(|(want, line)| line == want)
            {
                return Some(start);
            }
        }
    }
    None
}

/// Where a line came from in the new content: an index of the old lines,
/// or the patch.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Old(usize),
    Patch,
}

/// A change to show: removed lines and added lines, numbered in the new
/// content.
enum Shown {
    Removed(usize, String),
    Added(usize, String),
}

/// Why a hunk did not apply, for the model to correct itself.
fn hunk_failure(
    shown_path: &str,
    number: usize,
    hunk: &Hunk,
    lines: &[String],
    from: usize,
    what: &str,
) -> String {
    let old = hunk.old_lines();
    let mut msg = format!("{shown_path}: hunk {number} does not apply: {what}");
    if !old.is_empty() {
        msg.push_str(":\n");
        for line in old.iter().take(40) {
            msg.push_str("  ");
            msg.push_str(&clip(line, 200));
            msg.push('\n');
        }
        if old.len() > 40 {
            msg.push_str(&format!("  [… {} more lines]\n", old.len() - 40));
        }
    } else {
        msg.push('\n');
    }
    if from > 0 {
        msg.push_str(&format!(
            "(searched from line {}, after the previous hunk or the `@@` line; hunks go in file order)\n",
            from + 1
        ));
        if !old.is_empty() {
            if let Some(at) = seek(lines, &old, 0, false) {
                msg.push_str(&format!(
                    "These lines are at line {}, before where the search started.\n",
                    at + 1
                ));
                return msg;
            }
        }
    }
    if let Some((at, count)) = nearest(lines, &old) {
        msg.push_str(&format!(
            "Nearest: line {} ({count} of {} lines match); the file there reads:\n",
            at + 1,
            old.len()
        ));
        for (k, line) in lines.iter().enumerate().skip(at).take(old.len().min(40)) {
            msg.push_str(&format!("{:>6} | {}\n", k + 1, clip(line, 200)));
        }
    }
    msg
}

/// The place where most of `pattern`'s lines match (ignoring surrounding
/// whitespace), when that is cheap to find and at least one line does.
fn nearest(lines: &[String], pattern: &[&str]) -> Option<(usize, usize)> {
    if pattern.is_empty() || lines.len().saturating_mul(pattern.len()) > 4_000_000 {
        return None;
    }
    let wanted: Vec<&str> = pattern.iter().map(|p| p.trim()).collect();
    let mut best: Option<(usize, usize)> = None;
    for start in 0..lines.len() {
        let count = wanted
            .iter()
            .zip(&lines[start..])
            .filter(|(want, line)| !want.is_empty() && line.trim() == **want)
            .count();
        if count > 0 && best.is_none_or(|(_, c)| count > c) {
            best = Some((start, count));
        }
    }
    best
}

/// The hunks of one section applied to `content`.
struct Updated {
    content: String,
    shown: Vec<Shown>,
}

fn apply_hunks(shown_path: &str, content: &str, hunks: &[Hunk]) -> Result<Updated, String> {
    let text = Text::parse(content);
    let old = &text.lines;
    // (start, length, hunk index) in the old lines.
    let mut places: Vec<(usize, usize, usize)> = Vec::new();
    let mut cursor = 0usize;
    for (index, hunk) in hunks.iter().enumerate() {
        let number = index + 1;
        if let Some(anchor) = &hunk.anchor {
            match seek(old, &[anchor.as_str()], cursor, false) {
                Some(at) => cursor = at + 1,
                None => {
                    let mut msg = format!(
                        "{shown_path}: hunk {number} does not apply: its `@@ {}` line was not found",
                        clip(anchor, 200)
                    );
                    if cursor > 0 {
                        msg.push_str(&format!(" after line {} (hunks go in file order)", cursor));
                    }
                    msg.push_str("; the text after `@@` must be a whole line of the file, such as a function's signature\n");
                    let needle = anchor.trim();
                    let similar: Vec<String> = old
                        .iter()
                        .enumerate()
                        .filter(|(_, l)| l.contains(needle))
                        .take(3)
                        .map(|(k, l)| format!("{:>6} | {}\n", k + 1, clip(l, 200)))
                        .collect();
                    if !similar.is_empty() {
                        msg.push_str("Lines containing that text:\n");
                        msg.push_str(&similar.concat());
                    }
                    return Err(msg);
                }
            }
        }
        let pattern = hunk.old_lines();
        let at = if pattern.is_empty() {
            // Only added lines: below the anchor, else at the end.
            if hunk.anchor.is_some() && !hunk.end_of_file {
                Some(cursor)
            } else {
                Some(old.len())
            }
        } else {
            seek(old, &pattern, cursor, hunk.end_of_file)
        };
        let Some(at) = at else {
            let what = if hunk.end_of_file {
                "these lines are not the end of the file"
            } else {
                "these lines were not found"
            };
            return Err(hunk_failure(shown_path, number, hunk, old, cursor, what));
        };
        places.push((at, pattern.len(), index));
        cursor = at + pattern.len();
    }
    // Build the new lines, remembering where each came from.
    let mut new_lines: Vec<String> = Vec::with_capacity(old.len());
    let mut origins: Vec<Origin> = Vec::with_capacity(old.len());
    let mut shown = Vec::new();
    let mut next_old = 0usize;
    for &(at, _, index) in &places {
        while next_old < at {
            new_lines.push(old[next_old].clone());
            origins.push(Origin::Old(next_old));
            next_old += 1;
        }
        for (op, line) in &hunks[index].lines {
            match op {
                Op::Keep => {
                    // The file's own line, whatever whitespace the patch had.
                    new_lines.push(old[next_old].clone());
                    origins.push(Origin::Old(next_old));
                    next_old += 1;
                }
                Op::Remove => {
                    shown.push(Shown::Removed(new_lines.len() + 1, old[next_old].clone()));
                    next_old += 1;
                }
                Op::Insert => {
                    new_lines.push(line.clone());
                    origins.push(Origin::Patch);
                    shown.push(Shown::Added(new_lines.len(), line.clone()));
                }
            }
        }
    }
    while next_old < old.len() {
        new_lines.push(old[next_old].clone());
        origins.push(Origin::Old(next_old));
        next_old += 1;
    }
    // A missing final newline stays missing while the old last line is
    // still last; a line the patch wrote last ends with a newline.
    let final_newline = text.final_newline
        || text.lines.is_empty()
        || origins.last() != Some(&Origin::Old(old.len() - 1));
    let result = Text {
        lines: new_lines,
        crlf: text.crlf,
        final_newline,
        bom: text.bom,
    };
    Ok(Updated {
        content: result.render(),
        shown,
    })
}

// ---------------------------------------------------------------------------
// Planning: every change computed in memory, every precondition checked
// ---------------------------------------------------------------------------

/// A file's content and permission bits.
#[derive(Clone)]
struct Content {
    bytes: Vec<u8>,
    mode: u32,
}

/// One file the patch touches, by where its bytes are.
struct Entry {
    /// Where the bytes are (links of existing directories, and of the file
    /// itself for an update, resolved).
    real: PathBuf,
    /// The path as the agent names it (absolute, normalised): the key of
    /// the read records.
    named: PathBuf,
    /// What is on disk now.
    original: Option<Content>,
    /// How the file looked on disk when it was read (`None`: absent).
    stamp: Option<Stamp>,
    /// After the sections so far.
    current: Option<Content>,
    /// A move's source that is the same file as its destination (a hard
    /// link, or a name differing only in case on a case-insensitive file
    /// system): removed only if it is still another file once the
    /// destination is written.
    unless_same_as: Option<PathBuf>,
}

/// What a section amounts to, for the answer.
enum Outcome {
    Added(String),
    Deleted(String),
    Modified(String, Vec<Shown>),
    Renamed(String, String, Vec<Shown>),
}

struct Plan {
    entries: Vec<Entry>,
    outcomes: Vec<Outcome>,
    /// Directories to create, parents first.
    new_dirs: Vec<PathBuf>,
}

fn does_not_apply(message: impl Into<String>) -> ToolError {
    ToolError::new(
        ErrorCode::ToolError,
        format!(
            "the patch does not apply; nothing was changed.\n{}",
            message.into().trim_end()
        ),
    )
}

fn io_problem(path: &str, what: &str, err: &io::Error) -> ToolError {
    does_not_apply(format!("{path}: {what}: {err}"))
}

/// Where the bytes for `path` land: existing parents resolved through
/// links, and, when `follow` is set and the path is a link, the link's
/// target. The rest of the path (directories still to create) is kept.
fn resolve(path: &Path, follow: bool) -> io::Result<PathBuf> {
    if follow {
        if let Ok(real) = fs::canonicalize(path) {
            return Ok(real);
        }
    }
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a file name",
        ));
    };
    let mut missing = vec![name.to_os_string()];
    let mut dir = path.parent();
    while let Some(d) = dir {
        match fs::canonicalize(d) {
            Ok(real) => {
                let mut out = real;
                for part in missing.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(_) => {
                if let Some(n) = d.file_name() {
                    missing.push(n.to_os_string());
                }
                dir = d.parent();
            }
        }
    }
    Ok(path.to_path_buf())
}

impl Plan {
    fn entry(&mut self, tools: &FileTools, shown: &str, follow: bool) -> Result<usize, ToolError> {
        let named = tools.absolute(shown);
        let real = resolve(&named, follow).map_err(|e| io_problem(shown, "bad path", &e))?;
        if let Some(i) = self.entries.iter().position(|e| e.real == real) {
            return Ok(i);
        }
        // Before reading: a change while reading shows at the commit.
        let stamp = stamp(&real);
        let original = match fs::symlink_metadata(&real) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
                let file = real
                    .ancestors()
                    .skip(1)
                    .find(|d| fs::metadata(d).is_ok_and(|m| !m.is_dir()))
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|| "a parent".to_owned());
                return Err(does_not_apply(format!(
                    "{shown}: cannot be written: {file} is not a directory"
                )));
            }
            Err(e) => return Err(io_problem(shown, "cannot inspect", &e)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(does_not_apply(format!(
                    "{shown}: is a symbolic link; apply_patch adds, deletes and renames only regular files (an update writes through a link)"
                )));
            }
            Ok(meta) if !meta.is_file() => {
                return Err(does_not_apply(format!(
                    "{shown}: is not a regular file ({})",
                    kind_of(&meta)
                )));
            }
            Ok(meta) => {
                let bytes = fs::read(&real).map_err(|e| io_problem(shown, "cannot read", &e))?;
                Some(Content {
                    bytes,
                    mode: meta.permissions().mode() & 0o7777,
                })
            }
        };
        self.entries.push(Entry {
            real,
            named,
            stamp,
            current: original.clone(),
            original,
            unless_same_as: None,
        });
        Ok(self.entries.len() - 1)
    }
}

fn kind_of(meta: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

fn plan(tools: &FileTools, sections: &[Section]) -> Result<Plan, ToolError> {
    let mut plan = Plan {
        entries: Vec::new(),
        outcomes: Vec::new(),
        new_dirs: Vec::new(),
    };
    for section in sections {
        let shown = section.path.as_str();
        match &section.kind {
            SectionKind::Add { content } => {
                let i = plan.entry(tools, shown, false)?;
                if plan.entries[i].current.is_some() {
                    return Err(does_not_apply(format!(
                        "{shown}: cannot add: the file already exists (update it with `*** Update File:`, or delete it first)"
                    )));
                }
                plan.entries[i].current = Some(Content {
                    bytes: content.clone().into_bytes(),
                    mode: 0o644,
                });
                plan.outcomes.push(Outcome::Added(shown.to_owned()));
            }
            SectionKind::Delete => {
                let i = plan.entry(tools, shown, false)?;
                if plan.entries[i].current.take().is_none() {
                    return Err(does_not_apply(format!(
                        "{shown}: cannot delete: no such file"
                    )));
                }
                plan.outcomes.push(Outcome::Deleted(shown.to_owned()));
            }
            SectionKind::Update { move_to, hunks } => {
                let i = plan.entry(tools, shown, move_to.is_none())?;
                let Some(current) = plan.entries[i].current.clone() else {
                    return Err(does_not_apply(format!(
                        "{shown}: cannot update: no such file (create it with `*** Add File:`)"
                    )));
                };
                let denied = tools.is_read_denied(&plan.entries[i].named)
                    || tools.is_read_denied(&plan.entries[i].real);
                if !hunks.is_empty() && denied {
                    return Err(ToolError::new(
                        ErrorCode::PermissionDenied,
                        format!(
                            "{shown}: reading this file is denied, so a patch cannot update it"
                        ),
                    ));
                }
                let (bytes, shown_lines) = if hunks.is_empty() {
                    (current.bytes, Vec::new())
                } else {
                    let text = std::str::from_utf8(&current.bytes).map_err(|e| {
                        does_not_apply(format!(
                            "{shown}: is not UTF-8 text (invalid byte at offset {}); apply_patch updates text files only",
                            e.valid_up_to()
                        ))
                    })?;
                    let updated = apply_hunks(shown, text, hunks).map_err(does_not_apply)?;
                    (updated.content.into_bytes(), updated.shown)
                };
                let content = Content {
                    bytes,
                    mode: current.mode,
                };
                match move_to {
                    None => {
                        plan.entries[i].current = Some(content);
                        plan.outcomes
                            .push(Outcome::Modified(shown.to_owned(), shown_lines));
                    }
                    Some(dest) => {
                        let j = plan.entry(tools, dest, false)?;
                        if i == j {
                            // The same file under another spelling.
                            plan.entries[i].current = Some(content);
                        } else {
                            if plan.entries[j].current.is_some() {
                                let same = same_file(&plan.entries[i].real, &plan.entries[j].real);
                                if !same || plan.entries[j].original.is_none() {
                                    return Err(does_not_apply(format!(
                                        "{shown}: cannot move to {dest}: it already exists"
                                    )));
                                }
                                plan.entries[i].unless_same_as = Some(plan.entries[j].real.clone());
                            }
                            plan.entries[j].current = Some(content);
                            plan.entries[i].current = None;
                        }
                        plan.outcomes.push(Outcome::Renamed(
                            shown.to_owned(),
                            dest.clone(),
                            shown_lines,
                        ));
                    }
                }
            }
        }
    }
    // Where every changed file lands: directories to create, and the
    // sandbox's word.
    for entry in &plan.entries {
        if entry.current.is_none() && entry.original.is_none() {
            continue;
        }
        if entry.current.is_some() {
            // A file of this patch cannot be another's directory.
            if let Some(other) = plan.entries.iter().find(|o| {
                o.current.is_some() && o.real != entry.real && entry.real.starts_with(&o.real)
            }) {
                return Err(does_not_apply(format!(
                    "{}: cannot be created: {} is a file of this patch",
                    entry.real.display(),
                    other.real.display()
                )));
            }
            let mut missing = Vec::new();
            let mut dir = entry.real.parent();
            while let Some(d) = dir {
                match fs::metadata(d) {
                    Ok(meta) if meta.is_dir() => break,
                    Ok(_) => {
                        return Err(does_not_apply(format!(
                            "{}: cannot be written: {} is not a directory",
                            entry.real.display(),
                            d.display()
                        )))
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        missing.push(d.to_path_buf());
                        dir = d.parent();
                    }
                    Err(e) => {
                        return Err(does_not_apply(format!(
                            "{}: cannot inspect {}: {e}",
                            entry.real.display(),
                            d.display()
                        )))
                    }
                }
            }
            for d in missing.into_iter().rev() {
                if !plan.new_dirs.contains(&d) {
                    plan.new_dirs.push(d);
                }
            }
        }
        tools.check_writable(&entry.real)?;
    }
    Ok(plan)
}

/// Enough of a file's metadata to notice that it changed.
#[derive(PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

fn stamp(path: &Path) -> Option<Stamp> {
    fs::symlink_metadata(path).ok().map(|m| Stamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime: (m.mtime(), m.mtime_nsec()),
        ctime: (m.ctime(), m.ctime_nsec()),
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Committing, and undoing a commit that failed midway
// ---------------------------------------------------------------------------

/// A change made on disk, with what undoes it.
enum Done {
    /// `real` was written; `before` is its old content, `None` if it was new.
    Wrote {
        real: PathBuf,
        before: Option<Content>,
    },
    /// `real` was removed; it held `before`.
    Removed { real: PathBuf, before: Content },
}

#[cfg(test)]
thread_local! {
    /// For the unit tests: the commit step (0-based) that fails.
    static FAIL_AT: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

fn injected_failure(_step: usize) -> io::Result<()> {
    #[cfg(test)]
    if FAIL_AT.with(|f| f.get()) == Some(_step) {
        return Err(io::Error::other("injected failure"));
    }
    Ok(())
}

/// Applies `plan` on disk: everything, or (when a step fails) nothing,
/// as far as the file system lets the undo succeed.
fn commit(plan: &Plan) -> Result<(), ToolError> {
    let changed: Vec<&Entry> = plan
        .entries
        .iter()
        .filter(|e| match (&e.original, &e.current) {
            (None, None) => false,
            (Some(a), Some(b)) => a.bytes != b.bytes || a.mode != b.mode,
            _ => true,
        })
        .collect();
    // A file changed by someone else since it was read would be lost.
    if let Some(entry) = changed.iter().find(|e| stamp(&e.real) != e.stamp) {
        return Err(commit_error(
            format!(
                "{} changed on disk while the patch was prepared",
                entry.real.display()
            ),
            &[],
            Vec::new(),
        ));
    }
    // Directories first, then every new content staged beside its target.
    let mut created: Vec<&Path> = Vec::new();
    let undo_dirs = |created: &[&Path]| -> Vec<String> {
        let mut problems = Vec::new();
        for d in created.iter().rev() {
            if let Err(e) = fs::remove_dir(d) {
                problems.push(format!(
                    "could not remove the directory {} it created: {e}",
                    d.display()
                ));
            }
        }
        problems
    };
    for d in &plan.new_dirs {
        if let Err(e) = fs::create_dir(d) {
            let problems = undo_dirs(&created);
            return Err(commit_error(
                format!("creating the directory {} failed: {e}", d.display()),
                &[],
                problems,
            ));
        }
        created.push(d);
    }
    let mut staged: Vec<(&Entry, Staged)> = Vec::new();
    for entry in changed.iter().filter(|e| e.current.is_some()) {
        let Some(content) = &entry.current else {
            continue;
        };
        match Staged::new(&entry.real, &content.bytes, content.mode) {
            Ok(s) => staged.push((entry, s)),
            Err(e) => {
                drop(staged);
                let problems = undo_dirs(&created);
                return Err(commit_error(
                    format!("writing {} failed: {e}", entry.real.display()),
                    &[],
                    problems,
                ));
            }
        }
    }
    // The renames, then the removals.
    let mut done: Vec<Done> = Vec::new();
    let mut step = 0usize;
    let mut failure: Option<String> = None;
    let mut remaining = staged.into_iter();
    for (entry, s) in remaining.by_ref() {
        let result = injected_failure(step).and_then(|()| s.commit());
        step += 1;
        match result {
            Ok(()) => done.push(Done::Wrote {
                real: entry.real.clone(),
                before: entry.original.clone(),
            }),
            Err(e) => {
                failure = Some(format!("writing {} failed: {e}", entry.real.display()));
                break;
            }
        }
    }
    // Temporary files not committed are removed here.
    drop(remaining);
    if failure.is_none() {
        for entry in changed.iter().filter(|e| e.current.is_none()) {
            let Some(before) = &entry.original else {
                continue;
            };
            if let Some(dest) = &entry.unless_same_as {
                if same_file(&entry.real, dest) {
                    continue;
                }
            }
            let result = injected_failure(step).and_then(|()| fs::remove_file(&entry.real));
            step += 1;
            match result {
                Ok(()) => done.push(Done::Removed {
                    real: entry.real.clone(),
                    before: before.clone(),
                }),
                Err(e) => {
                    failure = Some(format!("deleting {} failed: {e}", entry.real.display()));
                    break;
                }
            }
        }
    }
    let Some(failure) = failure else {
        return Ok(());
    };
    // Undo, newest first.
    let mut restored = Vec::new();
    let mut problems = Vec::new();
    for change in done.iter().rev() {
        match change {
            Done::Wrote {
                real,
                before: Some(before),
            } => match atomic::replace(real, &before.bytes, before.mode) {
                Ok(()) => restored.push(format!("{}: old content put back", real.display())),
                Err(e) => problems.push(format!(
                    "could not put back the old content of {} ({} bytes); it has the patch's content: {e}",
                    real.display(),
                    before.bytes.len()
                )),
            },
            Done::Wrote { real, before: None } => match fs::remove_file(real) {
                Ok(()) => restored.push(format!("{}: new file removed", real.display())),
                Err(e) => problems.push(format!(
                    "could not remove the new file {}: {e}",
                    real.display()
                )),
            },
            Done::Removed { real, before } => {
                match atomic::replace(real, &before.bytes, before.mode) {
                    Ok(()) => restored.push(format!("{}: deleted file put back", real.display())),
                    Err(e) => problems.push(format!(
                        "could not put back the deleted file {} ({} bytes): {e}",
                        real.display(),
                        before.bytes.len()
                    )),
                }
            }
        }
    }
    problems.extend(undo_dirs(&created));
    Err(commit_error(failure, &restored, problems))
}

fn commit_error(failure: String, restored: &[String], problems: Vec<String>) -> ToolError {
    let mut msg = format!("applying the patch failed: {failure}.\n");
    if problems.is_empty() {
        if restored.is_empty() {
            msg.push_str("Nothing was changed.");
        } else {
            msg.push_str("Every change already made was undone, so nothing was changed:\n");
            for r in restored {
                msg.push_str(&format!("  {r}\n"));
            }
        }
    } else {
        msg.push_str("Undoing the changes already made did not fully succeed:\n");
        for r in restored {
            msg.push_str(&format!("  {r}\n"));
        }
        for p in &problems {
            msg.push_str(&format!("  {p}\n"));
        }
    }
    ToolError::new(ErrorCode::ToolError, msg.trim_end().to_owned())
}

// ---------------------------------------------------------------------------
// The answer
// ---------------------------------------------------------------------------

/// The longest line of a file shown in the answer.
const MAX_SHOWN_LINE: usize = 200;

fn answer(outcomes: &[Outcome], budget: usize) -> String {
    let status = |o: &Outcome| match o {
        Outcome::Added(p) => format!("A {p}"),
        Outcome::Deleted(p) => format!("D {p}"),
        Outcome::Modified(p, _) => format!("M {p}"),
        Outcome::Renamed(from, to, _) => format!("R {from} -> {to}"),
    };
    // The name-status lines always fit: the details share what is left.
    let status_chars: usize = outcomes.iter().map(|o| status(o).chars().count() + 1).sum();
    let mut left = budget.saturating_sub(status_chars + 80);
    let mut out = String::new();
    let mut omitted = 0usize;
    for o in outcomes {
        out.push_str(&status(o));
        out.push('\n');
        let details = match o {
            Outcome::Modified(_, d) | Outcome::Renamed(_, _, d) => d.as_slice(),
            _ => &[],
        };
        for d in details {
            let line = match d {
                Shown::Removed(n, text) => format!("- {n:>4} | {}\n", clip(text, MAX_SHOWN_LINE)),
                Shown::Added(n, text) => format!("+ {n:>4} | {}\n", clip(text, MAX_SHOWN_LINE)),
            };
            let chars = line.chars().count();
            if omitted == 0 && chars <= left {
                left -= chars;
                out.push_str(&line);
            } else {
                omitted += 1;
            }
        }
    }
    if omitted > 0 {
        out.push_str(&format!(
            "[… {omitted} changed lines not shown: the answer's budget is spent]\n"
        ));
    }
    out.trim_end().to_owned()
}

/// `err` with its message cut to `budget` characters.
fn bounded(err: ToolError, budget: usize) -> ToolError {
    let message = err.message();
    if message.chars().count() <= budget {
        return err;
    }
    let note = "\n[… the rest of this error is cut: the answer's budget is spent]";
    let keep = budget.saturating_sub(note.chars().count());
    let mut cut: String = message.chars().take(keep).collect();
    cut.push_str(note);
    ToolError::new(err.code(), cut)
}

fn apply(tools: &FileTools, patch: &str, agent: Option<&str>) -> Result<String, ToolError> {
    apply_unbounded(tools, patch, agent).map_err(|e| bounded(e, tools.config().max_output_chars))
}

fn apply_unbounded(
    tools: &FileTools,
    patch: &str,
    agent: Option<&str>,
) -> Result<String, ToolError> {
    let sections = parse(patch)?;
    let plan = plan(tools, &sections)?;
    commit(&plan)?;
    for entry in &plan.entries {
        match &entry.current {
            Some(content) => tools
                .records()
                .saw(agent, &entry.real, content_hash(&content.bytes)),
            None if entry.original.is_some() => tools.records().forget(agent, &entry.real),
            None => {}
        }
    }
    Ok(answer(&plan.outcomes, tools.config().max_output_chars))
}

// ---------------------------------------------------------------------------
// The tool
// ---------------------------------------------------------------------------

/// The `apply_patch` tool: Codex's patch format, applied all or nothing.
#[derive(Clone)]
pub struct ApplyPatchTool {
    tools: FileTools,
}

impl ApplyPatchTool {
    /// An `apply_patch` tool for the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        ApplyPatchTool { tools }
    }
}

impl Tool for ApplyPatchTool {
    type Args = ApplyPatchArgs;

    fn name(&self) -> &str {
        "apply_patch"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    async fn call(
        &self,
        args: ApplyPatchArgs,
        ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        if ctx.is_cancelled() {
            return Err(ToolError::new(
                ErrorCode::Aborted,
                "tool call aborted before the patch was applied",
            ));
        }
        let tools = self.tools.clone();
        let agent = ctx.agent.clone();
        let text =
            tokio::task::spawn_blocking(move || apply(&tools, &args.patch, agent.as_deref()))
                .await
                .map_err(|e| {
                    ToolError::new(ErrorCode::ToolPanicked, format!("apply_patch stopped: {e}"))
                })??;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &ApplyPatchArgs) -> Option<ToolCallPresentation> {
        let title = match patch_paths(&args.patch) {
            Ok(paths) => {
                let mut names: Vec<String> = Vec::new();
                for (k, p) in paths.iter().enumerate() {
                    let name = match p.operation {
                        PatchOperation::MoveTo => continue,
                        PatchOperation::MoveFrom => {
                            let to = paths
                                .get(k + 1)
                                .filter(|q| q.operation == PatchOperation::MoveTo)
                                .map(|q| q.path.as_str())
                                .unwrap_or("?");
                            format!("{} -> {to}", p.path)
                        }
                        _ => p.path.clone(),
                    };
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                let shown = names.len().min(5);
                let mut title = format!("Patch {}", names[..shown].join(", "));
                if names.len() > shown {
                    title.push_str(&format!(" (+{} more)", names.len() - shown));
                }
                title
            }
            Err(_) => "Patch (malformed)".to_owned(),
        };
        Some(ToolCallPresentation {
            title,
            kind: ToolCallKind::Edit,
            raw_input: Some(serde_json::Value::String(args.patch.clone())),
            content: Vec::new(),
            terminal: None,
            locations: patch_paths(&args.patch)
                .unwrap_or_default()
                .into_iter()
                .filter(|p| p.operation != PatchOperation::MoveFrom)
                .map(|p| dsh_tools::ToolLocation {
                    path: p.path,
                    line: None,
                })
                .collect(),
        })
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Apply a patch to files".into()),
            read_only: Some(false),
            destructive: Some(true),
            idempotent: Some(false),
            open_world: Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_round_trips_line_endings() {
        for content in [
            "",
            "a",
            "a\n",
            "a\r\nb\r\n",
            "a\r\nb",
            "\u{feff}x\n",
            "a\n\n",
            "\n",
        ] {
            assert_eq!(Text::parse(content).render(), content, "{content:?}");
        }
    }

    #[test]
    fn anchors_of_hunk_headers() {
        assert_eq!(hunk_anchor("@@"), None);
        assert_eq!(hunk_anchor("@@ fn main() {"), Some("fn main() {".into()));
        assert_eq!(hunk_anchor("@@ -1,3 +1,4 @@"), None);
        assert_eq!(hunk_anchor("@@ -1,3 +1,4 @@ fn f()"), Some("fn f()".into()));
        assert_eq!(hunk_anchor("@@ - item"), Some("- item".into()));
    }

    #[test]
    fn seek_prefers_stricter_matches_anywhere() {
        let lines: Vec<String> = ["  x", "x", "y"].iter().map(|s| s.to_string()).collect();
        assert_eq!(seek(&lines, &["x"], 0, false), Some(1));
        assert_eq!(seek(&lines, &["x "], 0, false), Some(1));
        assert_eq!(seek(&lines, &[" x"], 0, false), Some(0));
        assert_eq!(seek(&lines, &["y"], 0, true), Some(2));
        assert_eq!(seek(&lines, &["x"], 0, true), None);
        assert_eq!(seek(&lines, &["a", "b", "c", "d"], 0, false), None);
    }

    #[test]
    fn typographic_punctuation_matches_ascii() {
        let lines = vec!["let s = \u{201C}a\u{2014}b\u{201D};".to_string()];
        assert_eq!(seek(&lines, &["let s = \"a-b\";"], 0, false), Some(0));
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("dsh-patch-unit-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn a_file_changed_after_planning_is_not_overwritten() {
        let dir = temp_dir("changed");
        fs::write(dir.join("a.txt"), "a\n").unwrap();
        fs::write(dir.join("b.txt"), "b\n").unwrap();
        let tools = FileTools::new(crate::FsConfig::new(&dir));
        let sections = parse(
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: b.txt\n*** Add File: c.txt\n+c\n*** End Patch",
        )
        .unwrap();
        let planned = plan(&tools, &sections).unwrap();
        fs::write(dir.join("b.txt"), "someone else's\n").unwrap();
        let err = commit(&planned).unwrap_err();
        assert!(
            err.message().contains("b.txt changed on disk"),
            "{}",
            err.message()
        );
        assert_eq!(fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
        assert_eq!(
            fs::read_to_string(dir.join("b.txt")).unwrap(),
            "someone else's\n"
        );
        assert!(!dir.join("c.txt").exists());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failure_at_any_commit_step_is_undone() {
        let patch = "*** Begin Patch
*** Update File: a.txt
@@
-a
+A
*** Add File: new/b.txt
+b
*** Delete File: c.txt
*** Update File: d.txt
*** Move to: e.txt
@@
-d
+D
*** End Patch";
        // Steps: write a.txt, new/b.txt, e.txt, then remove c.txt, d.txt.
        for fail_at in 0..5 {
            let dir = temp_dir(&format!("undo-{fail_at}"));
            fs::write(dir.join("a.txt"), "a\n").unwrap();
            fs::write(dir.join("c.txt"), "c\n").unwrap();
            fs::write(dir.join("d.txt"), "d\n").unwrap();
            fs::set_permissions(dir.join("d.txt"), fs::Permissions::from_mode(0o751)).unwrap();
            let tools = FileTools::new(crate::FsConfig::new(&dir));
            FAIL_AT.with(|f| f.set(Some(fail_at)));
            let err = apply(&tools, patch, None).unwrap_err();
            FAIL_AT.with(|f| f.set(None));
            assert_eq!(err.code(), ErrorCode::ToolError);
            assert!(
                err.message().contains("injected failure"),
                "{}",
                err.message()
            );
            assert!(
                err.message().to_lowercase().contains("nothing was changed"),
                "{}",
                err.message()
            );
            let mut names: Vec<String> = fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            assert_eq!(names, ["a.txt", "c.txt", "d.txt"], "step {fail_at}");
            assert_eq!(fs::read_to_string(dir.join("a.txt")).unwrap(), "a\n");
            assert_eq!(fs::read_to_string(dir.join("c.txt")).unwrap(), "c\n");
            assert_eq!(fs::read_to_string(dir.join("d.txt")).unwrap(), "d\n");
            let mode = fs::metadata(dir.join("d.txt"))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777;
            assert_eq!(mode, 0o751);
            fs::remove_dir_all(&dir).unwrap();
        }
    }
}
