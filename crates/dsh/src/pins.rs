//! `dsh pins list|accept`: the project's pinned definitions of proxied tools.

use crate::cli::{PinsCommand, UsageError};
use crate::{build_pipeline, print_json, Approval};
use dsh_mcp::upstream::pins;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

pub fn run(command: PinsCommand) -> Result<ExitCode, UsageError> {
    let (options, json) = match &command {
        PinsCommand::List { options, json } => (options, *json),
        PinsCommand::Accept { options, .. } => (options, false),
    };
    let pipeline = build_pipeline(options, Approval::None)?;
    let Some(path) = pipeline.pins_path() else {
        return Err(UsageError(
            "the settings turn pinning off (mcp.pinsFile: false)".into(),
        ));
    };
    match command {
        PinsCommand::List { .. } => list(&path, json),
        PinsCommand::Accept { tools, .. } => accept(&path, &tools),
    }
}

fn list(path: &Path, json: bool) -> Result<ExitCode, UsageError> {
    let (file, _) = pins::read_file(path).map_err(UsageError)?;
    if json {
        let mut value = serde_json::to_value(&file).unwrap_or(Value::Null);
        value["path"] = json!(path);
        return Ok(print_json(&value, ExitCode::SUCCESS));
    }
    let mut out = String::new();
    out.push_str(&format!("pins file: {}\n", path.display()));
    if file.pending.is_empty() {
        out.push_str("nothing is pending\n");
    } else {
        out.push_str("pending (their calls ask until `dsh pins accept TOOL`):\n");
        for (name, p) in &file.pending {
            out.push_str(&format!("  {name}: {}\n", p.change));
        }
    }
    out.push_str(&format!("pinned: {} tools\n", file.tools.len()));
    for name in file.tools.keys() {
        out.push_str(&format!("  {name}\n"));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

fn accept(path: &Path, tools: &[String]) -> Result<ExitCode, UsageError> {
    let accepted = pins::accept_pending(path, tools).map_err(UsageError)?;
    let mut out = String::new();
    if accepted.is_empty() {
        out.push_str("nothing is pending\n");
    }
    for name in accepted {
        out.push_str(&format!("accepted {name}\n"));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(ExitCode::SUCCESS)
}

/// The pending definitions for `dsh settings`: name → what changed and
/// what was flagged; the error text when the file cannot be read.
pub fn pending_summary(path: &Path) -> Value {
    match pins::read_file(path) {
        Ok((file, _)) => file
            .pending
            .iter()
            .map(|(name, p)| {
                (
                    name.clone(),
                    json!({"change": p.change, "findings": p.findings}),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into(),
        Err(err) => json!({ "error": err }),
    }
}
