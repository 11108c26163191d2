//! [`ApprovalRegistry`]: the asks waiting for a person, and the calls
//! running now.

use dsh_policy::{ApprovalAnswer, ApprovalRequest};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{oneshot, watch};

/// Where an ask comes from, as the page shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskOrigin {
    /// The client program that sent the call (`name version`), when known.
    pub client: Option<String>,
    /// The working directory the call runs in.
    pub cwd: Option<String>,
}

/// Who gave an answer through the page's server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum AnsweredVia {
    /// A person clicking on the page.
    Page,
    /// `dsh approvals allow|deny` at a terminal.
    Terminal,
}

impl AnsweredVia {
    /// How an audit record names it.
    pub fn name(self) -> &'static str {
        match self {
            AnsweredVia::Page => "approval page",
            AnsweredVia::Terminal => "dsh approvals (terminal)",
        }
    }
}

/// One pending ask as the page and `dsh approvals list` see it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingAsk {
    /// The ask's id on this server (what `dsh approvals allow ID` names).
    pub id: String,
    /// The tool called.
    pub tool: String,
    /// What the call would do (``run `make test` ``).
    pub action: String,
    /// The command line, for a shell call.
    pub command: Option<String>,
    /// The call's arguments.
    pub arguments: Value,
    /// The working directory.
    pub cwd: Option<String>,
    /// Why a person must decide.
    pub reason: String,
    /// The ask rule that matched, if one did.
    pub rule: Option<String>,
    /// The rules *allow always* would add for the session.
    pub allow_always_rules: Vec<String>,
    /// The rules *reject always* would add for the session.
    pub reject_always_rules: Vec<String>,
    /// The client program that sent the call.
    pub client: Option<String>,
    /// The agent or principal on whose behalf it runs.
    pub agent: Option<String>,
    /// The model's id for the call.
    pub call_id: String,
    /// When it was asked, in milliseconds since the Unix epoch.
    pub asked_at_ms: u64,
    /// When it stops waiting (and fails closed), in milliseconds since the Unix epoch.
    pub expires_at_ms: u64,
}

/// One call running now.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunningCall {
    /// Its id on the page (what a kill names).
    pub id: String,
    /// The model's id for the call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// What it does (``run `make test` ``).
    pub action: String,
    /// The agent or principal on whose behalf it runs.
    pub agent: Option<String>,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at_ms: u64,
    /// The end of what it printed so far (at most [`OUTPUT_SHOWN`] bytes,
    /// cut at a character boundary), as the tool streams it.
    pub output: String,
}

/// How much of a running call's latest output the page shows.
pub const OUTPUT_SHOWN: usize = 4096;

/// A running call and what stops it.
struct Running {
    call: RunningCall,
    stop: Option<tokio_util::sync::CancellationToken>,
}

/// Recent records of what ran (an audit log), shown under the asks. The page
/// shows each record's fields as they are; without a provider it shows no
/// such section.
pub trait RecentRecords: Send + Sync + 'static {
    /// The heading of the section (e.g. `Recent calls`).
    fn title(&self) -> String;
    /// Up to `limit` records, newest first.
    fn recent(&self, limit: usize) -> Vec<Value>;
}

struct Waiting {
    ask: PendingAsk,
    answer: oneshot::Sender<(ApprovalAnswer, AnsweredVia)>,
}

#[derive(Default)]
struct Inner {
    next_id: u64,
    pending: BTreeMap<u64, Waiting>,
    next_running: u64,
    running: BTreeMap<u64, Running>,
}

/// The asks waiting for a person, shared by the approver that files them and
/// the server that shows and answers them. Cheap to clone.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use dsh_approvals::{ApprovalRegistry, AnsweredVia, AskOrigin};
/// use dsh_policy::{ApprovalAnswer, ApprovalRequest};
/// let registry = ApprovalRegistry::new();
/// let request = ApprovalRequest {
///     call_id: "c1".into(), tool: "bash".into(), tool_aliases: vec![],
///     arguments: serde_json::json!({"command": "make"}), agent: None,
///     reason: "no rule matches".into(), rule: None,
///     allow_always_rules: vec!["Bash(make)".into()], reject_always_rules: vec![],
/// };
/// let ticket = registry.file(&request, AskOrigin::default(), std::time::Duration::from_secs(60));
/// let id = registry.pending()[0].id.clone();
/// registry.answer(&id, ApprovalAnswer::AllowOnce, AnsweredVia::Terminal).unwrap();
/// assert_eq!(ticket.wait(std::time::Duration::from_secs(1)).await,
///            Some((ApprovalAnswer::AllowOnce, AnsweredVia::Terminal)));
/// assert!(registry.pending().is_empty());
/// # }
/// ```
#[derive(Clone)]
pub struct ApprovalRegistry {
    inner: Arc<Mutex<Inner>>,
    changes: Arc<watch::Sender<u64>>,
    records: Option<Arc<dyn RecentRecords>>,
}

