//! Which upstream servers to front: one command from the command line, or
//! every server of a file in the `mcpServers` format of Claude Code's
//! `.mcp.json`, Claude Desktop and Cursor.
//!
//! ```json
//! {"mcpServers": {
//!   "files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
//!   "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
//!   "docs":   {"type": "http", "url": "http://127.0.0.1:8080/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
//! }}
//! ```
//!
//! As in Claude Code, `${VAR}` and `${VAR:-default}` in `command`, `args`,
//! `env`, `url` and `headers` are replaced by the host's environment; a
//! variable that is unset and has no default is an error naming it. A key
//! this format does not have is an error naming it, so a typo is not
//! silently ignored.

use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::ProxyError;

/// One upstream server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamConfig {
    /// The server's name: `NAME` in `mcp__NAME__tool` and in `NAME__tool`.
    pub name: String,
    /// How to reach it.
    pub transport: UpstreamTransport,
    /// Whether its tools are exposed as `NAME__tool` (servers of a config
    /// file) rather than under their own names (one server from the command line).
    pub prefixed: bool,
    /// This server's own sandbox overrides (the `sandbox` key of its entry,
    /// our extension), over the settings' sandbox.
    pub sandbox: UpstreamSandbox,
}

/// A server's sandbox overrides: `{"writableRoots": [...], "network": bool}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamSandbox {
    /// More directories it may write under, beside its working directory.
    pub writable_roots: Vec<PathBuf>,
    /// TCP on or off for it (the settings' choice when `None`).
    pub network: Option<bool>,
}

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamTransport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it, beyond the harmless ones it inherits (see
        /// [`super::INHERITED_ENV`]).
        env: BTreeMap<String, String>,
        /// Its working directory; the proxy's own when `None`.
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP server.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (`Authorization`, …).
        headers: BTreeMap<String, String>,
    },
}

impl UpstreamConfig {
    /// The one server given on the command line (`dsh mcp -- CMD ARGS…`):
    /// its tools keep their names. `name` defaults to the program's file name.
    pub fn command(name: Option<&str>, command: &str, args: &[String]) -> UpstreamConfig {
        let name = name.map(str::to_owned).unwrap_or_else(|| {
            Path::new(command)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "upstream".to_owned())
        });
        UpstreamConfig {
            name,
            transport: UpstreamTransport::Stdio {
                command: command.to_owned(),
                args: args.to_vec(),
                env: BTreeMap::new(),
                cwd: None,
            },
            prefixed: false,
            sandbox: UpstreamSandbox::default(),
        }
    }
}

/// Reads a `mcpServers` file, expanding `${VAR}` from `env_var`.
///
/// # Errors
/// The file cannot be read or is not JSON, a server has an unknown key, a
/// missing or mistyped field, an unsupported `type`, or uses an unset variable.
pub fn load_mcp_config(
    path: &Path,
    env_var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<UpstreamConfig>, ProxyError> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ProxyError::new(format!("cannot read the MCP config {at}: {e}")))?;
    parse_mcp_config(&text, env_var).map_err(|e| ProxyError::new(format!("{at}: {e}")))
}

/// Parses the text of a `mcpServers` file (see [`load_mcp_config`]).
///
/// # Errors
/// As [`load_mcp_config`], without the file's name.
pub fn parse_mcp_config(
    text: &str,
    env_var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<UpstreamConfig>, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Some(root) = root.as_object() else {
        return Err("must be a JSON object with a \"mcpServers\" key".into());
    };
    for key in root.keys() {
        if key != "mcpServers" {
            return Err(format!("unknown key {key:?} (expected \"mcpServers\")"));
        }
    }
    let Some(servers) = root.get("mcpServers") else {
        return Err("no \"mcpServers\" key".into());
    };
    let Some(servers) = servers.as_object() else {
        return Err("\"mcpServers\" must be an object of servers by name".into());
    };
    servers
        .iter()
        .map(|(name, server)| {
            server_config(name, server, env_var).map_err(|e| format!("mcpServers.{name}: {e}"))
        })
        .collect()
}

