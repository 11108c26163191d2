//! Built-in profiles: what the arguments of widely run MCP servers' tools
//! mean, so a call through the proxy is judged by what it does (a shell
//! line, a path written) instead of by the tool's name alone.
//!
//! Each profile was read from one released version of its server (the
//! captured tool lists are `tests/fixtures/profiles/`). The rule is to list
//! only what is positively known:
//!
//! * An argument with no effect the policy guards is [`Data`].
//! * An argument whose effect the policy cannot judge (a URL fetched, the
//!   shell binary chosen, options handed to a browser) is left out: a call
//!   carrying it has an argument without a meaning, so it asks.
//! * A tool whose every use is unjudgeable (setting the server's own
//!   config, killing a process by id) is left out of the profile: it is
//!   judged by its name.
//!
//! A profile applies to a server when every one of its signature tools is
//! listed and takes at least the arguments the profile gives it, so a
//! different server that happens to reuse a tool name is not matched.

use dsh_tools::ArgumentMeaning::{
    self, Argv, Data, Input, Operand, Read, Shell, Tree, Workdir, Write,
};
use dsh_tools::ArgumentMeanings;
use serde_json::{json, Map, Value};

/// What one server's tools do with their arguments.
#[derive(Debug)]
pub struct Profile {
    /// The profile's name: `filesystem`, `git`, …
    pub name: &'static str,
    /// One line: which server, which version the meanings were read from.
    pub about: &'static str,
    /// Tool names that must all be listed for the profile to apply.
    pub signature: &'static [&'static str],
    /// The tools the profile knows; a tool not here is judged by name.
    pub tools: &'static [ProfileTool],
}

/// One tool of a profile and the meanings of its arguments. An argument
/// not listed has no meaning: a call that carries it asks.
#[derive(Debug)]
pub struct ProfileTool {
    /// The tool's name as the server lists it.
    pub name: &'static str,
    /// Argument names (top-level properties) and what they mean.
    pub arguments: &'static [(&'static str, ArgumentMeaning)],
}

/// Every built-in profile, in the order [`matching`] tries them.
pub const PROFILES: &[Profile] = &[
    FILESYSTEM,
    DESKTOP_COMMANDER,
    MCP_SHELL_SERVER,
    CLI_MCP_SERVER,
    GIT,
];

const fn tool(
    name: &'static str,
    arguments: &'static [(&'static str, ArgumentMeaning)],
) -> ProfileTool {
    ProfileTool { name, arguments }
}

// Sandboxed to its allowed directories by the server itself; no process, no
// network. `edit_file` with `dryRun` writes nothing, but the path is still
// judged as written: the flag is the model's to set.
const FILESYSTEM: Profile = Profile {
    name: "filesystem",
    about: "@modelcontextprotocol/server-filesystem (npm), meanings read from 2026.8.31",
    signature: &["read_text_file", "list_allowed_directories"],
    tools: &[
        tool(
            "read_file",
            &[("path", Read), ("head", Data), ("tail", Data)],
        ),
        tool(
            "read_text_file",
            &[("path", Read), ("head", Data), ("tail", Data)],
        ),
        tool("read_media_file", &[("path", Read)]),
        tool("read_multiple_files", &[("paths", Read)]),
        tool("write_file", &[("path", Write), ("content", Data)]),
        tool(
            "edit_file",
            &[("path", Write), ("edits", Data), ("dryRun", Data)],
        ),
        tool("create_directory", &[("path", Write)]),
        tool("list_directory", &[("path", Read)]),
        tool(
            "list_directory_with_sizes",
            &[("path", Read), ("sortBy", Data)],
        ),
        tool(
            "directory_tree",
            &[("path", Read), ("excludePatterns", Data)],
        ),
        // A move removes the source: both ends are written.
        tool("move_file", &[("source", Write), ("destination", Write)]),
        tool(
            "search_files",
            &[("path", Read), ("pattern", Data), ("excludePatterns", Data)],
        ),
        tool("get_file_info", &[("path", Read)]),
        tool("list_allowed_directories", &[]),
    ],
};

