//! `write` and `edit`: a file changed only as its last read saw it,
//! replaced atomically, its line endings and mode kept.

use crate::atomic::Staged;
use crate::read::open_regular;
use crate::records::{content_hash, Unseen, EDIT_LIMIT};
use crate::{blocking, failure, Editor, FileTools};
use dsh_tools::{
    ContentBlock, ErrorCode, FileDiff, Tool, ToolAnnotations, ToolArgs, ToolCallKind,
    ToolCallPresentation, ToolContext, ToolError, ToolExecutionResult, ToolLocation,
    ToolResultPresentation,
};
use serde::Deserialize;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const WRITE_DESCRIPTION: &str = "\
Writes a file whole: creates it (and missing parent directories), or replaces an existing file \
that you read in this session and that has not changed since (else read it first). A file with \
CRLF line endings keeps them. The file's permissions are kept. The result shows the changed \
lines. To change part of a file, prefer edit.";

const EDIT_DESCRIPTION: &str = "\
Replaces old_string with new_string in a file you read in this session (and that has not \
changed since). old_string must occur exactly once: include enough surrounding lines to make it \
unique, or set replace_all to replace every occurrence. Copy old_string exactly as the file has \
it, indentation (tabs or spaces) included, without the line-number prefix read shows. Line \
endings (CRLF), a missing final newline and the file's permissions are kept. The result shows \
the changed lines with their numbers.";

/// Arguments of `write`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct WriteArgs {
    /// The file: absolute, or relative to the working directory.
    pub file_path: String,
    /// The file's whole new content.
    pub content: String,
}

/// Arguments of `edit`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct EditArgs {
    /// The file: absolute, or relative to the working directory.
    pub file_path: String,
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place (different from old_string).
    pub new_string: String,
    /// Replace every occurrence of old_string (default false: it must
    /// occur exactly once).
    pub replace_all: Option<bool>,
}

/// The `write` tool.
#[derive(Clone)]
pub struct WriteTool {
    tools: FileTools,
}

impl WriteTool {
    /// `write` over the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        WriteTool { tools }
    }
}

/// The `edit` tool.
#[derive(Clone)]
pub struct EditTool {
    tools: FileTools,
}

impl EditTool {
    /// `edit` over the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        EditTool { tools }
    }
}

fn edit_annotations(title: &str) -> ToolAnnotations {
    ToolAnnotations {
        title: Some(title.into()),
        open_world: Some(false),
        read_only: Some(false),
        destructive: Some(true),
        idempotent: Some(false),
    }
}

fn presentation(verb: &str, path: &str) -> ToolCallPresentation {
    ToolCallPresentation {
        title: format!("{verb} {path}"),
        kind: ToolCallKind::Edit,
        locations: vec![ToolLocation {
            path: path.to_owned(),
            line: None,
        }],
        ..ToolCallPresentation::default()
    }
}

/// The first changed line a result shows (`+    12\t…` or `-    12\t…`).
fn first_changed_line(result: &ToolExecutionResult) -> Option<u64> {
    let text = result.content.first()?.as_text()?;
    text.lines()
        .filter_map(|l| l.strip_prefix('+').or_else(|| l.strip_prefix('-')))
        .find_map(|l| l.split('\t').next()?.trim().parse().ok())
}

/// Where a change landed, and the change as a diff.
fn changed(
    path: &str,
    old: Option<&str>,
    new: &str,
    result: &ToolExecutionResult,
) -> Option<ToolResultPresentation> {
    if result.is_error {
        return None;
    }
    Some(ToolResultPresentation {
        locations: vec![ToolLocation {
            path: path.to_owned(),
            line: first_changed_line(result),
        }],
        diffs: vec![FileDiff {
            path: path.to_owned(),
            old_text: old.map(str::to_owned),
            new_text: new.to_owned(),
        }],
        ..ToolResultPresentation::default()
    })
}

impl Tool for WriteTool {
    type Args = WriteArgs;

    fn name(&self) -> &str {
        "write"
    }

    fn description(&self) -> &str {
        WRITE_DESCRIPTION
    }

    fn annotations(&self) -> ToolAnnotations {
        edit_annotations("Write a file")
    }

