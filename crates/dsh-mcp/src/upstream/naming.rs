//! The names an upstream tool is exposed and ruled by.
//!
//! * Exposed: the tool's own name for the one server of the command line,
//!   `SERVER__tool` for the servers of a config file.
//! * Model providers accept 1 to 64 characters of `a-zA-Z0-9_-`. A name
//!   outside that is mapped: every other character becomes `_`, the result
//!   is cut to 55 characters, and `_` plus 8 hex digits of a hash of the
//!   original name are appended, so two names that differ only in the
//!   replaced characters stay apart. The mapping is logged at start and
//!   written in the tool's description.
//! * Rules and hook matchers: `mcp__SERVER__tool`, `mcp__SERVER` and
//!   `mcp__SERVER__*` (as Claude Code writes them, with the tool's upstream
//!   name), and the exposed name.

/// The longest name model providers accept.
pub const MAX_NAME: usize = 64;

/// Whether providers accept `name` as a tool name.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The name a tool is exposed by: `wanted` itself when it is valid, else
/// its mapping (see the module doc).
pub fn exposed_name(wanted: &str) -> String {
    if is_valid_name(wanted) {
        return wanted.to_owned();
    }
    let mut mapped: String = wanted
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME - 9)
        .collect();
    mapped.push_str(&format!("_{:08x}", fnv1a(wanted.as_bytes())));
    mapped
}

/// The names rules may use for tool `tool` of server `server`, lower-case.
pub fn rule_aliases(server: &str, tool: &str) -> Vec<String> {
    let server = server.to_ascii_lowercase();
    vec![
        format!("mcp__{server}__{}", tool.to_ascii_lowercase()),
        format!("mcp__{server}"),
        format!("mcp__{server}__*"),
    ]
}

/// FNV-1a, 32 bits: stable across builds and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in bytes {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_names_are_kept() {
        assert_eq!(exposed_name("read_file"), "read_file");
        assert_eq!(exposed_name("files__read-file"), "files__read-file");
        let longest = "a".repeat(64);
        assert_eq!(exposed_name(&longest), longest);
    }

    #[test]
    fn invalid_names_are_mapped_apart_and_stay_valid() {
        let dotted = exposed_name("files__read.file");
        let coloned = exposed_name("files__read:file");
        assert!(dotted.starts_with("files__read_file_"), "{dotted}");
        assert_ne!(dotted, coloned);
        let long = exposed_name(&"x".repeat(100));
        assert_eq!(long.len(), 64);
        for name in [
            dotted,
            coloned,
            long,
            exposed_name(""),
            exposed_name("ünï cödé"),
        ] {
            assert!(is_valid_name(&name), "{name}");
        }
        // Stable: the same input maps the same way in every build.
        assert_eq!(exposed_name("a.b"), "a_b_108bf50c");
    }

    #[test]
    fn aliases_follow_claude_code() {
        assert_eq!(
            rule_aliases("GitHub", "Create_Issue"),
            ["mcp__github__create_issue", "mcp__github", "mcp__github__*"]
        );
    }
}
