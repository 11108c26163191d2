//! `glob` and `grep`: finding files by name and by content, walking the
//! tree as ripgrep does (on its own crates: `ignore` for the walk,
//! `grep-searcher` and `grep-regex` for the search), in parallel, off the
//! async runtime.
//!
//! Both tools hold the promise the kernel cannot: a file a `Read` deny
//! rule covers is never listed, searched or named. The walk asks
//! [`FileTools::is_read_denied`] of every entry before it is used (a
//! denied directory is not entered), and an explicit `path` that is
//! denied is refused with a permission error.

use crate::FileTools;
use dsh_tools::{
    CancellationToken, ContentBlock, ErrorCode, Tool, ToolAnnotations, ToolArgs, ToolCallKind,
    ToolCallPresentation, ToolContext, ToolError,
};
use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{
    BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch,
};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{WalkBuilder, WalkState};
use serde::Deserialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// The most paths `glob` lists.
const GLOB_LIMIT: usize = 100;

/// Lines of `grep`'s content mode longer than this are cut (a minified
/// file would otherwise spend the whole answer on one line).
const MAX_LINE_CHARS: usize = 500;

/// What the closing note of an answer may take, kept out of the budget
/// for the lines.
const NOTE_RESERVE: usize = 300;

const GLOB_DESCRIPTION: &str = "\
Finds files by name with a glob pattern and lists them most recently modified first.

pattern: `**/*.rs`, `src/**/*.{ts,tsx}`, `Cargo.toml`. A pattern without a `/` matches file \
names at any depth (as in .gitignore); one with a `/` matches the path relative to `path`, `*` \
within one directory and `**` across any number. path: the directory to search, absolute or \
relative to the working directory (default: the working directory).

Files that .gitignore, .ignore or .rgignore exclude are skipped, and so are hidden files and \
directories unless the pattern names one (`.github/**`); symbolic links are not followed.

Answers with absolute paths, one per line, at most 100 (then how many more matched), or \
`No files found`. To search inside files, use grep.";

/// The `grep` description, with the answer's budget.
fn grep_description(max_chars: usize) -> String {
    format!(
        "\
Searches file contents with a regular expression, as ripgrep does (its engine and syntax): \
.gitignore and .ignore are respected, hidden files, binary files and symbolic links skipped. \
Use it instead of running grep or rg with bash.

pattern: ripgrep's regex syntax (`fn \\w+`, `log.*Error`); escape literal braces and \
parentheses (`interface\\{{\\}}`). path: a file or directory (default: the working directory). \
glob (`*.js`, `*.{{ts,tsx}}`, `!*.min.js`) or type (`rust`, `py`, `js`, `go`, …) narrow the \
files searched.

output_mode: `files_with_matches` (default): the files that match, most recently modified \
first. `content`: matching lines as `path:line:text`, context lines (-A, -B, -C) as \
`path-line-text`, `--` between groups; -n false leaves out line numbers. `count`: \
`path:N`, the matching lines of each file.

-i ignores case; multiline lets a match span lines (`.` matches newlines too). head_limit \
shows only the first N lines or entries, after skipping offset. An answer holds at most \
{max_chars} characters: beyond that you are told how many more results there are."
    )
}

/// Arguments of `glob`.
#[derive(ToolArgs, Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// The glob to match file paths against, e.g. `**/*.rs` or
    /// `src/**/*.{ts,tsx}`.
    pub pattern: String,
    /// The directory to search: absolute, or relative to the working
    /// directory (default: the working directory).
    pub path: Option<String>,
}

/// What `grep` answers with.
#[derive(ToolArgs, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// The paths of the files that match.
    #[default]
    FilesWithMatches,
    /// The matching lines, with context lines if asked.
    Content,
    /// The number of matching lines of each file.
    Count,
}