    fn present_call(&self, args: &WriteArgs) -> Option<ToolCallPresentation> {
        Some(presentation("write", &args.file_path))
    }

    fn present_result(
        &self,
        args: &WriteArgs,
        result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        // The replaced content is not in the result: a diff of a replaced
        // file would show it all as new. Only a new file is drawn so.
        let created = result.content.first()?.as_text()?.starts_with("created ");
        let mut shown = changed(&args.file_path, None, &args.content, result)?;
        if !created {
            shown.diffs.clear();
        }
        Some(shown)
    }

    async fn call(
        &self,
        args: WriteArgs,
        ctx: ToolContext,
    ) -> Result<Vec<ContentBlock>, ToolError> {
        let tools = &self.tools;
        let editor = ctx.extensions.get::<Editor>();
        let agent = ctx.agent.as_deref();
        let path = tools.absolute(&args.file_path);
        let target = Target::resolved(tools, &path).await?;
        let current = target.load(tools, editor, agent, "write").await?;
        let (old, mode) = match &current {
            Some(file) => (file.text.as_str(), file.mode),
            None => ("", 0o644),
        };
        let mut content = args.content;
        if current.as_ref().is_some_and(|f| f.crlf) && !content.contains("\r\n") {
            content = content.replace('\n', "\r\n");
        }
        target.store(editor, &content, mode).await?;
        tools
            .records()
            .saw(agent, &target.landing, content_hash(content.as_bytes()));
        let verb = if current.is_some() {
            "replaced"
        } else {
            "created"
        };
        let lines = content.lines().count();
        let summary = format!(
            "{verb} {} ({lines} lines, {} bytes)",
            path.display(),
            content.len()
        );
        Ok(vec![ContentBlock::text(with_diff(
            tools, summary, old, &content,
        ))])
    }
}

impl Tool for EditTool {
    type Args = EditArgs;

    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        EDIT_DESCRIPTION
    }

    fn annotations(&self) -> ToolAnnotations {
        edit_annotations("Edit a file")
    }

    fn present_call(&self, args: &EditArgs) -> Option<ToolCallPresentation> {
        Some(presentation("edit", &args.file_path))
    }

    fn present_result(
        &self,
        args: &EditArgs,
        result: &ToolExecutionResult,
    ) -> Option<ToolResultPresentation> {
        changed(
            &args.file_path,
            Some(&args.old_string),
            &args.new_string,
            result,
        )
    }

    async fn call(&self, args: EditArgs, ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        if args.old_string.is_empty() {
            return Err(ToolError::new(
                ErrorCode::InvalidArgs,
                "old_string is empty: to create a file or replace it whole, use write",
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::new(
                ErrorCode::InvalidArgs,
                "old_string and new_string are the same: there is nothing to change",
            ));
        }
        let tools = &self.tools;
        let editor = ctx.extensions.get::<Editor>();
        let agent = ctx.agent.as_deref();
        let path = tools.absolute(&args.file_path);
        let target = Target::resolved(tools, &path).await?;
        let Some(current) = target.load(tools, editor, agent, "edit").await? else {
            return Err(failure(format!(
                "{} does not exist: create it with write",
                path.display()
            )));
        };
        let replaced = replace(
            &current.text,
            &args.old_string,
            &args.new_string,
            args.replace_all.unwrap_or(false),
            current.crlf,
        )
        .map_err(|e| failure(format!("{}: {e}", path.display())))?;
        target.store(editor, &replaced.text, current.mode).await?;
        tools.records().saw(
            agent,
            &target.landing,
            content_hash(replaced.text.as_bytes()),
        );
        let summary = match replaced.count {
            1 => format!("edited {}", path.display()),
            n => format!("edited {}: {n} occurrences replaced", path.display()),
        };
        Ok(vec![ContentBlock::text(with_diff(
            tools,
            summary,
            &current.text,
            &replaced.text,
        ))])
    }
}

/// Where a write lands.
#[derive(Clone)]
pub(crate) struct Target {
    /// The path as given, made absolute.
    pub(crate) path: PathBuf,
    /// Where the bytes land: links followed, parents resolved.
    pub(crate) landing: PathBuf,
    /// Whether a file (or a link to one) is there now.
    exists: bool,
}

