//! The command line, declared with clap's derive. A mistake clap finds is a
//! usage error (exit 2, with the command's usage); so is a [`UsageError`] a
//! command finds later (a settings file, a working directory), printed the
//! same way by [`usage_error`].

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;
use clap::{Args, CommandFactory, Parser, Subcommand};
use dsh_policy::Mode;
use dsh_tools::ToolFormat;
use std::ffi::OsStr;
use std::fmt;
use std::path::PathBuf;

/// Shown under the help of `dsh` and of `dsh call`.
const EXIT_STATUS: &str = "Exit status: 0 success, 1 the call failed (isError), 2 usage error.";

/// The tools of an LLM agent, behind permission rules and timeouts
#[derive(Parser, Debug, PartialEq, Eq)]
#[command(name = "dsh", version, arg_required_else_help = true, after_help = EXIT_STATUS)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What `dsh` was asked to do.
// Parsed once per run: `mcp`'s many options cost nothing worth boxing.
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum Command {
    /// Serve the tools over MCP on stdio, behind the whole pipeline
    ///
    /// An MCP server for one client's session: the first-party tools behind
    /// the permission rules of the settings. Background tasks live as long as
    /// the session.
    ///
    /// As a proxy, it fronts other MCP servers: their tools are served
    /// behind the same rules, approvals and limits.
    ///   dsh mcp -- npx -y @modelcontextprotocol/server-filesystem .
    ///   dsh mcp --mcp-config .mcp.json --no-builtin
    /// Rules name a proxied tool mcp__NAME__TOOL, mcp__NAME or mcp__NAME__*.
    #[command(verbatim_doc_comment)]
    Mcp {
        #[command(flatten)]
        options: PipelineOptions,
        #[command(flatten)]
        upstreams: UpstreamOptions,
        #[command(flatten)]
        http: Box<HttpOptions>,
        #[command(flatten)]
        page: ApprovalsPageOptions,
    },
    /// Answer the asks waiting on a running `dsh mcp --approvals-page`
    ///
    /// Finds the serving dsh by its state file ($XDG_STATE_HOME/dsh/approvals,
    /// else ~/.local/state/dsh/approvals) and talks to it over loopback
    /// HTTP with the bearer token kept there. With several serving, name
    /// one with --pid.
    #[command(verbatim_doc_comment)]
    Approvals {
        /// The process id of the serving dsh (needed when several serve)
        #[arg(long, value_name = "PID", global = true)]
        pid: Option<u32>,
        #[command(subcommand)]
        command: ApprovalsCommand,
    },
    /// Proxied tools' pinned definitions (the project's .dsh/mcp-pins.json,
    /// or the settings' mcp.pinsFile): a tool whose definition changed since
    /// it was accepted, or whose description carries instructions aimed at
    /// the model, is pending, and its calls ask until it is accepted here.
    #[command(verbatim_doc_comment)]
    Pins {
        #[command(subcommand)]
        command: PinsCommand,
    },
    /// Print the effective settings, the files read, and the file each rule came from
    Settings {
        #[command(flatten)]
        options: PipelineOptions,
    },
    /// Print the model-facing tool schemas as a JSON array
    Schemas {
        /// The shape to print: the value of a provider request's `tools` field
        #[arg(
            long,
            value_name = "FORMAT",
            default_value = "mcp",
            value_parser = OneOf { choices: schemas_formats, parse: parse_schemas_format }
        )]
        format: SchemasFormat,
    },
    /// Run one tool call through the whole pipeline and print the result as JSON
    ///
    /// Prints the call's result, {callId, content, isError, error}. A call a
    /// rule says *ask* about is asked about on the terminal; with nobody to
    /// ask (arguments from stdin, no terminal) it fails closed, unless --yes.
    /// Background tasks (run_in_background) need a long-lived session: `dsh mcp`.
    #[command(verbatim_doc_comment, after_help = EXIT_STATUS)]
    Call {
        /// The tool to call, e.g. bash
        #[arg(value_name = "TOOL")]
        tool: String,
        /// The arguments, a JSON object (absent: {}); `-` reads them from stdin
        #[arg(value_name = "ARGS_JSON")]
        args: Option<String>,
        #[command(flatten)]
        options: PipelineOptions,
        /// Add how a user interface would present the call and its result
        #[arg(long)]
        present: bool,
        /// Allow once whatever a rule would ask about (deny rules still apply)
        #[arg(long)]
        yes: bool,
    },
    /// Query the permission policy
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Serve as a hook of Claude Code itself
    Hook {
        #[command(subcommand)]
        command: HookSubcommand,
    },
    /// Serve a scripted agent over the Agent Client Protocol on stdio
    ///
    /// An ACP agent for an editor (Zed's agent_servers, any ACP client)
    /// whose "model" is a script: {"turns": [[{"tool": "bash", "arguments":
    /// {...}}, ...], ...]}, one turn per prompt. Calls run through the whole
    /// pipeline, are drawn as cards, and asks go to the editor as
    /// session/request_permission.
    #[command(verbatim_doc_comment)]
    Acp {
        /// The script of turns
        #[arg(long, value_name = "FILE")]
        script: PathBuf,
        /// How long the editor has to answer a permission request before
        /// the call fails closed, in milliseconds
        #[arg(long, value_name = "MS", default_value_t = 300_000)]
        permission_timeout_ms: u64,
        #[command(flatten)]
        options: PipelineOptions,
    },
    /// Print the audit log: one line per tool call, oldest first
    ///
    /// Reads the log's files in order (the rotated ones first) from
    /// --path, else the settings' audit.path, else
    /// $XDG_STATE_HOME/dsh/audit (~/.local/state/dsh/audit). Each call is
    /// shown as: time, tool, decision, the rule (or what decided) and who
    /// answered an ask, the outcome, the duration, and the command or
    /// arguments in short; --json prints the records as written.
    ///   dsh audit --since 1h --decision deny
    ///   dsh audit --follow --tool bash
    #[command(verbatim_doc_comment)]
    Audit {
        /// Only calls since this long ago (90s, 15m, 2h, 7d, 1h30m) or this
        /// time (RFC 3339, e.g. 2026-03-01T12:00:00Z, or a date)
        #[arg(long, value_name = "DURATION|TIME")]
        since: Option<String>,
        /// Only calls of this tool
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Only calls with this verdict (before any ask was answered)
        #[arg(long, value_name = "DECISION", value_parser = ["allow", "ask", "deny"])]
        decision: Option<String>,
        /// Keep printing calls as they are recorded, across rotations, until
        /// interrupted
        #[arg(long)]
        follow: bool,
        /// Print the records as JSON lines, as written
        #[arg(long)]
        json: bool,
        /// The log's directory
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        #[command(flatten)]
        options: PipelineOptions,
    },
    /// What the sandbox can enforce on this machine
    Sandbox {
        #[command(subcommand)]
        command: SandboxSubcommand,
    },
}

