use dsh_tools::ToolArgs;
use serde::Deserialize;

#[derive(ToolArgs, Deserialize)]
enum Mode {
    Fast,
    Custom { level: u8 },
    Other(String),
    #[serde(skip_deserializing)]
    Hidden(u8),
}

fn main() {}