/// Arguments of `grep`, named as Claude Code's `Grep` names them.
#[derive(ToolArgs, Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct GrepArgs {
    /// The regular expression to search for (ripgrep's syntax).
    pub pattern: String,
    /// The file or directory to search: absolute, or relative to the
    /// working directory (default: the working directory).
    pub path: Option<String>,
    /// Only files matching this glob, e.g. `*.js`, `*.{ts,tsx}`, or
    /// `!*.min.js` to leave some out; several separated by spaces.
    pub glob: Option<String>,
    /// Only files of this ripgrep type, e.g. `rust`, `py`, `js`, `ts`,
    /// `go`, `java`, `c`, `cpp`, `md`.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// `files_with_matches` (paths), `content` (matching lines) or `count`
    /// (matching lines per file).
    #[tool(default = "files_with_matches")]
    pub output_mode: Option<OutputMode>,
    /// Case insensitive search.
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Show line numbers (content mode; default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines to show after each match (content mode).
    #[serde(rename = "-A")]
    #[tool(maximum = 1000)]
    pub after: Option<u32>,
    /// Lines to show before each match (content mode).
    #[serde(rename = "-B")]
    #[tool(maximum = 1000)]
    pub before: Option<u32>,
    /// Lines to show before and after each match (content mode).
    #[serde(rename = "-C")]
    #[tool(maximum = 1000)]
    pub context: Option<u32>,
    /// Let a match span lines; `.` matches newlines too.
    pub multiline: Option<bool>,
    /// Show only the first N lines or entries (0: no limit).
    pub head_limit: Option<u64>,
    /// Skip the first N lines or entries (with head_limit, to page).
    pub offset: Option<u64>,
}

/// The `glob` tool: files by name, newest first.
#[derive(Clone)]
pub struct GlobTool {
    tools: FileTools,
}

impl GlobTool {
    /// A `glob` tool over the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        GlobTool { tools }
    }
}

impl Tool for GlobTool {
    type Args = GlobArgs;

    fn name(&self) -> &str {
        "glob"
    }

    fn description(&self) -> &str {
        GLOB_DESCRIPTION
    }

    async fn call(&self, args: GlobArgs, ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        let tools = self.tools.clone();
        let cancel = ctx.cancel_token();
        let text = crate::blocking(move || glob(&tools, &args, &cancel)).await?;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &GlobArgs) -> Option<ToolCallPresentation> {
        Some(search_card("glob", &args.pattern, args.path.as_deref()))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Find files by name".into()),
            read_only: Some(true),
            open_world: Some(false),
            ..ToolAnnotations::default()
        }
    }

    fn is_concurrency_safe(&self, _args: &GlobArgs) -> bool {
        true
    }
}

/// The pending card of a search: `glob PATTERN in PATH`, at the path.
fn search_card(verb: &str, pattern: &str, path: Option<&str>) -> ToolCallPresentation {
    let path = path.filter(|p| !p.is_empty());
    ToolCallPresentation {
        title: match path {
            Some(path) => format!("{verb} {pattern} in {path}"),
            None => format!("{verb} {pattern}"),
        },
        kind: ToolCallKind::Search,
        raw_input: Some(serde_json::Value::String(pattern.to_owned())),
        content: Vec::new(),
        terminal: None,
        locations: path
            .map(|p| dsh_tools::ToolLocation {
                path: p.to_owned(),
                line: None,
            })
            .into_iter()
            .collect(),
    }
}

/// The `grep` tool: file contents by regular expression.
#[derive(Clone)]
pub struct GrepTool {
    tools: FileTools,
    description: String,
}

impl GrepTool {
    /// A `grep` tool over the session's file tools.
    pub fn new(tools: FileTools) -> Self {
        let description = grep_description(tools.config().max_output_chars);
        GrepTool { tools, description }
    }
}

impl Tool for GrepTool {
    type Args = GrepArgs;

    fn name(&self) -> &str {
        "grep"
    }

    fn description(&self) -> &str {
        &self.description
    }

