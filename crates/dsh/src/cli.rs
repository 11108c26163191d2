//! Parsing of the command line. Every mistake is a [`UsageError`] (exit 2).

use dsh_tools::Dialect;
use std::fmt;
use std::path::PathBuf;

pub const USAGE: &str = "\
usage:
  dsh schemas [--format mcp|openai|openai-strict|anthropic|gemini]
  dsh call TOOL [ARGS_JSON|-] [--settings FILE] [--mode MODE] [--cwd DIR] [--present] [--yes]
  dsh policy check TOOL ARGS_JSON [--settings FILE] [--mode MODE] [--cwd DIR]

exit status: 0 success, 1 the call failed (isError), 2 usage error";

/// A command-line mistake, printed with the usage text.
#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Options shared by the commands that run the pipeline.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PipelineOptions {
    pub settings: Option<PathBuf>,
    pub mode: Option<String>,
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Help,
    Schemas {
        dialect: Dialect,
    },
    Call {
        tool: String,
        /// The raw argument text; `None` for `{}`, `Some("-")` for stdin.
        args: Option<String>,
        options: PipelineOptions,
        present: bool,
        yes: bool,
    },
    PolicyCheck {
        tool: String,
        args: String,
        options: PipelineOptions,
    },
}

fn value(flag: &str, rest: &mut impl Iterator<Item = String>) -> Result<String, UsageError> {
    rest.next()
        .ok_or_else(|| UsageError(format!("{flag} needs a value")))
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Command, UsageError> {
    let mut args = args.into_iter();
    let Some(command) = args.next() else {
        return Err(UsageError("missing command".into()));
    };
    let mut positional = Vec::new();
    let mut options = PipelineOptions::default();
    let mut dialect = None;
    let (mut present, mut yes) = (false, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--format" => {
                let name = value("--format", &mut args)?;
                dialect = Some(
                    name.parse::<Dialect>()
                        .map_err(|e| UsageError(e.to_string()))?,
                );
            }
            "--settings" => options.settings = Some(value("--settings", &mut args)?.into()),
            "--mode" => options.mode = Some(value("--mode", &mut args)?),
            "--cwd" => options.cwd = Some(value("--cwd", &mut args)?.into()),
            "--present" => present = true,
            "--yes" => yes = true,
            "-h" | "--help" => return Ok(Command::Help),
            "-" => positional.push(arg),
            flag if flag.starts_with("--") => {
                return Err(UsageError(format!("unknown option {flag}")))
            }
            _ => positional.push(arg),
        }
    }
    let only = |allowed: &[&str]| -> Result<(), UsageError> {
        let given = [
            ("--format", dialect.is_some()),
            ("--settings", options.settings.is_some()),
            ("--mode", options.mode.is_some()),
            ("--cwd", options.cwd.is_some()),
            ("--present", present),
            ("--yes", yes),
        ];
        match given
            .iter()
            .find(|(name, set)| *set && !allowed.contains(name))
        {
            Some((name, _)) => Err(UsageError(format!(
                "{name} does not apply to `dsh {command}`"
            ))),
            None => Ok(()),
        }
    };
    match command.as_str() {
        "help" | "-h" | "--help" => Ok(Command::Help),
        "schemas" => {
            only(&["--format"])?;
            if let Some(extra) = positional.first() {
                return Err(UsageError(format!("unexpected argument {extra:?}")));
            }
            Ok(Command::Schemas {
                dialect: dialect.unwrap_or_default(),
            })
        }
        "call" => {
            only(&["--settings", "--mode", "--cwd", "--present", "--yes"])?;
            let mut positional = positional.into_iter();
            let tool = positional
                .next()
                .ok_or_else(|| UsageError("`dsh call` needs a TOOL".into()))?;
            let args = positional.next();
            if let Some(extra) = positional.next() {
                return Err(UsageError(format!("unexpected argument {extra:?}")));
            }
            Ok(Command::Call {
                tool,
                args,
                options,
                present,
                yes,
            })
        }
        "policy" => {
            only(&["--settings", "--mode", "--cwd"])?;
            let mut positional = positional.into_iter();
            match positional.next().as_deref() {
                Some("check") => {}
                Some(other) => return Err(UsageError(format!("unknown policy command {other:?}"))),
                None => return Err(UsageError("`dsh policy` needs a command: check".into())),
            }
            let (Some(tool), Some(args)) = (positional.next(), positional.next()) else {
                return Err(UsageError(
                    "`dsh policy check` needs TOOL and ARGS_JSON".into(),
                ));
            };
            if let Some(extra) = positional.next() {
                return Err(UsageError(format!("unexpected argument {extra:?}")));
            }
            Ok(Command::PolicyCheck {
                tool,
                args,
                options,
            })
        }
        other => Err(UsageError(format!("unknown command {other:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(line: &str) -> Result<Command, UsageError> {
        parse(line.split_whitespace().map(String::from))
    }

    #[test]
    fn commands() {
        assert_eq!(
            parse_str("schemas").unwrap(),
            Command::Schemas {
                dialect: Dialect::Mcp
            }
        );
        assert_eq!(
            parse_str("schemas --format openai-strict").unwrap(),
            Command::Schemas {
                dialect: Dialect::OpenAiStrict
            }
        );
        assert_eq!(
            parse_str("call bash - --present --cwd /tmp").unwrap(),
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
        assert!(matches!(
            parse_str("policy check bash {}").unwrap(),
            Command::PolicyCheck { .. }
        ));
    }

    #[test]
    fn mistakes() {
        for (line, message) in [
            ("", "missing command"),
            ("frobnicate", "unknown command \"frobnicate\""),
            ("schemas --format yaml", "unknown schema dialect \"yaml\""),
            (
                "schemas --present",
                "--present does not apply to `dsh schemas`",
            ),
            ("call", "`dsh call` needs a TOOL"),
            ("call bash {} extra", "unexpected argument \"extra\""),
            ("call bash --settings", "--settings needs a value"),
            ("call bash --bogus", "unknown option --bogus"),
            (
                "policy check bash",
                "`dsh policy check` needs TOOL and ARGS_JSON",
            ),
        ] {
            let err = parse_str(line).unwrap_err();
            assert!(err.0.starts_with(message), "{line:?}: {}", err.0);
        }
    }
}
