use dsh_tools::ToolArgs;
use serde::Deserialize;

const LIMIT: u32 = 10;

#[derive(ToolArgs, Deserialize)]
struct Args {
    #[tool(maximum = LIMIT)]
    limit: u32,
    #[tool(min_length = -1, max_length = "5")]
    name: String,
    #[tool(minimum = "0", min_items = 1.5)]
    tags: Vec<u8>,
    #[tool(minimum = 10, maximum = 5)]
    reversed: i32,
    #[tool(min_items = 3, max_items = 2)]
    items: Vec<String>,
    #[tool(minimum = 1, minimum = 2)]
    twice: u8,
    #[tool(maximum = 99999999999999999999)]
    huge: u64,
}

fn main() {}
