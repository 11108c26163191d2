use dsh_tools::ToolArgs;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(ToolArgs, Deserialize)]
struct Args {
    path: String,
    #[serde(flatten)]
    rest: HashMap<String, String>,
    #[serde(deserialize_with = "from_str")]
    count: u32,
}

fn from_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let s = String::deserialize(d)?;
    s.parse().map_err(serde::de::Error::custom)
}

#[derive(ToolArgs, Deserialize)]
#[serde(tag = "kind")]
struct Tagged {
    path: String,
}

fn main() {}
