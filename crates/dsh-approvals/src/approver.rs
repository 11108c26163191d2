//! [`PageApprover`]: an [`Approver`] that puts the ask on the page and waits.

use crate::registry::{ApprovalRegistry, AskOrigin};
use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver};
use futures::future::BoxFuture;
use std::time::Duration;

/// How long an ask waits on the page by default before it fails closed:
/// five minutes, as long as `dsh acp` waits for an editor's answer. Long
/// enough to notice and read the ask; short enough that an agent nobody
/// watches does not hang for good.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);

/// Puts each ask on the approval page (and in `dsh approvals list`) and
/// waits up to its wait for a person's answer. Nobody answering in time is
/// [`ApprovalAnswer::Unavailable`]: the call fails closed.
#[derive(Clone)]
pub struct PageApprover {
    registry: ApprovalRegistry,
    wait: Duration,
    cwd: Option<String>,
}

impl PageApprover {
    /// Asks on `registry`'s page, waiting [`DEFAULT_WAIT`].
    pub fn new(registry: ApprovalRegistry) -> Self {
        PageApprover {
            registry,
            wait: DEFAULT_WAIT,
            cwd: None,
        }
    }

    /// Waits `wait` for an answer instead.
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The working directory the page shows for asks that do not name one.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// How long an ask waits.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// Asks about `request`, showing where it comes from; the answer and who
    /// gave it (`approval page`, `dsh approvals (terminal)`, or `nobody on
    /// the approval page` when the wait ran out).
    ///
    /// # Cancel safety
    /// Dropping the future withdraws the ask from the page.
    pub fn ask_from(
        &self,
        request: &ApprovalRequest,
        mut origin: AskOrigin,
    ) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        if origin.cwd.is_none() {
            origin.cwd.clone_from(&self.cwd);
        }
        let ticket = self.registry.file(request, origin, self.wait);
        let wait = self.wait;
        Box::pin(async move {
            match ticket.wait(wait).await {
                Some((answer, via)) => (answer, via.name().to_owned()),
                None => (
                    ApprovalAnswer::Unavailable,
                    "nobody on the approval page".to_owned(),
                ),
            }
        })
    }
}

impl Approver for PageApprover {
    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        let asked = self.ask_from(&request, AskOrigin::default());
        Box::pin(async move { asked.await.0 })
    }

    fn answered_by(&self) -> String {
        "approval page".to_owned()
    }

    fn ask_noted(&self, request: ApprovalRequest) -> BoxFuture<'static, (ApprovalAnswer, String)> {
        self.ask_from(&request, AskOrigin::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::AnsweredVia;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            call_id: "c1".into(),
            tool: "write".into(),
            tool_aliases: vec![],
            arguments: serde_json::json!({"file_path": "a.txt", "content": "x"}),
            agent: None,
            reason: "edits ask".into(),
            rule: None,
            allow_always_rules: vec![],
            reject_always_rules: vec![],
        }
    }

    #[tokio::test(start_paused = true)]
    async fn nobody_answering_fails_closed_after_the_wait() {
        let registry = ApprovalRegistry::new();
        let approver = PageApprover::new(registry.clone()).with_wait(Duration::from_secs(7));
        let started = tokio::time::Instant::now();
        let (answer, by) = approver.ask_noted(request()).await;
        assert_eq!(answer, ApprovalAnswer::Unavailable);
        assert_eq!(by, "nobody on the approval page");
        assert_eq!(started.elapsed(), Duration::from_secs(7));
        assert!(registry.pending().is_empty());
    }

    #[tokio::test]
    async fn an_answer_on_the_page_is_the_approvers() {
        let registry = ApprovalRegistry::new();
        let approver = PageApprover::new(registry.clone()).with_cwd("/work");
        let asked = tokio::spawn(approver.ask_noted(request()));
        let pending = loop {
            let pending = registry.pending();
            if !pending.is_empty() {
                break pending;
            }
            tokio::task::yield_now().await;
        };
        assert_eq!(pending[0].cwd.as_deref(), Some("/work"));
        assert_eq!(pending[0].command, None);
        registry
            .answer(
                &pending[0].id,
                ApprovalAnswer::AllowAlways,
                AnsweredVia::Page,
            )
            .unwrap();
        assert_eq!(
            asked.await.unwrap(),
            (ApprovalAnswer::AllowAlways, "approval page".to_owned())
        );
        assert_eq!(approver.wait(), DEFAULT_WAIT);
    }
}