// `origin` ("ui"/"llm") only changes the reply's shape and whether the
// call is counted in the server's telemetry.
//
// Left out, with the reason:
// * set_config_value: rewrites the server's own rules (allowed directories,
//   blocked commands, default shell).
// * kill_process: signals any pid of the host.
// * force_terminate: kills one of the server's sessions by pid; which one
//   is not judgeable.
// * give_feedback_to_desktop_commander: runs `xdg-open`/`open` on a URL.
// * read_file `isUrl`: fetches the path as a URL; `options`: unused today.
// * write_pdf `content`, edit_block `content`: markdown rendered by a
//   headless Chrome, which loads any image or link it names.
// * write_pdf `options`: handed to md-to-pdf as is, Chrome's launch
//   options (arguments, executable) included.
// * edit_block `options`: its `outputPath` is written without the server's
//   directory check.
// * start_process `shell`: the binary the command runs in.
const DESKTOP_COMMANDER: Profile = Profile {
    name: "desktop-commander",
    about: "@wonderwhy-er/desktop-commander (npm), meanings read from 0.2.52",
    signature: &["start_process", "interact_with_process", "edit_block"],
    tools: &[
        tool("get_config", &[("origin", Data)]),
        tool(
            "read_file",
            &[
                ("path", Read),
                ("offset", Data),
                ("length", Data),
                ("sheet", Data),
                ("range", Data),
                ("origin", Data),
            ],
        ),
        tool("read_multiple_files", &[("paths", Read)]),
        tool(
            "write_file",
            &[
                ("path", Write),
                ("content", Data),
                ("mode", Data),
                ("origin", Data),
            ],
        ),
        // Without `outputPath` the PDF at `path` is rewritten.
        tool("write_pdf", &[("path", Write), ("outputPath", Write)]),
        tool("create_directory", &[("path", Write)]),
        tool(
            "list_directory",
            &[("path", Read), ("depth", Data), ("origin", Data)],
        ),
        tool("move_file", &[("source", Write), ("destination", Write)]),
        // ripgrep: every pattern goes after a flag or `--`, never as an option.
        // A content search reads every file below its path.
        tool(
            "start_search",
            &[
                ("path", Tree),
                ("pattern", Data),
                ("searchType", Data),
                ("filePattern", Data),
                ("ignoreCase", Data),
                ("maxResults", Data),
                ("includeHidden", Data),
                ("contextLines", Data),
                ("timeout_ms", Data),
                ("earlyTermination", Data),
                ("literalSearch", Data),
                ("origin", Data),
            ],
        ),
        tool(
            "get_more_search_results",
            &[("sessionId", Data), ("offset", Data), ("length", Data)],
        ),
        tool("stop_search", &[("sessionId", Data)]),
        tool("list_searches", &[]),
        tool("get_file_info", &[("path", Read)]),
        tool(
            "edit_block",
            &[
                ("file_path", Write),
                ("old_string", Data),
                ("new_string", Data),
                ("expected_replacements", Data),
                ("range", Data),
                ("origin", Data),
            ],
        ),
        // Run as `SHELL -l -c command` (bash and zsh as login shells). The
        // command `node:local` opens a session whose input is Node.js code.
        tool(
            "start_process",
            &[
                ("command", Shell),
                ("timeout_ms", Data),
                ("verbose_timing", Data),
                ("origin", Data),
            ],
        ),
        tool(
            "read_process_output",
            &[
                ("pid", Data),
                ("timeout_ms", Data),
                ("offset", Data),
                ("length", Data),
                ("verbose_timing", Data),
            ],
        ),
        tool(
            "interact_with_process",
            &[
                ("pid", Data),
                ("input", Input),
                ("timeout_ms", Data),
                ("wait_for_prompt", Data),
                ("verbose_timing", Data),
            ],
        ),
        tool("list_sessions", &[]),
        tool("list_processes", &[]),
        tool("get_usage_stats", &[]),
        tool(
            "get_recent_tool_calls",
            &[("maxResults", Data), ("toolName", Data), ("since", Data)],
        ),
        // Bundled prompt texts, read from the package.
        tool("get_prompts", &[("action", Data), ("promptId", Data)]),
    ],
};

// argv through `create_subprocess_exec`, but the server itself honours a
// discrete `|` element and `<`, `>`, `>>` redirections: the strict Argv
// reading covers both. `stdin` is fed to the command, which may be an
// interpreter; what reads it is not known, as with typed input. Without
// `directory` the command runs in the server's own working directory.
const MCP_SHELL_SERVER: Profile = Profile {
    name: "mcp-shell-server",
    about: "mcp-shell-server by tumf (PyPI), meanings read from 1.1.14",
    signature: &["shell_execute"],
    tools: &[tool(
        "shell_execute",
        &[
            ("command", Argv),
            ("stdin", Input),
            ("directory", Workdir),
            ("timeout", Data),
        ],
    )],
};

// With ALLOW_SHELL_OPERATORS the whole string goes to `shell=True` once any
// of its listed operators appears; the server's own per-part check misses
// `&`, `$(…)` and backquotes. Runs in the server's ALLOWED_DIR.
const CLI_MCP_SERVER: Profile = Profile {
    name: "cli-mcp-server",
    about: "cli-mcp-server by MladenSU (PyPI), meanings read from 0.2.5",
    signature: &["run_command", "show_security_rules"],
    tools: &[
        tool("run_command", &[("command", Shell)]),
        tool("show_security_rules", &[]),
    ],
};

