//! Parsing of the command line. Every mistake is a [`UsageError`] (exit 2).

use dsh_tools::ToolFormat;
use std::fmt;
use std::path::PathBuf;

pub const USAGE: &str = "\
usage:
  dsh mcp [--settings FILE] [--mode MODE] [--cwd DIR]
  dsh schemas [--format FORMAT]
  dsh call TOOL [ARGS_JSON|-] [--settings FILE] [--mode MODE] [--cwd DIR] [--present] [--yes]
  dsh policy check TOOL ARGS_JSON [--settings FILE] [--mode MODE] [--cwd DIR]

schemas formats (the value of a request's `tools` field):
  mcp                      MCP tools/list entries (default)
  anthropic                Anthropic Messages tools
  openai                   OpenAI Chat Completions function tools
  openai-strict            the same in strict mode
  openai-responses         OpenAI Responses function tools
  openai-responses-strict  the same in strict mode
  gemini                   Gemini [{functionDeclarations: [...]}]
  plain                    the provider-neutral {name, description, parameters}

exit status: 0 success, 1 the call failed (isError), 2 usage error";

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
        format: SchemasFormat,
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
    /// An MCP server on stdio for the client's session.
    Mcp {
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
    let mut format = None;
    let (mut present, mut yes) = (false, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--format" => format = Some(value("--format", &mut args)?.parse::<SchemasFormat>()?),
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
            ("--format", format.is_some()),
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
                format: format.unwrap_or_default(),
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
        "mcp" => {
            only(&["--settings", "--mode", "--cwd"])?;
            if let Some(extra) = positional.first() {
                return Err(UsageError(format!("unexpected argument {extra:?}")));
            }
            Ok(Command::Mcp { options })
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
                format: SchemasFormat::Provider(ToolFormat::Mcp)
            }
        );
        assert_eq!(
            parse_str("schemas --format plain").unwrap(),
            Command::Schemas {
                format: SchemasFormat::Plain
            }
        );
        for format in ToolFormat::ALL {
            assert_eq!(
                parse_str(&format!("schemas --format {format}")).unwrap(),
                Command::Schemas {
                    format: SchemasFormat::Provider(format)
                }
            );
        }
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
    fn usage_lists_every_schemas_format() {
        for format in ToolFormat::ALL {
            assert!(USAGE.contains(&format!("\n  {format} ")), "{format}");
        }
        assert!(USAGE.contains("\n  plain "));
    }

    #[test]
    fn mistakes() {
        for (line, message) in [
            ("", "missing command"),
            ("frobnicate", "unknown command \"frobnicate\""),
            (
                "schemas --format yaml",
                "unknown schemas format \"yaml\" (expected one of mcp, anthropic, openai, \
                 openai-strict, openai-responses, openai-responses-strict, gemini, plain)",
            ),
            ("schemas --format", "--format needs a value"),
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