/// The `dsh approvals` commands.
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum ApprovalsCommand {
    /// Print a new one-time link that signs a browser in to the page
    Url,
    /// Print the asks waiting: id, tool, command, reason
    List {
        /// Print them as a JSON array instead
        #[arg(long)]
        json: bool,
    },
    /// Allow the ask ID (once; with --always, for the rest of the session)
    Allow {
        /// The ask's id, as `list` prints it
        #[arg(value_name = "ID")]
        id: String,
        /// Add the allow rules the page shows, for the rest of the session
        #[arg(long)]
        always: bool,
    },
    /// Reject the ask ID (once; with --always, for the rest of the session)
    Deny {
        /// The ask's id, as `list` prints it
        #[arg(value_name = "ID")]
        id: String,
        /// Add the deny rules the page shows, for the rest of the session
        #[arg(long)]
        always: bool,
    },
}

/// `dsh pins`.
#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum PinsCommand {
    /// Print the pending definitions (what changed, what was flagged) and the pinned tools
    List {
        /// Print the whole file as JSON instead
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        options: PipelineOptions,
    },
    /// Accept the pending definitions of TOOL… (mcp__SERVER__TOOL), or all of them
    Accept {
        /// The tools, as rules name them; none: every pending one
        #[arg(value_name = "TOOL")]
        tools: Vec<String>,
        #[command(flatten)]
        options: PipelineOptions,
    },
}