// GitPython over the git CLI. The repository is read by the read-only
// tools and written by the others (a commit runs the repository's hooks).
// Revisions and branch names are operands; `files` of git_add go after
// `--` and are kept inside the work tree by the server, and judged as
// operands like the rest. Timestamps become `--since=`/`--until=` values.
const GIT: Profile = Profile {
    name: "git",
    about: "mcp-server-git (PyPI), meanings read from 2026.10.10",
    signature: &["git_status", "git_diff_unstaged"],
    tools: &[
        tool("git_status", &[("repo_path", Read)]),
        tool(
            "git_diff_unstaged",
            &[("repo_path", Read), ("context_lines", Data)],
        ),
        tool(
            "git_diff_staged",
            &[("repo_path", Read), ("context_lines", Data)],
        ),
        tool(
            "git_diff",
            &[
                ("repo_path", Read),
                ("target", Operand),
                ("context_lines", Data),
            ],
        ),
        tool("git_commit", &[("repo_path", Write), ("message", Data)]),
        tool("git_add", &[("repo_path", Write), ("files", Operand)]),
        tool("git_reset", &[("repo_path", Write)]),
        tool(
            "git_log",
            &[
                ("repo_path", Read),
                ("max_count", Data),
                ("start_timestamp", Data),
                ("end_timestamp", Data),
            ],
        ),
        tool(
            "git_create_branch",
            &[
                ("repo_path", Write),
                ("branch_name", Operand),
                ("base_branch", Operand),
            ],
        ),
        tool(
            "git_checkout",
            &[("repo_path", Write), ("branch_name", Operand)],
        ),
        tool("git_show", &[("repo_path", Read), ("revision", Operand)]),
        tool(
            "git_branch",
            &[
                ("repo_path", Read),
                ("branch_type", Data),
                ("contains", Operand),
                ("not_contains", Operand),
            ],
        ),
    ],
};

/// The built-in profile called `name`.
pub fn profile_named(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The profile whose signature tools are all among `tools` (name,
/// inputSchema), first in [`PROFILES`] order. A signature tool must also
/// take every argument the profile gives it.
pub fn matching(tools: &[(&str, &Value)]) -> Option<&'static Profile> {
    PROFILES.iter().find(|profile| {
        profile.signature.iter().all(|wanted| {
            let Some((_, schema)) = tools.iter().find(|(name, _)| name == wanted) else {
                return false;
            };
            let properties = schema.get("properties").and_then(Value::as_object);
            profile.tool(wanted).is_none_or(|known| {
                known
                    .arguments
                    .iter()
                    .all(|(arg, _)| properties.is_some_and(|p| p.contains_key(*arg)))
            })
        })
    })
}

impl Profile {
    fn tool(&self, name: &str) -> Option<&'static ProfileTool> {
        // Profiles are constants: their tools live for the program.
        let tools: &'static [ProfileTool] = self.tools;
        tools.iter().find(|t| t.name == name)
    }

    /// The meanings for one tool of the server (None: the profile does not
    /// know the tool). `from` is `profile NAME`.
    pub fn meanings(&self, tool: &str) -> Option<ArgumentMeanings> {
        self.tool(tool).map(|t| ArgumentMeanings {
            arguments: t
                .arguments
                .iter()
                .map(|(a, m)| ((*a).to_string(), *m))
                .collect(),
            from: format!("profile {}", self.name),
            // The proxy sets the server's own working directory.
            base: None,
        })
    }
}

