//! [`RunningCalls`]: a middleware that lists the calls running now on the page.

use crate::registry::{ApprovalRegistry, RunningCall};
use dsh_tools::{LiveOutput, Middleware, MiddlewareFuture, Next, ToolExecution};
use serde_json::Value;

/// The most characters of a call's arguments the page shows.
const SHOWN: usize = 200;

/// Lists every call that passes it as running until it ends. Install it
/// last (innermost, `ToolRegistry::use_middleware`), so that a call counts
/// from when it is dispatched, not while it waits for an approval.
pub struct RunningCalls(pub ApprovalRegistry);

/// What a call does, as the page shows it: ``run `make` `` for a shell
/// command, else the tool and the start of its arguments.
fn action(exec: &ToolExecution) -> String {
    let args = exec.arguments.as_value();
    if let Some(Value::String(command)) = args.and_then(|a| a.get("command")) {
        if exec.name == "bash" {
            return format!("run `{command}`");
        }
    }
    let mut shown = args.map_or_else(String::new, Value::to_string);
    if shown.chars().count() > SHOWN {
        shown = shown.chars().take(SHOWN).collect::<String>() + "…";
    }
    format!("call {} {shown}", exec.name)
}

impl Middleware for RunningCalls {
    fn handle(&self, mut exec: ToolExecution, next: Next) -> MiddlewareFuture {
        let started_at_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        // The page's kill is the call's own cancellation: the tool kills
        // the command's process tree, and the client gets the call's end.
        let stop = exec.cancel_token().clone();
        let guard = std::sync::Arc::new(self.0.started(
            RunningCall {
                id: String::new(),
                call_id: exec.call_id.clone(),
                tool: exec.name.clone(),
                action: action(&exec),
                agent: exec.agent.clone(),
                started_at_ms,
                output: String::new(),
            },
            Some(stop),
        ));
        // The output so far: the page's copy beside any other live view
        // (an editor's terminal card).
        let earlier = exec.extensions.get::<LiveOutput>().cloned();
        // Weak: a tool that keeps the sink past the call (a background
        // task's monitor) must not keep the call listed.
        let shown = std::sync::Arc::downgrade(&guard);
        exec.extensions.insert(LiveOutput::new(move |chunk| {
            if let Some(shown) = shown.upgrade() {
                shown.output(chunk);
            }
            if let Some(earlier) = &earlier {
                earlier.emit(chunk);
            }
        }));
        Box::pin(async move {
            let result = next.run(exec).await;
            drop(guard);
            Ok(result)
        })
    }
}
