//! The scripted ACP agent behind `dsh acp`: its "model" is a file of turns,
//! each a list of tool calls, run through the pipeline with approval by the
//! editor and every call drawn as a card.

use crate::approval::AcpApprover;
use crate::cards::Cards;
use crate::editor::AcpFiles;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, InitializeRequest, InitializeResponse,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, StopReason,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Client, ConnectTo};
use dsh_policy::Approver;
use dsh_tools::{CancellationToken, ToolExecution, ToolRegistry};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One scripted call.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The tool.
    pub tool: String,
    /// Its arguments.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// The turns a session plays, one per `session/prompt`:
/// `{"turns": [[{"tool": "bash", "arguments": {"command": "ls"}}], …]}`.
#[derive(Debug, Clone, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// Each turn's calls, run in order.
    pub turns: Vec<Vec<ScriptedCall>>,
}

impl Script {
    /// Reads a script file.
    ///
    /// # Errors
    /// The file cannot be read or is not a script (the error says where).
    pub fn load(path: &Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the script: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{}: not a script: {e}", path.display()))
    }
}

/// Installs (or removes) the approver of the pipeline's permission layer.
pub type SetApprover = Arc<dyn Fn(Option<Arc<dyn Approver>>) + Send + Sync>;

/// What the agent runs on.
#[derive(Clone)]
pub struct AgentSetup {
    /// The pipeline's registry (middleware included).
    pub registry: ToolRegistry,
    /// Where the editor's approver goes.
    pub set_approver: SetApprover,
    /// The turns.
    pub script: Script,
    /// How long the editor has to answer a permission request.
    pub permission_timeout: Duration,
}

#[derive(Default)]
struct Session {
    next_turn: usize,
    /// The running turn's token: `session/cancel` fires it.
    running: Option<CancellationToken>,
}