impl Default for ApprovalRegistry {
    fn default() -> Self {
        Self::new()
    }
}

/// Why an answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerRefused {
    /// No ask of that id is waiting (answered, expired, cancelled, or never filed).
    NotPending(String),
    /// Only allow and reject answers can be given.
    NotAChoice,
}

impl std::fmt::Display for AnswerRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerRefused::NotPending(id) => write!(
                f,
                "no ask {id:?} is waiting (answered, expired or cancelled already?)"
            ),
            AnswerRefused::NotAChoice => {
                f.write_str("the answer must be allowOnce, allowAlways, rejectOnce or rejectAlways")
            }
        }
    }
}

impl std::error::Error for AnswerRefused {}

fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl ApprovalRegistry {
    /// An empty registry, with no recent records.
    pub fn new() -> Self {
        ApprovalRegistry {
            inner: Arc::default(),
            changes: Arc::new(watch::channel(0).0),
            records: None,
        }
    }

    /// Shows `records` on the page under the asks.
    pub fn with_recent_records(mut self, records: Arc<dyn RecentRecords>) -> Self {
        self.records = Some(records);
        self
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|version| *version += 1);
    }

    /// Changes (a filed, answered or withdrawn ask; a call starting or ending)
    /// are announced on this channel.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Files an ask that waits up to `wait`; the [`Ticket`] receives its answer.
    /// Dropping the ticket withdraws the ask.
    pub fn file(&self, request: &ApprovalRequest, origin: AskOrigin, wait: Duration) -> Ticket {
        let now = SystemTime::now();
        let (sender, receiver) = oneshot::channel();
        let id = {
            let mut inner = self.lock();
            inner.next_id += 1;
            let id = inner.next_id;
            let command = match (request.tool.as_str(), request.arguments.get("command")) {
                ("bash", Some(Value::String(command))) => Some(command.clone()),
                _ => None,
            };
            let ask = PendingAsk {
                id: id.to_string(),
                tool: request.tool.clone(),
                action: request.action(),
                command,
                arguments: request.arguments.clone(),
                cwd: origin.cwd,
                reason: request.reason.clone(),
                rule: request.rule.clone(),
                allow_always_rules: request.allow_always_rules.clone(),
                reject_always_rules: request.reject_always_rules.clone(),
                client: origin.client,
                agent: request.agent.clone(),
                call_id: request.call_id.clone(),
                asked_at_ms: epoch_ms(now),
                expires_at_ms: epoch_ms(now + wait),
            };
            inner.pending.insert(
                id,
                Waiting {
                    ask,
                    answer: sender,
                },
            );
            id
        };
        self.changed();
        Ticket {
            registry: self.clone(),
            id,
            receiver,
        }
    }

    /// Answers ask `id`.
    ///
    /// # Errors
    /// [`AnswerRefused::NotPending`] when no ask of that id waits;
    /// [`AnswerRefused::NotAChoice`] for an answer that is not allow or reject.
    pub fn answer(
        &self,
        id: &str,
        answer: ApprovalAnswer,
        via: AnsweredVia,
    ) -> Result<(), AnswerRefused> {
        if !matches!(
            answer,
            ApprovalAnswer::AllowOnce
                | ApprovalAnswer::AllowAlways
                | ApprovalAnswer::RejectOnce
                | ApprovalAnswer::RejectAlways
        ) {
            return Err(AnswerRefused::NotAChoice);
        }
        let waiting = id
            .parse::<u64>()
            .ok()
            .and_then(|key| self.lock().pending.remove(&key))
            .ok_or_else(|| AnswerRefused::NotPending(id.to_owned()))?;
        self.changed();
        // The waiter left in the meantime (cancelled): nobody gets the answer.
        waiting
            .answer
            .send((answer, via))
            .map_err(|_| AnswerRefused::NotPending(id.to_owned()))
    }

    /// The asks waiting now, oldest first.
    pub fn pending(&self) -> Vec<PendingAsk> {
        self.lock()
            .pending
            .values()
            .map(|w| w.ask.clone())
            .collect()
    }

    /// The calls running now, oldest first.
    pub fn running(&self) -> Vec<RunningCall> {
        self.lock()
            .running
            .values()
            .map(|r| r.call.clone())
            .collect()
    }

    /// Stops running call `id` (its id on the page) as a client's
    /// cancellation would: the tool kills what it started.
    ///
    /// # Errors
    /// No call of that id is running, or it cannot be stopped.
    pub fn kill(&self, id: &str) -> Result<(), String> {
        let stop = {
            let inner = self.lock();
            let running = id
                .parse::<u64>()
                .ok()
                .and_then(|key| inner.running.get(&key))
                .ok_or_else(|| format!("no call {id:?} is running (it ended already?)"))?;
            running.stop.clone()
        };
        match stop {
            Some(stop) => {
                stop.cancel();
                Ok(())
            }
            None => Err(format!("call {id} cannot be stopped")),
        }
    }

    /// Up to `limit` recent records, when a provider was given.
    pub fn recent_records(&self, limit: usize) -> Option<(String, Vec<Value>)> {
        self.records
            .as_ref()
            .map(|records| (records.title(), records.recent(limit)))
    }

    /// Notes a call that starts (its `id` is assigned here); it is listed
    /// as running until the guard drops, and a kill cancels `stop`.
    pub fn started(
        &self,
        mut call: RunningCall,
        stop: Option<tokio_util::sync::CancellationToken>,
    ) -> RunningGuard {
        let key = {
            let mut inner = self.lock();
            inner.next_running += 1;
            let key = inner.next_running;
            call.id = key.to_string();
            inner.running.insert(key, Running { call, stop });
            key
        };
        self.changed();
        RunningGuard {
            registry: self.clone(),
            key,
        }
    }

    fn withdraw(&self, id: u64) {
        let removed = self.lock().pending.remove(&id).is_some();
        if removed {
            self.changed();
        }
    }
}

