"""Running the real Claude Code and Codex CLIs offline, for the tests of
test_claude_code.py and test_codex.py.

`.ci/run` installs both from npm, pinned in tests/clients/package-lock.json,
into target/clients; `AGENT_CLIS` names that folder's `node_modules/.bin`.
Each run gets a fresh home (no user settings, no credentials, no history),
a working directory of its own, `dsh` on `PATH` (so the README's snippets,
which say `dsh mcp`, are used as written) and a model stand-in on loopback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
# One run of a CLI: a few model round trips and a dsh start-up.
CLI_DEADLINE_S = 120


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"exit {self.returncode}\n--- stdout\n{self.stdout[-4000:]}\n--- stderr\n{self.stderr[-4000:]}"


def cli(name: str) -> str:
    folder = os.environ.get("AGENT_CLIS")
    if not folder:
        pytest.fail("AGENT_CLIS must name the node_modules/.bin folder holding claude and codex")
    path = Path(folder) / name
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is not an executable file (installed by .ci/run from tests/clients)")
    return str(path)


def base_env(home: Path, dsh_bin: str) -> dict[str, str]:
    """No inherited credentials, settings or proxies: only what the run needs."""
    return {
        "PATH": f"{Path(dsh_bin).parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
    }


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> Run:
    done = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=CLI_DEADLINE_S,
    )
    return Run(done.returncode, done.stdout, done.stderr)


def processes_in(folder: Path) -> list[str]:
    """The command lines of live processes whose working directory is
    `folder` or below it (what a client left running there)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{entry}/cwd")
            with open(f"/proc/{entry}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cwd == str(folder) or cwd.startswith(f"{folder}/"):
            found.append(f"{entry}: {cmdline}")
    return found


def none_left_in(folder: Path, deadline_s: float = 10.0) -> None:
    """Fails unless every process started in `folder` is gone by the deadline."""
    deadline = time.monotonic() + deadline_s
    while (left := processes_in(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"still running in {folder}: {left}"


def readme_block(after: str, language: str) -> str:
    """The first fenced `language` block of the README after the line
    starting with `after` (indentation removed): the snippet users copy."""
    lines = README.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(after))
    fence = next(i for i in range(start, len(lines)) if lines[i].strip() == f"```{language}")
    end = next(i for i in range(fence + 1, len(lines)) if lines[i].strip() == "```")
    indent = len(lines[fence]) - len(lines[fence].lstrip())
    return "\n".join(line[indent:] for line in lines[fence + 1 : end]) + "\n"


def readme_inline(after: str) -> str:
    """The first inline code span on the README line starting with `after`."""
    line = next(line for line in README.read_text().splitlines() if line.lstrip().startswith(after))
    match = re.search(r"`([^`]+)`", line)
    assert match, f"no code span on the README line {line!r}"
    return match.group(1)


def write_settings(workdir: Path, settings: dict) -> None:
    """The project's Claude Code settings, which dsh reads as its policy."""
    (workdir / ".claude").mkdir(exist_ok=True)
    (workdir / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
