//! Starts `dsh mcp` as an MCP client does, lists its tools and runs one
//! call through it: `cargo build -p dsh && cargo run -p dsh --example mcp_session`.
//!
//! The `dsh` binary is looked up in `DSH_BIN`, else beside this example's
//! target directory (`target/debug/dsh`).

use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::ServiceExt;
use std::path::PathBuf;

fn dsh_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("DSH_BIN") {
        return path.into();
    }
    // target/debug/examples/mcp_session → target/debug/dsh
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent()
        .and_then(|examples| examples.parent())
        .map(|dir| dir.join("dsh"))
        .unwrap_or_else(|| PathBuf::from("dsh"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("dsh-mcp-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let settings = dir.join("settings.json");
    std::fs::write(
        &settings,
        r#"{"permissions": {"allow": ["Bash(uname:*)", "Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}"#,
    )?;
    let mut command = tokio::process::Command::new(dsh_binary());
    command
        .arg("mcp")
        .arg("--settings")
        .arg(&settings)
        .arg("--cwd")
        .arg(&dir);
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    println!("tools:");
    for tool in client.list_all_tools().await? {
        println!(
            "  {:<12} {}",
            tool.name,
            tool.title.as_deref().unwrap_or_default()
        );
    }
    for command in ["uname -sr", "rm -rf ~/important"] {
        let mut args = serde_json::Map::new();
        args.insert("command".into(), command.into());
        let result = client
            .call_tool(CallToolRequestParams::new("bash").with_arguments(args))
            .await?;
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        println!(
            "\n$ {command}   (isError: {})\n{}",
            result.is_error.unwrap_or(false),
            text.join("\n")
        );
    }
    client.cancel().await?;
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
