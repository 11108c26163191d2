"""`dsh mcp` driven by the official MCP Python SDK (`mcp` on PyPI), as a
Python MCP client would run it: a child process on stdio, through
`mcp.client.stdio.stdio_client` and `mcp.ClientSession`.

The binary under test is named by the environment variable `DSH_BIN`
(`.ci/run` passes `target/debug/dsh`).

One session per protocol generation the SDK speaks:

* the `initialize` handshake, at the version the SDK offers by default
  (2025-11-25) and at 2025-06-18;
* the stateless 2026-07-28 revision (`server/discover`, then every request
  carrying its protocol version, client info and capabilities in `_meta`);
  there every result must carry `resultType`, which the session checks.

Each session checks the same things as the Rust test `crates/dsh/tests/mcp.rs`:
the tool list, a call allowed by the settings, invalid arguments, an unknown
tool, a denial, an *ask* with nobody to ask, a background task, and that the
server exits by itself (with its background task) once the client closes
its stdin.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage
from support import (
    EXIT_DEADLINE_S,
    REQUEST_TIMEOUT_S,
    Spawned,
    cmdline,
    connect,
    descendants,
    gone_within,
    one_error,
    text,
)

SETTINGS = {
    "permissions": {
        "allow": ["Bash(echo:*)", "Bash(sleep:*)", "Bash(python3:*)"],
        "deny": ["Bash(rm:*)"],
    }
}



def _wire(item: SessionMessage | Exception) -> str:
    if isinstance(item, Exception):
        return f"<unparseable line: {item!r}>"
    return json.dumps(item.message.model_dump(by_alias=True, mode="json", exclude_unset=True))


@asynccontextmanager
async def tapped(
    read: Any, write: Any, transcript: list[str], filled: list[str] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """The transport's streams, with every message recorded in `transcript`.

    With `filled`, a result that lacks `resultType` gets `"complete"` before
    the SDK reads it, and the method it answered is appended to `filled`.
    """
    to_session_send, to_session = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    from_session, from_session_receive = anyio.create_memory_object_stream[SessionMessage](0)
    methods: dict[Any, str] = {}

    async def inbound() -> None:
        async with to_session_send:
            async for item in read:
                transcript.append("<- " + _wire(item))
                if (
                    filled is not None
                    and not isinstance(item, Exception)
                    and isinstance(item.message, types.JSONRPCResponse)
                    and "resultType" not in item.message.result
                ):
                    item.message.result["resultType"] = "complete"
                    filled.append(methods.get(item.message.id, "?"))
                await to_session_send.send(item)

    async def outbound() -> None:
        async with from_session_receive:
            async for item in from_session_receive:
                transcript.append("-> " + _wire(item))
                if isinstance(item.message, types.JSONRPCRequest):
                    methods[item.message.id] = item.message.method
                await write.send(item)

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        try:
            yield to_session, from_session
        finally:
            tg.cancel_scope.cancel()


# dsh's tools/list result has no `resultType` on a 2026-07-28 session.


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("generation", "fill_result_type"),
    [
        pytest.param("2025-11-25", False, id="2025-11-25"),
        pytest.param("2025-06-18", False, id="2025-06-18"),
        # Results without `resultType` are recorded (and filled in, so the
        # session goes on), then the test fails naming them.
        pytest.param("2026-07-28", True, id="2026-07-28"),
    ],
)
async def test_a_session_with_the_python_sdk(
    generation: str, fill_result_type: bool, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    elsewhere = tmp_path / "spawned-in"
    work.mkdir()
    elsewhere.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    stderr_path = tmp_path / "stderr.txt"

    params = StdioServerParameters(
        # Never the real home: no user settings.
        env={"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config"},
        command=dsh_bin,
        args=["mcp", "--settings", str(settings), "--cwd", str(work)],
        cwd=str(elsewhere),
    )
    transcript: list[str] = []
    stream_errors: list[Exception] = []
    incoming: list[str] = []
    filled: list[str] | None = [] if fill_result_type else None

    async def on_message(message: Any) -> None:
        # Transport exceptions (a stdout line that is not JSON-RPC) land here.
        if isinstance(message, Exception):
            stream_errors.append(message)
        else:
            incoming.append(repr(message))

    try:
        with one_error(), anyio.fail_after(120), stderr_path.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                assert spawned.process is not None, "the SDK's spawn hook was not called"
                pid = spawned.process.pid
                async with tapped(read, write, transcript, filled) as (read, write):
                    async with ClientSession(
                        read,
                        write,
                        read_timeout_seconds=REQUEST_TIMEOUT_S,
                        message_handler=on_message,
                    ) as session:
                        assert await connect(session, generation) == "dsh"
                        assert session.protocol_version == generation
                        task_processes = await exercise(session, work, elsewhere, pid)
            # The session is closed: the SDK closed dsh's stdin and waited
            # for it. dsh must have exited by itself, not by the SDK's kill.
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "dsh mcp still running"
            code = spawned.process.returncode
            assert code == 0, f"dsh mcp exit status {code} (negative: killed by that signal)"
            for task_pid, started in task_processes:
                assert await gone_within(task_pid, started, EXIT_DEADLINE_S), (
                    f"the background task's process {task_pid} ({cmdline(task_pid)}) survived the session"
                )
        assert stream_errors == [], f"stdout carried something that is not JSON-RPC: {stream_errors}"
        if filled is not None:
            assert filled == [], f"results without resultType: {filled}"
    finally:
        # Shown by pytest when the test fails.
        if filled:
            print(f"--- resultType filled in for: {filled}")
        print(f"--- protocol generation {generation}; wire:")
        print("\n".join(transcript))
        print("--- other messages from the server:")
        print("\n".join(incoming))
        print("--- dsh stderr:")
        print(stderr_path.read_text() if stderr_path.exists() else "")


async def exercise(
    session: ClientSession, work: Path, elsewhere: Path, pid: int
) -> list[tuple[int, str]]:
    """Every check inside the session; returns the background task's processes."""
    listed = await session.list_tools()
    assert listed.next_cursor is None
    tools = listed.tools
    assert [tool.name for tool in tools] == [
        "bash",
        "bash_output",
        "bash_write",
        "bash_kill",
        "read",
        "write",
        "edit",
        "glob",
        "grep",
        "apply_patch",
    ]
    bash, output, _write, _kill = tools[:4]
    assert output.annotations is not None and output.annotations.read_only_hint is True, output
    assert bash.input_schema["required"] == ["command"], bash.input_schema

    ok = await session.call_tool("bash", {"command": "echo hi"})
    assert ok.is_error is False, ok
    assert text(ok) == "hi\n[exit code: 0]"

    invalid = await session.call_tool("bash", {})
    assert invalid.is_error is True, invalid
    assert text(invalid).startswith('Error: invalid arguments: missing required property "command"'), invalid

    unknown = await session.call_tool("nope", {})
    assert unknown.is_error is True, unknown
    assert text(unknown) == 'Error: unknown tool "nope"'

    (work / "x").mkdir()
    denied = await session.call_tool("bash", {"command": "rm -rf x"})
    assert denied.is_error is True, denied
    assert "permission denied" in text(denied), denied
    assert (work / "x").is_dir()

    # No rule: an *ask*; this client declares no elicitation, so nobody can
    # approve, and the call fails closed without running.
    asked = await session.call_tool("bash", {"command": "touch made"})
    assert asked.is_error is True, asked
    assert not (work / "made").exists()
    assert not (elsewhere / "made").exists()

    started = await session.call_tool("bash", {"command": "sleep 30", "run_in_background": True})
    assert started.is_error is False, started
    assert text(started) == "started background task bash-1"
    status = await session.call_tool("bash_output", {"task_id": "bash-1"})
    assert status.is_error is False, status
    assert "[status: running]" in text(status), status

    await drive_a_repl(session)

    task_processes = descendants(pid)
    assert task_processes, "no process runs the background task"
    print("background task processes:", [(p, cmdline(p)) for p, _ in task_processes])
    return task_processes


