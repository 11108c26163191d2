use dsh_tools::ToolArgs;
use serde::Deserialize;

const LIMIT: u32 = 10;

#[derive(ToolArgs, Deserialize)]
struct Args {
    #[tool(hint = "unknown key")]
    path: String,
    #[tool(default = LIMIT)]
    limit: u32,
    #[tool(default = [1, "a".to_string()], enum = [1, 2])]
    tags: Vec<String>,
}

fn main() {}
