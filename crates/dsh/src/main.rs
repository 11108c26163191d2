//! `dsh`: the command line of dsh-tools. Glue only: it builds the standard
//! pipeline (`dsh-harness`) from its options, and prints JSON.
//!
//! See `dsh --help` and the project README.

mod approve;
mod audit;
mod cli;
mod pins;
mod telemetry;

use clap::Parser;
use cli::{
    ApprovalsCommand, Cli, Command, HookSubcommand, PipelineOptions, PolicyCommand,
    SandboxSubcommand, SchemasFormat, UpstreamOptions, UsageError,
};
use dsh_harness::{Pipeline, PipelineOptions as HarnessOptions};
use dsh_policy::{ApproveAll, Approver};
use dsh_tools::{
    Dialect, ErrorCode, Middleware, MiddlewareFuture, Next, ToolArguments, ToolError, ToolExecution,
};
use serde_json::{json, Value};
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    let command = match Cli::try_parse() {
        Ok(cli) => cli.command,
        // `--help` and `--version` come this way too, with exit status 0.
        Err(err) => {
            let _ = err.print();
            return ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
        }
    };
    let path = command.path();
    // `dsh mcp` serves one session, all I/O: on one thread, a request, its
    // upstream hop and its answer cost no wake-up of another thread.
    let built = if matches!(&command, Command::Mcp { http, .. } if http.http.is_none()) {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    };
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(io::stderr(), "dsh: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(command)) {
        Ok(code) => code,
        Err(err) => {
            let _ = cli::usage_error(path, &err).print();
            ExitCode::from(2)
        }
    }
}

/// The listener and who may call, for `dsh mcp --http ADDR`.
async fn http_listener(
    addr: &str,
    options: &cli::HttpOptions,
) -> Result<(tokio::net::TcpListener, dsh_mcp::HttpAccess), UsageError> {
    // The tokens (and whatever else this server holds) are out of reach of
    // the commands it runs, sandboxed or not: they are the same user, and
    // could otherwise read /proc/PID/environ or /proc/PID/mem.
    if let Err(err) = dsh_sandbox::hide_own_memory() {
        return Err(UsageError(format!(
            "cannot hide the server's memory from its commands (PR_SET_DUMPABLE): {err}"
        )));
    }
    let address: std::net::SocketAddr = addr.parse().map_err(|e| {
        UsageError(format!(
            "--http {addr:?} is not an address (e.g. 127.0.0.1:8787): {e}"
        ))
    })?;
    let tokens = if let Some(file) = &options.token_file {
        if options.allow_unauthenticated {
            return Err(UsageError(
                "--allow-unauthenticated and --token-file contradict each other".into(),
            ));
        }
        token_file(file)?
    } else if let Some(token) = std::env::var("DSH_MCP_TOKEN")
        .ok()
        .filter(|t| !t.is_empty())
    {
        vec![dsh_mcp::Principal {
            name: "default".into(),
            token,
        }]
    } else if options.oauth_issuer.is_some() {
        // OAuth mode: the JWTs are the tokens; none is generated.
        Vec::new()
    } else if options.allow_unauthenticated {
        if !address.ip().is_loopback() {
            return Err(UsageError(format!(
                "--allow-unauthenticated is refused on {address}: only a loopback address may serve without a token"
            )));
        }
        Vec::new()
    } else {
        vec![dsh_mcp::Principal {
            name: "default".into(),
            token: generated_token()?,
        }]
    };
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|e| UsageError(format!("cannot listen on {address}: {e}")))?;
    let tls = match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => {
            Some(dsh_mcp::Tls::from_pem_files(cert, key).map_err(UsageError)?)
        }
        _ => None,
    };
    let bound = listener.local_addr().map_or(address, |a| a);
    let scheme = if tls.is_some() { "https" } else { "http" };
    let oauth = match &options.oauth_issuer {
        Some(issuer) => Some(Arc::new(oauth(issuer, scheme, bound, options).await?)),
        None => None,
    };
    let _ = writeln!(
        io::stderr(),
        "dsh mcp: serving MCP at {scheme}://{bound}/mcp"
    );
    if let Some(oauth) = &oauth {
        let _ = writeln!(
            io::stderr(),
            "dsh mcp: OAuth resource server for {}: keys from {}, metadata at {}",
            oauth.settings().issuer,
            oauth.jwks_location(),
            oauth.metadata_url()
        );
    }
    let seconds = std::time::Duration::from_secs;
    Ok((
        listener,
        dsh_mcp::HttpAccess {
            tokens,
            oauth,
            allowed_hosts: options.allowed_host.clone(),
            allowed_origins: options.allowed_origin.clone(),
            limits: dsh_mcp::HttpLimits {
                max_body_bytes: usize::try_from(options.max_request_bytes).unwrap_or(usize::MAX),
                body_timeout: seconds(options.idle_timeout),
                idle_timeout: seconds(options.idle_timeout),
                shutdown_grace: seconds(options.shutdown_grace),
            },
            tls,
        },
    ))
}

