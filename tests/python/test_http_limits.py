"""`dsh mcp --http` under pressure: request size and time limits, per-principal
limits, approvals whose requestState is bound to the principal, TLS, and a
graceful shutdown that lets running calls finish (and kills them after the
grace).

Requests are the stateless 2026-07-28 revision posted by hand (one request,
one answer), so each test says exactly what goes over the wire.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from http_support import TOKENS, HttpServer, http_server

SETTINGS = {"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)", "Bash(touch:*)"]}}
DEADLINE_S = 20


def serve(dsh_bin: str, folder: Path, *flags: str) -> Any:
    return http_server(dsh_bin, folder, settings=SETTINGS, flags=flags)


def call_body(call_id: int, command: str, background: bool = False, **params: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {"command": command}
    if background:
        arguments["run_in_background"] = True
    return {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "limits-test", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
            },
            "name": "bash",
            "arguments": arguments,
            **params,
        },
    }


def headers(who: str | None) -> dict[str, str]:
    """The revision's headers for a `tools/call` of `bash`, with `who`'s token."""
    sent = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "bash",
    }
    if who is not None:
        sent["Authorization"] = f"Bearer {TOKENS[who]}"
    return sent


def answer_of(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC answer in a JSON or an event-stream body."""
    assert response.status_code == 200, (response.status_code, response.text)
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "id" in message:
                    return message
        raise AssertionError(f"no answer in the stream: {response.text!r}")
    return response.json()


def post(client: httpx2.Client, server: HttpServer, who: str | None, body: dict[str, Any]) -> dict[str, Any]:
    return answer_of(client.post(f"{server.base}/mcp", json=body, headers=headers(who)))


def text_of(answer: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in answer["result"]["content"])


def wait_for(condition: Any, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def closed_by_server(sock: socket.socket) -> bytes:
    """Reads until the server closes the connection; what it sent."""
    sock.settimeout(DEADLINE_S)
    received = b""
    while chunk := sock.recv(4096):
        received += chunk
    return received


def test_bodies_and_slow_clients_are_bounded(dsh_bin: str, tmp_path: Path) -> None:
    with serve(dsh_bin, tmp_path, "--max-request-bytes", "2048", "--idle-timeout", "1") as server, \
            httpx2.Client(timeout=DEADLINE_S) as client:
        large = call_body(1, "echo " + "x" * 4000)
        # Not read without a token; too large with one (declared or streamed).
        assert client.post(f"{server.base}/mcp", json=large, headers=headers(None)).status_code == 401
        refused = client.post(f"{server.base}/mcp", json=large, headers=headers("alice"))
        assert refused.status_code == 413 and "2048" in refused.text, (refused.status_code, refused.text)
        chunked = client.post(
            f"{server.base}/mcp",
            content=iter([json.dumps(large).encode()[i:i + 500] for i in range(0, 4100, 500)]),
            headers={**headers("alice"), "Content-Type": "application/json"},
        )
        assert chunked.status_code == 413, (chunked.status_code, chunked.text)
        # Within the limit, the call runs.
        assert text_of(post(client, server, "alice", call_body(2, "echo fits"))).startswith("fits")

        port = int(server.base.rsplit(":", 1)[1])
        # A connection that never sends a request, or never finishes its head, is closed.
        with socket.create_connection(("127.0.0.1", port)) as idle:
            started = time.monotonic()
            assert closed_by_server(idle) == b""
            assert time.monotonic() - started < 10
        with socket.create_connection(("127.0.0.1", port)) as slow_head:
            slow_head.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed_by_server(slow_head)
        # A body that stops arriving: 408, and nothing ran.
        body = json.dumps(call_body(3, "touch slow-body")).encode()
        with socket.create_connection(("127.0.0.1", port)) as slow_body:
            head = "".join(f"{k}: {v}\r\n" for k, v in headers("alice").items())
            slow_body.sendall(
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}Content-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:20]
            )
            reply = closed_by_server(slow_body)
            assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert not (server.work / "slow-body").exists()


def test_each_principal_has_its_own_limits(dsh_bin: str, tmp_path: Path) -> None:
    with serve(
        dsh_bin, tmp_path, "--max-calls-per-principal", "1", "--max-tasks-per-principal", "1"
    ) as server, httpx2.Client(timeout=DEADLINE_S) as client:
        # Live tasks: one each.
        first = post(client, server, "alice", call_body(1, "sleep 30", background=True))
        assert not first["result"]["isError"], first
        second = post(client, server, "alice", call_body(2, "sleep 31", background=True))
        assert second["result"]["isError"] and "too many live tasks for this agent" in text_of(second), second
        bobs = post(client, server, "bob", call_body(3, "sleep 32", background=True))
        assert not bobs["result"]["isError"], bobs

        # Calls at once: one each. Alice's long call holds her slot.
        results: dict[str, dict[str, Any]] = {}
        long_call = threading.Thread(
            target=lambda: results.setdefault(
                "long", post(httpx2.Client(timeout=DEADLINE_S), server, "alice",
                             call_body(4, "touch long-started && sleep 3"))
            )
        )
        long_call.start()
        try:
            wait_for(lambda: (server.work / "long-started").exists(), "alice's long call to start")
            refused = post(client, server, "alice", call_body(5, "touch refused"))
            assert refused["result"]["isError"], refused
            assert refused["result"]["_meta"]["dsh/error"]["code"] == "LIMIT_EXCEEDED", refused
            assert "too many calls at once" in text_of(refused), refused
            assert not (server.work / "refused").exists()
            # Bob is not held up by Alice.
            assert text_of(post(client, server, "bob", call_body(6, "echo bob-runs"))).startswith("bob-runs")
        finally:
            long_call.join(DEADLINE_S)
        assert not results["long"]["result"]["isError"], results
        # Her slot is free again.
        assert text_of(post(client, server, "alice", call_body(7, "echo again"))).startswith("again")