/// `dsh mcp --approvals-page`: a local page where a person answers asks.
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
pub struct ApprovalsPageOptions {
    /// Serve a page on a loopback ADDR (default 127.0.0.1 and a random
    /// port) where a person answers the asks the client cannot; its link,
    /// with a one-time token, goes to stderr (and `dsh approvals url`)
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0",
        require_equals = false
    )]
    pub approvals_page: Option<String>,
    /// Seconds an ask waits on the page for an answer before the call
    /// fails closed
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "approvals_page",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub approvals_wait: u64,
}

/// The `dsh sandbox` commands.
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum SandboxSubcommand {
    /// Print what this machine's kernel enforces (Landlock ABI, files, TCP, scoping)
    Status {
        /// Print JSON instead of text
        #[arg(long)]
        json: bool,
    },
}

/// The `dsh hook` commands.
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum HookSubcommand {
    /// Answer Claude Code's PreToolUse hook from the dsh policy
    ///
    /// Reads Claude Code's PreToolUse JSON on standard input and prints
    /// {"hookSpecificOutput": {"permissionDecision": "allow|deny|ask", ...}}
    /// decided by the shell-aware policy of the settings Claude Code reads
    /// (found from the input's "cwd" unless --cwd is given), in the input's
    /// permission_mode unless --mode is given. An allow skips Claude Code's
    /// own prompt, so it answers allow only where explicit allow rules
    /// cover the whole call (every part of a command line); deny for a deny
    /// rule or a mode's refusal; ask for an ask rule or a command it cannot
    /// analyse. Everything else - what only the mode allows or asks about,
    /// tools it does not model that no rule names - prints nothing and
    /// exits 0, so Claude Code decides as usual. Input it cannot read exits
    /// 2, which blocks the call.
    #[command(verbatim_doc_comment)]
    PreToolUse {
        #[command(flatten)]
        options: PipelineOptions,
    },
}

/// The `dsh policy` commands.
#[derive(Subcommand, Debug, PartialEq, Eq)]
pub enum PolicyCommand {
    /// Print the decision on a call without running it
    ///
    /// {"decision": "allow|ask|deny", "reason": ..., "rule": ...}, from the
    /// same pipeline `dsh call` builds; with --explain also "parts", and
    /// "unknownTool" when no tool of that name is registered.
    #[command(verbatim_doc_comment)]
    Check {
        /// The tool, e.g. bash
        #[arg(value_name = "TOOL")]
        tool: String,
        /// The arguments, a JSON object (`-`: read it from standard input)
        #[arg(value_name = "ARGS_JSON")]
        args: String,
        /// Also print the verdict of every part (simple command, written
        /// file, unanalysable text) with its rule or reason
        #[arg(long)]
        explain: bool,
        /// Exit 0 for allow, 3 for ask, 4 for deny
        #[arg(long)]
        exit_code: bool,
        #[command(flatten)]
        options: PipelineOptions,
    },
}

impl Command {
    /// The subcommand names leading to this command, for its usage line.
    pub fn path(&self) -> &'static [&'static str] {
        match self {
            Command::Mcp { .. } => &["mcp"],
            Command::Schemas { .. } => &["schemas"],
            Command::Settings { .. } => &["settings"],
            Command::Call { .. } => &["call"],
            Command::Policy {
                command: PolicyCommand::Check { .. },
            } => &["policy", "check"],
            Command::Hook {
                command: HookSubcommand::PreToolUse { .. },
            } => &["hook", "pre-tool-use"],
            Command::Sandbox {
                command: SandboxSubcommand::Status { .. },
            } => &["sandbox", "status"],
            Command::Acp { .. } => &["acp"],
            Command::Approvals { command, .. } => match command {
                ApprovalsCommand::Url => &["approvals", "url"],
                ApprovalsCommand::List { .. } => &["approvals", "list"],
                ApprovalsCommand::Allow { .. } => &["approvals", "allow"],
                ApprovalsCommand::Deny { .. } => &["approvals", "deny"],
            },
            Command::Audit { .. } => &["audit"],
            Command::Pins { command } => match command {
                PinsCommand::List { .. } => &["pins", "list"],
                PinsCommand::Accept { .. } => &["pins", "accept"],
            },
        }
    }
}