/// The OAuth resource server of `--oauth-issuer`. The resource URL (what the
/// protected-resource metadata names): `--oauth-resource`, else the audience
/// when it is an http(s) URL (what a client asked for with RFC 8707's
/// `resource`), else this server's own `/mcp` URL — which a wildcard address
/// does not give, so that needs one of the first two.
async fn oauth(
    issuer: &str,
    scheme: &str,
    bound: std::net::SocketAddr,
    options: &cli::HttpOptions,
) -> Result<dsh_mcp::OAuth, UsageError> {
    let audience = options.oauth_audience.clone().unwrap_or_default();
    let is_url = |text: &str| text.starts_with("http://") || text.starts_with("https://");
    let resource = match &options.oauth_resource {
        Some(resource) => resource.clone(),
        None if is_url(&audience) => audience.clone(),
        None if bound.ip().is_unspecified() => {
            return Err(UsageError(format!(
                "--oauth-resource URL is needed on {bound}: the URL clients reach this server at (or an --oauth-audience that is that URL)"
            )))
        }
        None => format!("{scheme}://{bound}/mcp"),
    };
    let keys = match &options.jwks_file {
        Some(file) => dsh_mcp::KeySource::File(file.clone()),
        None => dsh_mcp::KeySource::Discover,
    };
    let mut settings = dsh_mcp::OAuthSettings::new(issuer.to_owned(), audience, resource, keys);
    settings.scopes = options.oauth_scope.clone();
    dsh_mcp::OAuth::start(settings)
        .await
        .map_err(|e| UsageError(format!("--oauth-issuer: {e}")))
}

/// `NAME:TOKEN` lines (blank lines and `#` comments skipped).
fn token_file(file: &std::path::Path) -> Result<Vec<dsh_mcp::Principal>, UsageError> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        UsageError(format!(
            "cannot read the token file {}: {e}",
            file.display()
        ))
    })?;
    let mut tokens = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once(':') {
            Some((name, token)) if !name.trim().is_empty() && token.trim().len() >= 16 => tokens
                .push(dsh_mcp::Principal {
                    name: name.trim().into(),
                    token: token.trim().into(),
                }),
            _ => {
                // The line is not shown: it may hold a token.
                return Err(UsageError(format!(
                    "{} line {}: not NAME:TOKEN with a token of 16 characters or more",
                    file.display(),
                    n + 1
                )));
            }
        }
    }
    if tokens.is_empty() {
        return Err(UsageError(format!(
            "the token file {} holds no token",
            file.display()
        )));
    }
    Ok(tokens)
}

/// A new random token, written to a 0600 file in the state directory
/// (`$XDG_STATE_HOME/dsh`, else `~/.local/state/dsh`), whose path goes to stderr.
fn generated_token() -> Result<String, UsageError> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| UsageError(format!("cannot make a token: {e}")))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let dir = std::env::var_os("XDG_STATE_HOME")
        .map(std::path::PathBuf::from)
        .filter(|d| d.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".local/state"))
        })
        .ok_or_else(|| {
            UsageError(
                "no state directory for the token: set HOME, XDG_STATE_HOME or DSH_MCP_TOKEN"
                    .into(),
            )
        })?
        .join("dsh");
    std::fs::create_dir_all(&dir)
        .map_err(|e| UsageError(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join("mcp-token");
    let _ = std::fs::remove_file(&path);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
    file.write_all(format!("{token}\n").as_bytes())
        .map_err(|e| UsageError(format!("cannot write {}: {e}", path.display())))?;
    let _ = writeln!(
        io::stderr(),
        "dsh mcp: the bearer token is in {}",
        path.display()
    );
    Ok(token)
}

/// Writes `value` on stdout as pretty JSON and a newline, in one write, and
/// gives back the command's exit status.
///
/// A reader that went away (`dsh call … | head -c 1`) is not the command's
/// failure: the rest of the output is dropped without a word and `status`
/// stands. Any other write error (a full disk) is reported and fails the
/// command (exit 1): whoever reads the file would otherwise get half a result.
fn print_json(value: &Value, status: ExitCode) -> ExitCode {
    // Serialising a `Value` cannot fail.
    let mut text = serde_json::to_vec_pretty(value).unwrap_or_default();
    text.push(b'\n');
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&text).and_then(|()| stdout.flush()) {
        Ok(()) => status,
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => status,
        Err(err) => {
            let _ = writeln!(io::stderr(), "dsh: cannot write the output: {err}");
            ExitCode::from(1)
        }
    }
}

