"""The real Codex CLI (`codex exec`) driving `dsh mcp`, against a model
stand-in on loopback (model_standin.py) that Codex reaches through a
`model_providers` entry. dsh is configured with the README's Codex snippet,
copied as it stands; dsh's policy comes from the project's
`.claude/settings.json` (Codex starts its MCP servers in the project).
Codex offers an MCP server's tools to the model inside a namespace
(`mcp__dsh`), so the stand-in calls `bash` in it.
"""

from __future__ import annotations

from pathlib import Path

from agent_clis import Run, base_env, cli, none_left_in, readme_block, run, write_settings
from model_standin import CLOSING_ANSWER, Script, ToolResult, model_standin

DENY_RM = {"permissions": {"deny": ["Bash(rm:*)"]}}
APPROVE_LINE = 'default_tools_approval_mode = "approve"'


def readme_snippet() -> str:
    snippet = readme_block("- **Codex**", "toml")
    assert snippet.startswith("[mcp_servers.dsh]"), snippet
    assert APPROVE_LINE in snippet, snippet
    return snippet


def config(base_url: str, snippet: str) -> str:
    provider = f"""model = "gpt-5"
model_provider = "stand-in"

[model_providers.stand-in]
name = "stand-in"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "STAND_IN_API_KEY"

"""
    return provider + snippet


def codex(
    tmp_path: Path, dsh_bin: str, script: Script, settings: dict, snippet: str | None = None, prepare=None
) -> tuple[ToolResult, Run, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    write_settings(project, settings)
    if prepare:
        prepare(project)
    with model_standin(script) as base_url:
        (home / "config.toml").write_text(config(base_url, snippet or readme_snippet()))
        env = {**base_env(home, dsh_bin), "CODEX_HOME": str(home), "STAND_IN_API_KEY": "sk-stand-in"}
        done = run(
            [cli("codex"), "exec", "--skip-git-repo-check", "--json", "-C", str(project), "Do what the task needs."],
            project,
            env,
        )
    none_left_in(tmp_path)
    assert done.returncode == 0, done.describe()
    assert CLOSING_ANSWER in done.stdout, done.describe()
    return script.result(), done, project


def test_an_allowed_call_runs_through_dsh(tmp_path: Path, dsh_bin: str) -> None:
    script = Script("mcp__dsh__bash", {"command": "echo hello-from-dsh"})
    result, done, _ = codex(tmp_path, dsh_bin, script, DENY_RM)
    assert "hello-from-dsh\n[exit code: 0]" in result.text, result
    assert '"type":"mcp_tool_call","server":"dsh","tool":"bash"' in done.stdout, done.describe()


def test_a_denied_call_names_the_rule_and_runs_nothing(tmp_path: Path, dsh_bin: str) -> None:
    script = Script("mcp__dsh__bash", {"command": "echo start && rm victim.txt"})
    result, _, project = codex(
        tmp_path, dsh_bin, script, DENY_RM, prepare=lambda p: (p / "victim.txt").write_text("x")
    )
    assert 'Error: permission denied by rule deny Bash(rm:*) for "rm victim.txt"' in result.text, result
    assert (project / "victim.txt").exists()


def test_a_headless_ask_tells_the_model_which_rule_would_allow_it(
    tmp_path: Path, dsh_bin: str
) -> None:
    # `codex exec` answers our approval form with `decline` by itself.
    script = Script("mcp__dsh__bash", {"command": "touch created.txt"})
    result, _, project = codex(tmp_path, dsh_bin, script, DENY_RM)
    assert "not approved: the client answered `decline` without choosing" in result.text, result
    assert 'add "Bash(touch created.txt)" to permissions.allow' in result.text, result
    assert not (project / "created.txt").exists()


def test_without_the_snippets_approval_line_codex_refuses_before_dsh(
    tmp_path: Path, dsh_bin: str
) -> None:
    # Why the README's snippet carries the line: our bash is marked
    # destructive, and `codex exec` refuses such a call itself.
    snippet = readme_snippet().replace(APPROVE_LINE, "")
    script = Script("mcp__dsh__bash", {"command": "echo hello-from-dsh"})
    result, _, _ = codex(tmp_path, dsh_bin, script, DENY_RM, snippet=snippet)
    assert "hello-from-dsh" not in result.text, result
    assert "requires approval" in result.text, result