/// `dsh mcp --http`: streamable HTTP instead of stdio.
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
pub struct HttpOptions {
    /// Serve MCP over streamable HTTP at http://ADDR/mcp (e.g.
    /// 127.0.0.1:8787) instead of on stdio; GET /healthz answers without
    /// authentication
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// Accepted bearer tokens, one per line as NAME:TOKEN (the name is the
    /// principal whose calls they are); without it, DSH_MCP_TOKEN, else a
    /// generated token written to a 0600 file in the state directory
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,
    /// Accept requests without a token (a loopback address only)
    #[arg(long, requires = "http")]
    pub allow_unauthenticated: bool,
    /// A Host the requests may name besides the loopback names (repeatable)
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allowed_host: Vec<String>,
    /// A browser Origin allowed to call (scheme://host:port, repeatable)
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allowed_origin: Vec<String>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key)
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "FILE", requires_all = ["http", "tls_cert"])]
    pub tls_key: Option<PathBuf>,
    /// Most calls one principal may have running at once
    #[arg(long, value_name = "N", default_value_t = 16, requires = "http",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_calls_per_principal: u32,
    /// Most background tasks and interactive sessions one principal may
    /// have live at once
    #[arg(long, value_name = "N", default_value_t = 16, requires = "http",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tasks_per_principal: u32,
    /// Largest request body in bytes (413 beyond)
    #[arg(long, value_name = "BYTES", default_value_t = 4 * 1024 * 1024, requires = "http",
          value_parser = clap::value_parser!(u64).range(1024..))]
    pub max_request_bytes: u64,
    /// Seconds a connection may take to send a request head (idle
    /// keep-alive included) or a body, or to finish a TLS handshake
    #[arg(long, value_name = "SECS", default_value_t = 30, requires = "http",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,
    /// Seconds running calls may go on after SIGTERM before they are killed
    #[arg(long, value_name = "SECS", default_value_t = 10, requires = "http")]
    pub shutdown_grace: u64,
    /// OAuth resource-server mode: accept JWT access tokens of this
    /// authorization server (`iss` must equal URL); its keys come from
    /// --jwks-file, else from the jwks_uri of its metadata. No token is
    /// generated; --token-file or DSH_MCP_TOKEN may add static principals
    #[arg(
        long,
        value_name = "URL",
        requires_all = ["http", "oauth_audience"],
        conflicts_with = "allow_unauthenticated"
    )]
    pub oauth_issuer: Option<String>,
    /// The audience tokens must name in `aud` (the resource indicator,
    /// usually this server's /mcp URL)
    #[arg(long, value_name = "AUD", requires = "oauth_issuer")]
    pub oauth_audience: Option<String>,
    /// The issuer's keys as a JWKS file, re-read when a token names an
    /// unknown key id (instead of fetching them from the issuer)
    #[arg(long, value_name = "FILE", requires = "oauth_issuer")]
    pub jwks_file: Option<PathBuf>,
    /// A scope every token must carry (repeatable; `scope` or `scp` claim)
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scope: Vec<String>,
    /// This server's /mcp URL as clients reach it, for the protected-resource
    /// metadata (default: the audience if it is a URL, else http://ADDR/mcp)
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_resource: Option<String>,
}

/// The MCP servers `dsh mcp` fronts.
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
pub struct UpstreamOptions {
    /// Front every server of this file (the mcpServers format of .mcp.json);
    /// their tools are exposed as NAME__TOOL
    #[arg(long, value_name = "FILE")]
    pub mcp_config: Option<PathBuf>,
    /// Serve the upstream tools alone, without the first-party tools
    #[arg(long)]
    pub no_builtin: bool,
    /// The NAME of the server given after --, for mcp__NAME__TOOL rules
    /// (default: its program's file name)
    #[arg(long, value_name = "NAME", requires = "upstream")]
    pub name: Option<String>,
    /// One server to front, run as a child process speaking MCP on stdio;
    /// its tools keep their names
    #[arg(last = true, value_name = "UPSTREAM_CMD")]
    pub upstream: Vec<String>,
}

