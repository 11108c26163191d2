//! Shapes and serde attributes a schema cannot describe, all reported.
use dsh_tools::ToolArgs;
use serde::Deserialize;

#[derive(ToolArgs, Deserialize)]
struct Tuple(String, u32);

#[derive(ToolArgs, Deserialize)]
struct Unit;

#[derive(ToolArgs)]
union Bits {
    a: u32,
    b: f32,
}

#[derive(ToolArgs, Deserialize)]
struct Node {
    name: String,
    children: Vec<Node>,
    parent: Option<Box<Self>>,
}

#[derive(ToolArgs, Deserialize)]
#[serde(rename_all = "Title Case")]
#[tool(description = "structs take no tool keys")]
struct Names {
    #[serde(rename = "same")]
    first: String,
    #[serde(rename = "same")]
    second: String,
}

#[derive(ToolArgs, Deserialize)]
#[serde(untagged)]
enum Loose {
    A,
    #[tool(description = "variants take none")]
    B,
}

#[derive(ToolArgs, Deserialize)]
enum Catch {
    Known,
    #[serde(other)]
    Unknown,
}

fn main() {}
