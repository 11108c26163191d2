//! Asking the person at the terminal about calls a rule says *ask* about.

use dsh_policy::{ApprovalAnswer, ApprovalRequest, Approver};
use futures::future::BoxFuture;
use std::io::{BufRead, Write};

/// Prompts on standard error and reads the answer from standard input.
pub struct TerminalApprover;

impl Approver for TerminalApprover {
    fn answered_by(&self) -> String {
        "terminal".to_owned()
    }

    fn ask(&self, request: ApprovalRequest) -> BoxFuture<'static, ApprovalAnswer> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || prompt(&request))
                .await
                .unwrap_or(ApprovalAnswer::RejectOnce)
        })
    }
}

fn prompt(request: &ApprovalRequest) -> ApprovalAnswer {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "dsh: the agent wants to {}", request.action());
    let _ = writeln!(err, "     {}", request.reason);
    let stdin = std::io::stdin();
    loop {
        let _ = write!(
            err,
            "     [y] allow once  [a] allow always  [n] reject  [N] reject always: "
        );
        let _ = err.flush();
        let mut line = String::new();
        match stdin.lock().read_line(&mut line) {
            // End of input or an unreadable terminal: refuse.
            Ok(0) | Err(_) => return ApprovalAnswer::RejectOnce,
            Ok(_) => {}
        }
        match parse_answer(&line) {
            Some(answer) => return answer,
            None => continue,
        }
    }
}

/// `y`/`yes`, `a`/`always`, `n`/`no`, `N`/`never`.
pub fn parse_answer(line: &str) -> Option<ApprovalAnswer> {
    match line.trim() {
        "y" | "Y" | "yes" => Some(ApprovalAnswer::AllowOnce),
        "a" | "A" | "always" => Some(ApprovalAnswer::AllowAlways),
        "n" | "no" | "" => Some(ApprovalAnswer::RejectOnce),
        "N" | "never" => Some(ApprovalAnswer::RejectAlways),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers() {
        assert_eq!(parse_answer("y\n"), Some(ApprovalAnswer::AllowOnce));
        assert_eq!(parse_answer("always"), Some(ApprovalAnswer::AllowAlways));
        assert_eq!(parse_answer("\n"), Some(ApprovalAnswer::RejectOnce));
        assert_eq!(parse_answer("N"), Some(ApprovalAnswer::RejectAlways));
        assert_eq!(parse_answer("maybe"), None);
    }
}
