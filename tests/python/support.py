"""Shared by the Python tests: the `dsh` binary under test, process
checks through /proc, the SDK's spawned process, and opening a session in
each protocol generation."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import mcp.client.stdio as sdk_stdio
import mcp.types as types
import pytest
from mcp import ClientSession

# How long any one request may take before the test fails instead of hanging.
REQUEST_TIMEOUT_S = 30.0
# How long the server (and what it started) may take to exit after the session.
EXIT_DEADLINE_S = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def dsh_bin() -> str:
    path = os.environ.get("DSH_BIN")
    if not path:
        pytest.fail("DSH_BIN must name the dsh binary (e.g. target/debug/dsh)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"DSH_BIN={path!r} is not an executable file")
    return os.path.abspath(path)


# --- processes, through /proc -------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name, or None if gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def start_time(pid: int) -> str | None:
    fields = _stat(pid)
    return fields[19] if fields else None  # field 22 of proc(5)


def alive(pid: int, started: str | None = None) -> bool:
    """Whether PID runs (a zombie has exited) and is still the same process."""
    fields = _stat(pid)
    if fields is None or fields[0] == "Z":
        return False
    return started is None or fields[19] == started


def descendants(root: int) -> list[tuple[int, str]]:
    """Every live descendant of `root`, as (pid, start time)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[tuple[int, str]] = []
    stack = list(children.get(root, []))
    while stack:
        pid = stack.pop()
        if (started := start_time(pid)) is not None and alive(pid):
            found.append((pid, started))
        stack.extend(children.get(pid, []))
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


async def gone_within(pid: int, started: str | None, deadline_s: float) -> bool:
    """Polls until PID has exited, up to a deadline."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if not alive(pid, started):
            return True
        await anyio.sleep(0.02)
    return not alive(pid, started)


# --- the session --------------------------------------------------------------


class Spawned:
    """The server process the SDK's stdio transport started."""

    process: Any = None


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> Spawned:
    """Records the process `stdio_client` spawns.

    The SDK (pinned in requirements.txt) keeps it private; the test needs its
    PID and exit status, to tell a server that exits on end-of-file from one
    the SDK's shutdown escalation (SIGTERM after 2 s) had to kill.
    """
    record = Spawned()
    original = sdk_stdio._create_platform_compatible_process

    async def spawn(*args: Any, **kwargs: Any) -> Any:
        record.process = await original(*args, **kwargs)
        return record.process

    monkeypatch.setattr(sdk_stdio, "_create_platform_compatible_process", spawn)
    return record


async def connect(session: ClientSession, generation: str) -> str:
    """Opens the session in `generation`; returns the server's name."""
    if generation == "2025-11-25":
        # The SDK's own handshake: it offers its newest handshake version.
        result = await session.initialize()
        assert result.protocol_version == "2025-11-25", result
        return result.server_info.name
    if generation == "2025-06-18":
        # An older client's handshake, through the same public pieces
        # `initialize()` is made of.
        result = await session.send_request(
            types.InitializeRequest(
                params=types.InitializeRequestParams(
                    protocol_version="2025-06-18",
                    capabilities=types.ClientCapabilities(),
                    client_info=types.Implementation(name="dsh-python-test", version="0"),
                )
            ),
            types.InitializeResult,
        )
        assert result.protocol_version == "2025-06-18", result
        session.adopt(result)
        await session.send_notification(types.InitializedNotification())
        return result.server_info.name
    assert generation == "2026-07-28"
    discovered = await session.discover()
    assert "2026-07-28" in discovered.supported_versions, discovered
    assert session.server_info is not None, "server/discover carried no serverInfo in _meta"
    return session.server_info.name


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


@contextmanager
def one_error() -> Iterator[None]:
    """The SDK's task groups wrap whatever failed; raise that one error alone."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from group
        raise


def text(result: types.CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, types.TextContent))