/// A running call's place in the list; removed when dropped.
pub struct RunningGuard {
    registry: ApprovalRegistry,
    key: u64,
}

impl RunningGuard {
    /// Adds a chunk of the call's output; the page keeps the end of it.
    pub fn output(&self, chunk: &[u8]) {
        {
            let mut inner = self.registry.lock();
            let Some(running) = inner.running.get_mut(&self.key) else {
                return;
            };
            let shown = &mut running.call.output;
            shown.push_str(&String::from_utf8_lossy(chunk));
            if shown.len() > OUTPUT_SHOWN {
                let mut cut = shown.len() - OUTPUT_SHOWN;
                while !shown.is_char_boundary(cut) {
                    cut += 1;
                }
                shown.drain(..cut);
            }
        }
        self.registry.changed();
    }
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        let removed = self.registry.lock().running.remove(&self.key).is_some();
        if removed {
            self.registry.changed();
        }
    }
}

/// A filed ask, waiting for its answer. Dropping it withdraws the ask.
pub struct Ticket {
    registry: ApprovalRegistry,
    id: u64,
    receiver: oneshot::Receiver<(ApprovalAnswer, AnsweredVia)>,
}

impl Ticket {
    /// The ask's id.
    pub fn id(&self) -> String {
        self.id.to_string()
    }