/// A file's content as it is before a change.
pub(crate) struct Current {
    pub(crate) text: String,
    pub(crate) mode: u32,
    /// Whether its lines end with CRLF (most of them do).
    pub(crate) crlf: bool,
}

impl Target {
    /// Resolves where writing `path` lands and checks the sandbox allows it.
    pub(crate) fn resolve(tools: &FileTools, path: &Path) -> Result<Target, ToolError> {
        let shown = path.display();
        let (landing, exists) = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::canonicalize(path) {
                Ok(target) => (target, true),
                Err(_) => {
                    return Err(failure(format!(
                        "{shown} is a symbolic link to a file that does not exist: write the file \
                         it points to by its own path"
                    )))
                }
            },
            Ok(meta) if meta.is_dir() => {
                return Err(failure(format!("{shown} is a directory, not a file")))
            }
            Ok(_) => (resolve_parent(path)?, true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (resolve_parent(path)?, false),
            Err(e) => return Err(failure(format!("cannot write {shown}: {e}"))),
        };
        tools.check_writable(&landing)?;
        Ok(Target {
            path: path.to_path_buf(),
            landing,
            exists,
        })
    }

    /// [`Target::resolve`] off the async threads.
    async fn resolved(tools: &FileTools, path: &Path) -> Result<Target, ToolError> {
        let (tools, path) = (tools.clone(), path.to_path_buf());
        blocking(move || Target::resolve(&tools, &path)).await
    }

    /// The current content, from the editor when there is one, checked
    /// against what `agent` read; `None` for a new file.
    async fn load(
        &self,
        tools: &FileTools,
        editor: Option<&Editor>,
        agent: Option<&str>,
        verb: &'static str,
    ) -> Result<Option<Current>, ToolError> {
        let Some(editor) = editor else {
            let (this, tools, agent) = (self.clone(), tools.clone(), agent.map(str::to_owned));
            return blocking(move || this.current(&tools, agent.as_deref(), verb)).await;
        };
        if !self.exists {
            return Ok(None);
        }
        // The disk says what the file is (a FIFO is not asked for); the
        // editor what it holds.
        let landing = self.landing.clone();
        let meta = blocking(move || open_regular(&landing).map(|(_, meta)| meta)).await?;
        let text = editor.read_text(&self.landing).await.map_err(|e| {
            failure(format!(
                "the editor could not read {}: {e}",
                self.path.display()
            ))
        })?;
        self.checked(
            tools,
            agent,
            verb,
            text.into_bytes(),
            meta.permissions().mode() & 0o7777,
        )
        .map(Some)
    }

    /// Writes `text` through the editor, or atomically to the disk
    /// (creating the missing directories of a new file).
    async fn store(&self, editor: Option<&Editor>, text: &str, mode: u32) -> Result<(), ToolError> {
        if let Some(editor) = editor {
            return editor
                .write_text(&self.landing, text.to_owned())
                .await
                .map_err(|e| {
                    failure(format!(
                        "the editor could not write {}: {e}",
                        self.path.display()
                    ))
                });
        }
        let (this, bytes) = (self.clone(), text.as_bytes().to_vec());
        blocking(move || {
            if !this.exists {
                this.create_parents()?;
            }
            commit(&this, &bytes, mode)
        })
        .await
    }

