//! # dsh-tool-fs
//!
//! The file tools a model edits a project with, instead of `sed` and
//! here-documents: `read`, `write`, `edit`, `glob`, `grep` and
//! `apply_patch`, as typed [`dsh_tools::Tool`]s that go through the same
//! pipeline as `bash` (permission rules by path, hooks, modes).
//!
//! - **`read`** numbers lines like `cat -n`, pages with `offset`/`limit`
//!   and keeps the answer within the same budget as `bash`'s output; images
//!   come back as image content; binary files, devices, FIFOs and sockets
//!   are refused without blocking; a late page of a huge file is read by
//!   streaming, in bounded memory.
//! - **`write`** and **`edit`** change a file only if this agent read it in
//!   this session and it has not changed since (by the hash of its
//!   content, not by time); they keep CRLF line endings, tabs, a missing
//!   final newline and the file's mode, and replace the file atomically
//!   (a temporary file in the same directory, then a rename).
//! - **`apply_patch`** takes Codex's patch format and applies it all or
//!   nothing: every hunk of every file is checked before anything changes.
//! - **`glob`** and **`grep`** walk the tree as ripgrep does (`.gitignore`
//!   respected), on ripgrep's own crates, and never show a file a `Read`
//!   deny rule covers.
//!
//! Paths are absolute or relative to the working directory. What may be
//! read or written is the permission layer's decision, made from the path
//! arguments before the tool runs (`apply_patch`'s paths are read from
//! the patch); the tools themselves hold two promises the kernel cannot:
//! a denied file never appears in a listing or a search, and a sandbox's
//! writable roots bound every write.
#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod atomic;
mod patch;
mod read;
mod records;
mod search;
mod write;

use dsh_tools::{ErrorCode, ToolError, ToolRegistry, TypedTool};
pub use patch::{
    patch_paths, ApplyPatchArgs, ApplyPatchTool, PatchError, PatchOperation, PatchedPath,
};
pub use read::{ReadArgs, ReadTool};
pub use records::{content_hash, ContentHash, ReadRecords, Unseen, EDIT_LIMIT};
pub use search::{GlobArgs, GlobTool, GrepArgs, GrepTool, OutputMode};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
pub use write::{EditArgs, EditTool, WriteArgs, WriteTool};

/// What an editor answers: its result, or why it could not.
pub type EditorFuture<T> = Pin<Box<dyn Future<Output = Result<T, String>> + Send>>;

/// Text files as an editor holds them, unsaved changes included (ACP's
/// `fs/read_text_file` and `fs/write_text_file`).
pub trait EditorFiles: Send + Sync {
    /// The whole text of the file at `path` (absolute).
    fn read_text(&self, path: &Path) -> EditorFuture<String>;
    /// Replaces the whole text of the file at `path` (absolute).
    fn write_text(&self, path: &Path, text: String) -> EditorFuture<()>;
}

/// Put in a call's [`extensions`](dsh_tools::ToolContext::extensions) by a
/// front-end whose client is an editor: `read` takes a text file's content
/// from it, and `write` and `edit` read and write through it, so the model
/// sees and changes what the user sees, saved or not. What is not text
/// (images, binary files), `glob`, `grep` and `apply_patch` stay on the
/// disk, as do the checks before a read (deny rules, the file's kind) and
/// before a write (the sandbox's writable directories).
#[derive(Clone)]
pub struct Editor(Arc<dyn EditorFiles>);

impl Editor {
    /// Reads and writes text through `files`.
    pub fn new(files: impl EditorFiles + 'static) -> Self {
        Editor(Arc::new(files))
    }

    /// The file's text in the editor.
    pub async fn read_text(&self, path: &Path) -> Result<String, String> {
        self.0.read_text(path).await
    }

    /// Replaces the file's text in the editor.
    pub async fn write_text(&self, path: &Path, text: String) -> Result<(), String> {
        self.0.write_text(path, text).await
    }
}

/// Decides whether a path is covered by a `Read` deny rule, as the rules
/// stand at the time of the call.
pub type PathFilter = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// How the file tools are set up for a session.
#[derive(Clone)]
pub struct FsConfig {
    /// Where relative paths start.
    pub cwd: PathBuf,
    /// The most characters one answer may hold (the same budget as
    /// `bash`'s output).
    pub max_output_chars: usize,
    /// Paths that `Read` deny rules cover: never listed, searched or read.
    pub read_denied: Option<PathFilter>,
    /// When a sandbox confines writes: the directories writes may go to.
    /// `None` when writes are not confined.
    pub writable_roots: Option<Vec<PathBuf>>,
    /// Names that stay read-only wherever they are below a writable root
    /// (`.git`, `.claude`: what is in them configures what runs), when
    /// writes are confined.
    pub protected_names: Vec<String>,
}