    async fn call(&self, args: GrepArgs, ctx: ToolContext) -> Result<Vec<ContentBlock>, ToolError> {
        let tools = self.tools.clone();
        let cancel = ctx.cancel_token();
        let text = crate::blocking(move || grep(&tools, &args, &cancel)).await?;
        Ok(vec![ContentBlock::text(text)])
    }

    fn present_call(&self, args: &GrepArgs) -> Option<ToolCallPresentation> {
        Some(search_card("grep", &args.pattern, args.path.as_deref()))
    }

    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations {
            title: Some("Search file contents".into()),
            read_only: Some(true),
            open_world: Some(false),
            ..ToolAnnotations::default()
        }
    }

    fn is_concurrency_safe(&self, _args: &GrepArgs) -> bool {
        true
    }
}

/// Runs a walk on the blocking pool; its panic is the call's panic.
fn invalid(message: impl Into<String>) -> ToolError {
    ToolError::new(
        ErrorCode::InvalidArgs,
        format!("invalid arguments: {}", message.into()),
    )
}

fn aborted() -> ToolError {
    ToolError::new(ErrorCode::Aborted, "the search was cancelled")
}

/// Search threads: as many as the machine runs at once, at most 12 (as
/// ripgrep chooses).
pub(crate) fn search_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(12)
}

/// What `path` names: it must exist and no deny rule may cover it.
fn resolve_root(tools: &FileTools, path: &Path) -> Result<std::fs::Metadata, ToolError> {
    let metadata = std::fs::metadata(path).map_err(|err| {
        if err.kind() == std::io::ErrorKind::NotFound {
            ToolError::msg(format!("{} does not exist", path.display()))
        } else {
            ToolError::msg(format!("cannot read {}: {err}", path.display()))
        }
    })?;
    let real = std::fs::canonicalize(path).ok();
    if tools.is_read_denied(path) || real.as_deref().is_some_and(|p| tools.is_read_denied(p)) {
        return Err(ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "reading {} is denied by a Read deny rule: it cannot be listed or searched",
                path.display()
            ),
        ));
    }
    Ok(metadata)
}

/// A walk as ripgrep's: ignore files (also outside a git repository),
/// hidden entries skipped unless `hidden`, links not followed, and never
/// an entry a deny rule covers.
///
/// The walk does not follow links below the root, so an entry's real path
/// is the root's real path joined with the rest: when the root's path goes
/// through a link, the rules are asked about both paths.
fn walker(tools: &FileTools, root: &Path, hidden: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(!hidden)
        .require_git(false)
        .follow_links(false)
        .add_custom_ignore_filename(".rgignore")
        .threads(search_threads());
    if tools.config().read_denied.is_some() {
        let tools = tools.clone();
        let real_root = std::fs::canonicalize(root).ok().filter(|real| real != root);
        match real_root {
            None => {
                builder.filter_entry(move |entry| !tools.is_read_denied(entry.path()));
            }
            Some(real_root) => {
                let root = root.to_path_buf();
                builder.filter_entry(move |entry| {
                    let path = entry.path();
                    let real = path.strip_prefix(&root).map(|rest| real_root.join(rest));
                    !tools.is_read_denied(path)
                        && !real.is_ok_and(|real| tools.is_read_denied(&real))
                });
            }
        }
    }
    builder
}

/// Per-thread results, handed over to the shared list when the thread's
/// visitor is dropped (once, not once per file).
struct Collector<'s, T> {
    local: Vec<T>,
    shared: &'s Mutex<Vec<T>>,
}

impl<T> Drop for Collector<'_, T> {
    fn drop(&mut self) {
        if !self.local.is_empty() {
            let mut shared = self.shared.lock().unwrap_or_else(|e| e.into_inner());
            shared.append(&mut self.local);
        }
    }
}

fn mtime(path: &Path) -> Option<SystemTime> {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
}

/// Newest first; then by path, so equal times come out in a fixed order.
fn newest_first(
    a: &(Option<SystemTime>, PathBuf),
    b: &(Option<SystemTime>, PathBuf),
) -> std::cmp::Ordering {
    b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1))
}