async def drive_a_repl(session: ClientSession) -> None:
    """A python3 REPL in a terminal, over several tools/call: state is kept
    between writes, and <C-d> ends it with its exit code."""
    started = await session.call_tool("bash", {"command": "python3 -q", "tty": True})
    assert started.is_error is False, started
    first = text(started)
    assert first.startswith("started interactive session bash-2\n"), first
    assert first.endswith(">>> \n[status: running]"), first

    wrote = await session.call_tool("bash_write", {"session_id": "bash-2", "input": "x = 6 * 7<Enter>"})
    assert wrote.is_error is False, wrote
    assert text(wrote).startswith(">>> x = 6 * 7\n"), wrote

    printed = await session.call_tool("bash_write", {"session_id": "bash-2", "input": "print(x)\n"})
    assert printed.is_error is False, printed
    assert "print(x)\n42\n>>> " in text(printed), printed

    ended = await session.call_tool("bash_write", {"session_id": "bash-2", "input": "<C-d>"})
    assert ended.is_error is False, ended
    answer = text(ended)
    with anyio.fail_after(10):
        while "[status: completed" not in answer:
            read = await session.call_tool("bash_output", {"task_id": "bash-2", "wait_ms": 500})
            answer += text(read)
    assert "[status: completed, exit code: 0]" in answer, answer

    refused = await session.call_tool("bash_write", {"session_id": "bash-2", "input": "1<Enter>"})
    assert refused.is_error is True, refused
    assert "has ended" in text(refused), refused
