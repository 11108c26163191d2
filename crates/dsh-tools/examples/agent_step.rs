//! One step of an agent loop: schemas out to the model, a scripted model
//! reply with three tool calls in, results and presentations out.
//!
//! `cargo run -p dsh-tools --example agent_step`

use dsh_tools::{
    define_tool, ContentBlock, Dialect, TimeoutMiddleware, ToolArgs, ToolCallPresentation,
    ToolError, ToolExecution, ToolRegistry,
};
use serde::Deserialize;
use std::time::Duration;

#[derive(ToolArgs, Deserialize)]
struct ListDir {
    /// Directory to list.
    path: String,
    /// Include entries whose name starts with a dot.
    all: Option<bool>,
}

#[derive(ToolArgs, Deserialize)]
struct WordCount {
    /// Text to count the words of.
    text: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = ToolRegistry::new();
    let list_dir = define_tool(
        "list_dir",
        "Lists a directory, one entry per line.",
        |args: ListDir, _| async move {
            let mut names = Vec::new();
            let entries = std::fs::read_dir(&args.path)
                .map_err(|e| ToolError::msg(format!("{}: {e}", args.path)))?;
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if args.all.unwrap_or(false) || !name.starts_with('.') {
                    names.push(name);
                }
            }
            names.sort();
            Ok(vec![ContentBlock::text(names.join("\n"))])
        },
    )
    .concurrency_safe();
    registry.register(list_dir).expect("fresh registry");
    let word_count = define_tool(
        "word_count",
        "Counts the words of a text.",
        |args: WordCount, _| async move {
            Ok(vec![ContentBlock::text(
                args.text.split_whitespace().count().to_string(),
            )])
        },
    )
    .concurrency_safe();
    registry.register(word_count).expect("fresh registry");
    registry.use_middleware(TimeoutMiddleware::new(Duration::from_secs(10)));
    // A tiny log middleware, as a closure.
    registry.use_fn(|exec, next| async move {
        eprintln!("-> {} {}", exec.name, exec.arguments.to_value());
        let result = next.run(exec).await;
        eprintln!("<- {} error={}", result.call_id, result.is_error);
        Ok(result)
    });

    println!("== tools sent to the model (openai-strict)");
    println!(
        "{}",
        serde_json::to_string_pretty(&registry.schemas(Dialect::OpenAiStrict)).expect("JSON")
    );

    // What a model might answer: two good calls and one it must correct.
    let reply = [
        ("call_1", "list_dir", r#"{"path": "."}"#),
        ("call_2", "word_count", r#"{"text": "the quick brown fox"}"#),
        ("call_3", "list_dir", r#"{"path": 42, "all": "yes"}"#),
    ];
    let calls: Vec<ToolExecution> = reply
        .iter()
        .map(|(id, name, args)| ToolExecution::new(*id, *name, *args))
        .collect();
    let presentations: Vec<ToolCallPresentation> = calls
        .iter()
        .map(|c| registry.present_call(&c.name, &c.arguments.to_value()))
        .collect();
    let results = registry.execute_batch(calls).await;

    println!("== results sent back to the model");
    for ((call, pending), result) in reply.iter().zip(&presentations).zip(&results) {
        println!("[{}] {} {}", result.call_id, pending.title, call.2);
        println!("{}", serde_json::to_string(result).expect("JSON"));
    }
}
