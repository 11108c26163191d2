use dsh_tools::ToolArgs;
use serde::Deserialize;

#[derive(ToolArgs, Deserialize)]
struct Ping {
    host: String,
    /// Not something a schema can describe.
    address: std::net::IpAddr,
    count: Option<u32>,
}

fn main() {}
