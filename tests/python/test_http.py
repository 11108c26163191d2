"""`dsh mcp --http`: the official MCP Python SDK's streamable HTTP client
with a bearer token, and what is refused before any call runs: no token, a
wrong token, a token in the query, a foreign Host or Origin; one principal
cannot stop another's background task.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from support import REQUEST_TIMEOUT_S, connect, text

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef"}
SETTINGS = {"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)"]}}


@contextmanager
def http_server(dsh_bin: str, tmp_path: Path) -> Iterator[str]:
    """`dsh mcp --http 127.0.0.1:0` with two principals; yields its base URL."""
    tokens = tmp_path / "tokens"
    tokens.write_text("# principals\n" + "".join(f"{n}:{t}\n" for n, t in TOKENS.items()))
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    work = tmp_path / "work"
    work.mkdir()
    process = subprocess.Popen(
        [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--token-file", str(tokens),
         "--settings", str(settings), "--settings-only", "--cwd", str(work)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"http://(127\.0\.0\.1:\d+)/mcp", line)
        assert found, f"no address on stderr: {line!r}"
        yield f"http://{found.group(1)}"
    finally:
        process.terminate()
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("dsh mcp --http did not stop on SIGTERM within 10 s")
        assert status == 0, process.stderr.read() if process.stderr else status


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
