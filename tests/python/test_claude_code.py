"""The real Claude Code CLI (print mode, `claude -p`) driving `dsh mcp`, and
running `dsh hook pre-tool-use` as its `PreToolUse` hook, against a model
stand-in on loopback (model_standin.py). dsh is connected with the README's
own command (`claude mcp add dsh -- dsh mcp`), Claude Code is told to let
our tools through with the README's user-settings rule, and dsh's policy
comes from the project's `.claude/settings.json`, as a user sets it up.

Claude Code's tool search is turned off (`ENABLE_TOOL_SEARCH=false`) so the
stand-in sees our tools in the first request instead of a search tool.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from agent_clis import (
    Run,
    base_env,
    cli,
    none_left_in,
    readme_block,
    readme_inline,
    run,
    write_settings,
)
from model_standin import CLOSING_ANSWER, Script, ToolResult, model_standin

DENY_RM = {"permissions": {"deny": ["Bash(rm:*)"]}}


def claude_env(home: Path, dsh_bin: str, base_url: str) -> dict[str, str]:
    return {
        **base_env(home, dsh_bin),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-stand-in",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "ENABLE_TOOL_SEARCH": "false",
    }


def user_settings(home: Path) -> None:
    """The README's rule that lets Claude Code pass our tools' calls to dsh."""
    rule = readme_inline("Claude Code asks before every call of an MCP tool")
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": [rule]}}))


def claude(
    tmp_path: Path,
    dsh_bin: str,
    script: Script,
    settings: dict,
    prepare=None,
    connect_dsh: bool = True,
    flags: tuple[str, ...] = (),
) -> tuple[ToolResult, Run, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    write_settings(project, settings)
    if prepare:
        prepare(project)
    with model_standin(script) as base_url:
        env = claude_env(home, dsh_bin, base_url)
        if connect_dsh:
            user_settings(home)
            add = shlex.split(readme_inline("- **Claude Code**"))
            assert add[0] == "claude", add
            added = run([cli("claude"), *add[1:]], project, env)
            assert added.returncode == 0, added.describe()
        done = run(
            [cli("claude"), "-p", "Do what the task needs.", "--output-format", "json", *flags],
            project,
            env,
        )
    none_left_in(tmp_path)
    assert done.returncode == 0, done.describe()
    assert json.loads(done.stdout)["result"] == CLOSING_ANSWER, done.describe()
    return script.result(), done, project


def test_an_allowed_call_runs_through_dsh(tmp_path: Path, dsh_bin: str) -> None:
    script = Script("mcp__dsh__bash", {"command": "echo hello-from-dsh"})
    result, _, _ = claude(tmp_path, dsh_bin, script, DENY_RM)
    assert not result.is_error, result
    assert "hello-from-dsh\n[exit code: 0]" in result.text, result


def test_a_denied_call_names_the_rule_and_runs_nothing(tmp_path: Path, dsh_bin: str) -> None:
    script = Script("mcp__dsh__bash", {"command": "echo start && rm victim.txt"})
    result, _, project = claude(
        tmp_path, dsh_bin, script, DENY_RM, prepare=lambda p: (p / "victim.txt").write_text("x")
    )
    assert result.is_error, result
    assert 'permission denied by rule deny Bash(rm:*) for "rm victim.txt"' in result.text, result
    assert (project / "victim.txt").exists()


def test_a_headless_ask_tells_the_model_which_rule_would_allow_it(
    tmp_path: Path, dsh_bin: str
) -> None:
    # Print mode answers our approval form with `cancel` by itself.
    script = Script("mcp__dsh__bash", {"command": "touch created.txt"})
    result, _, project = claude(tmp_path, dsh_bin, script, DENY_RM)
    assert result.is_error, result
    assert "not approved: the client answered `cancel` without choosing" in result.text, result
    assert 'add "Bash(touch created.txt)" to permissions.allow' in result.text, result
    assert not (project / "created.txt").exists()


def secret(project: Path) -> None:
    (project / ".env").write_text("SECRET=stand-in-secret\n")


@pytest.mark.parametrize("with_hook", [False, True], ids=["claude-code-alone", "dsh-hook"])
def test_the_hook_decides_claude_codes_own_bash(
    with_hook: bool, tmp_path: Path, dsh_bin: str
) -> None:
    # Claude Code's own Bash tool, allowed wholesale by `--allowedTools Bash`;
    # a Read deny rule protects `.env`. Claude Code alone reads it through
    # `grep -r`; with the README's hook, our analysis sees the file the
    # recursive read reaches and denies it.
    settings = {"permissions": {"deny": ["Read(./.env)"]}}
    if with_hook:
        settings.update(json.loads(readme_block("**Our policy inside Claude Code.**", "json")))
    script = Script("Bash", {"command": "grep -r SECRET .", "description": "Find the secret"})
    result, _, _ = claude(
        tmp_path,
        dsh_bin,
        script,
        settings,
        prepare=secret,
        connect_dsh=False,
        flags=("--allowedTools", "Bash"),
    )
    if not with_hook:
        assert "SECRET=stand-in-secret" in result.text, result
        return
    assert result.is_error, result
    assert "stand-in-secret" not in result.text, result
    assert '"grep -r SECRET .", which reads every file under' in result.text, result
    assert "denied by rule deny Read(./.env)" in result.text, result
