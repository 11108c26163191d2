"""`dsh mcp --http` driven by the official MCP TypeScript SDK
(tests/clients/mcp_http_client.mjs, a `Client` on a
`StreamableHTTPClientTransport` with the bearer token in `requestInit`):
v1 (`@modelcontextprotocol/sdk`, which speaks up to 2025-11-25) and v2
(`@modelcontextprotocol/client`, which speaks the stateless 2026-07-28
revision too), both pinned in tests/clients/package-lock.json and installed
by .ci/run into target/clients (`AGENT_CLIS` names its node_modules/.bin).

Each client lists the tools and runs a call; answers an approval ask through
its elicitation handler (an `elicitation/create` request in 2025-11-25, an
`input_required` result the v2 client fulfils with the same handler and
retries in 2026-07-28): "allow once" runs the command, "reject" runs
nothing; aborts a call with an AbortSignal, and the command is killed while
the session goes on; and hears `notifications/progress` on a 2.5 s call.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from http_support import TOKENS, HttpServer, gone_within_sync, http_server
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S

CLIENTS_DIR = Path(__file__).resolve().parents[1] / "clients"
SCRIPT = CLIENTS_DIR / "mcp_http_client.mjs"
PINNED = json.loads((CLIENTS_DIR / "package.json").read_text())["dependencies"]

# (package, protocol revision): v1 speaks only the session-based revision;
# v2 both, the 2025 one with `versionNegotiation: {mode: "legacy"}`.
CLIENTS = [
    pytest.param("sdk", "2025-11-25", id="sdk-v1-2025-11-25"),
    pytest.param("client", "2025-11-25", id="client-v2-2025-11-25"),
    pytest.param("client", "2026-07-28", id="client-v2-2026-07-28"),
]
PACKAGES = {"sdk": "@modelcontextprotocol/sdk", "client": "@modelcontextprotocol/client"}


@pytest.fixture
def node_modules() -> Path:
    folder = os.environ.get("AGENT_CLIS")
    if not folder:
        pytest.fail("AGENT_CLIS must name the node_modules/.bin folder .ci/run installs from tests/clients")
    modules = Path(folder).resolve().parent
    for package in PACKAGES.values():
        if not (modules / package / "package.json").is_file():
            pytest.fail(f"{package} is not installed in {modules} (.ci/run installs it from tests/clients)")
    return modules


@pytest.fixture
def node() -> str:
    found = shutil.which("node")
    if not found:
        pytest.fail("node is not on PATH (.ci/run installs Debian's nodejs)")
    return found


class NodeClient:
    """The script, its JSON lines read with a deadline."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.process = process
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def next(self, step: str, deadline_s: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """The next line, which must be of `step`."""
        try:
            line = self.lines.get(timeout=deadline_s)
        except queue.Empty:
            pytest.fail(f"no {step!r} line from the client within {deadline_s} s; so far: {self.seen}")
        if line is None:
            self.process.wait(timeout=EXIT_DEADLINE_S)
            stderr = self.process.stderr.read() if self.process.stderr else ""
            pytest.fail(f"the client ended before {step!r}; so far: {self.seen}\n--- stderr\n{stderr[-4000:]}")
        self.seen.append(line.rstrip())
        message = json.loads(line)
        assert message["step"] == step, f"expected {step!r}, got {message}"
        return message

    def go_on(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()


@contextmanager
def typescript_client(
    node: str, modules: Path, package: str, era: str, server: HttpServer, steps: list[dict[str, Any]]
) -> Iterator[NodeClient]:
    """Runs the script; checks it connected in `era`, and at the end that it
    closed and exited 0."""
    config = {
        "modules": str(modules),
        "sdk": package,
        "era": era,
        "url": server.url,
        "token": TOKENS["alice"],
        "steps": steps,
    }
    process = subprocess.Popen(
        [node, str(SCRIPT), json.dumps(config)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(server.work.parent)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        client = NodeClient(process)
        connected = client.next("connected")
        assert connected["version"] == PINNED[PACKAGES[package]], connected
        assert connected["server"] == "dsh", connected
        if era == "2026-07-28" or package == "sdk":
            assert connected["protocolVersion"] == era, connected
        yield client
        client.next("closed")
        assert process.wait(timeout=EXIT_DEADLINE_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize(("package", "era"), CLIENTS)
def test_tools_and_a_call(package: str, era: str, node: str, node_modules: Path, dsh_bin: str, tmp_path: Path) -> None:
    steps = [{"do": "list"}, {"do": "call", "command": "echo from-typescript"}]
    with http_server(dsh_bin, tmp_path / "server") as server, typescript_client(
        node, node_modules, package, era, server, steps
    ) as client:
        names = client.next("list")["names"]
        assert names[:4] == ["bash", "bash_output", "bash_write", "bash_kill"], names
        called = client.next("call")
        assert called["text"] == "from-typescript\n[exit code: 0]" and not called["isError"], called
        assert called["asked"] == [], called


@pytest.mark.parametrize(("package", "era"), CLIENTS)
@pytest.mark.parametrize("decision", ["allow once", "reject"])
def test_an_ask_answered_by_the_elicitation_handler(
    package: str, era: str, decision: str, node: str, node_modules: Path, dsh_bin: str, tmp_path: Path
) -> None:
    steps = [
        {"do": "call", "command": "touch made", "answer": decision},
        # Once is once: the next call is asked about again.
        {"do": "call", "command": "touch again", "answer": "reject"},
    ]
    with http_server(dsh_bin, tmp_path / "server") as server, typescript_client(
        node, node_modules, package, era, server, steps
    ) as client:
        called = client.next("call")
        assert len(called["asked"]) == 1, called
        form = called["asked"][0]
        assert "touch made" in form["message"], form
        assert form["schema"]["properties"]["decision"]["enum"] == [
            "allow once", "allow always (this session)", "reject", "reject always (this session)"
        ], form
        if decision == "allow once":
            assert not called["isError"], called
            assert (server.work / "made").is_file(), called
        else:
            assert called["isError"] and "rejected" in called["text"], called
            assert not (server.work / "made").exists(), called
        again = client.next("call")
        assert len(again["asked"]) == 1 and again["isError"], again
        assert not (server.work / "again").exists(), again


@pytest.mark.parametrize(("package", "era"), CLIENTS)
def test_an_aborted_call_kills_its_command(
    package: str, era: str, node: str, node_modules: Path, dsh_bin: str, tmp_path: Path
) -> None:
    steps = [{"do": "cancel", "command": "sleep 63"}, {"do": "call", "command": "echo after"}]
    with http_server(dsh_bin, tmp_path / "server") as server, typescript_client(
        node, node_modules, package, era, server, steps
    ) as client:
        client.next("cancel")
        pid, started = server.find("sleep 63", REQUEST_TIMEOUT_S)
        client.go_on()
        aborted = client.next("cancel")
        assert aborted["state"] == "aborted" and aborted["settled"] == "error", aborted
        # The session is still open: the abort alone killed the command.
        assert gone_within_sync(pid, started, EXIT_DEADLINE_S), f"sleep 63 (pid {pid}) outlived its aborted call"
        client.go_on()
        after = client.next("call")
        assert after["text"] == "after\n[exit code: 0]", after


@pytest.mark.parametrize(("package", "era"), CLIENTS)
def test_a_long_call_reports_progress(
    package: str, era: str, node: str, node_modules: Path, dsh_bin: str, tmp_path: Path
) -> None:
    steps = [{"do": "call", "command": "sleep 2.5 && echo slept", "progress": True}]
    started = time.monotonic()
    with http_server(dsh_bin, tmp_path / "server") as server, typescript_client(
        node, node_modules, package, era, server, steps
    ) as client:
        called = client.next("call")
    assert time.monotonic() - started >= 2.5
    assert called["text"] == "slept\n[exit code: 0]", called
    progress = called["progress"]
    assert progress, f"onprogress never called during a 2.5 s call: {called}"
    values = [p["progress"] for p in progress]
    assert values == sorted(values) and values[0] >= 1, progress
    assert all(p.get("message", "").startswith("running for") for p in progress), progress
