use dsh_tools::ToolArgs;
use serde::Deserialize;

#[derive(ToolArgs, Deserialize)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
