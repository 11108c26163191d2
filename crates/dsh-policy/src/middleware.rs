//! [`PermissionMiddleware`]: the policy as a layer of the dsh-tools chain.

use crate::approval::{ApprovalAnswer, ApprovalRequest, Approver};
use crate::note::{ApprovalNote, DecisionSlot};
use crate::policy::{
    Decision, Evaluation, Mode, Origin, PermissionPolicy, Verdict, PLAN_MODE_MESSAGE,
};
use crate::rule::{Rule, RuleList};
use dsh_tools::{ErrorCode, Middleware, MiddlewareResult, Next, ToolError, ToolExecution};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Decides every call before it runs: allow → on to the tool; deny →
/// `PERMISSION_DENIED` (or `PLAN_MODE`); ask → the [`Approver`], or
/// `APPROVAL_UNAVAILABLE` when there is none.
///
/// Plan mode is a [`Mode`] of this middleware, not a separate layer, so that
/// its veto and the deny rules are merged in one place (a deny rule is still
/// reported as `PERMISSION_DENIED` in plan mode).
///
/// Cheap to clone: clones share the rules, the mode and the approver, so a
/// host keeps one clone to switch modes (`set_mode`) or read the rules added
/// by *allow always*.
///
/// Calls of tools the registry does not know, and calls whose arguments are
/// not JSON, pass through untouched: dispatch refuses them
/// (`UNKNOWN_TOOL`, `INVALID_ARGS`) and nothing runs.
#[derive(Clone)]
pub struct PermissionMiddleware {
    state: Arc<State>,
}

struct State {
    policy: RwLock<PermissionPolicy>,
    approver: RwLock<Option<Arc<dyn Approver>>>,
    remember: RwLock<Option<RememberRule>>,
}

/// Where *allow always* and *reject always* answers are kept beyond the
/// session (a settings file); called with each rule the answer adds.
pub type RememberRule = Arc<dyn Fn(RuleList, &Rule) + Send + Sync>;

