//! `dsh`: the command line of dsh-tools. Glue only: it builds a registry with
//! the first-party tools and the configured middleware, and prints JSON.
//!
//! See `dsh --help` and the project README.

mod approve;
mod cli;

use cli::{Command, PipelineOptions, SchemasFormat, UsageError, USAGE};
use dsh_policy::{ApproveAll, Mode, PermissionMiddleware, PermissionPolicy, Settings};
use dsh_tool_bash::{register_bash_tools, Executor, ExecutorConfig};
use dsh_tools::{Dialect, ToolArguments, ToolExecution, ToolRegistry};
use serde_json::{json, Value};
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args().skip(1)) {
        Ok(command) => command,
        Err(err) => return usage_error(&err),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("dsh: cannot start the async runtime: {err}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(command)) {
        Ok(code) => code,
        Err(err) => usage_error(&err),
    }
}

fn usage_error(err: &UsageError) -> ExitCode {
    eprintln!("dsh: {err}\n\n{USAGE}");
    ExitCode::from(2)
}

fn print_json(value: &Value) {
    // Serialising a `Value` cannot fail.
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
}

async fn run(command: Command) -> Result<ExitCode, UsageError> {
    match command {
        Command::Help => {
            println!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Schemas { format } => schemas(format),
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
            let pipeline = Pipeline::build(&options, approver)?;
            let raw = read_arguments(args)?;
            let arguments = ToolArguments::from_raw(raw);
            let exec =
                ToolExecution::new("call-1", tool.clone(), arguments.clone()).with_agent("dsh");
            let result = pipeline.registry.execute(exec).await;
            let mut output = serde_json::to_value(&result).unwrap_or_default();
            if present {
                let call = pipeline.registry.present_call(&tool, &arguments);
                let done = pipeline.registry.present_result(&tool, &arguments, &result);
                output["presentation"] = json!({"call": call, "result": done});
            }
            print_json(&output);
            Ok(if result.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::PolicyCheck {
            tool,
            args,
            options,
        } => {
            let args: Value = ToolArguments::from_raw(args)
                .into_value()
                .map_err(|violation| UsageError(violation.to_string()))?;
            // The same pipeline `dsh call` builds, so the tools' annotations
            // (e.g. read-only tools are allowed) and the policy are the ones a call meets.
            let pipeline = Pipeline::build(&options, Approval::None)?;
            let annotations = pipeline
                .registry
                .get(&tool)
                .map(|t| t.annotations())
                .unwrap_or_default();
            let evaluation =
                pipeline
                    .permissions
                    .policy()
                    .check_annotated(&tool, &args, &annotations);
            print_json(&serde_json::to_value(&evaluation).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn schemas(format: SchemasFormat) -> Result<ExitCode, UsageError> {
    let pipeline = Pipeline::build(&PipelineOptions::default(), Approval::None)?;
    let tools = match format {
        SchemasFormat::Plain => {
            serde_json::to_value(pipeline.registry.schemas(Dialect::Mcp)).unwrap_or_default()
        }
        SchemasFormat::Provider(format) => pipeline.registry.request_tools(format),
    };
    print_json(&tools);
    Ok(ExitCode::SUCCESS)
}

/// The settings file of `--settings`, or the defaults.
fn load_settings(options: &PipelineOptions) -> Result<Settings, UsageError> {
    match &options.settings {
        Some(path) => Settings::load(path).map_err(|e| UsageError(e.to_string())),
        None => Ok(Settings::default()),
    }
}

fn resolve_cwd(options: &PipelineOptions) -> Result<PathBuf, UsageError> {
    match &options.cwd {
        Some(dir) => std::fs::canonicalize(dir)
            .map_err(|e| UsageError(format!("--cwd {}: {e}", dir.display()))),
        None => std::env::current_dir()
            .map_err(|e| UsageError(format!("cannot read the current directory: {e}"))),
    }
}

fn policy_for(
    settings: &Settings,
    options: &PipelineOptions,
    cwd: PathBuf,
) -> Result<PermissionPolicy, UsageError> {
    let mode = match &options.mode {
        Some(name) => Some(
            name.parse::<Mode>()
                .map_err(|e| UsageError(e.to_string()))?,
        ),
        None => None,
    };
    Ok(settings.policy(cwd, mode))
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

/// The registry with the first-party tools and the configured middleware.
struct Pipeline {
    registry: ToolRegistry,
    /// The permission middleware installed in `registry`.
    permissions: PermissionMiddleware,
    /// Owns the bash processes and spill files.
    _executor: Executor,
}

impl Pipeline {
    fn build(options: &PipelineOptions, approval: Approval) -> Result<Pipeline, UsageError> {
        let settings = load_settings(options)?;
        let cwd = resolve_cwd(options)?;
        let defaults = ExecutorConfig::default();
        let ms =
            |value: Option<u64>, default: Duration| value.map_or(default, Duration::from_millis);
        let config = ExecutorConfig {
            cwd: cwd.clone(),
            default_timeout: ms(settings.bash.default_timeout_ms, defaults.default_timeout),
            max_timeout: ms(settings.bash.max_timeout_ms, defaults.max_timeout),
            max_output_bytes: settings
                .bash
                .max_output_bytes
                .map_or(defaults.max_output_bytes, |b| {
                    usize::try_from(b).unwrap_or(usize::MAX)
                }),
            ..defaults
        };
        let executor = Executor::new(config)
            .map_err(|e| UsageError(format!("cannot set up the bash executor: {e}")))?;
        let registry = ToolRegistry::new();
        register_bash_tools(&registry, &executor)
            .map_err(|e| UsageError(format!("cannot register the bash tools: {e}")))?;
        let permissions = PermissionMiddleware::new(policy_for(&settings, options, cwd)?);
        let permissions = match approval {
            Approval::None => permissions,
            Approval::Yes => permissions.with_approver(ApproveAll),
            Approval::Terminal => permissions.with_approver(approve::TerminalApprover),
        };
        registry.use_middleware(permissions.clone());
        Ok(Pipeline {
            registry,
            permissions,
            _executor: executor,
        })
    }
}
