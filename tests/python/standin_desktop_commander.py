"""A stand-in for DesktopCommander (`@wonderwhy-er/desktop-commander` 0.2.52)
on stdio, written with the official MCP Python SDK: some of its tools, with
their names and argument names (start_process, interact_with_process and
edit_block are the ones dsh's `desktop-commander` profile recognises it
by), and none of their effects. Nothing is run, read or written: every
call appends one JSON line `{"tool": NAME, "args": {...}}` (the arguments
given) to the file `$STANDIN_LOG`, which is what `test_proxy_arguments.py`
reads to tell whether a call reached the upstream at all.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("standin-desktop-commander")
PID = 4242


def _log(tool: str, **args: Any) -> None:
    given = {name: value for name, value in args.items() if value is not None}
    with open(os.environ["STANDIN_LOG"], "a") as log:
        log.write(json.dumps({"tool": tool, "args": given}) + "\n")


@server.tool()
def start_process(
    command: str,
    timeout_ms: int,
    shell: str | None = None,
    verbose_timing: bool | None = None,
    origin: str | None = None,
) -> str:
    """Start a new terminal process with a command (run through a shell)."""
    _log("start_process", command=command, timeout_ms=timeout_ms, shell=shell, verbose_timing=verbose_timing)
    return f"started pid {PID}"


@server.tool()
def interact_with_process(
    pid: int,
    input: str,
    timeout_ms: int | None = None,
    wait_for_prompt: bool | None = None,
    verbose_timing: bool | None = None,
) -> str:
    """Send input to a running process (a shell, a REPL) and read its answer."""
    _log("interact_with_process", pid=pid, input=input, timeout_ms=timeout_ms)
    return f"sent to pid {pid}"


@server.tool()
def read_process_output(
    pid: int,
    timeout_ms: int | None = None,
    offset: int | None = None,
    length: int | None = None,
    verbose_timing: bool | None = None,
) -> str:
    """Read the output a running process wrote since the last read."""
    _log("read_process_output", pid=pid, timeout_ms=timeout_ms, offset=offset, length=length)
    return ""


@server.tool()
def kill_process(pid: int) -> str:
    """Terminate a running process by its PID."""
    _log("kill_process", pid=pid)
    return f"killed pid {pid}"


@server.tool()
def read_file(
    path: str,
    isUrl: bool | None = None,  # noqa: N803
    offset: int | None = None,
    length: int | None = None,
    sheet: str | None = None,
    range: str | None = None,
    options: dict[str, Any] | None = None,
    origin: str | None = None,
) -> str:
    """Read a file (or a URL) with an optional line offset and length."""
    _log("read_file", path=path, isUrl=isUrl, offset=offset, length=length)
    return "stand-in content"


@server.tool()
def write_file(path: str, content: str, mode: str | None = None, origin: str | None = None) -> str:
    """Write or append to a file."""
    _log("write_file", path=path, content=content, mode=mode)
    return f"wrote {path}"


@server.tool()
def list_directory(path: str, depth: int | None = None, origin: str | None = None) -> str:
    """List the entries of a directory."""
    _log("list_directory", path=path, depth=depth)
    return "[FILE] stand-in"


@server.tool()
def edit_block(
    file_path: str,
    old_string: str | None = None,
    new_string: str | None = None,
    expected_replacements: int | None = None,
    range: str | None = None,
    content: Any = None,
    options: dict[str, Any] | None = None,
    origin: str | None = None,
) -> str:
    """Replace text in a file."""
    _log("edit_block", file_path=file_path, old_string=old_string, new_string=new_string)
    return f"edited {file_path}"


if __name__ == "__main__":
    server.run()