    /// Waits up to `wait` for the answer; `None` when nobody answered in
    /// time (the ask is then withdrawn).
    ///
    /// # Cancel safety
    /// Dropping the future withdraws the ask.
    pub async fn wait(mut self, wait: Duration) -> Option<(ApprovalAnswer, AnsweredVia)> {
        tokio::time::timeout(wait, &mut self.receiver)
            .await
            .ok()
            .and_then(Result::ok)
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.registry.withdraw(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(command: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c1".into(),
            tool: "bash".into(),
            tool_aliases: vec![],
            arguments: serde_json::json!({ "command": command }),
            agent: Some("alice".into()),
            reason: "no rule matches".into(),
            rule: None,
            allow_always_rules: vec![format!("Bash({command})")],
            reject_always_rules: vec![format!("Bash({command})")],
        }
    }

    const LONG: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn an_answer_reaches_its_waiter_once() {
        let registry = ApprovalRegistry::new();
        let origin = AskOrigin {
            client: Some("inspector 1.0".into()),
            cwd: Some("/w".into()),
        };
        let first = registry.file(&request("make"), origin, LONG);
        let second = registry.file(&request("touch x"), AskOrigin::default(), LONG);
        let pending = registry.pending();
        assert_eq!(pending.len(), 2);
        assert_eq!(pending[0].id, first.id());
        assert_eq!(pending[0].command.as_deref(), Some("make"));
        assert_eq!(pending[0].action, "run `make`");
        assert_eq!(pending[0].cwd.as_deref(), Some("/w"));
        assert_eq!(pending[0].client.as_deref(), Some("inspector 1.0"));
        assert_eq!(pending[0].agent.as_deref(), Some("alice"));
        assert_eq!(pending[0].allow_always_rules, ["Bash(make)"]);
        assert!(pending[0].expires_at_ms >= pending[0].asked_at_ms + 60_000);

        let id = second.id();
        registry
            .answer(&id, ApprovalAnswer::RejectAlways, AnsweredVia::Page)
            .unwrap();
        assert_eq!(
            registry.answer(&id, ApprovalAnswer::AllowOnce, AnsweredVia::Page),
            Err(AnswerRefused::NotPending(id.clone()))
        );
        assert_eq!(
            second.wait(LONG).await,
            Some((ApprovalAnswer::RejectAlways, AnsweredVia::Page))
        );
        assert_eq!(registry.pending().len(), 1);
        drop(first);
        assert!(registry.pending().is_empty());
    }

    #[tokio::test]
    async fn only_choices_are_answers_and_unknown_ids_are_refused() {
        let registry = ApprovalRegistry::new();
        let ticket = registry.file(&request("make"), AskOrigin::default(), LONG);
        for answer in [
            ApprovalAnswer::Unavailable,
            ApprovalAnswer::Declined,
            ApprovalAnswer::Cancelled,
        ] {
            assert_eq!(
                registry.answer(&ticket.id(), answer, AnsweredVia::Terminal),
                Err(AnswerRefused::NotAChoice)
            );
        }
        for id in ["0", "99", "x", ""] {
            assert!(matches!(
                registry.answer(id, ApprovalAnswer::AllowOnce, AnsweredVia::Terminal),
                Err(AnswerRefused::NotPending(_))
            ));
        }
        assert_eq!(registry.pending().len(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unanswered_ask_expires_and_is_withdrawn() {
        let registry = ApprovalRegistry::new();
        let mut changes = registry.subscribe();
        let ticket = registry.file(&request("make"), AskOrigin::default(), LONG);
        let id = ticket.id();
        assert!(changes.has_changed().unwrap());
        changes.borrow_and_update();
        assert_eq!(ticket.wait(Duration::from_secs(5)).await, None);
        assert!(registry.pending().is_empty());
        assert!(changes.has_changed().unwrap());
        assert!(registry
            .answer(&id, ApprovalAnswer::AllowOnce, AnsweredVia::Page)
            .is_err());
    }

    #[tokio::test]
    async fn a_withdrawn_waiter_gets_nothing_and_the_answer_is_refused() {
        let registry = ApprovalRegistry::new();
        let ticket = registry.file(&request("make"), AskOrigin::default(), LONG);
        let id = ticket.id();
        let waiting = tokio::spawn(ticket.wait(LONG));
        waiting.abort();
        let _ = waiting.await;
        assert!(registry.pending().is_empty());
        assert!(registry
            .answer(&id, ApprovalAnswer::AllowOnce, AnsweredVia::Page)
            .is_err());
    }

    #[test]
    fn running_calls_are_listed_while_their_guard_lives() {
        let registry = ApprovalRegistry::new();
        let stop = tokio_util::sync::CancellationToken::new();
        let guard = registry.started(
            RunningCall {
                id: String::new(),
                call_id: "7".into(),
                tool: "bash".into(),
                action: "run `sleep 5`".into(),
                agent: None,
                started_at_ms: 1,
                output: String::new(),
            },
            Some(stop.clone()),
        );
        let listed = registry.running();
        assert_eq!(listed.len(), 1);
        // Output: the end of it, cut at a character boundary.
        guard.output(b"first line\n");
        assert_eq!(registry.running()[0].output, "first line\n");
        guard.output("é".repeat(OUTPUT_SHOWN).as_bytes());
        let shown = registry.running()[0].output.clone();
        assert!(
            shown.len() <= OUTPUT_SHOWN && shown.chars().all(|c| c == 'é'),
            "{shown:?}"
        );
        // A kill names the page's id and cancels the call's token.
        assert!(registry.kill("999").is_err());
        assert!(!stop.is_cancelled());
        registry.kill(&listed[0].id).unwrap();
        assert!(stop.is_cancelled());
        drop(guard);
        assert!(registry.running().is_empty());
        assert!(registry.kill(&listed[0].id).is_err());
    }
}
