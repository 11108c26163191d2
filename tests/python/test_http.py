"""`dsh mcp --http`: the official MCP Python SDK's streamable HTTP client
with a bearer token, and what is refused before any call runs: no token, a
wrong token, a token in the query, a foreign Host or Origin; one principal
cannot stop another's background task. In both revisions: an ask answered
"allow once" runs the command and "reject" runs nothing (an
`elicitation/create` request in a 2025-11-25 session, an `input_required`
result retried with the answer in 2026-07-28), a cancelled call kills its
command, and a long call reports progress.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from http_support import TOKENS, HttpServer
from http_support import http_server as serve_http
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S, connect, gone_within, text

@contextmanager
def http_server(dsh_bin: str, tmp_path: Path) -> Iterator[str]:
    """`dsh mcp --http 127.0.0.1:0` with two principals; yields its base URL."""
    with serve_http(dsh_bin, tmp_path / "server") as server:
        yield server.base


def test_what_is_refused_before_any_call(dsh_bin: str, tmp_path: Path) -> None:
    with http_server(dsh_bin, tmp_path) as base, httpx2.Client(timeout=10) as http:
        assert http.get(f"{base}/healthz").text == "ok"
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        missing = http.post(f"{base}/mcp", json=body, headers=headers)
        assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer"), missing
        wrong = http.post(f"{base}/mcp", json=body, headers={**headers, "Authorization": "Bearer nope"})
        assert wrong.status_code == 401, wrong
        query = http.post(f"{base}/mcp?access_token={TOKENS['alice']}", json=body, headers=headers)
        assert query.status_code == 400 and "query string" in query.text, query
        good = {**headers, "Authorization": f"Bearer {TOKENS['alice']}"}
        host = http.post(f"{base}/mcp", json=body, headers={**good, "Host": "attacker.example"})
        assert host.status_code == 403, (host.status_code, host.text)
        origin = http.post(f"{base}/mcp", json=body, headers={**good, "Origin": "https://attacker.example"})
        assert origin.status_code == 403, (origin.status_code, origin.text)
        assert http.post(f"{base}/other", json=body, headers=good).status_code == 404


@pytest.mark.anyio
@pytest.mark.parametrize("generation", ["2025-11-25", "2026-07-28"])
async def test_the_python_sdk_over_http_and_principals_keep_their_tasks(
    generation: str, dsh_bin: str, tmp_path: Path
) -> None:
    with http_server(dsh_bin, tmp_path) as base:
        alice_http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKENS['alice']}"})
        bob_http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKENS['bob']}"})
        async with alice_http, bob_http:
            async with streamable_http_client(f"{base}/mcp", http_client=alice_http) as (read, write, *_), ClientSession(read, write) as alice:
                with anyio.fail_after(REQUEST_TIMEOUT_S):
                    await connect(alice, generation)
                    names = [t.name for t in (await alice.list_tools()).tools]
                    assert names[:4] == ["bash", "bash_output", "bash_write", "bash_kill"], names
                    echoed = await alice.call_tool("bash", {"command": "echo over-http"})
                    assert text(echoed) == "over-http\n[exit code: 0]", text(echoed)
                    started = await alice.call_tool("bash", {"command": "sleep 30", "run_in_background": True})
                    task = re.search(r"bash-\d+", text(started)).group(0)
                    async with streamable_http_client(f"{base}/mcp", http_client=bob_http) as (bread, bwrite, *_), ClientSession(bread, bwrite) as bob:
                        await connect(bob, generation)
                        refused = await bob.call_tool("bash_kill", {"task_id": task})
                        assert refused.is_error and "another agent" in text(refused), text(refused)
                    killed = await alice.call_tool("bash_kill", {"task_id": task})
                    assert not killed.is_error and "killed background task" in text(killed), text(killed)


def test_no_token_is_only_for_loopback_and_token_files_are_checked(dsh_bin: str, tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}
    open_wide = subprocess.run(
        [dsh_bin, "mcp", "--http", "0.0.0.0:0", "--allow-unauthenticated"],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )
    assert open_wide.returncode == 2, open_wide
    assert "only a loopback address may serve without a token" in open_wide.stderr, open_wide.stderr
    bad = tmp_path / "tokens"
    bad.write_text("alice:short\n")
    refused = subprocess.run(
        [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--token-file", str(bad)],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
    )
    assert refused.returncode == 2 and "line 1" in refused.stderr, refused
    # The token itself is never echoed.
    assert "short" not in refused.stderr, refused.stderr


# --- asks, cancellation and progress, in both revisions -------------------------

GENERATIONS = ["2025-11-25", "2026-07-28"]


@asynccontextmanager
async def session_of(server: HttpServer, generation: str, **callbacks: Any) -> AsyncIterator[ClientSession]:
    """Alice's session in `generation`, with the SDK's callbacks given."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    async with http, streamable_http_client(server.url, http_client=http) as (read, write, *_):
        async with ClientSession(read, write, **callbacks) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                await connect(session, generation)
            yield session


