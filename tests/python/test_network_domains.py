"""The network by domain, end to end: a `bash` tool call confined by the
configured sandbox (Claude Code's `"sandbox": {"enabled": true}`, the
network off) reaches the network only through dsh's filtering proxy, which
applies `sandbox.network.allowedDomains` / `deniedDomains`.

`dsh mcp` runs as a child process on stdio, driven by the official MCP
Python SDK; the servers it reaches run in this process on 127.0.0.1
(net_servers.py). No name here exists in DNS: dsh's proxy resolves them
through `DSH_PROXY_RESOLVE` (its test override of DNS), and a confined
command resolves nothing itself.

Real programs make the requests: curl (HTTP, HTTPS through CONNECT, SOCKS5),
the system Python's pip against a simple index, git over dumb HTTP, and
Python's own sockets going around the proxy.

Every test runs under both mechanisms that keep the proxy the only way out:
a network namespace with only loopback that confined commands join, where
the proxy's ports are listeners made inside it ("namespace"), and
Landlock's TCP port rule with the socket filter alone ("ports",
`DSH_SANDBOX_NO_NETNS=1`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import shlex
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from net_servers import LocalServer, bare_repo, build_wheel, self_signed_context, serving, simple_index
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S, Spawned, gone_within, one_error, text

# The commands inside run with this PATH: the system's programs (python3 is
# Debian's, with its pip), never a developer's shims.
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

ALLOWED = ["allowed.test", "*.wild.test"]
DENIED = ["bad.allowed.test"]
# dsh's proxy resolves these names to these addresses (nothing else).
RESOLVE = {
    "allowed.test": "127.0.0.1",
    "other.test": "127.0.0.1",
    "bad.allowed.test": "127.0.0.1",
    "rebind.wild.test": "10.0.0.1",
    "x.wild.test": "127.0.0.1",
}

HELLO = "hello from the test's own server, through dsh's proxy\n"

# A call that hangs would fail the test, never block it: curl gives up first.
CURL = "curl -sS --max-time 20"

DENIAL = re.compile(r"^\[sandbox: connection to (?P<host>\S+) denied: (?P<why>.+)\]$")
MARKER = re.compile(r"^\[(exit code: (?P<code>-?\d+)|killed by signal: \S+)\]$")


def require(program: str) -> str:
    """The program on the commands' PATH, or a failure naming it."""
    found = shutil.which(program, path=SYSTEM_PATH)
    if found is None:
        pytest.fail(f"this test needs {program!r} on PATH={SYSTEM_PATH} (the commands' PATH); install it")
    return found