#[derive(Default)]
struct State {
    terminal_output: bool,
    /// The client as it named itself in `initialize` (`name/version`).
    client: Option<String>,
    /// The client reads and writes text files for us (both announced).
    editor_files: bool,
    sessions: HashMap<String, Session>,
    created: usize,
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a turn plays in.
struct Turn {
    session: String,
    client: Option<String>,
    turn: usize,
    terminal_output: bool,
    /// The file tools read and write text through the editor.
    editor_files: bool,
}

/// Plays one turn: each call announced, run, and ended as a card.
async fn play(
    setup: AgentSetup,
    cx: ConnectionTo<Client>,
    Turn {
        session,
        client,
        turn,
        terminal_output,
        editor_files,
    }: Turn,
    calls: Vec<ScriptedCall>,
    cancel: CancellationToken,
) -> Result<StopReason, agent_client_protocol::Error> {
    let mut cards = Cards::new(session.clone(), terminal_output);
    for (i, call) in calls.into_iter().enumerate() {
        if cancel.is_cancelled() {
            return Ok(StopReason::Cancelled);
        }
        let id = format!("call-{turn}-{i}");
        let presentation = setup.registry.present_call(&call.tool, &call.arguments);
        cx.send_notification(cards.call(&id, &presentation, &call.arguments, false))?;
        let mut exec = ToolExecution::new(id.as_str(), call.tool.as_str(), call.arguments.clone())
            .with_cancel(cancel.clone());
        exec.extensions.insert(dsh_tools::CallOrigin {
            client: client.clone(),
            session: Some(session.clone()),
        });
        if editor_files {
            // Unsaved buffers are what the model reads and edits.
            exec.extensions
                .insert(dsh_tool_fs::Editor::new(AcpFiles::new(
                    cx.clone(),
                    session.clone(),
                )));
        }
        if cards.is_terminal(&id) {
            // The terminal card shows the output as the command prints it.
            let (cards, cx, id) = (cards.clone(), cx.clone(), id.clone());
            exec.extensions
                .insert(dsh_tools::LiveOutput::new(move |bytes| {
                    if let Some(chunk) = cards.output(&id, &String::from_utf8_lossy(bytes)) {
                        let _ = cx.send_notification(chunk);
                    }
                }));
        }
        let result = setup.registry.execute(exec).await;
        let shown = setup
            .registry
            .present_result(&call.tool, &call.arguments, &result);
        cx.send_notification(cards.result(&id, &result, &shown))?;
    }
    Ok(if cancel.is_cancelled() {
        StopReason::Cancelled
    } else {
        StopReason::EndTurn
    })
}

/// Serves the scripted agent on `transport` (stdio for `dsh acp`) until
/// the client goes away.
///
/// # Errors
/// The connection failed.
pub async fn serve(
    setup: AgentSetup,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), agent_client_protocol::Error> {
    let state: Shared = Arc::default();
    let (s1, s2, s3, s4) = (state.clone(), state.clone(), state.clone(), state);
    let (setup_new, setup_prompt) = (setup.clone(), setup);
    Agent
        .v1()
        .name("dsh")
        .on_receive_request(
            async move |init: InitializeRequest, responder, _cx| {
                // Zed's convention: the client renders terminal cards itself.
                let terminal = init
                    .client_capabilities
                    .meta
                    .as_ref()
                    .and_then(|m| m.get("terminal_output"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let fs = &init.client_capabilities.fs;
                let editor_files = fs.read_text_file && fs.write_text_file;
                let client = init
                    .client_info
                    .as_ref()
                    .map(|c| format!("{}/{}", c.name, c.version));
                {
                    let mut st = lock(&s1);
                    st.client = client;
                    st.terminal_output = terminal;
                    st.editor_files = editor_files;
                }
                responder.respond(
                    InitializeResponse::new(init.protocol_version)
                        .agent_capabilities(AgentCapabilities::new()),
                )
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_new: NewSessionRequest, responder, cx: ConnectionTo<Client>| {
                let id = {
                    let mut st = lock(&s2);
                    st.created += 1;
                    let id = format!("dsh-session-{}", st.created);
                    st.sessions.insert(id.clone(), Session::default());
                    id
                };
                // The editor answers this session's asks.
                let approver =
                    AcpApprover::new(cx, id.clone()).with_timeout(setup_new.permission_timeout);
                (setup_new.set_approver)(Some(Arc::new(approver)));
                responder.respond(NewSessionResponse::new(id))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |prompt: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let session = prompt.session_id.0.to_string();
                let cancel = CancellationToken::new();
                let (turn, calls, terminal, editor_files, client) = {
                    let mut st = lock(&s3);
                    let client = st.client.clone();
                    let terminal = st.terminal_output;
                    let editor_files = st.editor_files;
                    let Some(s) = st.sessions.get_mut(&session) else {
                        return responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params()
                                .data(format!("no session {session:?}")),
                        );
                    };
                    let turn = s.next_turn;
                    s.next_turn += 1;
                    s.running = Some(cancel.clone());
                    let calls = setup_prompt
                        .script
                        .turns
                        .get(turn)
                        .cloned()
                        .unwrap_or_default();
                    (turn, calls, terminal, editor_files, client)
                };
                // Awaiting the editor (approval) inside a handler would block
                // the loop that receives its answer: the turn runs on its own.
                let setup = setup_prompt.clone();
                let state = s3.clone();
                cx.spawn({
                    let cx = cx.clone();
                    async move {
                        let turn = Turn {
                            session: session.clone(),
                            client,
                            turn,
                            terminal_output: terminal,
                            editor_files,
                        };
                        let stop = play(setup, cx, turn, calls, cancel).await?;
                        if let Some(s) = lock(&state).sessions.get_mut(&session) {
                            s.running = None;
                        }
                        responder.respond(PromptResponse::new(stop))
                    }
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                if let Some(token) = lock(&s4)
                    .sessions
                    .get(cancel.session_id.0.as_ref())
                    .and_then(|s| s.running.clone())
                {
                    token.cancel();
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
}
