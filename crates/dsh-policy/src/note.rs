//! What the permission layer decided about one call, for whoever keeps an
//! audit trail or telemetry: an outer layer puts a [`DecisionSlot`] in the
//! call's extensions, the permission layer (and the hooks layer) fill it in,
//! and the outer layer reads the [`DecisionNote`] once the call is over.

use crate::approval::ApprovalAnswer;
use crate::policy::Decision;
use serde::Serialize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared by the layers of one call; cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct DecisionSlot(Arc<Mutex<DecisionNote>>);

impl DecisionSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// What has been noted so far.
    pub fn note(&self) -> DecisionNote {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Changes the note.
    pub fn update(&self, change: impl FnOnce(&mut DecisionNote)) {
        change(
            &mut self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
    }
}

/// The decision on a call and how it was reached. Empty when no layer
/// decided (an unknown tool, arguments the schema refuses).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionNote {
    /// The verdict before anyone was asked: allow, ask or deny.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// What decided: `rule`, `mode`, `planMode`, `unanalysable`,
    /// `sandbox`, `hook`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<&'static str>,
    /// The rule that decided, as written, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Why, in the words the model or the user read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What a PreToolUse hook said (`allow: …`, `ask: …`, `deny: …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// The answer to an ask, when one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalNote>,
    /// What the kernel was told to hold (`readOnly`), when anything.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_hold: Option<&'static str>,
    /// When the permission layer started on the call.
    #[serde(skip)]
    pub started: Option<Instant>,
    /// When it let the call on or refused it (after any approval).
    #[serde(skip)]
    pub decided: Option<Instant>,
}

/// Who answered an ask, and what.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalNote {
    /// Who answered: `client form`, `terminal`, `hook`, `approval page`,
    /// `acp client`, … (the approver's own name), or `nobody`.
    pub answered_by: String,
    /// The answer.
    pub answer: ApprovalAnswer,
    /// How long the question waited for it.
    #[serde(serialize_with = "millis")]
    pub waited: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}
