//! # dsh-acp
//!
//! Tool calls as [Agent Client Protocol](https://agentclientprotocol.com)
//! cards. An editor (Zed, JetBrains, Neovim plugins, any ACP client) shows
//! each call as a card; [`Cards`] turns the pipeline's presentations
//! ([`dsh_tools::ToolCallPresentation`], [`dsh_tools::ToolResultPresentation`])
//! into the `session/update` notifications that draw them, with the
//! schema crate `agent-client-protocol` 5.2 pins (`agent-client-protocol-schema`
//! 1.17.0), so every message is the protocol's own type.
//!
//! ```
//! use dsh_acp::Cards;
//! use dsh_tools::{ContentBlock, ToolCallPresentation, ToolExecutionResult, ToolResultPresentation};
//! use serde_json::json;
//!
//! let mut cards = Cards::new("session-1", false);
//! let args = json!({"path": "src/main.rs"});
//! let call = cards.call("call-1", &ToolCallPresentation::generic("read", &args), &args, false);
//! let wire = serde_json::to_value(&call).unwrap();
//! assert_eq!(wire["update"]["sessionUpdate"], "tool_call");
//! assert_eq!(wire["update"]["status"], "in_progress");
//! assert_eq!(wire["update"]["locations"][0]["path"], "src/main.rs");
//!
//! let result = ToolExecutionResult::ok("call-1", vec![ContentBlock::text("fn main() {}")]);
//! let done = cards.result("call-1", &result, &ToolResultPresentation::generic(&result.content));
//! let wire = serde_json::to_value(&done).unwrap();
//! assert_eq!(wire["update"]["sessionUpdate"], "tool_call_update");
//! assert_eq!(wire["update"]["status"], "completed");
//! ```
//!
//! ## Calls and results
//!
//! * A call becomes `tool_call`: `toolCallId` = the call id, `title`,
//!   `kind` (the presentation's; `other` by default), `status` `pending`
//!   while it awaits approval, else `in_progress`, `rawInput`, `content` =
//!   the presentation's content, `locations` for the path arguments
//!   (`file_path`, `path`, `notebook_path`, `filePath`, `paths`).
//! * Its result becomes `tool_call_update`: `completed` or `failed`, the
//!   result presentation's title and content (the raw result when the
//!   presentation has none), `rawOutput` = the result.
//! * A result whose call was never announced still gets a well-formed
//!   update (with the raw result); an update never precedes its call for
//!   calls that were announced.
//!
//! ## Terminal cards
//!
//! A call whose presentation asks for a terminal (the `bash` tool) is drawn
//! as Zed draws terminals when the client announced
//! `_meta.terminal_output` in its capabilities: content `{type:
//! "terminal", terminalId}` with `_meta.terminal_info {terminal_id, cwd}`,
//! output streamed as `_meta.terminal_output {terminal_id, data}` updates
//! ([`Cards::output`]) that the client appends, and
//! `_meta.terminal_exit {terminal_id, exit_code, signal}` at the end — the
//! terminal is never replaced by text. Other clients get the command as
//! text, and the output as the result's content.
//!
//! Presenters are pure, so the same log of calls and results always gives
//! the same updates, byte for byte ([`Cards`] holds no clock or counter).
//!
//! ## The scripted agent
//!
//! [`serve`] is the ACP agent behind `dsh acp --script FILE`: its "model"
//! is a [`Script`] of turns, one per `session/prompt`, each a list of tool
//! calls run through the pipeline's registry. `initialize` reads the
//! client's `_meta.terminal_output`; `session/new` installs an
//! [`AcpApprover`] for the session; a prompt's turn runs on its own task
//! (awaiting the editor's answer inside a handler would block the loop that
//! receives it), announcing each call, streaming a terminal card's output
//! as the command prints it ([`dsh_tools::LiveOutput`]) and ending the
//! card; `session/cancel` fires the running call's token, which kills its
//! processes, and the prompt answers `cancelled`. One approver serves the
//! pipeline, so the newest session's editor answers its asks.
//!
//! ## Approval
//!
//! [`AcpApprover`] answers the permission layer's *ask* with
//! `session/request_permission` (the reference bridge never sent one):
//! options allow once / allow always / reject once / reject always (kinds
//! `allow_once`, `allow_always`, `reject_once`, `reject_always`),
//! `cancelled` read as a rejection, and a client that does not answer in
//! time leaves the call unapproved — it fails closed.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod agent;
mod approval;
mod cards;
mod editor;

pub use agent::{serve, AgentSetup, Script, ScriptedCall, SetApprover};
pub use agent_client_protocol_schema::v1 as schema;
pub use approval::{answer_of, AcpApprover, DEFAULT_PERMISSION_TIMEOUT};
pub use cards::{locations_of, Cards};
pub use editor::{AcpFiles, FILE_TIMEOUT};