/// Options shared by the commands that run the pipeline.
#[derive(Args, Debug, Default, Clone, PartialEq, Eq)]
pub struct PipelineOptions {
    /// A settings file read on top of the ones Claude Code reads
    /// (~/.claude/settings.json, the project's .claude/settings.json and
    /// .claude/settings.local.json)
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Do not read ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json)
    #[arg(long)]
    pub no_user_settings: bool,
    /// Read only the --settings file, none of the files Claude Code reads
    #[arg(long)]
    pub settings_only: bool,
    /// Keep "allow always" and "reject always" answers given at the terminal
    /// for this run only, instead of saving them to .claude/settings.local.json
    #[arg(long)]
    pub session_only: bool,
    /// The permission mode, instead of the settings' defaultMode
    #[arg(
        long,
        value_name = "MODE",
        value_parser = OneOf { choices: modes, parse: parse_mode }
    )]
    pub mode: Option<Mode>,
    /// The tools' working directory (default: the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Another working directory, where edits count as inside in acceptEdits
    /// (repeatable; beside the settings' permissions.additionalDirectories)
    #[arg(long = "add-dir", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,
}

/// What `dsh schemas` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemasFormat {
    /// The provider-neutral `ToolSchema` array, parameters in the MCP dialect.
    Plain,
    /// A provider's declarations, as its request's `tools` field wants them.
    Provider(ToolFormat),
}

impl Default for SchemasFormat {
    fn default() -> Self {
        SchemasFormat::Provider(ToolFormat::Mcp)
    }
}

impl std::str::FromStr for SchemasFormat {
    type Err = UsageError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("plain") {
            return Ok(SchemasFormat::Plain);
        }
        s.parse().map(SchemasFormat::Provider).map_err(|_| {
            let names: Vec<&str> = ToolFormat::ALL.iter().map(|f| f.as_str()).collect();
            UsageError(format!(
                "unknown schemas format {s:?} (expected one of {}, plain)",
                names.join(", ")
            ))
        })
    }
}

/// A mistake found after parsing (a settings file, a working directory,
/// malformed JSON for `dsh policy check`): exit 2, like a parse error.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// `err` as clap prints a usage error of the command at `path` (its usage
/// line and a pointer to its `--help`).
pub fn usage_error(path: &[&str], err: &UsageError) -> clap::Error {
    fn error_in(cmd: &mut clap::Command, path: &[&str], message: &str) -> clap::Error {
        if let Some((name, rest)) = path.split_first() {
            if let Some(sub) = cmd.find_subcommand_mut(name) {
                return error_in(sub, rest, message);
            }
        }
        cmd.error(ErrorKind::ValueValidation, message)
    }
    let mut cmd = Cli::command();
    // Gives each subcommand its full name (`dsh policy check`) for the usage line.
    cmd.build();
    error_in(&mut cmd, path, &err.0)
}

/// The `--format` values of `dsh schemas`, with what each prints.
fn schemas_formats() -> Vec<(&'static str, &'static str)> {
    let mut formats: Vec<_> = ToolFormat::ALL
        .iter()
        .map(|&format| {
            let help = match format {
                ToolFormat::Mcp => "MCP tools/list entries",
                ToolFormat::Anthropic => "Anthropic Messages tools",
                ToolFormat::OpenAiChat => "OpenAI Chat Completions function tools",
                ToolFormat::OpenAiChatStrict => "the same in strict mode",
                ToolFormat::OpenAiResponses => "OpenAI Responses function tools",
                ToolFormat::OpenAiResponsesStrict => "the same in strict mode",
                ToolFormat::Gemini => "Gemini [{functionDeclarations: [...]}]",
                _ => "",
            };
            (format.as_str(), help)
        })
        .collect();
    formats.push((
        "plain",
        "the provider-neutral {name, description, parameters}",
    ));
    formats
}