impl FsConfig {
    /// Unconfined tools for a working directory, with `bash`'s default
    /// output budget.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        FsConfig {
            cwd: cwd.into(),
            max_output_chars: DEFAULT_MAX_OUTPUT_CHARS,
            read_denied: None,
            writable_roots: None,
            protected_names: Vec::new(),
        }
    }
}

/// The most characters of one line `read` shows (and `grep` in content).
pub const MAX_LINE_CHARS: usize = 2_000;

/// The default answer budget, `bash`'s default per-stream bound.
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 14_000;

/// What every file tool of a session shares: its configuration and the
/// record of what each agent read.
#[derive(Clone)]
pub struct FileTools {
    shared: Arc<Shared>,
}

struct Shared {
    config: FsConfig,
    records: ReadRecords,
}

impl FileTools {
    /// The tools of one session.
    pub fn new(config: FsConfig) -> Self {
        FileTools {
            shared: Arc::new(Shared {
                config,
                records: ReadRecords::default(),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &FsConfig {
        &self.shared.config
    }

    /// What each agent read, for the check before a write.
    pub fn records(&self) -> &ReadRecords {
        &self.shared.records
    }

    /// `path` made absolute against the working directory, normalised
    /// lexically (`.` and `..` resolved without touching the disk).
    pub fn absolute(&self, path: &str) -> PathBuf {
        normalise(&self.shared.config.cwd.join(path))
    }

    /// Whether a `Read` deny rule covers `path`.
    pub fn is_read_denied(&self, path: &Path) -> bool {
        self.shared
            .config
            .read_denied
            .as_ref()
            .is_some_and(|denied| denied(path))
    }

    /// Refuses a write the sandbox does not allow, as `bash` would see it
    /// refused: `path` is where the bytes land (links resolved).
    pub fn check_writable(&self, path: &Path) -> Result<(), ToolError> {
        let config = &self.shared.config;
        let Some(roots) = &config.writable_roots else {
            return Ok(());
        };
        let refused = |why: String| {
            ToolError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "[sandbox: writing {} is denied: {why}] (a change there needs bash with \
                     sandbox_permissions: \"require_escalated\", which asks the user)",
                    path.display()
                ),
            )
        };
        let Some(root) = roots.iter().find(|root| path.starts_with(root)) else {
            let roots: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
            return Err(refused(format!(
                "it is outside the sandbox's writable directories ({})",
                roots.join(", ")
            )));
        };
        let below = path.strip_prefix(root).unwrap_or(path);
        match below.components().find(|c| {
            let name = c.as_os_str().to_string_lossy();
            config.protected_names.iter().any(|p| *p == name)
        }) {
            Some(name) => Err(refused(format!(
                "{} stays read-only in the sandbox",
                name.as_os_str().to_string_lossy()
            ))),
            None => Ok(()),
        }
    }
}

/// `.` and `..` resolved lexically; the result is absolute when `path` is.
pub fn normalise(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// Registers `read`, `write`, `edit`, `glob`, `grep` and `apply_patch`
/// over `tools`; all of them or none.
///
/// # Errors
/// The registry's error when a name is taken.
pub fn register_fs_tools(registry: &ToolRegistry, tools: &FileTools) -> Result<(), ToolError> {
    let handles = [
        registry.register_scoped(TypedTool::new(ReadTool::new(tools.clone())))?,
        registry.register_scoped(TypedTool::new(WriteTool::new(tools.clone())))?,
        registry.register_scoped(TypedTool::new(EditTool::new(tools.clone())))?,
        registry.register_scoped(TypedTool::new(GlobTool::new(tools.clone())))?,
        registry.register_scoped(TypedTool::new(GrepTool::new(tools.clone())))?,
        registry.register_scoped(TypedTool::new(ApplyPatchTool::new(tools.clone())))?,
    ];
    for handle in handles {
        handle.keep();
    }
    Ok(())
}

/// A failure of a file operation, for the model to read.
pub(crate) fn failure(message: String) -> ToolError {
    ToolError::new(ErrorCode::ToolError, message)
}

/// Runs file system work off the async threads. A panic in it is the
/// call's panic (the registry reports it as such), not a failure message.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(failure(format!("the file operation did not run: {err}"))),
    }
}