def require_pip() -> None:
    require("python3")
    done = subprocess.run(
        ["python3", "-m", "pip", "--version"],
        env={"PATH": SYSTEM_PATH, "HOME": "/nonexistent"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode != 0:
        pytest.fail(f"this test needs pip for the system's python3 (python3 -m pip): {done.stderr.strip()}")


# --- the session ---------------------------------------------------------------


@dataclass(repr=False)
class Ran:
    """A bash call's result, taken apart: the command's output, the
    proxy's refusals (host, why) and the exit code (None: killed)."""

    result: types.CallToolResult
    text: str
    output: str
    denials: list[tuple[str, str]]
    exit_code: int | None

    def __repr__(self) -> str:
        # What an assertion message shows: the whole result, as the model saw it.
        return "bash result:\n" + self.text


def taken_apart(result: types.CallToolResult) -> Ran:
    whole = text(result)
    lines = whole.split("\n")
    assert lines and MARKER.match(lines[-1]), f"no exit marker ending the result: {whole!r}"
    marker = MARKER.match(lines[-1])
    assert marker is not None
    code = marker.group("code")
    # The notes come last: the proxy's refusals just before the marker.
    notes_start = len(lines) - 1
    while notes_start > 0 and DENIAL.match(lines[notes_start - 1]):
        notes_start -= 1
    denials = [(m.group("host"), m.group("why")) for line in lines[notes_start:-1] if (m := DENIAL.match(line))]
    # A refusal anywhere else would be out of place (the contract has them end the text).
    stray = [line for line in lines[:notes_start] if DENIAL.match(line)]
    assert stray == [], f"a refusal not among the notes that end the result: {whole!r}"
    return Ran(result, whole, "\n".join(lines[:notes_start]), denials, None if code is None else int(code))


@dataclass
class Dsh:
    session: ClientSession
    project: Path

    async def bash(self, command: str) -> Ran:
        with anyio.fail_after(REQUEST_TIMEOUT_S + 30):
            result = await self.session.call_tool("bash", {"command": command})
        assert result.is_error is not True, f"the call itself failed: {text(result)}"
        return taken_apart(result)


# Which mechanism holds the proxy as the only way out (see the module doc).
MECHANISM = "namespace"


@pytest.fixture(params=["namespace", "ports"], autouse=True)
def mechanism(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys.modules[__name__], "MECHANISM", request.param)
    return request.param


def settings_for(network: dict[str, Any]) -> dict[str, Any]:
    return {
        "sandbox": {"enabled": True, "network": network},
        # Every command runs without asking, but confined.
        "permissions": {"allow": ["Bash"]},
    }


@asynccontextmanager
async def dsh_session(
    dsh_bin: str,
    spawned: Spawned,
    tmp_path: Path,
    *,
    network: dict[str, Any] | None = None,
    resolve: dict[str, str] | None = None,
    **callbacks: Any,
) -> AsyncIterator[Dsh]:
    """`dsh mcp` with the sandbox on and the domain lists, and the SDK's
    session with it; on leaving, dsh has exited by itself."""
    root = tmp_path / "dsh"
    project = root / "project"
    for d in (project, root / "home", root / "state", root / "config"):
        d.mkdir(parents=True)
    settings = root / "settings.json"
    settings.write_text(
        json.dumps(settings_for(network or {"allowedDomains": ALLOWED, "deniedDomains": DENIED}))
    )
    stderr = root / "stderr.txt"
    params = StdioServerParameters(
        env={
            # Never the real home, nor any user settings.
            "CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config",
            "HOME": str(root / "home"),
            "XDG_STATE_HOME": str(root / "state"),
            "XDG_CONFIG_HOME": str(root / "config"),
            "PATH": SYSTEM_PATH,
            "DSH_PROXY_RESOLVE": ",".join(f"{n}={a}" for n, a in (resolve or RESOLVE).items()),
            **({"DSH_SANDBOX_NO_NETNS": "1"} if MECHANISM == "ports" else {}),
        },
        command=dsh_bin,
        args=["mcp", "--settings", str(settings), "--settings-only", "--cwd", str(project)],
        cwd=str(root),
    )
    try:
        with one_error(), stderr.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                assert spawned.process is not None, "the SDK's spawn hook was not called"
                pid = spawned.process.pid
                async with ClientSession(
                    read, write, read_timeout_seconds=REQUEST_TIMEOUT_S + 30, **callbacks
                ) as session:
                    with anyio.fail_after(REQUEST_TIMEOUT_S):
                        await session.initialize()
                    yield Dsh(session, project)
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "dsh mcp still running"
    finally:
        print("--- dsh stderr:")
        print(stderr.read_text() if stderr.exists() else "")


@asynccontextmanager
async def web(tmp_path: Path, *, tls: bool = False) -> AsyncIterator[tuple[LocalServer, Path]]:
    """The test's own server on 127.0.0.1, serving a directory holding hello.txt."""
    root = tmp_path / ("https-root" if tls else "http-root")
    root.mkdir()
    (root / "hello.txt").write_text(HELLO)
    context = self_signed_context(tmp_path, ["allowed.test", "other.test"]) if tls else None
    with serving(root, context) as server:
        yield server, root


def refused(ran: Ran, host: str) -> str:
    """The proxy's one reason for refusing `host` in this call."""
    reasons = [why for h, why in ran.denials if h == host]
    assert len(reasons) == 1, f"expected one refusal of {host} ending the result, got {ran.denials}: {ran.text!r}"
    return reasons[0]


# --- the variables -------------------------------------------------------------


@pytest.mark.anyio
async def test_a_confined_command_gets_the_proxy_variables(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    names = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy"]
    command = "; ".join(f'printf "%s=%s\\n" {n} "${{{n}-<unset>}}"' for n in names)
    async with dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(command)
    assert ran.exit_code == 0, ran
    env = dict(line.split("=", 1) for line in ran.output.splitlines() if "=" in line)
    assert set(env) == set(names), ran
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]:
        assert re.fullmatch(r"http://([^@/]*@)?127\.0\.0\.1:\d+/?", env[name]), (name, env[name])
    for name in ["ALL_PROXY", "all_proxy"]:
        assert re.fullmatch(r"socks5h://([^@/]*@)?127\.0\.0\.1:\d+/?", env[name]), (name, env[name])
    assert env["HTTP_PROXY"] == env["http_proxy"] and env["ALL_PROXY"] == env["all_proxy"], env
    assert env["NO_PROXY"] == "" and env["no_proxy"] == "", env


@pytest.mark.anyio
async def test_the_mechanism_is_the_one_asked_for(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    """In the namespace a command sees only loopback, and a network
    namespace other than dsh's; with the port rule alone, dsh's own."""
    async with dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        assert spawned.process is not None
        dsh_netns = os.readlink(f"/proc/{spawned.process.pid}/ns/net")
        ran = await dsh.bash("readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '")
    assert ran.exit_code == 0, ran
    netns, *interfaces = ran.output.splitlines()
    host_interfaces = [line.split(":")[0].strip() for line in Path("/proc/net/dev").read_text().splitlines()[2:]]
    env = {**os.environ, **({"DSH_SANDBOX_NO_NETNS": "1"} if MECHANISM == "ports" else {})}
    status = subprocess.run([dsh_bin, "sandbox", "status"], env=env, capture_output=True, text=True, check=True)
    [by_domain] = [line for line in status.stdout.splitlines() if line.startswith("network by domain")]
    settings_file = tmp_path / "dsh" / "settings.json"
    shown = subprocess.run(
        [dsh_bin, "settings", "--settings", str(settings_file), "--settings-only"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    sandbox = json.loads(shown.stdout)["sandbox"]
    assert sandbox["networkMechanism"] == MECHANISM, sandbox
    assert sandbox["network"]["allowedDomains"] == ALLOWED, sandbox
    if MECHANISM == "namespace":
        assert netns != dsh_netns, ran
        assert interfaces == ["lo"], ran
        assert "held by a network namespace with only loopback" in by_domain, by_domain
    else:
        assert netns == dsh_netns, ran
        assert sorted(interfaces) == sorted(host_interfaces), ran
        assert "the weaker mechanism (no network namespace here)" in by_domain, by_domain


@pytest.mark.anyio
async def test_an_ended_calls_proxy_url_is_no_longer_served(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    """What outlives its call (a process the call's end missed, or a later
    call holding its variables) cannot use the proxy on: the proxy forgets
    a call's password once its shell has exited."""
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        url = server.url("allowed.test", "/hello.txt")
        first = await dsh.bash(f'echo "$HTTP_PROXY"; {CURL} -f {url}')
        assert first.exit_code == 0, first
        old_proxy, hello = first.output.split("\n", 1)
        assert hello == HELLO.rstrip("\n"), first
        # The proxy is told of the end as the shell exits, beside the call's
        # answer: polled with a deadline, in case this call comes first.
        later = await dsh.bash(
            "for i in $(seq 50); do "
            f"{CURL} -D - -o /dev/null -x {shlex.quote(old_proxy)} {url} | grep -q '^HTTP/1.. 407' "
            f"&& {{ {CURL} -D - -o /dev/null -x {shlex.quote(old_proxy)} {url}; exit 0; }}; sleep 0.1; done; exit 1"
        )
        assert later.exit_code == 0, later
        head = later.output.splitlines()
        assert head and re.match(r"HTTP/1\.[01] 407\b", head[0]), later
        assert "X-Dsh-Denied: the proxy URL names no running call" in later.output, later
        # Without a password at all: challenged, and refused.
        bare = re.sub(r"//[^@/]*@", "//", old_proxy)
        challenged = await dsh.bash(f"{CURL} -sS -o /dev/null -w '%{{http_code}}' -x {shlex.quote(bare)} {url}")
        assert challenged.output == "407", challenged
    # The first call's request, and at most one that came before the end was told.
    assert 1 <= len(server.seen.requests) <= 2, server.seen.requests


# --- HTTP through the proxy -----------------------------------------------------


@pytest.mark.anyio
async def test_an_allowed_domain_is_reached_over_http(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"{CURL} -f {server.url('allowed.test', '/hello.txt')}")
    assert ran.exit_code == 0, ran
    assert ran.output == HELLO.rstrip("\n"), ran
    assert ran.denials == [], ran
    assert server.seen.requests == [(f"allowed.test:{server.port}", "/hello.txt")], server.seen.requests


@pytest.mark.anyio
async def test_an_unlisted_domain_is_refused_with_403(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        url = server.url("other.test", "/hello.txt")
        failed = await dsh.bash(f"{CURL} -f {url}")
        assert failed.exit_code == 22, failed  # curl -f: the server (the proxy) said >= 400
        assert refused(failed, "other.test") == "not in allowedDomains", failed
        assert HELLO.strip() not in failed.text, failed

        answered = await dsh.bash(f"{CURL} -D - -o /dev/null {url}")
        assert answered.exit_code == 0, answered
        head = answered.output.splitlines()
        assert head and re.match(r"HTTP/1\.[01] 403\b", head[0]), answered
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in head[1:]) if v}
        assert headers.get("x-dsh-denied") == "not in allowedDomains", answered
        assert refused(answered, "other.test") == "not in allowedDomains", answered
        assert await server.reached_since(0) == [], "the refused request reached the server"
    assert server.seen.requests == [], server.seen.requests


@pytest.mark.anyio
async def test_a_denied_domain_is_refused_even_under_an_allowed_one(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"{CURL} -f {server.url('bad.allowed.test', '/hello.txt')}")
        assert ran.exit_code != 0, ran
        assert refused(ran, "bad.allowed.test") == "in deniedDomains", ran
        assert await server.reached_since(0) == [], "the refused request reached the server"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("host", "address"),
    [
        pytest.param("rebind.wild.test", "10.0.0.1", id="private"),
        # 127.0.0.1 is the test's server: the refusal is all that keeps it out.
        pytest.param("x.wild.test", "127.0.0.1", id="loopback"),
    ],
)
async def test_a_wildcard_name_resolving_to_a_private_address_is_refused(
    host: str, address: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"{CURL} -f {server.url(host, '/hello.txt')}")
        assert ran.exit_code != 0, ran
        why = refused(ran, host)
        # Matched by the wildcard (so not "not in allowedDomains"), refused for its address.
        assert why.startswith("resolves to a ") and why.endswith(f" address {address}"), why
        assert "private" in why or "loopback" in why, why
        assert await server.reached_since(0) == [], "the refused request reached the server"


# --- HTTPS through CONNECT, and SOCKS5 -------------------------------------------


@pytest.mark.anyio
async def test_https_through_connect_reaches_only_an_allowed_domain(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    require("curl")
    async with web(tmp_path, tls=True) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"{CURL} -kf {server.url('allowed.test', '/hello.txt')}")
        assert ran.exit_code == 0, ran
        assert ran.output == HELLO.rstrip("\n"), ran
        assert ran.denials == [], ran
        assert server.seen.requests == [(f"allowed.test:{server.port}", "/hello.txt")], server.seen.requests
        before = server.connection_count()

        other = await dsh.bash(f"{CURL} -kf {server.url('other.test', '/hello.txt')}")
        assert other.exit_code != 0, other
        assert refused(other, "other.test") == "not in allowedDomains", other
        assert await server.reached_since(before) == [], "the refused tunnel reached the server"
    assert len(server.seen.requests) == 1, server.seen.requests


@pytest.mark.anyio
async def test_socks5_reaches_an_allowed_domain(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(
            'case "$ALL_PROXY" in socks5h://*) ;; *) echo "ALL_PROXY=$ALL_PROXY"; exit 99;; esac; '
            f'{CURL} -f -x "$ALL_PROXY" {server.url("allowed.test", "/hello.txt")}'
        )
    assert ran.exit_code == 0, ran
    assert ran.output == HELLO.rstrip("\n"), ran
    assert ran.denials == [], ran
    assert server.seen.requests == [(f"allowed.test:{server.port}", "/hello.txt")], server.seen.requests


@pytest.mark.anyio
async def test_socks5_refuses_an_unlisted_domain(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("curl")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f'{CURL} -f -x "$ALL_PROXY" {server.url("other.test", "/hello.txt")}')
        assert ran.exit_code != 0, ran
        assert refused(ran, "other.test") == "not in allowedDomains", ran
        assert await server.reached_since(0) == [], "the refused connection reached the server"


# --- around the proxy ------------------------------------------------------------

RAW_TCP = """
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10).close()
except OSError as e:
    print("tcp:", type(e).__name__, e.errno)
else:
    print("tcp: connected")
"""

UDP = """
import socket
for family in (socket.AF_INET, socket.AF_INET6):
    try:
        socket.socket(family, socket.SOCK_DGRAM).close()
    except OSError as e:
        print("udp:", family.name, type(e).__name__, e.errno)
    else:
        print("udp:", family.name, "created")
"""


@pytest.mark.anyio
async def test_a_raw_tcp_connection_around_the_proxy_is_refused(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    require("python3")
    async with web(tmp_path) as (server, _), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"python3 -c {shlex.quote(RAW_TCP)} {server.port}")
        assert ran.exit_code == 0, ran
        assert ran.output.strip() == "tcp: PermissionError 13", ran  # EACCES: Permission denied
        assert await server.reached_since(0) == [], "the raw connection reached the server"


@pytest.mark.anyio
async def test_a_udp_socket_cannot_be_made(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("python3")
    async with dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        ran = await dsh.bash(f"python3 -c {shlex.quote(UDP)}")
    assert ran.exit_code == 0, ran
    # EPERM: Operation not permitted (so no DNS either).
    assert ran.output.strip().splitlines() == [
        "udp: AF_INET PermissionError 1",
        "udp: AF_INET6 PermissionError 1",
    ], ran


LOCAL_SERVER = """
import socket, sys
try:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
except OSError as e:
    print("bind:", type(e).__name__, e.errno)
    sys.exit(0)
client = socket.create_connection(server.getsockname(), timeout=5)
conn, _ = server.accept()
conn.sendall(b"local")
print("served:", client.recv(5).decode())
"""


@pytest.mark.anyio
async def test_local_binding_is_applied_only_where_the_namespace_holds_it(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    """Claude Code's `allowLocalBinding`: a command's own server on loopback,
    reached directly (NO_PROXY names loopback), in its namespace; without
    one, Landlock cannot tell loopback from the world: not applied, said
    on stderr, and binding stays refused."""
    require("python3")
    network = {"allowedDomains": ALLOWED, "allowLocalBinding": True}
    async with dsh_session(dsh_bin, spawned, tmp_path, network=network) as dsh:
        ran = await dsh.bash(f'echo "no_proxy=$NO_PROXY"; python3 -c {shlex.quote(LOCAL_SERVER)}')
    assert ran.exit_code == 0, ran
    stderr = (tmp_path / "dsh" / "stderr.txt").read_text()
    if MECHANISM == "namespace":
        assert ran.output.splitlines() == ["no_proxy=localhost,127.0.0.1,::1", "served: local"], ran
        assert "allowLocalBinding is not applied" not in stderr, stderr
    else:
        assert ran.output.splitlines() == ["no_proxy=", "bind: PermissionError 13"], ran
        assert "allowLocalBinding is not applied" in stderr, stderr


@pytest.mark.anyio
async def test_a_server_a_background_task_started_is_reached_by_a_later_call(
    dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    """`npm run dev` in the background, then `curl localhost:…` in the next
    call: with `allowLocalBinding`, the session's confined commands share
    one namespace, so the server is reached (directly: NO_PROXY names
    loopback); never from outside it."""
    require("curl")
    require("python3")
    port = 47313
    network = {"allowedDomains": ALLOWED, "allowLocalBinding": True}
    async with dsh_session(dsh_bin, spawned, tmp_path, network=network) as dsh:
        (dsh.project / "marker.txt").write_text("served in the namespace\n")
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            started = await dsh.session.call_tool(
                "bash",
                {"command": f"python3 -m http.server {port} --bind 127.0.0.1", "run_in_background": True},
            )
        assert started.is_error is not True, text(started)
        # Polled with a deadline: the server needs a moment to listen.
        ran = await dsh.bash(
            f"for i in $(seq 100); do {CURL} -f http://localhost:{port}/marker.txt 2>/dev/null && exit 0; sleep 0.1; done; exit 1"
        )
        if MECHANISM == "namespace":
            assert ran.exit_code == 0, ran
            assert ran.output == "served in the namespace", ran
            assert ran.denials == [], ran
        else:
            assert ran.exit_code != 0, ran
        # Not on the host: the server listens in the commands' namespace.
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=2).close()


# --- real tools ------------------------------------------------------------------


@pytest.mark.anyio
async def test_pip_downloads_a_wheel_from_an_allowed_index(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require_pip()
    built = tmp_path / "built"
    built.mkdir()
    wheel = build_wheel(built)
    async with web(tmp_path) as (server, root), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        simple_index(root, wheel)
        # New directories cannot be made in the project root itself.
        (dsh.project / "downloads").mkdir()
        # pip ignores a plain-HTTP index on any host but localhost unless
        # the host is trusted (that is pip's rule, not dsh's).
        ran = await dsh.bash(
            "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check --no-input "
            f"--trusted-host allowed.test --index-url {server.url('allowed.test', '/simple/')} "
            "demo==1.0 -d downloads"
        )
        assert ran.exit_code == 0, (ran, server.seen.requests)
        assert ran.denials == [], ran
        landed = dsh.project / "downloads" / wheel.name
        assert landed.is_file(), (ran, sorted(p.name for p in (dsh.project / "downloads").iterdir()))
        assert landed.read_bytes() == wheel.read_bytes()
    paths = server.seen.paths()
    assert f"/files/{wheel.name}" in paths, paths
    assert set(server.seen.hosts()) == {"allowed.test"}, server.seen.requests


@pytest.mark.anyio
async def test_git_clones_over_http_from_an_allowed_domain(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    require("git")
    git_env = {
        "PATH": SYSTEM_PATH,
        "HOME": str(tmp_path / "git-home"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    content = "cloned through dsh's proxy\n"
    async with web(tmp_path) as (server, root), dsh_session(dsh_bin, spawned, tmp_path) as dsh:
        commit = bare_repo(root, tmp_path / "git-scratch", git_env, content)
        (dsh.project / "clones").mkdir()
        ran = await dsh.bash(
            f"git clone -q {server.url('allowed.test', '/repo.git')} clones/repo && git -C clones/repo rev-parse HEAD"
        )
        assert ran.exit_code == 0, ran
        assert ran.output.strip().splitlines()[-1] == commit, ran
        assert ran.denials == [], ran
        assert (dsh.project / "clones" / "repo" / "README.txt").read_text() == content
    assert "/repo.git/info/refs" in [p.split("?")[0] for p in server.seen.paths()], server.seen.paths()
    assert set(server.seen.hosts()) == {"allowed.test"}, server.seen.requests


# --- asking about an unlisted domain ------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("answer", ["allow once", "decline"])
async def test_an_unlisted_domain_is_asked_about(
    answer: str, dsh_bin: str, spawned: Spawned, tmp_path: Path
) -> None:
    require("curl")
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        if answer == "decline":
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"decision": answer})

    network = {"allowedDomains": ALLOWED, "deniedDomains": DENIED, "askUnknownDomains": True}
    async with web(tmp_path) as (server, _), dsh_session(
        dsh_bin, spawned, tmp_path, network=network, elicitation_callback=elicit
    ) as dsh:
        ran = await dsh.bash(f"{CURL} -f {server.url('other.test', '/hello.txt')}")
        assert len(asked) == 1, (asked, ran)
        assert "other.test" in asked[0].message, asked[0]
        if answer == "decline":
            assert ran.exit_code != 0, ran
            refused(ran, "other.test")
            assert await server.reached_since(0) == [], "the declined request reached the server"
        else:
            assert ran.exit_code == 0, ran
            assert ran.output == HELLO.rstrip("\n"), ran
            assert ran.denials == [], ran
            assert server.seen.requests == [(f"other.test:{server.port}", "/hello.txt")], server.seen.requests