/// Every profile as JSON, for `dsh settings`:
/// `[{"name","about","signature":[…],"tools":{"tool":{"arg":"shell",…}}}]`.
pub fn describe() -> Value {
    let profiles = PROFILES
        .iter()
        .map(|p| {
            let tools: Map<String, Value> = p
                .tools
                .iter()
                .map(|t| {
                    let args: Map<String, Value> = t
                        .arguments
                        .iter()
                        .map(|(a, m)| ((*a).to_string(), Value::from(m.as_str())))
                        .collect();
                    (t.name.to_string(), Value::Object(args))
                })
                .collect();
            json!({"name": p.name, "about": p.about, "signature": p.signature, "tools": tools})
        })
        .collect();
    Value::Array(profiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURES: &[(&str, &str)] = &[
        (
            "filesystem",
            include_str!("../../tests/fixtures/profiles/filesystem.json"),
        ),
        (
            "desktop-commander",
            include_str!("../../tests/fixtures/profiles/desktop-commander.json"),
        ),
        (
            "mcp-shell-server",
            include_str!("../../tests/fixtures/profiles/mcp-shell-server.json"),
        ),
        (
            "cli-mcp-server",
            include_str!("../../tests/fixtures/profiles/cli-mcp-server.json"),
        ),
        (
            "git",
            include_str!("../../tests/fixtures/profiles/git.json"),
        ),
    ];

    fn fixture(text: &str) -> Vec<(String, Value)> {
        let tools: Vec<Value> = serde_json::from_str(text).expect("fixture is JSON");
        tools
            .into_iter()
            .map(|t| {
                (
                    t["name"].as_str().expect("name").to_string(),
                    t["inputSchema"].clone(),
                )
            })
            .collect()
    }

    fn matched(tools: &[(String, Value)]) -> Option<&'static str> {
        let refs: Vec<(&str, &Value)> = tools.iter().map(|(n, s)| (n.as_str(), s)).collect();
        matching(&refs).map(|p| p.name)
    }

    #[test]
    fn each_fixture_matches_its_own_profile_and_no_other() {
        assert_eq!(FIXTURES.len(), PROFILES.len());
        for (name, text) in FIXTURES {
            let tools = fixture(text);
            assert_eq!(matched(&tools), Some(*name));
            // Not only the first in order: no other profile's signature fits.
            let refs: Vec<(&str, &Value)> = tools.iter().map(|(n, s)| (n.as_str(), s)).collect();
            for other in PROFILES.iter().filter(|p| p.name != *name) {
                let fits = other
                    .signature
                    .iter()
                    .all(|s| refs.iter().any(|(n, _)| n == s));
                assert!(!fits, "{name} also fits {}", other.name);
            }
        }
    }

    #[test]
    fn every_listed_argument_and_tool_exists_in_the_fixture() {
        for (name, text) in FIXTURES {
            let tools = fixture(text);
            let profile = profile_named(name).expect("profile");
            for t in profile.tools {
                let (_, schema) = tools
                    .iter()
                    .find(|(n, _)| n == t.name)
                    .unwrap_or_else(|| panic!("{name}: no tool {}", t.name));
                for (arg, _) in t.arguments {
                    assert!(
                        schema["properties"].get(*arg).is_some(),
                        "{name}: {} has no argument {arg}",
                        t.name
                    );
                }
            }
            for s in profile.signature {
                assert!(
                    tools.iter().any(|(n, _)| n == s),
                    "{name}: signature {s} not listed"
                );
            }
        }
    }

    #[test]
    fn a_fixture_without_one_signature_tool_matches_nothing() {
        for (name, text) in FIXTURES {
            let profile = profile_named(name).expect("profile");
            for missing in profile.signature {
                let tools: Vec<_> = fixture(text)
                    .into_iter()
                    .filter(|(n, _)| n != missing)
                    .collect();
                assert_eq!(matched(&tools), None, "{name} without {missing}");
            }
        }
    }

    #[test]
    fn a_signature_tool_without_a_known_argument_matches_nothing() {
        let mut tools = fixture(FIXTURES[2].1);
        tools[0].1["properties"]
            .as_object_mut()
            .expect("properties")
            .remove("directory");
        assert_eq!(matched(&tools), None);
    }

    #[test]
    fn unjudgeable_tools_and_arguments_are_left_out() {
        let dc = profile_named("desktop-commander").expect("profile");
        for gone in [
            "set_config_value",
            "kill_process",
            "force_terminate",
            "give_feedback_to_desktop_commander",
        ] {
            assert!(dc.meanings(gone).is_none(), "{gone}");
        }
        assert_eq!(
            dc.meanings("read_file").expect("read_file").get("isUrl"),
            None
        );
        assert_eq!(
            dc.meanings("start_process")
                .expect("start_process")
                .get("shell"),
            None
        );
        let start = dc.meanings("start_process").expect("start_process");
        assert_eq!(start.get("command"), Some(Shell));
        assert_eq!(start.from, "profile desktop-commander");
        let git = profile_named("git").expect("git");
        assert_eq!(
            git.meanings("git_diff").expect("diff").get("target"),
            Some(Operand)
        );
        assert_eq!(
            git.meanings("git_commit").expect("commit").get("repo_path"),
            Some(Write)
        );
        assert_eq!(
            git.meanings("git_status").expect("status").get("repo_path"),
            Some(Read)
        );
        assert!(git.meanings("git_push").is_none());
    }

    #[test]
    fn describe_lists_every_profile() {
        let all = describe();
        let names: Vec<&str> = all
            .as_array()
            .expect("array")
            .iter()
            .map(|p| p["name"].as_str().expect("name"))
            .collect();
        assert_eq!(
            names,
            [
                "filesystem",
                "desktop-commander",
                "mcp-shell-server",
                "cli-mcp-server",
                "git"
            ]
        );
        assert_eq!(all[2]["tools"]["shell_execute"]["command"], "argv");
        assert_eq!(all[4]["signature"][0], "git_status");
    }
}