def approval_answer(decision: str) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"decision": decision})


def check_form(form: types.ElicitRequestParams, command: str) -> None:
    """dsh's approval form: the command shown, one required choice of four."""
    assert command in form.message, form
    schema = form.requested_schema
    assert schema["required"] == ["decision"], schema
    assert schema["properties"]["decision"]["enum"] == [
        "allow once", "allow always (this session)", "reject", "reject always (this session)"
    ], schema


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("decision", ["allow once", "reject"])
async def test_an_ask_over_http_answered_by_the_python_sdk(
    generation: str, decision: str, dsh_bin: str, tmp_path: Path
) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return approval_answer(decision)

    command = "touch made"
    with serve_http(dsh_bin, tmp_path / "server") as server:
        # The callback declares elicitation, which both revisions need to ask at all.
        async with session_of(server, generation, elicitation_callback=elicit) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                if generation == "2025-11-25":
                    result = await session.call_tool("bash", {"command": command})
                    assert len(asked) == 1, asked
                    check_form(asked[0], command)
                else:
                    first = await session.call_tool("bash", {"command": command}, allow_input_required=True)
                    assert isinstance(first, types.InputRequiredResult), first
                    assert not (server.work / "made").exists(), "the command ran before the answer"
                    assert first.input_requests is not None and set(first.input_requests) == {"dsh_approval"}, first
                    question = first.input_requests["dsh_approval"]
                    assert isinstance(question, types.ElicitRequest), question
                    check_form(question.params, command)
                    # The retry: the same call, the answer, and whatever
                    # requestState the server sent, echoed verbatim.
                    result = await session.call_tool(
                        "bash",
                        {"command": command},
                        input_responses={"dsh_approval": approval_answer(decision)},
                        request_state=first.request_state,
                        allow_input_required=True,
                    )
                    assert asked == [], "a stateless session got an elicitation/create request"
                assert isinstance(result, types.CallToolResult), result
                if decision == "allow once":
                    assert not result.is_error, text(result)
                    assert (server.work / "made").is_file(), text(result)
                else:
                    assert result.is_error, text(result)
                    assert not (server.work / "made").exists(), text(result)
                # Once is once: the next call asks again (and is rejected).
                asked.clear()
                if generation == "2025-11-25":
                    decision = "reject"
                    again = await session.call_tool("bash", {"command": "touch again"})
                    assert len(asked) == 1, asked
                else:
                    again = await session.call_tool("bash", {"command": "touch again"}, allow_input_required=True)
                    assert isinstance(again, types.InputRequiredResult), again
                assert not (server.work / "again").exists()


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_a_cancelled_call_over_http_kills_its_command(generation: str, dsh_bin: str, tmp_path: Path) -> None:
    with serve_http(dsh_bin, tmp_path / "server") as server:
        async with session_of(server, generation) as session:
            outcome: list[Any] = []

            async def call() -> None:
                outcome.append(await session.call_tool("bash", {"command": "sleep 61"}))

            with anyio.fail_after(REQUEST_TIMEOUT_S):
                async with anyio.create_task_group() as tg:
                    scope = anyio.CancelScope()

                    async def cancellable() -> None:
                        with scope:
                            await call()

                    tg.start_soon(cancellable)
                    pid, started = await anyio.to_thread.run_sync(server.find, "sleep 61", REQUEST_TIMEOUT_S)
                    # The SDK sends notifications/cancelled for the request.
                    scope.cancel()
                assert outcome == [], outcome
                # The session goes on while the command is killed.
                assert await gone_within(pid, started, EXIT_DEADLINE_S), f"sleep 61 (pid {pid}) outlived its cancelled call"
                echoed = await session.call_tool("bash", {"command": "echo after"})
                assert text(echoed) == "after\n[exit code: 0]", text(echoed)


@pytest.mark.anyio
@pytest.mark.parametrize("generation", GENERATIONS)
async def test_a_long_call_over_http_reports_progress(generation: str, dsh_bin: str, tmp_path: Path) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    with serve_http(dsh_bin, tmp_path / "server") as server:
        async with session_of(server, generation) as session:
            with anyio.fail_after(REQUEST_TIMEOUT_S):
                result = await session.call_tool(
                    "bash", {"command": "sleep 2.5 && echo slept"}, progress_callback=on_progress
                )
    assert text(result) == "slept\n[exit code: 0]", text(result)
    assert progress, "no notifications/progress during a 2.5 s call"
    values = [value for value, _, _ in progress]
    assert values == sorted(values) and values[0] >= 1, progress
    assert all(message and message.startswith("running for") for _, _, message in progress), progress