fn parse_schemas_format(text: &str) -> Result<SchemasFormat, String> {
    text.parse().map_err(|UsageError(message)| message)
}

/// The `--mode` values, with what each does to calls no rule matches.
fn modes() -> Vec<(&'static str, &'static str)> {
    Mode::ALL
        .iter()
        .map(|&mode| {
            let help = match mode {
                Mode::Default => "ask about calls no rule matches, unless read-only",
                Mode::AcceptEdits => "as default, and allow edits inside the working directory",
                Mode::Plan => "run only read-only tools and commands",
                Mode::DontAsk => "deny what default would ask about",
                Mode::BypassPermissions => {
                    "allow what default would ask about (deny and ask rules still apply)"
                }
            };
            (mode.as_str(), help)
        })
        .collect()
}

fn parse_mode(text: &str) -> Result<Mode, String> {
    text.parse()
        .map_err(|err: dsh_policy::UnknownMode| err.to_string())
}

/// A value from a closed set of names: the help lists each with its meaning,
/// and an unknown name is refused with the value's own message, which names
/// the valid ones (clap's `invalid value 'X' for '--flag <V>': …`).
#[derive(Clone)]
struct OneOf<T> {
    choices: fn() -> Vec<(&'static str, &'static str)>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for OneOf<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        // A plain function parser words the error the way clap words its own.
        let parse = self.parse;
        (move |text: &str| parse(text)).parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let values = (self.choices)()
            .into_iter()
            .map(|(name, help)| PossibleValue::new(name).help(help));
        Some(Box::new(values))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("dsh").chain(line.split_whitespace()))
            .map(|cli| cli.command)
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn commands() {
        assert_eq!(
            parse("schemas").unwrap(),
            Command::Schemas {
                format: SchemasFormat::Provider(ToolFormat::Mcp)
            }
        );
        assert_eq!(
            parse("schemas --format plain").unwrap(),
            Command::Schemas {
                format: SchemasFormat::Plain
            }
        );
        for format in ToolFormat::ALL {
            for line in [
                format!("schemas --format {format}"),
                format!("schemas --format={format}"),
            ] {
                assert_eq!(
                    parse(&line).unwrap(),
                    Command::Schemas {
                        format: SchemasFormat::Provider(format)
                    },
                    "{line}"
                );
            }
        }
        assert_eq!(
            parse("call bash - --present --cwd /tmp").unwrap(),
            Command::Call {
                tool: "bash".into(),
                args: Some("-".into()),
                options: PipelineOptions {
                    cwd: Some("/tmp".into()),
                    ..Default::default()
                },
                present: true,
                yes: false,
            }
        );
        assert_eq!(
            parse("call --mode=plan --yes bash {}").unwrap(),
            Command::Call {
                tool: "bash".into(),
                args: Some("{}".into()),
                options: PipelineOptions {
                    mode: Some(Mode::Plan),
                    ..Default::default()
                },
                present: false,
                yes: true,
            }
        );
        assert_eq!(
            parse("policy check bash {} --settings s.json --explain --add-dir /a --add-dir b")
                .unwrap(),
            Command::Policy {
                command: PolicyCommand::Check {
                    tool: "bash".into(),
                    args: "{}".into(),
                    explain: true,
                    exit_code: false,
                    options: PipelineOptions {
                        settings: Some("s.json".into()),
                        add_dir: vec!["/a".into(), "b".into()],
                        ..Default::default()
                    },
                }
            }
        );
        assert!(matches!(
            parse("mcp --mode dontAsk").unwrap(),
            Command::Mcp {
                options: PipelineOptions {
                    mode: Some(Mode::DontAsk),
                    ..
                },
                ..
            }
        ));
        let Command::Mcp { upstreams, .. } =
            parse("mcp --no-builtin --name fx -- srv --flag x").unwrap()
        else {
            panic!("not mcp")
        };
        assert!(upstreams.no_builtin);
        assert_eq!(upstreams.name.as_deref(), Some("fx"));
        assert_eq!(upstreams.upstream, ["srv", "--flag", "x"]);
        // --name names the server after --; alone it is a usage error.
        assert!(parse("mcp --name fx").is_err());
        let page = |line: &str| match parse(line).unwrap() {
            Command::Mcp { page, .. } => page,
            other => panic!("not mcp: {other:?}"),
        };
        assert_eq!(page("mcp").approvals_page, None);
        assert_eq!(
            page("mcp --approvals-page --mode plan")
                .approvals_page
                .as_deref(),
            Some("127.0.0.1:0")
        );
        let chosen = page("mcp --approvals-page 127.0.0.1:9000 --approvals-wait 5");
        assert_eq!(chosen.approvals_page.as_deref(), Some("127.0.0.1:9000"));
        assert_eq!(chosen.approvals_wait, 5);
        assert_eq!(page("mcp --approvals-page").approvals_wait, 300);
        assert!(parse("mcp --approvals-wait 5").is_err());
        assert!(parse("mcp --approvals-page --approvals-wait 0").is_err());
        assert_eq!(
            parse("approvals allow 3 --always --pid 42").unwrap(),
            Command::Approvals {
                pid: Some(42),
                command: ApprovalsCommand::Allow {
                    id: "3".into(),
                    always: true
                }
            }
        );
        assert_eq!(
            parse("approvals list --json").unwrap(),
            Command::Approvals {
                pid: None,
                command: ApprovalsCommand::List { json: true }
            }
        );
        assert!(parse("approvals deny").is_err());
    }

    #[test]
    fn every_schemas_format_and_mode_is_a_possible_value() {
        let cmd = Cli::command();
        let values = |sub: &str, arg: &str| -> Vec<String> {
            let sub = cmd.find_subcommand(sub).unwrap();
            let arg = sub.get_arguments().find(|a| a.get_id() == arg).unwrap();
            arg.get_possible_values()
                .iter()
                .map(|v| v.get_name().to_owned())
                .collect()
        };
        let mut formats: Vec<String> = ToolFormat::ALL.iter().map(|f| f.to_string()).collect();
        formats.push("plain".into());
        assert_eq!(values("schemas", "format"), formats);
        assert!(schemas_formats().iter().all(|(_, help)| !help.is_empty()));
        let modes: Vec<String> = Mode::ALL.iter().map(|m| m.to_string()).collect();
        assert_eq!(values("call", "mode"), modes);
    }

    #[test]
    fn mistakes() {
        for (line, kind, says) in [
            ("", ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand, ""),
            ("frobnicate", ErrorKind::InvalidSubcommand, "frobnicate"),
            (
                "schemas --format yaml",
                ErrorKind::ValueValidation,
                "unknown schemas format \"yaml\" (expected one of mcp, anthropic, openai, \
                 openai-strict, openai-responses, openai-responses-strict, gemini, plain)",
            ),
            ("schemas --format", ErrorKind::InvalidValue, "--format"),
            ("schemas --present", ErrorKind::UnknownArgument, "--present"),
            ("call", ErrorKind::MissingRequiredArgument, "<TOOL>"),
            ("call bash {} extra", ErrorKind::UnknownArgument, "extra"),
            (
                "call bash --settings",
                ErrorKind::InvalidValue,
                "--settings",
            ),
            ("call bash --bogus", ErrorKind::UnknownArgument, "--bogus"),
            ("call bash --mode yolo", ErrorKind::ValueValidation, "yolo"),
            (
                "policy",
                ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand,
                "",
            ),
            (
                "policy check bash",
                ErrorKind::MissingRequiredArgument,
                "<ARGS_JSON>",
            ),
        ] {
            let err = parse(line).unwrap_err();
            assert_eq!(err.kind(), kind, "{line:?}: {err}");
            assert!(err.to_string().contains(says), "{line:?}: {err}");
            assert_eq!(err.exit_code(), 2, "{line:?}");
        }
    }

    #[test]
    fn late_usage_errors_carry_the_commands_usage() {
        let err = usage_error(&["policy", "check"], &UsageError("no such file".into()));
        let text = err.to_string();
        assert!(text.contains("no such file"), "{text}");
        assert!(text.contains("Usage: dsh policy check"), "{text}");
        assert_eq!(err.exit_code(), 2);
    }
}