// ---------------------------------------------------------------- glob

/// The directory to walk, the pattern relative to it, and whether the
/// pattern is anchored there (an absolute pattern, or one starting with
/// `./`) even without a `/` of its own.
fn glob_root(tools: &FileTools, args: &GlobArgs) -> Result<(PathBuf, String, bool), ToolError> {
    let pattern = args.pattern.trim();
    if pattern.is_empty() {
        return Err(invalid("\"pattern\" must not be empty"));
    }
    let base = tools.absolute(args.path.as_deref().unwrap_or("."));
    if !pattern.starts_with('/') {
        return Ok(match pattern.strip_prefix("./") {
            Some(rest) => (base, rest.to_owned(), true),
            None => (base, pattern.to_owned(), false),
        });
    }
    // An absolute pattern: its literal directories are where to walk.
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let literal = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[', '{', '\\']))
        .unwrap_or(parts.len().saturating_sub(1));
    let dir = crate::normalise(&PathBuf::from(format!("/{}", parts[..literal].join("/"))));
    let rest = parts[literal..].join("/");
    if args.path.is_none() {
        return Ok((dir, rest, true));
    }
    match dir.strip_prefix(&base) {
        Ok(inner) if inner.as_os_str().is_empty() => Ok((base, rest, true)),
        Ok(inner) => Ok((base.clone(), format!("{}/{rest}", inner.display()), true)),
        Err(_) => Err(invalid(format!(
            "the absolute pattern {pattern} is outside path {}",
            base.display()
        ))),
    }
}

/// A glob as `glob` reads it: without a `/` (and not anchored), the file
/// name at any depth; otherwise the path relative to the root.
struct NameGlob {
    matcher: GlobMatcher,
    name_only: bool,
}

impl NameGlob {
    fn new(pattern: &str, anchored: bool) -> Result<Self, ToolError> {
        // A leading `**/` also matches at the top (globset's reading).
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| invalid(format!("\"pattern\" is not a valid glob: {err}")))?
            .compile_matcher();
        Ok(NameGlob {
            matcher,
            name_only: !anchored && !pattern.contains('/'),
        })
    }

    fn is_match(&self, relative: &Path) -> bool {
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Whether the pattern names a hidden file or directory (`.github/**`,
/// `.env*`): then hidden entries are walked.
fn names_hidden(pattern: &str) -> bool {
    pattern
        .split('/')
        .any(|part| part.starts_with('.') && part != "." && part != "..")
}

fn glob(
    tools: &FileTools,
    args: &GlobArgs,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let (root, pattern, anchored) = glob_root(tools, args)?;
    let matcher = NameGlob::new(&pattern, anchored)?;
    let metadata = resolve_root(tools, &root)?;
    if !metadata.is_dir() {
        return Err(ToolError::msg(format!(
            "{} is not a directory: glob searches a directory (path)",
            root.display()
        )));
    }
    let found: Mutex<Vec<(Option<SystemTime>, PathBuf)>> = Mutex::new(Vec::new());
    walker(tools, &root, names_hidden(&pattern))
        .build_parallel()
        .run(|| {
            let mut collector = Collector {
                local: Vec::new(),
                shared: &found,
            };
            let matcher = &matcher;
            let root = &root;
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                if matcher.is_match(relative) {
                    let time = entry.metadata().ok().and_then(|m| m.modified().ok());
                    collector.local.push((time, entry.into_path()));
                }
                WalkState::Continue
            })
        });
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    if found.is_empty() {
        return Ok("No files found".to_owned());
    }
    found.sort_unstable_by(newest_first);
    let total = found.len();
    let mut out = String::new();
    let shown = fill(
        &mut out,
        found.iter().map(|(_, path)| path.to_string_lossy()),
        GLOB_LIMIT,
        tools.config().max_output_chars,
    );
    if shown < total {
        out.push_str(&format!(
            "[{} more files not shown; use a more specific pattern or path]",
            total - shown
        ));
    } else {
        out.pop();
    }
    Ok(out)
}

/// Appends up to `limit` lines to `out` (each with its newline) while the
/// answer stays within `budget` characters with room for a closing note;
/// returns how many it appended.
fn fill<S: AsRef<str>>(
    out: &mut String,
    lines: impl Iterator<Item = S>,
    limit: usize,
    budget: usize,
) -> usize {
    let room = budget.saturating_sub(NOTE_RESERVE);
    let mut used = out.chars().count();
    let mut shown = 0;
    for line in lines.take(limit) {
        let line = line.as_ref();
        let cost = line.chars().count() + 1;
        if used + cost > room {
            break;
        }
        used += cost;
        out.push_str(line);
        out.push('\n');
        shown += 1;
    }
    shown
}

// ---------------------------------------------------------------- grep

/// How the search runs, set once from the arguments.
#[derive(Clone, Copy)]
struct Settings {
    mode: OutputMode,
    line_numbers: bool,
    /// Content lines worth keeping per file: the most an answer can show.
    keep: usize,
}

/// What one file gave.
struct FileHits {
    path: PathBuf,
    mtime: Option<SystemTime>,
    /// Matching lines.
    matched: u64,
    /// Content mode: the first `keep` output lines, each ending in `\n`.
    text: String,
    /// Content mode: all output lines, kept or not.
    lines: usize,
}

fn matcher(args: &GrepArgs) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .case_insensitive(args.case_insensitive.unwrap_or(false));
    if args.multiline.unwrap_or(false) {
        builder.dot_matches_new_line(true);
    } else {
        builder
            .line_terminator(Some(b'\n'))
            .dot_matches_new_line(false);
    }
    builder.ban_byte(Some(b'\x00'));
    builder.build(&args.pattern).map_err(|err| {
        let mut message = format!("\"pattern\" is not a valid regular expression: {err}");
        if !args.multiline.unwrap_or(false) && message.contains("not allowed") {
            message.push_str(" (set multiline: true to match across lines)");
        }
        invalid(message)
    })
}

fn searcher(args: &GrepArgs, settings: Settings) -> Searcher {
    let mut builder = SearcherBuilder::new();
    builder
        .line_terminator(LineTerminator::byte(b'\n'))
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .multi_line(args.multiline.unwrap_or(false))
        .line_number(settings.mode == OutputMode::Content && settings.line_numbers);
    if settings.mode == OutputMode::Content {
        let context = args.context.unwrap_or(0) as usize;
        builder
            .before_context(args.before.map_or(context, |n| n as usize))
            .after_context(args.after.map_or(context, |n| n as usize));
    }
    builder.build()
}

/// The file and type filters, for a walk from `root`.
fn filters(args: &GrepArgs, root: &Path, builder: &mut WalkBuilder) -> Result<(), ToolError> {
    if let Some(globs) = args.glob.as_deref().filter(|g| !g.trim().is_empty()) {
        let mut overrides = OverrideBuilder::new(root);
        for glob in globs.split_whitespace() {
            overrides
                .add(glob)
                .map_err(|err| invalid(format!("\"glob\" is not a valid glob: {err}")))?;
        }
        let overrides = overrides
            .build()
            .map_err(|err| invalid(format!("\"glob\" is not a valid glob: {err}")))?;
        builder.overrides(overrides);
    }
    if let Some(name) = args.file_type.as_deref().filter(|t| !t.trim().is_empty()) {
        let mut types = TypesBuilder::new();
        types.add_defaults();
        let known = types.definitions().iter().any(|d| d.name() == name.trim());
        if !known {
            return Err(invalid(format!(
                "\"type\": {name:?} is not a file type ripgrep knows (e.g. rust, py, js, ts, go, java, c, cpp, md, json, yaml, sh); use glob for others"
            )));
        }
        types.select(name.trim());
        let types = types
            .build()
            .map_err(|err| invalid(format!("\"type\": {err}")))?;
        builder.types(types);
    }
    Ok(())
}

/// Collects what one file gives, in the chosen mode.
struct FileSink<'a> {
    settings: Settings,
    path: &'a Path,
    /// The path as shown, made on the first line shown.
    shown_path: Option<String>,
    matched: u64,
    text: String,
    lines: usize,
}

