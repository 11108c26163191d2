//! [`Cards`]: presentations to ACP `tool_call` / `tool_call_update`.

use agent_client_protocol_schema::v1::{
    Content, ContentBlock as AcpContent, Diff, Meta, SessionId, SessionNotification, SessionUpdate,
    Terminal, TerminalId, TextContent, ToolCall, ToolCallContent, ToolCallId, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use dsh_tools::{
    ContentBlock, FileDiff, TerminalExit, ToolCallKind, ToolCallPresentation, ToolExecutionResult,
    ToolLocation, ToolResultPresentation,
};
use serde_json::{json, Value};
use std::collections::HashMap;

/// The argument names that carry a path a call touches.
const PATH_ARGUMENTS: &[&str] = &["file_path", "path", "notebook_path", "filePath"];

/// The file locations a call names in its arguments (`file_path`, `path`,
/// `notebook_path`, `filePath`, and each of `paths`), for the client's
/// follow-along.
pub fn locations_of(args: &Value) -> Vec<ToolCallLocation> {
    let mut out: Vec<ToolCallLocation> = PATH_ARGUMENTS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .map(ToolCallLocation::new)
        .collect();
    if let Some(Value::Array(paths)) = args.get("paths") {
        out.extend(
            paths
                .iter()
                .filter_map(Value::as_str)
                .map(ToolCallLocation::new),
        );
    }
    out
}

/// A presentation's locations as ACP's (a line past ACP's range is left out).
fn locations(located: &[ToolLocation]) -> Vec<ToolCallLocation> {
    located
        .iter()
        .map(|l| {
            ToolCallLocation::new(l.path.as_str()).line(l.line.and_then(|n| u32::try_from(n).ok()))
        })
        .collect()
}

/// A presentation's diffs as ACP's `diff` content.
fn diffs(changes: &[FileDiff]) -> Vec<ToolCallContent> {
    changes
        .iter()
        .map(|d| {
            ToolCallContent::Diff(
                Diff::new(d.path.as_str(), d.new_text.clone()).old_text(d.old_text.clone()),
            )
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Card {
    /// Drawn as a terminal the client renders (`_meta.terminal_output`).
    terminal: bool,
}

/// The cards of one session: remembers which calls were announced and
/// which are terminals, nothing else (no clock, no counter), so the same
/// calls and results give the same updates.
#[derive(Debug, Clone)]
pub struct Cards {
    session: SessionId,
    terminal_output: bool,
    cards: HashMap<String, Card>,
}

fn kind(k: ToolCallKind) -> ToolKind {
    match k {
        ToolCallKind::Read => ToolKind::Read,
        ToolCallKind::Edit => ToolKind::Edit,
        ToolCallKind::Delete => ToolKind::Delete,
        ToolCallKind::Move => ToolKind::Move,
        ToolCallKind::Search => ToolKind::Search,
        ToolCallKind::Execute => ToolKind::Execute,
        ToolCallKind::Fetch => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// Our content blocks as ACP's: both keep MCP's shape, so a block ACP
/// cannot read (none today) becomes its JSON as text rather than vanish.
fn content(blocks: &[ContentBlock]) -> Vec<ToolCallContent> {
    blocks
        .iter()
        .map(|b| {
            let value = serde_json::to_value(b).unwrap_or(Value::Null);
            let block = serde_json::from_value::<AcpContent>(value.clone())
                .unwrap_or_else(|_| AcpContent::Text(TextContent::new(value.to_string())));
            ToolCallContent::Content(Content::new(block))
        })
        .collect()
}

fn meta(key: &str, value: Value) -> Meta {
    let mut m = Meta::new();
    m.insert(key.to_owned(), value);
    m
}

impl Cards {
    /// Cards for `session`; `terminal_output` when the client announced
    /// `_meta.terminal_output` in its capabilities (Zed's convention).
    pub fn new(session: impl Into<String>, terminal_output: bool) -> Cards {
        Cards {
            session: SessionId::new(session.into()),
            terminal_output,
            cards: HashMap::new(),
        }
    }

    fn notify(&self, update: SessionUpdate) -> SessionNotification {
        SessionNotification::new(self.session.clone(), update)
    }

    /// The `tool_call` that announces a call: `pending` while it awaits
    /// approval, else `in_progress`.
    pub fn call(
        &mut self,
        call_id: &str,
        presentation: &ToolCallPresentation,
        args: &Value,
        pending: bool,
    ) -> SessionNotification {
        let terminal = presentation.terminal.is_some() && self.terminal_output;
        self.cards.insert(call_id.to_owned(), Card { terminal });
        let mut call = ToolCall::new(ToolCallId::new(call_id), presentation.title.clone())
            .kind(kind(presentation.kind))
            .status(if pending {
                ToolCallStatus::Pending
            } else {
                ToolCallStatus::InProgress
            })
            .locations(if presentation.locations.is_empty() {
                locations_of(args)
            } else {
                locations(&presentation.locations)
            })
            .raw_input(
                presentation
                    .raw_input
                    .clone()
                    .unwrap_or_else(|| args.clone()),
            );
        let mut blocks = content(&presentation.content);
        if terminal {
            blocks.push(ToolCallContent::Terminal(Terminal::new(TerminalId::new(
                call_id,
            ))));
            let cwd = presentation.terminal.as_ref().and_then(|t| t.cwd.clone());
            call = call.meta(meta(
                "terminal_info",
                json!({"terminal_id": call_id, "cwd": cwd}),
            ));
        } else if presentation.terminal.is_some() {
            // No terminal in the client: the command as text.
            if let Some(Value::String(command)) = &presentation.raw_input {
                blocks.insert(
                    0,
                    ToolCallContent::Content(Content::new(AcpContent::Text(TextContent::new(
                        format!("$ {command}"),
                    )))),
                );
            }
        }
        self.notify(SessionUpdate::ToolCall(call.content(blocks)))
    }

    /// Whether the call is drawn as a terminal the client renders.
    pub fn is_terminal(&self, call_id: &str) -> bool {
        self.cards.get(call_id).is_some_and(|c| c.terminal)
    }

    /// The update that moves an approved call to `in_progress`.
    pub fn started(&self, call_id: &str) -> SessionNotification {
        self.notify(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            ToolCallId::new(call_id),
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        )))
    }

    /// Output a running terminal card shows (appended by the client), or
    /// `None` when the call is not drawn as a terminal.
    pub fn output(&self, call_id: &str, data: &str) -> Option<SessionNotification> {
        if !self.cards.get(call_id).is_some_and(|c| c.terminal) || data.is_empty() {
            return None;
        }
        Some(self.notify(SessionUpdate::ToolCallUpdate(
            ToolCallUpdate::new(ToolCallId::new(call_id), ToolCallUpdateFields::new()).meta(meta(
                "terminal_output",
                json!({"terminal_id": call_id, "data": data}),
            )),
        )))
    }

    /// The `tool_call_update` that ends a call: `completed` or `failed`,
    /// with the result presentation (or the raw result).
    pub fn result(
        &mut self,
        call_id: &str,
        result: &ToolExecutionResult,
        presentation: &ToolResultPresentation,
    ) -> SessionNotification {
        let card = self.cards.remove(call_id);
        let status = if result.is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let raw = serde_json::to_value(result).unwrap_or(Value::Null);
        let mut fields = ToolCallUpdateFields::new().status(status).raw_output(raw);
        if let Some(title) = &presentation.title {
            fields = fields.title(title.clone());
        }
        let terminal = card.as_ref().is_some_and(|c| c.terminal);
        let mut update_meta = None;
        if terminal && !result.is_error {
            // The terminal stays; only how it ended is added.
            let exit = presentation.terminal.as_ref().and_then(|t| t.exit.clone());
            let (code, signal) = match exit {
                Some(TerminalExit::ExitCode(c)) => (json!(c), Value::Null),
                Some(TerminalExit::Signal(s)) => (Value::Null, json!(s)),
                None => (Value::Null, Value::Null),
            };
            update_meta = Some(meta(
                "terminal_exit",
                json!({"terminal_id": call_id, "exit_code": code, "signal": signal}),
            ));
        } else {
            let shown = if presentation.content.is_empty() {
                &result.content
            } else {
                &presentation.content
            };
            let mut blocks = diffs(&presentation.diffs);
            blocks.extend(content(shown));
            fields = fields.content(blocks);
        }
        if !presentation.locations.is_empty() {
            fields = fields.locations(locations(&presentation.locations));
        }
        let mut update = ToolCallUpdate::new(ToolCallId::new(call_id), fields);
        if let Some(m) = update_meta {
            update = update.meta(m);
        }
        self.notify(SessionUpdate::ToolCallUpdate(update))
    }
}
