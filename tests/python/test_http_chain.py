"""`dsh mcp` as a proxy in front of `dsh mcp --http`: the MCP Python SDK
drives a front `dsh mcp --mcp-config FILE --no-builtin` on stdio whose
`.mcp.json` names the back server by URL, with its bearer token expanded
from `${BACK_TOKEN}`. In each revision the SDK's client speaks to the
front: the back's tools are listed as `back__bash`…; a call runs in the
back server; a deny rule of the front (`mcp__back__bash`) refuses the call
before it reaches the back (the file the back would make is not made); the
back's own rules still hold behind the front (its deny, and its ask, which
nobody behind the front can answer); a cancelled call kills the command in
the back; the back's progress reaches the client.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from http_support import TOKENS, HttpServer, http_server
from mcp import ClientSession, StdioServerParameters, stdio_client
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S, Spawned, connect, descendants, gone_within, one_error, text

GENERATIONS = ["2025-11-25", "2026-07-28"]

# The back: what it allows, denies, and (anything else) asks about.
BACK_SETTINGS = {
    "permissions": {
        "allow": ["Bash(echo:*)", "Bash(sleep:*)", "Bash(touch:*)"],
        "deny": ["Bash(rm:*)"],
    }
}
# The front lets every tool of the back through, or every one but `bash`.
FRONT_ALLOWS = {"permissions": {"allow": ["mcp__back"]}}
FRONT_DENIES = {"permissions": {"allow": ["mcp__back"], "deny": ["mcp__back__bash"]}}


@asynccontextmanager
async def front(
    dsh_bin: str, spawned: Spawned, folder: Path, back: HttpServer, settings: dict[str, Any], generation: str, **callbacks: Any
) -> AsyncIterator[ClientSession]:
    """A front `dsh mcp` on stdio for `back`, and the SDK's session with it;
    on leaving, the front has exited."""
    folder.mkdir()
    (folder / "settings.json").write_text(json.dumps(settings))
    (folder / ".mcp.json").write_text(json.dumps({
        "mcpServers": {
            "back": {
                "type": "http",
                "url": back.url,
                "headers": {"Authorization": "Bearer ${BACK_TOKEN}"},
            }
        }
    }))
    params = StdioServerParameters(
        env={"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config", "BACK_TOKEN": TOKENS["alice"]},
        command=dsh_bin,
        args=[
            "mcp", "--settings", str(folder / "settings.json"), "--settings-only",
            "--mcp-config", str(folder / ".mcp.json"), "--no-builtin", "--cwd", str(folder),
        ],
    )
    errlog_path = folder / "stderr.txt"
    try:
        with one_error(), errlog_path.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                pid = spawned.process.pid
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S, **callbacks) as session:
                    with anyio.fail_after(REQUEST_TIMEOUT_S):
                        await connect(session, generation)
                    yield session
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "the front dsh mcp still running"
    finally:
        print(errlog_path.read_text() if errlog_path.exists() else "")


def code_of(result: Any) -> str | None:
    return ((result.meta or {}).get("dsh/error") or {}).get("code")


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_a_front_dsh_over_a_back_dsh_over_http(
    generation: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    with http_server(dsh_bin, tmp_path / "back", BACK_SETTINGS) as back:
        (back.work / "keep").write_text("kept")
        async with front(dsh_bin, spawned, tmp_path / "front", back, FRONT_ALLOWS, generation) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                names = [t.name for t in (await session.list_tools()).tools]
                assert names[:4] == ["back__bash", "back__bash_output", "back__bash_write", "back__bash_kill"], names
                assert "bash" not in names, names

                # Runs in the back: its working directory, its rules.
                made = await session.call_tool("back__bash", {"command": "touch made && echo in-the-back"})
                assert not made.is_error, text(made)
                assert text(made) == "in-the-back\n[exit code: 0]", text(made)
                assert (back.work / "made").is_file()
                assert not (tmp_path / "front" / "made").exists()

                # The back's deny holds behind the front.
                removed = await session.call_tool("back__bash", {"command": "rm keep"})
                assert removed.is_error and "denied by rule deny Bash(rm:*)" in text(removed), text(removed)
                assert (back.work / "keep").read_text() == "kept"

                # The back's ask holds too: the front's connection to it
                # cannot show a form, so nobody allows it.
                asked = await session.call_tool("back__bash", {"command": "mkdir asked"})
                assert asked.is_error, text(asked)
                assert "no approver is available" in text(asked) and "mkdir asked" in text(asked), text(asked)
                assert not (back.work / "asked").exists()

    with http_server(dsh_bin, tmp_path / "back2", BACK_SETTINGS) as back:
        async with front(dsh_bin, spawned, tmp_path / "front2", back, FRONT_DENIES, generation) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                # The front's deny: refused before the back sees it (which
                # would have made the file: its own rules allow `touch`).
                denied = await session.call_tool("back__bash", {"command": "touch denied"})
                assert denied.is_error, text(denied)
                assert code_of(denied) == "PERMISSION_DENIED", (denied.meta, text(denied))
                assert "mcp__back__bash" in text(denied), text(denied)
                assert not (back.work / "denied").exists()
                # Other tools of the back still pass.
                output = await session.call_tool("back__bash_output", {"task_id": "bash-999"})
                assert code_of(output) != "PERMISSION_DENIED", (output.meta, text(output))


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_through_the_front_a_cancel_kills_the_back_command_and_progress_comes_back(
    generation: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with http_server(dsh_bin, tmp_path / "back", BACK_SETTINGS) as back:
        async with front(dsh_bin, spawned, tmp_path / "front", back, FRONT_ALLOWS, generation) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                outcome: list[Any] = []
                async with anyio.create_task_group() as tg:
                    scope = anyio.CancelScope()

                    async def call() -> None:
                        with scope:
                            outcome.append(await session.call_tool("back__bash", {"command": "sleep 64"}))

                    tg.start_soon(call)
                    pid, started = await anyio.to_thread.run_sync(back.find, "sleep 64", REQUEST_TIMEOUT_S)
                    scope.cancel()
                assert outcome == [], outcome
                assert await gone_within(pid, started, EXIT_DEADLINE_S), (
                    f"sleep 64 (pid {pid}) in the back outlived its cancelled call: "
                    f"{[p for p, _ in descendants(back.pid)]}"
                )

                slept = await session.call_tool(
                    "back__bash", {"command": "sleep 2.5 && echo slept"}, progress_callback=on_progress
                )
                assert text(slept) == "slept\n[exit code: 0]", text(slept)
                assert progress, "no progress from the back reached the client during a 2.5 s call"
                values = [value for value, _, _ in progress]
                assert values == sorted(values), progress
