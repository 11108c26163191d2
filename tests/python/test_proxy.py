"""`dsh mcp` as a proxy, between two programs built on the official MCP
Python SDK: the SDK's client drives `dsh mcp`, which fronts `py_upstream.py`
(an `MCPServer` on stdio). In each protocol generation the client speaks:
the upstream's tools are listed and called through dsh's rules, invalid
arguments are stopped before the upstream sees them, structured output
passes through, the upstream's read-only claim does not get a write
through plan mode, and the upstream is gone when the session ends.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from support import (
    EXIT_DEADLINE_S,
    REQUEST_TIMEOUT_S,
    Spawned,
    connect,
    descendants,
    gone_within,
    one_error,
    text,
)

UPSTREAM = Path(__file__).with_name("py_upstream.py")

# In plan mode only what the settings trust as read-only runs; an allow rule
# does not make `write_note` read-only, nor does its own claim.
SETTINGS = {
    "permissions": {"allow": ["mcp__py__write_note"]},
    "mcp": {"readOnlyTools": ["mcp__py__add", "calls"]},
}


@pytest.mark.anyio
@pytest.mark.parametrize("generation", ["2025-11-25", "2026-07-28"])
async def test_the_python_sdk_through_dsh_to_a_python_sdk_server(
    generation: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    note = tmp_path / "note.txt"
    params = StdioServerParameters(
        # Never the real home: no user settings.
        env={"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config"},
        command=dsh_bin,
        args=[
            "mcp",
            "--settings",
            str(settings),
            "--mode",
            "plan",
            "--cwd",
            str(tmp_path),
            "--no-builtin",
            "--name",
            "py",
            "--",
            sys.executable,
            str(UPSTREAM),
        ],
    )
    try:
        with one_error(), anyio.fail_after(120), (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                pid = spawned.process.pid
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S) as session:
                    await connect(session, generation)
                    tools = {t.name: t for t in (await session.list_tools()).tools}
                    assert sorted(tools) == ["add", "calls", "write_note"], tools
                    # The upstream's claim is shown, not trusted.
                    assert tools["write_note"].annotations is not None
                    assert tools["write_note"].annotations.read_only_hint is True

                    upstreams = [p for p, _ in descendants(pid)]
                    assert upstreams, "no upstream process under dsh mcp"

                    added = await session.call_tool("add", {"a": 2, "b": 3})
                    assert not added.is_error, added
                    assert added.structured_content == {"result": 5}, added
                    assert text(added) == "5"

                    wrong = await session.call_tool("add", {"a": "two", "b": 3})
                    assert wrong.is_error
                    assert text(wrong) == 'Error: invalid arguments: "a" must be an integer', text(wrong)

                    # Plan mode: allowed by a rule, claimed read-only, still refused.
                    refused = await session.call_tool("write_note", {"path": str(note), "text": "x"})
                    assert refused.is_error
                    assert "plan mode" in text(refused), text(refused)
                    assert not note.exists()

                    # Only the valid `add` reached the upstream.
                    counted = await session.call_tool("calls", {})
                    assert text(counted) == "1", text(counted)
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "dsh mcp still running"
            for upstream in upstreams:
                assert await gone_within(upstream, None, EXIT_DEADLINE_S), f"upstream {upstream} survived"
    finally:
        print((tmp_path / "stderr.txt").read_text() if (tmp_path / "stderr.txt").exists() else "")

