"""`dsh acp` driven by the official Python ACP client (`agent-client-protocol`
on PyPI, imported as `acp`), as an editor runs an agent: a child process on
stdio, through `acp.spawn_agent_process`.

The script plays two turns: a bash call the settings allow (a terminal card,
as the client announces `_meta.terminal_output`), then one the mode asks
about, which the client rejects through `session/request_permission`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from support import REQUEST_TIMEOUT_S


class RecordingClient:
    """An editor that records every update and rejects every ask."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        reject = next(o for o in options if o.kind == "reject_once")
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=reject.option_id))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    def on_connect(self, conn: Any) -> None:  # called by newer clients; harmless otherwise
        pass


@pytest.mark.anyio
async def test_a_scripted_turn_with_the_python_acp_client(dsh_bin: str, tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(echo:*)"]}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [
        [{"tool": "bash", "arguments": {"command": "echo from-python"}}],
        [{"tool": "bash", "arguments": {"command": "touch work/nope"}}],
    ]}))
    client = RecordingClient()
    env = {"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config", "PATH": "/usr/bin:/bin"}
    args = ["acp", "--script", str(script), "--settings", str(settings), "--settings-only", "--cwd", str(tmp_path)]
    with anyio.fail_after(REQUEST_TIMEOUT_S):
        async with spawn_agent_process(client, dsh_bin, *args, env=env) as (conn, process):
            caps = ClientCapabilities(field_meta={"terminal_output": True})
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            first = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            assert first.stop_reason == "end_turn"
            second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
            assert second.stop_reason == "end_turn"

    kinds = [u.session_update for u in client.updates]
    assert kinds.count("tool_call") == 2, kinds
    card = client.updates[0]
    assert card.tool_call_id == "call-0-0"
    assert card.kind == "execute"
    assert any(getattr(c, "terminal_id", None) == "call-0-0" for c in card.content), card
    assert card.field_meta["terminal_info"]["terminal_id"] == "call-0-0"
    output = [u for u in client.updates if u.session_update == "tool_call_update" and u.field_meta and "terminal_output" in u.field_meta]
    assert output and "from-python" in output[0].field_meta["terminal_output"]["data"]
    ends = [u for u in client.updates if u.session_update == "tool_call_update" and u.status]
    assert [e.status for e in ends] == ["completed", "failed"], ends
    assert ends[0].field_meta["terminal_exit"]["exit_code"] == 0
    # The ask reached the client with the four options, and its rejection held.
    assert len(client.asked) == 1
    tool_call, options = client.asked[0]
    assert tool_call.title == "run `touch work/nope`"
    assert sorted(o.kind for o in options) == ["allow_always", "allow_once", "reject_always", "reject_once"]
    assert not (tmp_path / "work" / "nope").exists()


class EditorClient(RecordingClient):
    """An editor whose buffers hold unsaved text, and which lets the agent
    read and write them (`fs/read_text_file`, `fs/write_text_file`)."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: list[str] = []

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append(path)
        self.buffers[path] = content
        return WriteTextFileResponse()


@pytest.mark.anyio
async def test_the_file_tools_read_and_write_the_editors_buffers(dsh_bin: str, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    source = work / "main.py"
    source.write_text("print('saved on disk')\n")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [[
        {"tool": "read", "arguments": {"file_path": "work/main.py"}},
        {"tool": "edit", "arguments": {"file_path": "work/main.py", "old_string": "unsaved", "new_string": "edited"}},
    ]]}))
    # The buffer has changes the user has not saved.
    client = EditorClient({str(source): "print('unsaved in the editor')\n"})
    env = {"CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config", "PATH": "/usr/bin:/bin"}
    args = ["acp", "--script", str(script), "--settings", str(settings), "--settings-only", "--cwd", str(tmp_path)]
    with anyio.fail_after(REQUEST_TIMEOUT_S):
        async with spawn_agent_process(client, dsh_bin, *args, env=env) as (conn, process):
            caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
            await conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=caps)
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            done = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
            assert done.stop_reason == "end_turn"

    ends = [u for u in client.updates if u.session_update == "tool_call_update" and u.status]
    assert [e.status for e in ends] == ["completed", "completed"], ends
    # The model read the buffer, not the disk.
    shown = ends[0].content[0].content.text
    assert "unsaved in the editor" in shown and "saved on disk" not in shown, shown
    # The edit went to the buffer, through the editor, drawn as a diff.
    assert client.buffers[str(source)] == "print('edited in the editor')\n"
    assert client.writes == [str(source)]
    assert source.read_text() == "print('saved on disk')\n"
    diff = ends[1].content[0]
    assert diff.type == "diff" and diff.old_text == "unsaved" and diff.new_text == "edited", diff