fn server_config(
    name: &str,
    server: &Value,
    env_var: &dyn Fn(&str) -> Option<String>,
) -> Result<UpstreamConfig, String> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err("a server name may have only letters, digits, '_' and '-'".into());
    }
    if name.contains("__") {
        return Err("a server name may not contain \"__\" (it separates server and tool)".into());
    }
    let Some(fields) = server.as_object() else {
        return Err("must be an object".into());
    };
    let kind = match fields.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => return Err("\"type\" must be a string".into()),
    };
    let expand = |text: &str| expand_vars(text, env_var);
    let transport = match kind {
        None | Some("stdio") => {
            only_keys(fields, &["type", "command", "args", "env", "cwd", "sandbox"])?;
            let command = expand(string_field(fields, "command")?.ok_or("no \"command\"")?)?;
            let args = match fields.get("args") {
                None => Vec::new(),
                Some(Value::Array(args)) => args
                    .iter()
                    .map(|a| a.as_str().ok_or("\"args\" must be strings").map(&expand))
                    .collect::<Result<Result<Vec<_>, _>, _>>()??,
                Some(_) => return Err("\"args\" must be an array of strings".into()),
            };
            let env = string_map(fields, "env", &expand)?;
            let cwd = string_field(fields, "cwd")?.map(&expand).transpose()?.map(PathBuf::from);
            UpstreamTransport::Stdio {
                command,
                args,
                env,
                cwd,
            }
        }
        Some("http" | "streamable-http" | "streamableHttp") => {
            only_keys(fields, &["type", "url", "headers"])?;
            let url = expand(string_field(fields, "url")?.ok_or("no \"url\"")?)?;
            if url.starts_with("https://") {
                return Err(format!(
                    "{url:?}: https upstreams are not supported by this build (its HTTP client has no TLS); use an http:// endpoint on loopback, or a local TLS-terminating proxy"
                ));
            }
            if !url.starts_with("http://") {
                return Err(format!("\"url\" must be an http:// URL, not {url:?}"));
            }
            let headers = string_map(fields, "headers", &expand)?;
            UpstreamTransport::Http { url, headers }
        }
        Some("sse") => {
            return Err(
                "the SSE transport (deprecated by MCP) is not supported; use the server's streamable-HTTP endpoint with \"type\": \"http\"".into(),
            )
        }
        Some(other) => return Err(format!("unknown \"type\" {other:?} (expected \"stdio\" or \"http\")")),
    };
    let sandbox = match fields.get("sandbox") {
        None => UpstreamSandbox::default(),
        Some(Value::Object(sb)) => {
            only_keys(sb, &["writableRoots", "network"])
                .map_err(|e| format!("\"sandbox\": {e}"))?;
            let writable_roots = match sb.get("writableRoots") {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .map(|r| {
                        r.as_str()
                            .map(|r| expand(r).map(PathBuf::from))
                            .ok_or("\"sandbox.writableRoots\" must be strings")
                    })
                    .collect::<Result<Result<Vec<_>, _>, _>>()??,
                Some(_) => {
                    return Err("\"sandbox.writableRoots\" must be an array of strings".into())
                }
            };
            let network = match sb.get("network") {
                None => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => return Err("\"sandbox.network\" must be true or false".into()),
            };
            UpstreamSandbox {
                writable_roots,
                network,
            }
        }
        Some(_) => return Err("\"sandbox\" must be an object".into()),
    };
    Ok(UpstreamConfig {
        name: name.to_owned(),
        transport,
        prefixed: true,
        sandbox,
    })
}

fn only_keys(fields: &Map<String, Value>, known: &[&str]) -> Result<(), String> {
    match fields.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(format!(
            "unknown key {key:?} (this kind of server has {})",
            known.join(", ")
        )),
        None => Ok(()),
    }
}

fn string_field<'a>(fields: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match fields.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{key:?} must be a string")),
    }
}

fn string_map(
    fields: &Map<String, Value>,
    key: &str,
    expand: &dyn Fn(&str) -> Result<String, String>,
) -> Result<BTreeMap<String, String>, String> {
    match fields.get(key) {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), expand(s)?)),
                _ => Err(format!("{key}.{k} must be a string")),
            })
            .collect(),
        Some(_) => Err(format!("{key:?} must be an object of strings")),
    }
}

/// Replaces `${VAR}` and `${VAR:-default}`; `$` alone is kept.
fn expand_vars(text: &str, env_var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed \"${{\" in {text:?}"));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((var, default)) => (var, Some(default)),
            None => (inner, None),
        };
        if var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("\"${{{inner}}}\" is not a variable name"));
        }
        match (env_var(var), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "${{{var}}} is not set (write ${{{var}:-default}} for a default)"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn stdio_and_http_servers_are_read() {
        let servers = parse_mcp_config(
            r#"{"mcpServers": {
                "files": {"command": "srv", "args": ["-v", "${HOME_X:-/h}"], "env": {"T": "${TOKEN}"}},
                "docs": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
            &env,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        let files = servers.iter().find(|s| s.name == "files").unwrap();
        assert!(files.prefixed);
        assert_eq!(
            files.transport,
            UpstreamTransport::Stdio {
                command: "srv".into(),
                args: vec!["-v".into(), "/h".into()],
                env: BTreeMap::from([("T".into(), "s3cret".into())]),
                cwd: None,
            }
        );
        let docs = servers.iter().find(|s| s.name == "docs").unwrap();
        assert_eq!(
            docs.transport,
            UpstreamTransport::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::from([("Authorization".into(), "Bearer s3cret".into())]),
            }
        );
    }

    #[test]
    fn mistakes_are_named() {
        let err = |text: &str| parse_mcp_config(text, &env).unwrap_err();
        assert!(err("[]").contains("JSON object"));
        assert!(err(r#"{"servers": {}}"#).contains("unknown key \"servers\""));
        assert!(err(r#"{"mcpServers": {"a": {"comand": "x"}}}"#)
            .contains("mcpServers.a: unknown key \"comand\""));
        assert!(err(r#"{"mcpServers": {"a": {"args": []}}}"#).contains("no \"command\""));
        assert!(
            err(r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#)
                .contains("array of strings")
        );
        assert!(
            err(r#"{"mcpServers": {"a": {"type": "sse", "url": "http://x"}}}"#).contains("SSE")
        );
        assert!(
            err(r#"{"mcpServers": {"a": {"type": "http", "url": "ftp://x"}}}"#).contains("http://")
        );
        assert!(
            err(r#"{"mcpServers": {"a": {"type": "http", "url": "https://x"}}}"#)
                .contains("no TLS")
        );
        assert!(
            err(r#"{"mcpServers": {"a": {"command": "${NOPE}"}}}"#).contains("${NOPE} is not set")
        );
        assert!(err(r#"{"mcpServers": {"a b": {"command": "x"}}}"#).contains("server name"));
        assert!(err(r#"{"mcpServers": {"a__b": {"command": "x"}}}"#).contains("\"__\""));
    }

    #[test]
    fn the_command_line_server_is_named_after_its_program() {
        let one = UpstreamConfig::command(None, "/usr/bin/my-server", &["-x".into()]);
        assert_eq!(one.name, "my-server");
        assert!(!one.prefixed);
        assert_eq!(UpstreamConfig::command(Some("gh"), "x", &[]).name, "gh");
    }
}
