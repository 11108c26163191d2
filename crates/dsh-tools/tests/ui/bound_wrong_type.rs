use dsh_tools::ToolArgs;
use serde::Deserialize;

#[derive(ToolArgs, Deserialize)]
struct Args {
    #[tool(minimum = 0)]
    name: String,
    #[tool(max_length = 10)]
    count: Option<u32>,
    #[tool(min_items = 1)]
    path: String,
    #[tool(maximum = 0.5)]
    whole: Vec<u64>,
    // Fine: on a `Vec`, `minimum` and `min_length` reach the elements.
    #[tool(minimum = 1, min_items = 1, max_items = 3)]
    ports: Vec<u16>,
    #[tool(min_length = 1)]
    tags: Option<Vec<String>>,
}

fn main() {}
