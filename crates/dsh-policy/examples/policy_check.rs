//! `cargo run -p dsh-policy --example policy_check -- TOOL ARGS_JSON [MODE] [SETTINGS_FILE]`
//!
//! Prints the evaluation of one call and the verdict on each of its parts;
//! runs nothing.

use dsh_policy::{Mode, PermissionPolicy, PermissionRules, Settings};
use dsh_tools::ToolAnnotations;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(tool), Some(json)) = (args.first(), args.get(1)) else {
        eprintln!("usage: policy_check TOOL ARGS_JSON [MODE] [SETTINGS_FILE]");
        std::process::exit(2);
    };
    let mode: Option<Mode> = args.get(2).map(|m| m.parse()).transpose()?;
    let cwd = std::env::current_dir()?;
    let policy = match args.get(3) {
        Some(file) => Settings::load(file)?.policy(cwd, mode),
        None => PermissionPolicy::new(PermissionRules::new(), mode.unwrap_or_default(), cwd),
    };
    let value: serde_json::Value = serde_json::from_str(json)?;
    let evaluation = policy.check(tool, &value);
    println!("{}", serde_json::to_string_pretty(&evaluation)?);
    for part in policy.explain(tool, &value, &ToolAnnotations::default()) {
        println!(
            "  {:?} {:?}: {} — {}",
            part.kind, part.text, part.evaluation.decision, part.evaluation.reason
        );
    }
    Ok(())
}
