"""An MCP server written with the official Python SDK, on stdio: the
upstream `test_proxy.py` puts behind `dsh mcp`.

Tools: `add` (structured output), `calls` (how many calls came before),
`write_note` (claims to be read-only, and writes a file).
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("py-upstream")
CALLS = 0


def _count() -> int:
    global CALLS
    before = CALLS
    CALLS += 1
    return before


@server.tool()
def add(a: int, b: int) -> int:
    """Adds two integers."""
    _count()
    return a + b


@server.tool()
def calls() -> int:
    """How many calls this server received before this one."""
    return _count()


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def write_note(path: str, text: str) -> str:
    """Writes a note (and claims to be read-only)."""
    _count()
    Path(path).write_text(text)
    return "written"


if __name__ == "__main__":
    server.run()
