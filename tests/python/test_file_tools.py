"""The file tools of `dsh mcp`, driven by the official MCP Python SDK as a
client would: a small project is read, edited, patched, searched and
listed, in `acceptEdits` mode, with a `Read` deny rule on its `.env`.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from support import REQUEST_TIMEOUT_S, Spawned, connect, one_error, text

SETTINGS = {"permissions": {"deny": ["Read(./.env)"]}}


def project(root: Path) -> None:
    (root / "src").mkdir()
    (root / "src" / "main.py").write_text('def greet(name):\n    return "hello " + name\n\nprint(greet("world"))\n')
    (root / "src" / "util.py").write_text("def twice(x):\n    return 2 * x\n")
    (root / "README.md").write_text("# demo\n")
    (root / ".env").write_text("API_TOKEN=do-not-show\n")
    (root / ".gitignore").write_text("build/\n")
    (root / "build").mkdir()
    (root / "build" / "main.py").write_text('print("built copy")\n')


async def call(session: ClientSession, tool: str, args: dict) -> types.CallToolResult:
    with anyio.fail_after(REQUEST_TIMEOUT_S):
        return await session.call_tool(tool, args)


@pytest.mark.anyio
@pytest.mark.parametrize("generation", ["2025-11-25", "2026-07-28"])
async def test_a_client_reads_edits_patches_and_searches_a_project(
    generation: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    project(root)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    params = StdioServerParameters(
        env={"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config"},
        command=dsh_bin,
        args=["mcp", "--settings", str(settings), "--mode", "acceptEdits", "--cwd", str(root)],
    )
    with one_error():
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await connect(session, generation)
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            for name in ["read", "write", "edit", "glob", "grep", "apply_patch"]:
                assert name in tools, sorted(tools)
            assert tools["read"].annotations.read_only_hint is True
            assert tools["edit"].input_schema["required"] == ["file_path", "old_string", "new_string"]

            shown = await call(session, "read", {"file_path": "src/main.py"})
            assert not shown.is_error, text(shown)
            assert text(shown).startswith("     1\tdef greet(name):\n     2\t    return"), text(shown)

            edited = await call(
                session,
                "edit",
                {"file_path": "src/main.py", "old_string": '"hello "', "new_string": '"hi "'},
            )
            assert not edited.is_error, text(edited)
            assert '+     2\t    return "hi " + name' in text(edited), text(edited)

            patch = (
                "*** Begin Patch\n"
                "*** Update File: src/util.py\n"
                "@@ def twice(x):\n"
                "-    return 2 * x\n"
                "+    return x + x\n"
                "*** Add File: src/new.py\n"
                "+VALUE = 1\n"
                "*** End Patch\n"
            )
            patched = await call(session, "apply_patch", {"patch": patch})
            assert not patched.is_error, text(patched)

            found = await call(session, "grep", {"pattern": "hi |x \\+ x|TOKEN", "output_mode": "content"})
            assert not found.is_error, text(found)
            assert "main.py:2:" in text(found) and "util.py:2:" in text(found), text(found)
            # The denied file and the ignored directory are never searched.
            assert "do-not-show" not in text(found) and "build" not in text(found), text(found)

            listed = await call(session, "glob", {"pattern": "**/*.py"})
            assert not listed.is_error, text(listed)
            assert sorted(Path(p).name for p in text(listed).splitlines()) == ["main.py", "new.py", "util.py"]

            secret = await call(session, "read", {"file_path": ".env"})
            assert secret.is_error and "do-not-show" not in text(secret), text(secret)

            # Outside the working directory, acceptEdits still asks, and
            # with no form to show the answer is a refusal naming the rule.
            outside = await call(session, "write", {"file_path": str(tmp_path / "x.txt"), "content": "x"})
            assert outside.is_error and "Edit(/" in text(outside), text(outside)

    assert (root / "src" / "main.py").read_text().splitlines()[1] == '    return "hi " + name'
    assert (root / "src" / "util.py").read_text() == "def twice(x):\n    return x + x\n"
    assert (root / "src" / "new.py").read_text() == "VALUE = 1\n"
    assert not (tmp_path / "x.txt").exists()