    /// The current content, checked against what `agent` read; `None` for
    /// a new file.
    pub(crate) fn current(
        &self,
        tools: &FileTools,
        agent: Option<&str>,
        verb: &str,
    ) -> Result<Option<Current>, ToolError> {
        if !self.exists {
            return Ok(None);
        }
        let shown = self.path.display();
        let (mut file, meta) = open_regular(&self.landing)?;
        if meta.len() > EDIT_LIMIT {
            return Err(failure(format!(
                "{shown} is {} bytes, more than the {EDIT_LIMIT} {verb} changes: use bash (sed, a \
                 script) for a file this large",
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.read_to_end(&mut bytes)
            .map_err(|e| failure(format!("cannot read {shown}: {e}")))?;
        self.checked(
            tools,
            agent,
            verb,
            bytes,
            meta.permissions().mode() & 0o7777,
        )
        .map(Some)
    }

    /// `bytes` as the current content, if `agent` saw them so.
    fn checked(
        &self,
        tools: &FileTools,
        agent: Option<&str>,
        verb: &str,
        bytes: Vec<u8>,
        mode: u32,
    ) -> Result<Current, ToolError> {
        let shown = self.path.display();
        match tools
            .records()
            .check(agent, &self.landing, &content_hash(&bytes))
        {
            Ok(()) => {}
            Err(Unseen::NeverRead) => {
                return Err(failure(format!(
                    "{shown} exists and was not read in this session: read it first, then {verb} it"
                )))
            }
            Err(Unseen::Changed) => {
                return Err(failure(format!(
                    "{shown} changed since you last read it: read it again, then {verb} it"
                )))
            }
        }
        let text = String::from_utf8(bytes).map_err(|_| {
            failure(format!(
                "{shown} is not valid UTF-8 text: {verb} changes text files only (use bash for others)"
            ))
        })?;
        let crlf_lines = text.matches("\r\n").count();
        let lines = text.matches('\n').count();
        Ok(Current {
            crlf: crlf_lines > 0 && crlf_lines * 2 >= lines,
            mode,
            text,
        })
    }

    /// Creates the missing directories above a new file.
    fn create_parents(&self) -> Result<(), ToolError> {
        match self.landing.parent() {
            Some(dir) => std::fs::create_dir_all(dir).map_err(|e| {
                failure(format!(
                    "cannot create the directory {}: {e}",
                    dir.display()
                ))
            }),
            None => Ok(()),
        }
    }
}

/// `path` with its parent directory resolved (links in it followed),
/// through the nearest directory that exists.
fn resolve_parent(path: &Path) -> Result<PathBuf, ToolError> {
    let mut missing = Vec::new();
    let mut dir = path;
    loop {
        let Some(name) = dir.file_name() else {
            return Err(failure(format!("{} names no file", path.display())));
        };
        missing.push(name.to_os_string());
        dir = dir.parent().unwrap_or(Path::new("/"));
        match std::fs::canonicalize(dir) {
            Ok(real) => {
                let mut landing = real;
                for part in missing.iter().rev() {
                    landing.push(part);
                }
                return Ok(landing);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(failure(format!("cannot resolve {}: {e}", dir.display()))),
        }
    }
}

fn commit(target: &Target, bytes: &[u8], mode: u32) -> Result<(), ToolError> {
    let shown = target.path.display();
    Staged::new(&target.landing, bytes, mode)
        .and_then(Staged::commit)
        .map_err(|e| failure(format!("cannot write {shown}: {e}")))
}

/// The outcome of a replacement.
pub(crate) struct Replaced {
    pub(crate) text: String,
    pub(crate) count: usize,
}

/// Replaces `old` by `new` in `text`: once (it must be unique) or every
/// time. In a CRLF file, `old` and `new` written with bare newlines are
/// taken with CRLF.
pub(crate) fn replace(
    text: &str,
    old: &str,
    new: &str,
    all: bool,
    crlf: bool,
) -> Result<Replaced, String> {
    let (old, new) = if crlf && !text.contains(old) && old.contains('\n') && !old.contains("\r\n") {
        (
            old.replace('\n', "\r\n"),
            new.replace("\r\n", "\n").replace('\n', "\r\n"),
        )
    } else if crlf && new.contains('\n') && !new.contains("\r\n") {
        (old.to_owned(), new.replace('\n', "\r\n"))
    } else {
        (old.to_owned(), new.to_owned())
    };
    let starts: Vec<usize> = text.match_indices(old.as_str()).map(|(i, _)| i).collect();
    match starts.len() {
        0 => Err(not_found_hint(text, &old)),
        1 => Ok(Replaced {
            text: text.replacen(old.as_str(), &new, 1),
            count: 1,
        }),
        n if all => Ok(Replaced {
            text: text.replace(old.as_str(), &new),
            count: n,
        }),
        n => {
            let lines: Vec<String> = starts
                .iter()
                .take(10)
                .map(|&i| (text[..i].matches('\n').count() + 1).to_string())
                .collect();
            Err(format!(
                "old_string occurs {n} times (at lines {}{}): add surrounding lines to make it \
                 unique, or set replace_all to replace them all",
                lines.join(", "),
                if n > 10 { ", …" } else { "" }
            ))
        }
    }
}

/// Why `old` was not found, with what comes closest.
fn not_found_hint(text: &str, old: &str) -> String {
    let first = old.lines().find(|l| !l.trim().is_empty()).unwrap_or(old);
    let wanted = first.trim();
    let near = text
        .lines()
        .enumerate()
        .find(|(_, line)| !wanted.is_empty() && line.trim() == wanted);
    match near {
        Some((i, line)) if line != first => format!(
            "old_string was not found; line {} has its first line with other indentation or \
             spacing ({:?}): copy the text exactly as read shows it",
            i + 1,
            line
        ),
        Some((i, _)) => format!(
            "old_string was not found as a whole; its first line is at line {}, but the lines \
             after it differ: read the file again and copy the text exactly",
            i + 1
        ),
        None => "old_string was not found: read the file again and copy the text exactly (without \
                 the line numbers read adds)"
            .to_owned(),
    }
}

/// `summary`, then the changed lines with their numbers, within budget.
fn with_diff(tools: &FileTools, summary: String, old: &str, new: &str) -> String {
    let budget = tools.config().max_output_chars;
    let mut out = summary;
    // Only the part that differs (and its context lines) is diffed: an edit
    // of a large file changes a few lines, and diffing it whole would cost
    // more than the edit.
    let (skipped_lines, old, new) = differing_part(old, new, 2);
    let diff = similar::TextDiff::from_lines(old, new);
    let mut omitted = 0usize;
    for group in diff.grouped_ops(2) {
        for op in group {
            for change in diff.iter_changes(&op) {
                let (sign, number) = match change.tag() {
                    similar::ChangeTag::Delete => ('-', change.old_index()),
                    similar::ChangeTag::Insert => ('+', change.new_index()),
                    similar::ChangeTag::Equal => (' ', change.new_index()),
                };
                let text = change.value().trim_end_matches(['\n', '\r']);
                let number = number.map_or(0, |n| n + 1 + skipped_lines);
                let line = format!("\n{sign}{number:>6}\t{}", cut(text));
                if out.len() + line.len() > budget {
                    omitted += 1;
                    continue;
                }
                out.push_str(&line);
            }
        }
        if out.len() + 4 <= budget {
            out.push_str("\n   ...");
        }
    }
    if out.ends_with("\n   ...") {
        out.truncate(out.len() - "\n   ...".len());
    }
    if omitted > 0 {
        out.push_str(&format!(
            "\n[… {omitted} more changed or context lines not shown; read the file to see them]"
        ));
    }
    out
}

/// The lines of `old` and `new` from `context` lines before their first
/// difference to `context` lines after their last, and how many lines come
/// before them (the same in both).
fn differing_part<'a>(old: &'a str, new: &'a str, context: usize) -> (usize, &'a str, &'a str) {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    // Back to the start of the line, then `context` lines more.
    let mut start = a[..prefix]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..context {
        if start == 0 {
            break;
        }
        start = a[..start - 1]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
    }
    // On to the end of the line, then `context` lines more.
    let line_end = |text: &[u8], from: usize| {
        text[from..]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(text.len(), |i| from + i + 1)
    };
    let (mut old_end, mut new_end) = (a.len() - suffix, b.len() - suffix);
    for _ in 0..=context {
        old_end = line_end(a, old_end.max(start));
        new_end = line_end(b, new_end.max(start));
    }
    let skipped = memchr::memchr_iter(b'\n', &a[..start]).count();
    match (old.get(start..old_end), new.get(start..new_end)) {
        (Some(o), Some(n)) => (skipped, o, n),
        // Not on character boundaries (cannot happen at line starts and
        // ends, but never panic): diff it all.
        _ => (0, old, new),
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(crate::MAX_LINE_CHARS) {
        Some((i, _)) => format!("{} [… line cut]", &text[..i]),
        None => text.to_owned(),
    }
}