def test_an_approval_answers_only_its_principal(dsh_bin: str, tmp_path: Path) -> None:
    allow = {"dsh_approval": {"action": "accept", "content": {"decision": "allow once"}}}
    with serve(dsh_bin, tmp_path) as server, httpx2.Client(timeout=DEADLINE_S) as client:
        # `mkdir` is not allowed by the settings: an ask.
        asked = post(client, server, "alice", call_body(1, "mkdir made"))["result"]
        assert asked["resultType"] == "input_required", asked
        state = asked["requestState"]
        # Bob replays Alice's state with an approval: refused, nothing runs.
        stolen = post(client, server, "bob", call_body(2, "mkdir made", inputResponses=allow, requestState=state))
        assert stolen.get("error", {}).get("code") == -32602, stolen
        assert "this caller" in stolen["error"]["message"], stolen
        # The same state for another command: refused.
        other = post(client, server, "alice", call_body(3, "mkdir other", inputResponses=allow, requestState=state))
        assert other.get("error", {}).get("code") == -32602, other
        assert not (server.work / "made").exists() and not (server.work / "other").exists()
        # Alice's own retry runs; its replay does not.
        ran = post(client, server, "alice", call_body(4, "mkdir made", inputResponses=allow, requestState=state))
        assert not ran["result"]["isError"], ran
        assert (server.work / "made").is_dir()
        (server.work / "made").rmdir()
        replayed = post(client, server, "alice", call_body(5, "mkdir made", inputResponses=allow, requestState=state))
        assert "already used" in replayed["error"]["message"], replayed
        assert not (server.work / "made").exists()


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dsh test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


def test_tls(dsh_bin: str, tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with serve(dsh_bin, tmp_path, "--tls-cert", str(cert), "--tls-key", str(key)) as server:
        assert server.base.startswith("https://"), server.base
        with httpx2.Client(timeout=DEADLINE_S, verify=ssl.create_default_context(cafile=str(cert))) as client:
            assert client.get(f"{server.base}/healthz").text == "ok"
            assert text_of(post(client, server, "alice", call_body(1, "echo over-tls"))).startswith("over-tls")
        # Plain HTTP to the TLS port gets no answer.
        plain = server.base.replace("https://", "http://")
        with httpx2.Client(timeout=DEADLINE_S) as client, pytest.raises(httpx2.HTTPError):
            client.get(f"{plain}/healthz")
    # A key that is not the certificate's, or no certificate: a usage error at start.
    (tmp_path / "other").mkdir()
    other_cert, _ = self_signed(tmp_path / "other")
    for flags, why in (
        (["--tls-cert", str(other_cert), "--tls-key", str(key)], "does not go with"),
        (["--tls-cert", str(key), "--tls-key", str(key)], "no PEM certificate"),
        (["--tls-cert", str(cert)], "--tls-key"),
    ):
        done = subprocess.run(
            [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--allow-unauthenticated", *flags],
            capture_output=True, text=True, timeout=DEADLINE_S, env={"HOME": str(tmp_path)},
        )
        assert done.returncode == 2 and why in done.stderr, (flags, done.returncode, done.stderr)


def cmdline_pids(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def test_shutdown_lets_running_calls_finish_then_kills_the_rest(dsh_bin: str, tmp_path: Path) -> None:
    # Within the grace: the call finishes and its client gets the result.
    with serve(dsh_bin, tmp_path / "within", "--shutdown-grace", "30") as server:
        results: dict[str, Any] = {}
        call = threading.Thread(target=lambda: results.setdefault("call", post(
            httpx2.Client(timeout=DEADLINE_S), server, "alice",
            call_body(1, "touch started && sleep 2 && touch finished"))))
        call.start()
        wait_for(lambda: (server.work / "started").exists(), "the call to start")
        server.process.send_signal(signal.SIGTERM)
        call.join(DEADLINE_S)
        assert not results["call"]["result"]["isError"], results
        assert (server.work / "finished").exists()
        assert server.process.wait(timeout=DEADLINE_S) == 0

    # Past the grace: what still runs is killed, and the server exits.
    marker = f"60.{os.getpid()}{time.monotonic_ns() % 1000}"
    with serve(dsh_bin, tmp_path / "past", "--shutdown-grace", "1") as server:
        call = threading.Thread(target=lambda: results.setdefault("long", _quiet_post(
            server, "alice", call_body(2, f"touch long && sleep {marker}"))))
        call.start()
        wait_for(lambda: cmdline_pids(f"sleep {marker}"), "the long call's sleep")
        server.process.send_signal(signal.SIGTERM)
        started = time.monotonic()
        assert server.process.wait(timeout=DEADLINE_S) == 0
        assert time.monotonic() - started < 10
        wait_for(lambda: not cmdline_pids(f"sleep {marker}"), "the long call's sleep to be killed")
        call.join(DEADLINE_S)


def _quiet_post(server: HttpServer, who: str, body: dict[str, Any]) -> Any:
    """A post whose connection the shutting-down server may cut."""
    try:
        with httpx2.Client(timeout=DEADLINE_S) as client:
            return client.post(f"{server.base}/mcp", json=body, headers=headers(who)).text
    except httpx2.HTTPError as err:
        return err
