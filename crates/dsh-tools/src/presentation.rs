//! The tool-presentation UI vocabulary: how a call and its result are shown
//! in an editor card or a CLI log line, independent of any client protocol.
//!
//! Presenters are pure: a UI may call them during live streaming and again
//! on session replay, so they depend only on the arguments (and the result).

use crate::content::ContentBlock;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of action a call is; picks an icon.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolCallKind {
    /// Reads files or data.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves or renames files.
    Move,
    /// Searches.
    Search,
    /// Runs a command.
    Execute,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    #[default]
    Other,
}

/// How a process ended: an exit code or a signal, never both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TerminalExit {
    /// The process exited with this code.
    ExitCode(i32),
    /// The process was killed by this signal (e.g. `SIGKILL`).
    Signal(String),
}

/// A request to render the call as a terminal card: a cwd header, output,
/// and an exit-status pill. Serialises as `{"cwd","output","exitCode"|"signal"}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolTerminal {
    /// The working directory shown in the card's header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The terminal output (results only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// How the process ended (results only).
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<TerminalExit>,
}

/// How to show the pending state of one call. The default is an empty
/// title of kind `other`: fill in what the tool knows.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallPresentation {
    /// A one-line title.
    pub title: String,
    /// The kind of action.
    pub kind: ToolCallKind,
    /// The input to show raw (e.g. the command, or the whole arguments).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// Extra content (e.g. a description).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentBlock>,
    /// Render as a terminal card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<ToolTerminal>,
    /// The files (and lines) the call touches, for a UI that follows along.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolLocation>,
}

/// A file a call touches, and where in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLocation {
    /// The path, as the call names it.
    pub path: String,
    /// The line (from 1), when the call is about one place in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

/// A change to a file, for a UI that draws it as a diff: the text before
/// (none for a new file) and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// The path, as the call names it.
    pub path: String,
    /// The text replaced; `None` when the file is new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_text: Option<String>,
    /// The text in its place.
    pub new_text: String,
}

impl ToolCallPresentation {
    /// The generic fallback: title = tool name, kind `other`, raw input = the arguments.
    pub fn generic(tool_name: &str, args: &Value) -> Self {
        ToolCallPresentation {
            title: tool_name.to_owned(),
            kind: ToolCallKind::Other,
            raw_input: Some(args.clone()),
            content: Vec::new(),
            terminal: None,
            locations: Vec::new(),
        }
    }
}

/// How to show the completed state of one call. Absent fields keep what the
/// pending presentation showed.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPresentation {
    /// A replacement title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Reformatted content.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentBlock>,
    /// The terminal card's output and exit status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<ToolTerminal>,
    /// Where the call ended up in the files it touched (replacing the
    /// pending locations when not empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<ToolLocation>,
    /// The changes it made, as diffs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diffs: Vec<FileDiff>,
}

impl ToolResultPresentation {
    /// The generic fallback: keep the pending title and show the raw result content.
    pub fn generic(content: &[ContentBlock]) -> Self {
        ToolResultPresentation {
            title: None,
            content: content.to_vec(),
            terminal: None,
            locations: Vec::new(),
            diffs: Vec::new(),
        }
    }
}
