"""`dsh mcp --http 127.0.0.1:0` for the tests that drive it over HTTP
(test_http.py, test_http_typescript.py, test_http_chain.py): the server
process, its address, and the commands it started, checked gone after it
stopped."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import EXIT_DEADLINE_S, alive, cmdline, descendants

TOKENS = {"alice": "alice-token-0123456789abcdef", "bob": "bob-token-0123456789abcdef"}
SETTINGS: dict[str, Any] = {"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)"]}}


@dataclass
class HttpServer:
    base: str
    """`http://127.0.0.1:PORT` (`https://` when serving TLS)"""
    process: subprocess.Popen[str]
    pid: int
    work: Path
    """The server's working directory: where commands run."""

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def find(self, command: str, deadline_s: float) -> tuple[int, str]:
        """Polls until a process the server started runs `command` (its
        whole command line); returns its PID and start time."""
        deadline = time.monotonic() + deadline_s
        while True:
            for pid, started in descendants(self.pid):
                if cmdline(pid) == command:
                    return pid, started
            if time.monotonic() >= deadline:
                running = [cmdline(pid) for pid, _ in descendants(self.pid)]
                pytest.fail(f"no process {command!r} under the server within {deadline_s} s; running: {running}")
            time.sleep(0.02)


def gone_within_sync(pid: int, started: str | None, deadline_s: float) -> bool:
    """Polls until PID has exited, up to a deadline (outside an event loop)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        if not alive(pid, started):
            return True
        time.sleep(0.02)
    return not alive(pid, started)


@contextmanager
def http_server(
    dsh_bin: str,
    folder: Path,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    flags: Sequence[str] = (),
) -> Iterator[HttpServer]:
    """`dsh mcp --http 127.0.0.1:0 [flags]` with the principals of TOKENS,
    run in `folder`/work. On leaving: SIGTERM (unless it already stopped),
    exit status 0 within the deadline, and nothing it started still running."""
    folder.mkdir(parents=True, exist_ok=True)
    tokens = folder / "tokens"
    tokens.write_text("# principals\n" + "".join(f"{n}:{t}\n" for n, t in TOKENS.items()))
    settings_file = folder / "settings.json"
    settings_file.write_text(json.dumps(SETTINGS if settings is None else settings))
    work = folder / "work"
    work.mkdir()
    process = subprocess.Popen(
        [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--token-file", str(tokens),
         "--settings", str(settings_file), "--settings-only", "--cwd", str(work), *flags],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder), **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    started: list[tuple[int, str]] = []
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"(https?)://(127\.0\.0\.1:\d+)/mcp", line)
        assert found, f"no address on stderr: {line!r}"
        yield HttpServer(base=f"{found.group(1)}://{found.group(2)}", process=process, pid=process.pid, work=work)
    finally:
        started = descendants(process.pid) if process.poll() is None else []
        if process.poll() is None:
            process.terminate()
        try:
            status = process.wait(timeout=EXIT_DEADLINE_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            pytest.fail(f"dsh mcp --http did not stop on SIGTERM within {EXIT_DEADLINE_S} s")
        left = [f"{pid} {cmdline(pid)}" for pid, at in started if not gone_within_sync(pid, at, EXIT_DEADLINE_S)]
        assert status == 0, process.stderr.read() if process.stderr else status
        assert not left, f"still running after the server stopped: {left}"