async fn run(command: Command) -> Result<ExitCode, UsageError> {
    match command {
        Command::Schemas { format } => schemas(format),
        Command::Settings { options } => {
            let pipeline = build_pipeline(&options, Approval::None)?;
            let pins = pipeline.pins_path();
            let pending = pins.as_deref().map(pins::pending_summary);
            let output = json!({
                "files": pipeline.settings_files(),
                "settings": pipeline.settings(),
                "ignored": pipeline.settings().ignored,
                "sources": pipeline.rule_sources(),
                "mcp": {
                    "profiles": dsh_mcp::upstream::profiles::describe(),
                    "pinsFile": pins,
                    "pending": pending,
                },
                "sandbox": {
                    "effective": pipeline.settings().sandbox_settings(),
                    "network": pipeline.settings().sandbox_network,
                    "networkMechanism": pipeline.network_mechanism().as_str(),
                },
            });
            Ok(print_json(&output, ExitCode::SUCCESS))
        }
        Command::Pins { command } => pins::run(command),
        Command::Mcp {
            options,
            upstreams,
            http,
            page,
        } => {
            let configs = upstream_configs(&upstreams)?;
            let listen = match &http.http {
                Some(addr) => Some(http_listener(addr, &http).await?),
                None => None,
            };
            if upstreams.no_builtin && configs.is_empty() {
                return Err(UsageError(
                    "--no-builtin leaves nothing to serve: give --mcp-config FILE or -- UPSTREAM_CMD".into(),
                ));
            }
            let mut harness = HarnessOptions::default().without_builtin_tools(upstreams.no_builtin);
            if http.http.is_some() {
                harness = harness.max_tasks_per_agent(http.max_tasks_per_principal as usize);
            }
            // Nobody to ask yet: *ask* fails closed with APPROVAL_UNAVAILABLE.
            let pipeline = build_pipeline_with(&options, Approval::None, harness)?;
            let mut server = dsh_mcp::McpServer::new(pipeline.registry().clone())
                .with_approval(pipeline.permissions().clone());
            let proxy = if configs.is_empty() {
                None
            } else {
                match pipeline.start_upstreams(configs).await {
                    Ok(proxy) => Some(Arc::new(proxy)),
                    Err(err) => {
                        let _ = writeln!(std::io::stderr(), "dsh mcp: {err}");
                        return Ok(ExitCode::from(1));
                    }
                }
            };
            if let Some(proxy) = &proxy {
                server = server.with_proxy(proxy.clone());
            }
            if http.http.is_some() {
                server = server.with_calls_per_caller(http.max_calls_per_principal as usize);
            }
            // On stdio the process is the session; over HTTP each call names its own.
            let session = http.http.is_none().then(process_session);
            let audit = install_audit(&pipeline, true, session)?;
            // Stopped, and its state file removed, when dropped.
            let serving_page = match &page.approvals_page {
                Some(addr) => {
                    let records = audit.log.as_ref().map(|log| log.dir().to_owned());
                    Some(approvals_page(addr, page.approvals_wait, &pipeline, records).await?)
                }
                None => None,
            };
            if let Some(serving) = &serving_page {
                server = server.with_fallback_approver(serving.approver.clone());
            }
            let served = match listen {
                Some((listener, access)) => {
                    let stop = dsh_tools::CancellationToken::new();
                    dsh_mcp::serve_http(server, listener, access, stop, true).await
                }
                None => dsh_mcp::serve_stdio(server).await,
            };
            if let Some(proxy) = proxy {
                proxy.shutdown().await;
            }
            drop(serving_page);
            flush_audit(&audit);
            match served {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(err) => {
                    // stderr may be closed too; the exit status still says it.
                    let _ = writeln!(std::io::stderr(), "dsh mcp: {err}");
                    Ok(ExitCode::from(1))
                }
            }
            // The pipeline drops here: its executor kills what it started.
        }
        Command::Call {
            tool,
            args,
            options,
            present,
            yes,
        } => {
            // Ask on the terminal only when the arguments do not come from stdin.
            let approver = if yes {
                Approval::Yes
            } else if args.as_deref() != Some("-") && std::io::stdin().is_terminal() {
                Approval::Terminal
            } else {
                Approval::None
            };
            // The spill file a truncated result names must outlive this process.
            let pipeline = build_pipeline_with(
                &options,
                approver,
                HarnessOptions::default().keep_spill_files(true),
            )?;
            // The call is about to run a command: a machine where the bash
            // executor cannot be set up is a usage error, as before any call.
            pipeline
                .set_up_executor()
                .map_err(|e| UsageError(e.to_string()))?;
            // Outermost, so nobody is asked to approve a call that is then refused.
            pipeline.registry().use_middleware_first(NoBackgroundTasks);
            // Off unless the settings turn it on: a one-shot call prints its
            // whole result to whoever ran it.
            let audit = install_audit(&pipeline, false, None)?;
            let raw = read_arguments(args)?;
            let arguments = ToolArguments::from_raw(raw);
            // Ctrl-C, SIGTERM or SIGHUP abort the call: the executor kills the
            // command's whole tree before `dsh` exits (a SIGKILL is the
            // watchdog's to clean up).
            let cancel = dsh_tools::CancellationToken::new();
            // Handlers installed before the call starts, not when a task first runs.
            let signals = tokio::spawn(cancel_on_signals(cancel.clone(), stop_signals()));
            let exec = ToolExecution::new("call-1", tool.clone(), arguments.clone())
                .with_agent("dsh")
                .with_cancel(cancel);
            let result = pipeline.registry().execute(exec).await;
            signals.abort();
            flush_audit(&audit);
            let mut output = serde_json::to_value(&result).unwrap_or_default();
            if present {
                let call = pipeline.registry().present_call(&tool, &arguments);
                let done = pipeline
                    .registry()
                    .present_result(&tool, &arguments, &result);
                output["presentation"] = json!({"call": call, "result": done});
            }
            let status = if result.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
            Ok(print_json(&output, status))
        }
        Command::Policy {
            command:
                PolicyCommand::Check {
                    tool,
                    args,
                    explain,
                    exit_code,
                    options,
                },
        } => {
            let args: Value = ToolArguments::from_raw(read_arguments(Some(args))?)
                .into_value()
                .map_err(|violation| UsageError(violation.to_string()))?;
            // The same pipeline `dsh call` builds, so the tools' annotations
            // (e.g. read-only tools are allowed) and the policy are the ones a call meets.
            let pipeline = build_pipeline(&options, Approval::None)?;
            let evaluation = pipeline.check(&tool, &args);
            let status = match (exit_code, evaluation.decision) {
                (false, _) | (true, dsh_policy::Decision::Allow) => ExitCode::SUCCESS,
                (true, dsh_policy::Decision::Ask) => ExitCode::from(3),
                (true, dsh_policy::Decision::Deny) => ExitCode::from(4),
            };
            let mut output = serde_json::to_value(&evaluation).unwrap_or_default();
            if pipeline.registry().get(&tool).is_none() {
                output["unknownTool"] = json!(format!(
                    "no tool {tool:?} is registered; its rules were applied by name"
                ));
            }
            if explain {
                output["parts"] =
                    serde_json::to_value(pipeline.explain(&tool, &args)).unwrap_or_default();
            }
            Ok(print_json(&output, status))
        }
        Command::Hook {
            command: HookSubcommand::PreToolUse { options },
        } => Ok(pre_tool_use_hook(options)),
        Command::Sandbox {
            command: SandboxSubcommand::Status { json },
        } => Ok(sandbox_status(json)),
        Command::Approvals { pid, command } => approvals(pid, command).await,
        Command::Audit {
            since,
            tool,
            decision,
            follow,
            json,
            path,
            options,
        } => {
            let since_ms = match since.as_deref() {
                None => None,
                Some(text) => Some(audit::since(text).ok_or_else(|| {
                    UsageError(format!(
                        "--since {text:?}: neither a duration (90s, 15m, 2h, 7d) nor a time (2026-03-01T12:00:00Z)"
                    ))
                })?),
            };
            let filter = dsh_audit::reader::Filter {
                since_ms,
                tool,
                decision,
            };
            let dir = match path {
                Some(dir) => dir,
                None => audit::settings_dir(&build_pipeline(&options, Approval::None)?)?,
            };
            audit::print(&dir, &filter, follow, json).await
        }
        Command::Acp {
            script,
            permission_timeout_ms,
            options,
        } => {
            let script = dsh_acp::Script::load(&script).map_err(UsageError)?;
            let pipeline = Arc::new(build_pipeline(&options, Approval::None)?);
            let audit = install_audit(&pipeline, true, None)?;
            let holder = pipeline.clone();
            let setup = dsh_acp::AgentSetup {
                registry: pipeline.registry().clone(),
                set_approver: Arc::new(move |approver| holder.set_approver(approver)),
                script,
                permission_timeout: std::time::Duration::from_millis(permission_timeout_ms),
            };
            let served = dsh_acp::serve(setup, agent_client_protocol::Stdio::new()).await;
            flush_audit(&audit);
            match served {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => {
                    let _ = writeln!(io::stderr(), "dsh acp: {e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
    }
}

/// The approval page of `dsh mcp --approvals-page`, while it serves.
struct ServingPage {
    /// Puts asks on the page: the MCP server's fallback approver.
    approver: Arc<dyn Approver>,
    stop: dsh_tools::CancellationToken,
    /// Where `dsh approvals` finds the page; removed when dropped.
    _state: Option<dsh_approvals::state::StateFile>,
}

impl Drop for ServingPage {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Asks on the page, showing the MCP client that sent the call.
struct McpPageApprover(dsh_approvals::PageApprover);

impl Approver for McpPageApprover {
    fn ask(
        &self,
        request: dsh_policy::ApprovalRequest,
    ) -> futures::future::BoxFuture<'static, dsh_policy::ApprovalAnswer> {
        let asked = self.ask_noted(request);
        Box::pin(async move { asked.await.0 })
    }

    fn answered_by(&self) -> String {
        self.0.answered_by()
    }

    fn ask_noted(
        &self,
        request: dsh_policy::ApprovalRequest,
    ) -> futures::future::BoxFuture<'static, (dsh_policy::ApprovalAnswer, String)> {
        let origin = dsh_approvals::AskOrigin {
            client: dsh_mcp::calling_client(),
            cwd: None,
        };
        self.0.ask_from(&request, origin)
    }
}

/// Starts the approval page on loopback `addr`, writes its state file, and
/// prints its link.
async fn approvals_page(
    addr: &str,
    wait_secs: u64,
    pipeline: &Pipeline,
    audit_dir: Option<PathBuf>,
) -> Result<ServingPage, UsageError> {
    let address: std::net::SocketAddr = addr.parse().map_err(|e| {
        UsageError(format!(
            "--approvals-page {addr:?} is not an address (e.g. 127.0.0.1:8788): {e}"
        ))
    })?;
    if !address.ip().is_loopback() {
        return Err(UsageError(format!(
            "--approvals-page {addr}: the page is served on a loopback address only (127.0.0.1, ::1)"
        )));
    }
    // The page's tokens are out of reach of the commands this process runs
    // (the same user), as with --http.
    if let Err(err) = dsh_sandbox::hide_own_memory() {
        return Err(UsageError(format!(
            "cannot hide the server's memory from its commands (PR_SET_DUMPABLE): {err}"
        )));
    }
    let mut registry = dsh_approvals::ApprovalRegistry::new();
    if let Some(dir) = audit_dir {
        registry = registry.with_recent_records(Arc::new(audit::RecentCalls::new(dir)));
    }
    let page = dsh_approvals::ApprovalPage::bind(address, registry.clone())
        .await
        .map_err(|e| UsageError(e.to_string()))?;
    let url = page.browser_url().map_err(|e| UsageError(e.to_string()))?;
    let state = match dsh_approvals::state::state_dir() {
        Some(dir) => Some(
            dsh_approvals::state::StateFile::write(&dir, &page.base_url(), page.terminal_token())
                .map_err(UsageError)?,
        ),
        None => {
            let _ = writeln!(
                io::stderr(),
                "dsh mcp: no state directory (set HOME or XDG_STATE_HOME): `dsh approvals` cannot find this page"
            );
            None
        }
    };
    // Innermost: a call counts as running once it is dispatched.
    pipeline
        .registry()
        .use_middleware(dsh_approvals::RunningCalls(registry.clone()));
    let wait = std::time::Duration::from_secs(wait_secs);
    let approver = dsh_approvals::PageApprover::new(registry)
        .with_wait(wait)
        .with_cwd(pipeline.cwd().display().to_string());
    let stop = dsh_tools::CancellationToken::new();
    tokio::spawn(page.serve(stop.clone()));
    let _ = writeln!(
        io::stderr(),
        "dsh mcp: approvals page at {url} (asks the client cannot answer wait there {wait_secs} s; or `dsh approvals list`)"
    );
    Ok(ServingPage {
        approver: Arc::new(McpPageApprover(approver)),
        stop,
        _state: state,
    })
}

/// `dsh approvals …`: the terminal's side of the page.
async fn approvals(pid: Option<u32>, command: ApprovalsCommand) -> Result<ExitCode, UsageError> {
    use dsh_approvals::client;
    let fail = |why: String| {
        let _ = writeln!(io::stderr(), "dsh approvals: {why}");
        Ok(ExitCode::from(1))
    };
    let Some(dir) = dsh_approvals::state::state_dir() else {
        return Err(UsageError(
            "no state directory: set HOME or XDG_STATE_HOME as the serving dsh had it".into(),
        ));
    };
    if let ApprovalsCommand::Allow { id, .. } | ApprovalsCommand::Deny { id, .. } = &command {
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(UsageError(format!(
                "{id:?} is not an ask id (a number, as `dsh approvals list` prints it)"
            )));
        }
    }
    let live = dsh_approvals::state::live_servers(&dir);
    let server = match (pid, live.as_slice()) {
        (Some(pid), _) => match live.iter().find(|s| s.pid == pid) {
            Some(server) => server.clone(),
            None => {
                return fail(format!(
                    "no dsh with pid {pid} serves an approval page (state files in {})",
                    dir.display()
                ))
            }
        },
        (None, [one]) => one.clone(),
        (None, []) => {
            return fail(format!(
                "no dsh serves an approval page (no live state file in {}): start `dsh mcp --approvals-page`",
                dir.display()
            ))
        }
        (None, several) => {
            let pids: Vec<String> = several.iter().map(|s| s.pid.to_string()).collect();
            return Err(UsageError(format!(
                "several dsh serve an approval page (pids {}): choose one with --pid",
                pids.join(", ")
            )));
        }
    };
    match command {
        ApprovalsCommand::Url => match client::browser_url(&server).await {
            Ok(url) => {
                let _ = writeln!(io::stdout(), "{url}");
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => fail(e),
        },
        ApprovalsCommand::List { json } => {
            let pending = match client::pending(&server).await {
                Ok(pending) => pending,
                Err(e) => return fail(e),
            };
            if json {
                return Ok(print_json(&Value::Array(pending), ExitCode::SUCCESS));
            }
            let mut out = String::new();
            if pending.is_empty() {
                out.push_str("no ask is waiting\n");
            } else {
                out.push_str("ID\tTOOL\tCOMMAND\tREASON\n");
            }
            for ask in &pending {
                let field = |key: &str| ask.get(key).and_then(Value::as_str).unwrap_or("");
                let what = match ask.get("command").and_then(Value::as_str) {
                    Some(command) => command.to_owned(),
                    None => ask
                        .get("arguments")
                        .map(Value::to_string)
                        .unwrap_or_default(),
                };
                // One line each, whatever the command holds.
                let one_line = |text: &str| text.replace(['\n', '\t'], " ");
                out.push_str(&format!(
                    "{}\t{}\t{}\t{}\n",
                    field("id"),
                    field("tool"),
                    one_line(&what),
                    one_line(field("reason"))
                ));
            }
            let _ = io::stdout().write_all(out.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        ApprovalsCommand::Allow { id, always } => {
            let answer = if always {
                dsh_policy::ApprovalAnswer::AllowAlways
            } else {
                dsh_policy::ApprovalAnswer::AllowOnce
            };
            match client::answer(&server, &id, answer).await {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => fail(e),
            }
        }
        ApprovalsCommand::Deny { id, always } => {
            let answer = if always {
                dsh_policy::ApprovalAnswer::RejectAlways
            } else {
                dsh_policy::ApprovalAnswer::RejectOnce
            };
            match client::answer(&server, &id, answer).await {
                Ok(()) => Ok(ExitCode::SUCCESS),
                Err(e) => fail(e),
            }
        }
    }
}

/// `dsh hook pre-tool-use`: Claude Code's input on stdin, our answer on
/// stdout. What cannot be answered exits 2, which Claude Code reads as a block.
fn pre_tool_use_hook(mut options: PipelineOptions) -> ExitCode {
    let fail = |why: String| {
        eprintln!("dsh hook pre-tool-use: {why}");
        ExitCode::from(2)
    };
    let mut text = String::new();
    if let Err(e) = std::io::Read::read_to_string(&mut std::io::stdin(), &mut text) {
        return fail(format!("cannot read standard input: {e}"));
    }
    let mut input: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return fail(format!("the input is not JSON: {e}")),
    };
    if options.cwd.is_none() {
        options.cwd = input.get("cwd").and_then(Value::as_str).map(PathBuf::from);
    }
    if options.mode.is_some() {
        if let Some(obj) = input.as_object_mut() {
            obj.remove("permission_mode");
        }
    }
    let pipeline = match build_pipeline(&options, Approval::None) {
        Ok(p) => p,
        Err(e) => return fail(e.0),
    };
    match dsh_hooks::pre_tool_use_answer(&pipeline.permissions().policy(), &input) {
        Ok(Some(answer)) => print_json(&answer, ExitCode::SUCCESS),
        Ok(None) => ExitCode::SUCCESS,
        Err(why) => fail(why),
    }
}

/// `dsh sandbox status`: what the kernel enforces, as text or JSON.
fn sandbox_status(json: bool) -> ExitCode {
    let status = dsh_sandbox::status();
    if json {
        return print_json(
            &serde_json::to_value(&status).unwrap_or_default(),
            ExitCode::SUCCESS,
        );
    }
    let yes = |b: bool| if b { "enforced" } else { "not available" };
    let abi = match status.abi {
        0 => "none (Landlock is not enabled in this kernel)".to_owned(),
        6 => "6 or newer".to_owned(),
        n => n.to_string(),
    };
    let root_writes = if status.namespaces {
        "mount namespace (.git, .claude, .vscode, .idea and .dsh bound read-only at any depth; \
         new files in the project root allowed, new directories not; every other mount \
         read-only, so no mode, time or attribute change outside the roots)"
    } else {
        "entry by entry (fallback: no mount namespace here; nothing new directly in the \
         project root or beside a protected entry)"
    };
    let hold = if status.scoping {
        "enforced: a call allowed only because it was judged read-only (and every call in \
         plan mode) runs read-only with the network off, unless sandbox.confineReadOnly is false"
    } else {
        "not available: such calls run as the settings say (this kernel cannot confine)"
    };
    let seccomp = if status.seccomp {
        "enforced: every socket with the network off (UDP, DNS, netlink, named UNIX sockets; \
         socketpair works), and always namespaces, mounts, device nodes, keyrings, System V IPC \
         and message queues (unless private), other processes' priority and limits, clock, \
         hostname, reboot, modules, io_uring"
    } else {
        "not available: UDP and named UNIX sockets stay open with the network off"
    };
    let by_domain = if status.tcp && status.seccomp && status.network_namespace {
        "through dsh's filtering proxy (HTTP and SOCKS5; names resolved and checked by the \
         proxy, private addresses refused); held by a network namespace with only loopback that \
         confined commands join, where the proxy's ports are listeners made inside it and \
         served by dsh (nothing else is reachable, on any address), and inside it by the \
         system-call filter (only TCP stream sockets: no UDP, no DNS) and Landlock's TCP port \
         rule (only the proxy's ports; left to the namespace with \
         sandbox.network.allowLocalBinding); a proxy of the user's own (httpProxyPort, \
         socksProxyPort) is held by the port rule and the filter alone, in dsh's namespace \
         (Landlock names ports, not hosts: the weaker mechanism)"
    } else if status.tcp && status.seccomp {
        "through dsh's filtering proxy (HTTP and SOCKS5; names resolved and checked by the \
         proxy, private addresses refused); held by Landlock's TCP port rule (only the proxy's \
         ports, on any address: Landlock names ports, not hosts) and the system-call filter \
         (only TCP stream sockets: no UDP, no DNS) — the weaker mechanism (no network \
         namespace here)"
    } else {
        "not available: the network stays off (the kernel cannot hold the proxy as the only way out)"
    };
    let not_blocked = match (status.seccomp, status.namespaces) {
        (true, true) => "CPU and memory exhaustion, reads no deny rule names",
        (true, false) => {
            "mode, times and user.* attributes of files the user owns outside the roots, \
             CPU and memory exhaustion, reads no deny rule names"
        }
        _ => {
            "UDP, named UNIX sockets the rules allow, mode, times and user.* attributes of \
             files the user owns outside the roots, CPU and memory exhaustion, reads no deny \
             rule names"
        }
    };
    let text = format!(
        "Landlock ABI: {abi}\n\
         files (read-only, workspace-write; ABI 3): {}\n\
         TCP connect and bind (network: false; ABI 4): {}\n\
         network by domain (sandbox.network.allowedDomains): {by_domain}\n\
         abstract UNIX sockets and signals scoped (ABI 6): {}\n\
         writes in the project root: {root_writes}\n\
         read-only by verdict: {hold}\n\
         read deny rules: {}\n\
         system-call filter (seccomp): {seccomp}\n\
         capabilities: {}\n\
         inherited descriptors: closed at exec (close_range), only standard input, output and error pass\n\
         modes: {}\n\
         not blocked by any mode: {not_blocked}\n",
        yes(status.files),
        yes(status.tcp),
        yes(status.scoping),
        if status.files {
            "held by the kernel for every call but an approved escalation: hidden under empty \
             mounts in a confined command's mount namespace, Landlock around them elsewhere \
             (files found by a walk of the working directories, at most 200 000 entries)"
        } else {
            "held by the rules alone (no Landlock here)"
        },
        if status.capabilities_dropped {
            "all dropped, root inside keeps uid 0 but no capability (no chown, immutable flags, \
             trusted.* attributes, device nodes, network configuration)"
        } else {
            "kept"
        },
        status.modes.join(", ")
    );
    let _ = io::stdout().write_all(text.as_bytes());
    ExitCode::SUCCESS
}

fn schemas(format: SchemasFormat) -> Result<ExitCode, UsageError> {
    let pipeline = build_pipeline(&PipelineOptions::default(), Approval::None)?;
    let tools = match format {
        SchemasFormat::Plain => {
            serde_json::to_value(pipeline.registry().schemas(Dialect::Mcp)).unwrap_or_default()
        }
        SchemasFormat::Provider(format) => pipeline.registry().request_tools(format),
    };
    Ok(print_json(&tools, ExitCode::SUCCESS))
}

/// What a one-shot call that asks for a background task gets instead.
const BACKGROUND_NEEDS_A_SESSION: &str = "background tasks need a long-lived session: a \
one-shot `dsh call` exits once it has printed its result, and the task would die with it \
before bash_output or bash_kill could reach it. Run the command in the foreground (without \
run_in_background), or serve the tools with `dsh mcp`, where background tasks live as long as \
the session";

/// Refuses `bash` calls with `run_in_background: true` in `dsh call`.
///
/// The bash tool itself serves background tasks to every front-end with a
/// session (`dsh mcp`); only a one-shot process cannot keep one alive, and
/// `started background task bash-1` would name a task that is already gone.
struct NoBackgroundTasks;

impl Middleware for NoBackgroundTasks {
    fn handle(&self, exec: ToolExecution, next: Next) -> MiddlewareFuture {
        Box::pin(async move {
            let background = exec.name == "bash"
                && exec
                    .arguments
                    .as_value()
                    .and_then(|args| args.get("run_in_background"))
                    == Some(&Value::Bool(true));
            if background {
                return Err(ToolError::new(
                    ErrorCode::ToolError,
                    BACKGROUND_NEEDS_A_SESSION,
                ));
            }
            Ok(next.run(exec).await)
        })
    }
}

type Signals = [tokio::signal::unix::Signal; 3];

/// Handlers for SIGINT, SIGTERM and SIGHUP; `None` if they cannot be had
/// (then the signals keep their default action and the watchdog cleans up).
fn stop_signals() -> Option<Signals> {
    use tokio::signal::unix::{signal, SignalKind};
    Some([
        signal(SignalKind::interrupt()).ok()?,
        signal(SignalKind::terminate()).ok()?,
        signal(SignalKind::hangup()).ok()?,
    ])
}

/// Fires `cancel` on the first of `signals`.
async fn cancel_on_signals(cancel: dsh_tools::CancellationToken, signals: Option<Signals>) {
    let Some([mut int, mut term, mut hup]) = signals else {
        return;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
    cancel.cancel();
}

/// Who answers *ask* verdicts.
enum Approval {
    /// Nobody: *ask* fails closed (`APPROVAL_UNAVAILABLE`).
    None,
    /// `--yes`: every *ask* is allowed once (deny rules still apply).
    Yes,
    /// The person at the terminal.
    Terminal,
}

/// The argument text: `{}` when absent, standard input for `-`.
fn read_arguments(args: Option<String>) -> Result<String, UsageError> {
    match args.as_deref() {
        None => Ok("{}".to_owned()),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| UsageError(format!("cannot read arguments from stdin: {e}")))?;
            Ok(text)
        }
        Some(text) => Ok(text.to_owned()),
    }
}

/// The upstreams of `dsh mcp`: the config file's servers, then the one
/// after `--`.
fn upstream_configs(options: &UpstreamOptions) -> Result<Vec<dsh_mcp::UpstreamConfig>, UsageError> {
    let mut configs = match &options.mcp_config {
        Some(path) => dsh_mcp::upstream::load_mcp_config(path, &|name| std::env::var(name).ok())
            .map_err(|e| UsageError(e.to_string()))?,
        None => Vec::new(),
    };
    if let Some((command, args)) = options.upstream.split_first() {
        configs.push(dsh_mcp::UpstreamConfig::command(
            options.name.as_deref(),
            command,
            args,
        ));
    }
    Ok(configs)
}

/// What records the calls: the audit log and the OpenTelemetry exporter,
/// either of which may be off.
struct Recording {
    log: Option<dsh_audit::AuditLog>,
    telemetry: Option<telemetry::Exporter>,
}

/// Installs the audit layer (outermost) when the log or telemetry is on.
fn install_audit(
    pipeline: &Pipeline,
    on_by_default: bool,
    session: Option<String>,
) -> Result<Recording, UsageError> {
    let exporter = telemetry::Exporter::start(pipeline)?;
    let Some(mut audit) = pipeline
        .audit_middleware(on_by_default, telemetry::observer(exporter.as_ref()))
        .map_err(|e| UsageError(e.to_string()))?
    else {
        return Ok(Recording {
            log: None,
            telemetry: exporter,
        });
    };
    // A write past a file size limit (RLIMIT_FSIZE) would kill the process
    // with SIGXFSZ; with a handler it fails with EFBIG, which the log
    // reports and survives. Commands start with the default action again.
    audit::survive_file_size_limit();
    if let Some(session) = session {
        audit = audit.with_session(session);
    }
    let log = audit.log().cloned();
    pipeline.install_audit(audit);
    Ok(Recording {
        log,
        telemetry: exporter,
    })
}

/// Writes what the audit log still has queued and sends what telemetry
/// still holds (a few seconds at most each).
fn flush_audit(recording: &Recording) {
    if let Some(log) = &recording.log {
        log.flush(std::time::Duration::from_secs(5));
    }
    if let Some(exporter) = &recording.telemetry {
        exporter.shutdown(std::time::Duration::from_secs(5));
    }
}

/// An id for the session a `dsh mcp` process on stdio is: its process id
/// and start time.
fn process_session() -> String {
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{}-{started:x}", std::process::id())
}

/// The standard pipeline (`dsh-harness`) for the command line's options,
/// with the approver the command asked for.
fn build_pipeline(options: &PipelineOptions, approval: Approval) -> Result<Pipeline, UsageError> {
    build_pipeline_with(options, approval, HarnessOptions::default())
}

/// [`build_pipeline`] from harness options the command already chose.
fn build_pipeline_with(
    options: &PipelineOptions,
    approval: Approval,
    mut harness: HarnessOptions,
) -> Result<Pipeline, UsageError> {
    if let Some(path) = &options.settings {
        harness = harness.settings(path);
    }
    if let Some(mode) = options.mode {
        harness = harness.mode(mode);
    }
    if let Some(dir) = &options.cwd {
        harness = harness.cwd(dir);
    }
    harness = harness
        .no_user_settings(options.no_user_settings)
        .settings_only(options.settings_only)
        // A person's answer at the terminal is kept as Claude Code keeps it.
        .remember_always(matches!(approval, Approval::Terminal) && !options.session_only);
    for dir in &options.add_dir {
        harness = harness.add_dir(dir);
    }
    let pipeline = Pipeline::build(&harness).map_err(|e| UsageError(e.to_string()))?;
    let approver: Option<Arc<dyn Approver>> = match approval {
        Approval::None => None,
        Approval::Yes => Some(Arc::new(ApproveAll)),
        Approval::Terminal => Some(Arc::new(approve::TerminalApprover)),
    };
    pipeline.set_approver(approver);
    Ok(pipeline)
}