impl FileSink<'_> {
    fn push(&mut self, separator: char, number: Option<u64>, line: &[u8]) {
        self.lines += 1;
        if self.lines > self.settings.keep {
            return;
        }
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let text = String::from_utf8_lossy(line);
        let path = self
            .shown_path
            .get_or_insert_with(|| self.path.to_string_lossy().into_owned());
        self.text.push_str(path);
        self.text.push(separator);
        if let Some(number) = number {
            let _ = write!(self.text, "{number}{separator}");
        }
        match text.char_indices().nth(MAX_LINE_CHARS) {
            None => self.text.push_str(&text),
            Some((cut, _)) => {
                let rest = text[cut..].chars().count();
                self.text.push_str(&text[..cut]);
                let _ = write!(self.text, " [… line cut, {rest} more characters]");
            }
        }
        self.text.push('\n');
    }
}

impl Sink for FileSink<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _searcher: &Searcher,
        found: &SinkMatch<'_>,
    ) -> Result<bool, std::io::Error> {
        match self.settings.mode {
            OutputMode::FilesWithMatches => {
                self.matched = 1;
                Ok(false)
            }
            OutputMode::Count => {
                self.matched += found.lines().count().max(1) as u64;
                Ok(true)
            }
            OutputMode::Content => {
                let mut number = found.line_number();
                for line in found.lines() {
                    self.matched += 1;
                    self.push(':', number, line);
                    number = number.map(|n| n + 1);
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, std::io::Error> {
        if matches!(
            context.kind(),
            SinkContextKind::Before | SinkContextKind::After
        ) {
            self.push('-', context.line_number(), context.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, std::io::Error> {
        self.lines += 1;
        if self.lines <= self.settings.keep {
            self.text.push_str("--\n");
        }
        Ok(true)
    }
}

/// Searches one file; `None` when it does not match (or cannot be read).
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    settings: Settings,
    path: PathBuf,
) -> Option<FileHits> {
    let mut sink = FileSink {
        settings,
        path: &path,
        shown_path: None,
        matched: 0,
        text: String::new(),
        lines: 0,
    };
    searcher.search_path(matcher, &path, &mut sink).ok()?;
    if sink.matched == 0 {
        return None;
    }
    let FileSink {
        matched,
        text,
        lines,
        ..
    } = sink;
    let mtime = match settings.mode {
        OutputMode::FilesWithMatches => mtime(&path),
        _ => None,
    };
    Some(FileHits {
        path,
        mtime,
        matched,
        text,
        lines,
    })
}

fn grep(
    tools: &FileTools,
    args: &GrepArgs,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    let matcher = matcher(args)?;
    let root = tools.absolute(args.path.as_deref().unwrap_or("."));
    let mode = args.output_mode.unwrap_or_default();
    let budget = tools.config().max_output_chars;
    let offset = args.offset.unwrap_or(0).min(usize::MAX as u64) as usize;
    let limit = match args.head_limit {
        None | Some(0) => usize::MAX,
        Some(n) => n.min(usize::MAX as u64) as usize,
    };
    let settings = Settings {
        mode,
        line_numbers: args.line_numbers.unwrap_or(true),
        keep: offset.saturating_add(limit.min(budget / 2 + 1)),
    };
    let mut builder = walker(tools, &root, false);
    filters(args, &root, &mut builder)?;
    let metadata = resolve_root(tools, &root)?;

    let mut hits = if metadata.is_dir() {
        let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
        let searcher = searcher(args, settings);
        builder.build_parallel().run(|| {
            let mut collector = Collector {
                local: Vec::new(),
                shared: &found,
            };
            let mut searcher = searcher.clone();
            let matcher = matcher.clone();
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if let Some(hits) =
                    search_file(&mut searcher, &matcher, settings, entry.into_path())
                {
                    collector.local.push(hits);
                }
                WalkState::Continue
            })
        });
        found.into_inner().unwrap_or_else(|e| e.into_inner())
    } else {
        // A file named explicitly is searched whatever the filters say, as
        // ripgrep does.
        let mut searcher = searcher(args, settings);
        let hits = search_file(&mut searcher, &matcher, settings, root.clone());
        if hits.is_none() && looks_binary(&root) {
            return Ok(format!(
                "No matches found: {} is a binary file, which grep does not search",
                root.display()
            ));
        }
        hits.into_iter().collect()
    };
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    if hits.is_empty() {
        return Ok(match mode {
            OutputMode::FilesWithMatches => "No files found".to_owned(),
            _ => "No matches found".to_owned(),
        });
    }
    match mode {
        OutputMode::FilesWithMatches => {
            hits.sort_unstable_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)))
        }
        _ => hits.sort_unstable_by(|a, b| a.path.cmp(&b.path)),
    }

    let mut out = String::new();
    let (total, shown, unit) = match mode {
        OutputMode::FilesWithMatches => {
            let total = hits.len();
            out.push_str(&format!(
                "Found {total} {}\n",
                plural(total, "file", "files")
            ));
            let lines = hits.iter().map(|h| h.path.to_string_lossy()).skip(offset);
            (total, fill(&mut out, lines, limit, budget), "files")
        }
        OutputMode::Count => {
            let total = hits.len();
            let matched: u64 = hits.iter().map(|h| h.matched).sum();
            out.push_str(&format!(
                "Found {matched} matching {} in {total} {}\n",
                plural(matched as usize, "line", "lines"),
                plural(total, "file", "files")
            ));
            let lines = hits
                .iter()
                .map(|h| format!("{}:{}", h.path.to_string_lossy(), h.matched))
                .skip(offset);
            (total, fill(&mut out, lines, limit, budget), "files")
        }
        OutputMode::Content => {
            let context = args.context.unwrap_or(0);
            let context = args.before.unwrap_or(context) > 0 || args.after.unwrap_or(context) > 0;
            let mut total = 0;
            for (i, hit) in hits.iter().enumerate() {
                total += hit.lines + usize::from(context && i > 0);
            }
            let lines = content_lines(&hits, context).skip(offset);
            (total, fill(&mut out, lines, limit, budget), "lines")
        }
    };
    let rest = total.saturating_sub(offset).saturating_sub(shown);
    if rest == 0 {
        if shown == 0 && offset > 0 {
            let _ = write!(out, "[no more {unit} after offset {offset}]");
        }
        if out.ends_with('\n') {
            out.pop();
        }
        return Ok(out);
    }
    let next = offset + shown;
    if shown < limit {
        out.push_str(&format!(
            "[{rest} more {unit} not shown: an answer holds at most {budget} characters; narrow the search with path, glob or type, or page with head_limit and offset {next}]"
        ));
    } else {
        out.push_str(&format!(
            "[{rest} more {unit} not shown (head_limit {limit}); offset {next} shows the next ones]"
        ));
    }
    Ok(out)
}

/// Whether the file's first block holds a NUL byte, as the searcher's
/// binary detection decides.
fn looks_binary(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(64 * 1024);
    std::fs::File::open(path)
        .and_then(|file| file.take(64 * 1024).read_to_end(&mut head))
        .is_ok_and(|_| head.contains(&0))
}

/// Content mode's lines in order: each file's kept lines, `--` between
/// files when there is context, as ripgrep prints them.
fn content_lines(hits: &[FileHits], context: bool) -> impl Iterator<Item = &str> {
    hits.iter().enumerate().flat_map(move |(i, hit)| {
        let separator = (context && i > 0).then_some("--");
        separator.into_iter().chain(hit.text.lines())
    })
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 {
        one
    } else {
        many
    }
}
