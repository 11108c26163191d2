//! `dsh`: the command line of dsh-tools. Glue only: it builds a registry with
//! the first-party tools and the configured middleware, and prints JSON.
//!
//! See `dsh --help` and the project README.

mod cli;

use cli::{Command, PipelineOptions, UsageError, USAGE};
use dsh_tool_bash::{register_bash_tools, Executor, ExecutorConfig};
use dsh_tools::{ToolArguments, ToolExecution, ToolRegistry};
use serde_json::{json, Value};
use std::io::Read;
use std::process::ExitCode;

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
        Command::Schemas { dialect } => {
            let pipeline = Pipeline::build(&PipelineOptions::default())?;
            let schemas = pipeline.registry.schemas(dialect);
            print_json(&serde_json::to_value(schemas).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::Call {
            tool,
            args,
            options,
            present,
            yes: _,
        } => {
            let pipeline = Pipeline::build(&options)?;
            let raw = read_arguments(args)?;
            let arguments = ToolArguments::from_raw(raw);
            let shown_args = arguments.to_value();
            let exec = ToolExecution::new("call-1", tool.clone(), arguments).with_agent("dsh");
            let result = pipeline.registry.execute(exec).await;
            let mut output = serde_json::to_value(&result).unwrap_or_default();
            if present {
                let call = pipeline.registry.present_call(&tool, &shown_args);
                let done = pipeline
                    .registry
                    .present_result(&tool, &shown_args, &result);
                output["presentation"] = json!({"call": call, "result": done});
            }
            print_json(&output);
            Ok(if result.is_error {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::PolicyCheck { .. } => Err(UsageError(
            "`dsh policy check` is not available in this build".into(),
        )),
    }
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
    /// Owns the bash processes and spill files; dropped last.
    _executor: Executor,
}

impl Pipeline {
    fn build(options: &PipelineOptions) -> Result<Pipeline, UsageError> {
        let cwd = match &options.cwd {
            Some(dir) => std::fs::canonicalize(dir)
                .map_err(|e| UsageError(format!("--cwd {}: {e}", dir.display())))?,
            None => std::env::current_dir()
                .map_err(|e| UsageError(format!("cannot read the current directory: {e}")))?,
        };
        let config = ExecutorConfig {
            cwd,
            ..ExecutorConfig::default()
        };
        let executor = Executor::new(config)
            .map_err(|e| UsageError(format!("cannot set up the bash executor: {e}")))?;
        let registry = ToolRegistry::new();
        for handle in register_bash_tools(&registry, &executor)
            .map_err(|e| UsageError(format!("cannot register the bash tools: {e}")))?
        {
            handle.keep();
        }
        Ok(Pipeline {
            registry,
            _executor: executor,
        })
    }
}
