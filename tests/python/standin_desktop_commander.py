"""A stand-in for DesktopCommander (`@wonderwhy-er/desktop-commander`) on
stdio, written with the official MCP Python SDK: its tools' names and
argument names, so dsh's `desktop-commander` profile recognises it, and
none of its effects. Nothing is run, read or written: every call appends
one JSON line `{"tool": NAME, "args": {...}}` to the file `$STANDIN_LOG`,
which is what `test_proxy_arguments.py` reads to tell whether a call
reached the upstream at all.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("standin-desktop-commander")
PID = 4242


def _log(tool: str, **args: Any) -> None:
    with open(os.environ["STANDIN_LOG"], "a") as log:
        log.write(json.dumps({"tool": tool, "args": args}) + "\n")


@server.tool()
def start_process(command: str, timeout_ms: int, shell: str | None = None) -> str:
    """Start a new terminal process with a command (run through a shell)."""
    _log("start_process", command=command, timeout_ms=timeout_ms, shell=shell)
    return f"started pid {PID}"


@server.tool()
def interact_with_process(pid: int, input: str, timeout_ms: int | None = None) -> str:
    """Send input to a running process (a shell, a REPL) and read its answer."""
    _log("interact_with_process", pid=pid, input=input, timeout_ms=timeout_ms)
    return f"sent to pid {pid}"


@server.tool()
def read_process_output(pid: int, timeout_ms: int | None = None) -> str:
    """Read the output a running process wrote since the last read."""
    _log("read_process_output", pid=pid, timeout_ms=timeout_ms)
    return ""


@server.tool()
def kill_process(pid: int) -> str:
    """Terminate a running process by its PID."""
    _log("kill_process", pid=pid)
    return f"killed pid {pid}"


@server.tool()
def read_file(path: str, isUrl: bool | None = None, offset: int | None = None, length: int | None = None) -> str:  # noqa: N803
    """Read a file (or a URL) with an optional line offset and length."""
    _log("read_file", path=path, isUrl=isUrl, offset=offset, length=length)
    return "stand-in content"


@server.tool()
def write_file(path: str, content: str, mode: str | None = None) -> str:
    """Write or append to a file."""
    _log("write_file", path=path, content=content, mode=mode)
    return f"wrote {path}"


@server.tool()
def list_directory(path: str) -> str:
    """List the entries of a directory."""
    _log("list_directory", path=path)
    return "[FILE] stand-in"


if __name__ == "__main__":
    server.run()
