"""A stand-in for mcp-shell-server (tumf, `mcp-shell-server` 1.1.14 on PyPI)
on stdio, written with the official MCP Python SDK: its one tool's name and
argument names (`shell_execute`, the command as an array of words), so
dsh's `mcp-shell-server` profile recognises it, and none of its effects.
Nothing is run: every call appends one JSON line `{"tool": NAME, "args":
{...}}` (the arguments given) to the file `$STANDIN_LOG`, which
`test_proxy_arguments.py` reads to tell whether a call reached the upstream
at all.
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("standin-mcp-shell-server")


def _log(tool: str, **args: Any) -> None:
    given = {name: value for name, value in args.items() if value is not None}
    with open(os.environ["STANDIN_LOG"], "a") as log:
        log.write(json.dumps({"tool": tool, "args": given}) + "\n")


@server.tool()
def shell_execute(
    command: list[str], stdin: str | None = None, directory: str | None = None, timeout: int | None = None
) -> str:
    """Execute a shell command (an array of words) in a directory, with optional input."""
    _log("shell_execute", command=command, stdin=stdin, directory=directory, timeout=timeout)
    return "exit code: 0"


if __name__ == "__main__":
    server.run()
