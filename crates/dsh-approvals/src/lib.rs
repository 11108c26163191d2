//! # dsh-approvals
//!
//! **One job: let a person answer the asks no client can.** When a rule says
//! *ask* and the MCP client cannot show the question (no elicitation, a
//! headless client that answers `cancel` by itself, an HTTP client with
//! nobody at its screen), the call waits here — on a small web page served
//! on loopback, and in `dsh approvals list` — until someone answers or the
//! wait runs out, and then fails closed as before.
//!
//! | piece | what it does |
//! |---|---|
//! | [`ApprovalRegistry`] | the asks waiting now (and the calls running now), shared by the approver and the server; every change is announced |
//! | [`PageApprover`] | an [`Approver`](dsh_policy::Approver): files the ask and waits up to [`DEFAULT_WAIT`] (5 minutes) or what [`PageApprover::with_wait`] says; nobody answering is `Unavailable` |
//! | [`ApprovalPage`] | the HTTP server (hyper): the page, its event stream (`GET /events`, server-sent events), the answers (`POST /api/asks/ID`) |
//! | [`RunningCalls`] | a middleware listing the calls running now, with their start time |
//! | [`RecentRecords`] | what the page shows under the asks (an audit log's last records), when a provider is given |
//! | [`state`], [`client`] | how `dsh approvals` finds a live server and talks to it |
//!
//! ## Who may answer
//!
//! - The server listens on a loopback address only (a random port unless
//!   told otherwise).
//! - A browser signs in with a link carrying a **one-time token**
//!   (`http://127.0.0.1:PORT/?token=…`): the first request exchanges it for
//!   a session cookie (`HttpOnly`, `SameSite=Strict`, named after the port)
//!   and redirects to `/`, so the token leaves the address bar; the token
//!   is then spent. Every other request needs the cookie (or, from the
//!   terminal, the bearer token of the state file). New links come from
//!   [`ApprovalPage::browser_url`] (`dsh approvals url`).
//! - The `Host` header must name the server on loopback (`127.0.0.1:PORT`,
//!   `localhost:PORT`, `[::1]:PORT`): a site that rebinds its own name to
//!   127.0.0.1 is refused (403).
//! - A write (`POST`) must come from the page itself: its `Origin` must be
//!   the page's own, or, without one, `Sec-Fetch-Site: same-origin`; a
//!   request with neither counts only with the bearer token. A cross-origin
//!   write is a 403 and answers nothing.
//! - The page sets a strict Content-Security-Policy (nothing loaded from
//!   elsewhere, no framing) and builds its content as text, never as HTML.
//!
//! ## Example
//!
//! ```no_run
//! # async fn run(pipeline_permissions: dsh_policy::PermissionMiddleware) -> Result<(), Box<dyn std::error::Error>> {
//! use dsh_approvals::{ApprovalPage, ApprovalRegistry, PageApprover};
//! let registry = ApprovalRegistry::new();
//! let page = ApprovalPage::bind("127.0.0.1:0".parse()?, registry.clone()).await?;
//! eprintln!("approvals: {}", page.browser_url()?);
//! pipeline_permissions.set_approver(Some(std::sync::Arc::new(PageApprover::new(registry))));
//! tokio::spawn(page.serve(tokio_util::sync::CancellationToken::new()));
//! # Ok(()) }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod access;
mod approver;
pub mod client;
mod registry;
mod running;
mod server;
pub mod state;

pub use approver::{PageApprover, DEFAULT_WAIT};
pub use registry::{
    AnswerRefused, AnsweredVia, ApprovalRegistry, AskOrigin, PendingAsk, RecentRecords,
    RunningCall, RunningGuard, Ticket,
};
pub use running::RunningCalls;
pub use server::{ApprovalPage, PageError};