fn remember(state: &State, list: RuleList, rules: &[Rule]) {
    let store = read(&state.remember).clone();
    if let Some(store) = store {
        for rule in rules {
            store(list, rule);
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

impl PermissionMiddleware {
    /// A middleware with no approver: asks fail closed.
    pub fn new(policy: PermissionPolicy) -> Self {
        PermissionMiddleware {
            state: Arc::new(State {
                policy: RwLock::new(policy),
                approver: RwLock::new(None),
                remember: RwLock::new(None),
            }),
        }
    }

    /// Sets the approver.
    pub fn with_approver(self, approver: impl Approver) -> Self {
        self.set_approver(Some(Arc::new(approver)));
        self
    }

    /// The approver now, for another kind of ask (a sandboxed command
    /// connecting to a domain no list names).
    pub fn approver(&self) -> Option<Arc<dyn Approver>> {
        read(&self.state.approver).clone()
    }

    /// Sets or removes the approver.
    pub fn set_approver(&self, approver: Option<Arc<dyn Approver>>) {
        *write(&self.state.approver) = approver;
    }

    /// Keeps *always* answers beyond the session too (`None`: in memory only).
    pub fn set_remember(&self, remember: Option<RememberRule>) {
        *write(&self.state.remember) = remember;
    }

    /// Whether a deny rule refuses every call of `tool` whatever its
    /// arguments: such a tool is left out of what the model is shown.
    pub fn denies_every_call(&self, tool: &dyn dsh_tools::ToolDefinition) -> bool {
        read(&self.state.policy).denies_every_call(tool.name(), tool.aliases())
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        read(&self.state.policy).mode()
    }

    /// Switches the mode for the calls that follow.
    pub fn set_mode(&self, mode: Mode) {
        write(&self.state.policy).set_mode(mode);
    }

    /// A snapshot of the policy, including the session rules.
    pub fn policy(&self) -> PermissionPolicy {
        read(&self.state.policy).clone()
    }

    /// What the `Read` deny rules name now, for a sandbox to keep unread
    /// (`None` when no such rule exists).
    pub fn read_denial_paths(&self) -> Option<crate::ReadDenialPaths> {
        read(&self.state.policy).read_denial_paths()
    }

    /// Adds a configured rule.
    pub fn add_rule(&self, list: RuleList, rule: Rule) {
        write(&self.state.policy).add_rule(list, rule);
    }

    /// Decides a call as the middleware would (tool assumed not read-only), running nothing.
    pub fn check(&self, tool: &str, args: &Value) -> Evaluation {
        read(&self.state.policy).check(tool, args)
    }
}

/// The error of an *ask* nobody could answer: it says what rule would
/// allow the call, so the user can add it.
fn unavailable(verdict: &Verdict) -> ToolError {
    not_approved(verdict, "approval required but no approver is available")
}

/// The error of an *ask* the client answered without one of the question's
/// options (`decline`, `cancel`): not a person's rejection, so it says which
/// rule would allow the call, as when nobody could be asked.
fn not_answered(verdict: &Verdict, action: &str) -> ToolError {
    not_approved(
        verdict,
        &format!("not approved: the client answered `{action}` without choosing one of the question's options (clients that cannot show the question answer so by themselves)"),
    )
}

/// `APPROVAL_UNAVAILABLE`: `what`, the reason, and the rules that would
/// allow the call.
fn not_approved(verdict: &Verdict, what: &str) -> ToolError {
    let rules: Vec<String> = verdict.grants.iter().map(|r| format!("\"{r}\"")).collect();
    let hint = if rules.is_empty() {
        String::new()
    } else {
        format!(
            "; to allow it, add {} to permissions.allow in the settings",
            rules.join(", ")
        )
    };
    ToolError::new(
        ErrorCode::ApprovalUnavailable,
        format!("{what}: {}{hint}", verdict.evaluation.reason),
    )
}

/// The error a denial becomes.
fn denial(verdict: &Verdict) -> ToolError {
    let e = &verdict.evaluation;
    match (e.origin, &e.rule) {
        (Origin::PlanMode, _) => ToolError::new(ErrorCode::PlanMode, e.reason.clone()),
        (Origin::Rule, Some(rule)) => ToolError::new(
            ErrorCode::PermissionDenied,
            format!(
                "permission denied by rule deny {rule} for {}",
                verdict.subject
            ),
        ),
        _ => ToolError::new(
            ErrorCode::PermissionDenied,
            format!("permission denied: {}", e.reason),
        ),
    }
}

/// What a hook (Claude Code's `PreToolUse`, run by an outer middleware)
/// said about a call, put in the call's [`extensions`](ToolExecution::extensions)
/// for this layer to weigh.
///
/// * [`HookPermission::Allow`] skips an *ask* that only the mode made (no
///   ask rule, nothing unanalysable): a deny or ask rule of the settings
///   still holds, as in Claude Code.
/// * [`HookPermission::Ask`] sends to the approver a call the rules and the
///   mode would allow (a deny still denies; in `dontAsk` it is denied).
///
/// A hook's deny never reaches this layer: the hook layer refuses the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookPermission {
    /// The hook allowed the call, for this reason.
    Allow(String),
    /// The hook wants the user asked, for this reason.
    Ask(String),
}

/// The verdict once a hook's say is weighed in.
fn with_hook(mut verdict: Verdict, hook: Option<&HookPermission>, mode: Mode) -> Verdict {
    let mode_asks_only = verdict.asks_only_by_mode();
    let e = &mut verdict.evaluation;
    match hook {
        Some(HookPermission::Allow(reason)) if e.decision == Decision::Ask && mode_asks_only => {
            e.decision = Decision::Allow;
            e.reason = format!("allowed by a PreToolUse hook ({reason}) where the mode would ask");
        }
        Some(HookPermission::Ask(reason)) if e.decision == Decision::Allow => {
            if mode == Mode::DontAsk {
                e.decision = Decision::Deny;
                e.origin = Origin::Mode;
                e.reason = format!(
                    "a PreToolUse hook asks ({reason}); mode dontAsk denies what it would ask about"
                );
            } else {
                e.decision = Decision::Ask;
                e.reason = format!("a PreToolUse hook asks: {reason}");
            }
        }
        _ => {}
    }
    verdict
}

impl Middleware for PermissionMiddleware {
    fn handle(&self, exec: ToolExecution, next: Next) -> BoxFuture<'static, MiddlewareResult> {
        let Some(tool) = next.tool(&exec.name) else {
            return Box::pin(async move { Ok(next.run(exec).await) });
        };
        let Some(args) = exec.arguments.as_value() else {
            return Box::pin(async move { Ok(next.run(exec).await) });
        };
        // Arguments the tool's schema refuses are answered with the schema's
        // message (what the model can correct), not with a verdict on a call
        // that cannot run; the call is refused here, so nothing runs either way.
        if let Err(err) = tool.check_arguments(args) {
            return Box::pin(async move { Err(err) });
        }
        let slot = exec.extensions.get::<DecisionSlot>().cloned();
        let started = std::time::Instant::now();
        // Reading or stopping one's own earlier work is decided as a read.
        let read_only = tool.annotations().is_read_only() || tool.acts_on_own_work();
        let checked_as = tool.checked_as(args, exec.agent.as_deref());
        let definition_hold = tool.definition_hold();
        let (verdict, mode) = {
            let policy = read(&self.state.policy);
            let verdict = match &checked_as {
                // Input that a program the policy cannot see into runs as
                // it likes: in plan mode nothing may make it act.
                Some(view) if view.opaque_input && policy.mode() == Mode::Plan => {
                    if let Some(slot) = &slot {
                        slot.update(|note| {
                            note.decision = Some(Decision::Deny);
                            note.origin = Some(origin_name(Origin::PlanMode));
                            note.reason =
                                Some("input to an interactive program in plan mode".into());
                            note.started = Some(started);
                            note.decided = Some(std::time::Instant::now());
                        });
                    }
                    return Box::pin(async move {
                        Err(ToolError::new(
                            ErrorCode::PlanMode,
                            format!("{PLAN_MODE_MESSAGE} (input to an interactive program can make it do anything)"),
                        ))
                    });
                }
                Some(view) => policy.evaluate(&view.tool, &[], &view.arguments, false),
                None => match tool.argument_meanings() {
                    Some(meanings) if !tool.aliases().is_empty() => {
                        policy.evaluate_arguments(&exec.name, tool.aliases(), meanings, args)
                    }
                    _ => policy.evaluate(&exec.name, tool.aliases(), args, read_only),
                },
            };
            let verdict = match &definition_hold {
                Some(hold) => policy.hold_definition(verdict, &exec.name, &hold.change),
                None => verdict,
            };
            (verdict, policy.mode())
        };
        let hook = exec.extensions.get::<HookPermission>();
        let hook_said = hook.map(|say| match say {
            HookPermission::Allow(reason) => format!("allow: {reason}"),
            HookPermission::Ask(reason) => format!("ask: {reason}"),
        });
        // Decided before the hook's say: a hook's allow vouches for a call
        // the mode would have asked about, as a person would; a call the
        // analysis allowed anyway stays held (a blanket "allow" hook must
        // not switch the hold off).
        let hold = verdict.kernel_hold(mode);
        let verdict = with_hook(verdict, hook, mode);
        // Plan mode holds every call read-only, whoever allowed it.
        let plan_hold = (mode == Mode::Plan).then_some(dsh_tools::KernelHold::ReadOnly);
        // Input typed into a session runs in the session's confinement: when
        // that is not read-only, a call allowed on the analysis's word alone
        // cannot be held, so a person decides.
        let mut verdict = verdict;
        if verdict.evaluation.decision == Decision::Allow
            && (hold.is_some() || plan_hold.is_some())
            && checked_as.as_ref().is_some_and(|view| !view.held)
        {
            let e = &mut verdict.evaluation;
            e.reason = format!(
                "{}; but it runs in a session the kernel does not hold read-only, so it cannot be held there{}",
                e.reason,
                if mode == Mode::DontAsk { "; mode dontAsk denies it" } else { "" }
            );
            e.decision = if mode == Mode::DontAsk {
                Decision::Deny
            } else {
                Decision::Ask
            };
            e.origin = Origin::Mode;
        }
        // What the kernel must hold: for a call allowed as it stands, what
        // the verdict says; for one a person approves, only plan mode's.
        let held = match verdict.evaluation.decision {
            Decision::Allow => hold.or(plan_hold),
            Decision::Ask | Decision::Deny => plan_hold,
        };
        let mut exec = exec;
        if let Some(held) = held {
            exec.extensions.insert(held);
        }
        if let Some(slot) = &slot {
            let e = &verdict.evaluation;
            slot.update(|note| {
                note.decision = Some(e.decision);
                note.origin = Some(origin_name(e.origin));
                note.rule = e.rule.clone();
                note.reason = Some(e.reason.clone());
                note.hook = hook_said;
                note.kernel_hold = held.map(|_| "readOnly");
                note.started = Some(started);
                if e.decision != Decision::Ask {
                    note.decided = Some(std::time::Instant::now());
                }
            });
        }
        let aliases = tool.aliases().to_vec();
        let state = self.state.clone();
        Box::pin(async move {
            match verdict.evaluation.decision {
                Decision::Allow => return Ok(next.run(exec).await),
                Decision::Deny => return Err(denial(&verdict)),
                Decision::Ask => {}
            }
            let approver = read(&state.approver).clone();
            let asked = std::time::Instant::now();
            let noted = |answer: ApprovalAnswer, by: String| {
                if let Some(slot) = &slot {
                    slot.update(|note| {
                        note.approval = Some(ApprovalNote {
                            answered_by: by,
                            answer,
                            waited: asked.elapsed(),
                        });
                        note.decided = Some(std::time::Instant::now());
                    });
                }
            };
            let Some(approver) = approver else {
                noted(ApprovalAnswer::Unavailable, "nobody".to_owned());
                return Err(unavailable(&verdict));
            };
            let request = ApprovalRequest {
                call_id: exec.call_id.clone(),
                tool: exec.name.clone(),
                tool_aliases: aliases,
                arguments: exec.arguments.to_value(),
                agent: exec.agent.clone(),
                reason: verdict.evaluation.reason.clone(),
                rule: verdict.evaluation.rule.clone(),
                allow_always_rules: verdict.grants.iter().map(|r| r.to_string()).collect(),
                reject_always_rules: verdict.denials.iter().map(|r| r.to_string()).collect(),
            };
            let (answer, by) = approver.ask_noted(request).await;
            noted(answer, by);
            match answer {
                ApprovalAnswer::Unavailable => Err(unavailable(&verdict)),
                ApprovalAnswer::Declined => Err(not_answered(&verdict, "decline")),
                ApprovalAnswer::Cancelled => Err(not_answered(&verdict, "cancel")),
                ApprovalAnswer::AllowOnce => Ok(next.run(exec).await),
                ApprovalAnswer::AllowAlways => {
                    // *Always* for a held tool accepts its definition as it
                    // is now; failing that, the answer still counts once.
                    if let Some(hold) = &definition_hold {
                        if let Err(err) = (hold.accept)() {
                            if let Some(slot) = &slot {
                                slot.update(|note| {
                                    note.reason = Some(format!(
                                        "{}; accepting the definition failed: {err}",
                                        note.reason.as_deref().unwrap_or_default()
                                    ));
                                });
                            }
                        }
                    }
                    remember(&state, RuleList::Allow, &verdict.grants);
                    {
                        let mut policy = write(&state.policy);
                        for rule in verdict.grants {
                            policy.add_session_rule(RuleList::Allow, rule);
                        }
                    }
                    Ok(next.run(exec).await)
                }
                ApprovalAnswer::RejectOnce => Err(ToolError::new(
                    ErrorCode::PermissionDenied,
                    format!(
                        "permission denied: the user rejected this call ({})",
                        verdict.subject
                    ),
                )),
                ApprovalAnswer::RejectAlways => {
                    remember(&state, RuleList::Deny, &verdict.denials);
                    {
                        let mut policy = write(&state.policy);
                        for rule in verdict.denials {
                            policy.add_session_rule(RuleList::Deny, rule);
                        }
                    }
                    Err(ToolError::new(
                        ErrorCode::PermissionDenied,
                        format!(
                            "permission denied: the user rejected this call and all like it for the rest of the session ({})",
                            verdict.subject
                        ),
                    ))
                }
            }
        })
    }
}

/// An origin as a note names it.
fn origin_name(origin: Origin) -> &'static str {
    match origin {
        Origin::Rule => "rule",
        Origin::Mode => "mode",
        Origin::PlanMode => "planMode",
        Origin::Unanalysable => "unanalysable",
        Origin::Sandbox => "sandbox",
        Origin::Definition => "definition",
    }
}
