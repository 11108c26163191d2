"""`dsh mcp --http` as an OAuth resource server: JWT access tokens of a
loopback authorization server (its metadata and JWKS served by this test),
signed with RSA keys by PyJWT.

What is refused before any call runs, each with its status and
`WWW-Authenticate`, and with the call's `touch` never run: no token, a wrong
issuer, a wrong audience, an expired token, one not valid yet, `alg: none`,
HS256 (with the RSA public key as the HMAC secret too), a key id that stays
unknown after the keys are fetched again, a token without the required scope
(403). Accepted: a valid token (the SDK lists the tools and runs a command),
a key rotated in after start (the keys are fetched again, but not again for
every unknown key id), a static token of --token-file beside the JWTs. Two
subjects are two agents. The protected-resource metadata document (RFC 9728).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from support import REQUEST_TIMEOUT_S, connect, text

AUDIENCE = "dsh-oauth-test"
SCOPE = "mcp:tools"
STATIC = ("carol", "carol-static-token-0123456789")
SETTINGS = {"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)", "Bash(touch:*)"]}}
# dsh's least time between two loads of the keys (oauth.rs MIN_REFRESH_INTERVAL).
REFRESH_INTERVAL_S = 10


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Issuer:
    """A loopback authorization server: OpenID Connect discovery metadata
    (the RFC 8414 path answers 404, so dsh falls back) and a JWKS whose keys
    the test can rotate. Every request's path is recorded."""

    def __init__(self) -> None:
        self.keys = {kid: rsa.generate_private_key(public_exponent=65537, key_size=2048) for kid in ("k1", "k2", "k3")}
        self.published = ["k1"]
        self.requests: list[str] = []
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                issuer.requests.append(self.path)
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": issuer.url, "jwks_uri": f"{issuer.url}/jwks.json"}
                elif self.path == "/jwks.json":
                    body = issuer.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in list(self.published):
            jwk = RSAAlgorithm.to_jwk(self.keys[kid].public_key(), as_dict=True)
            keys.append({**jwk, "kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    def fetches(self) -> int:
        return self.requests.count("/jwks.json")

    def claims(self, sub: str = "alice", **changes: Any) -> dict[str, Any]:
        now = int(time.time())
        claims = {"iss": self.url, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600, "scope": f"openid {SCOPE}"}
        claims.update(changes)
        return {k: v for k, v in claims.items() if v is not None}

    def token(self, sub: str = "alice", kid: str = "k1", **changes: Any) -> str:
        return jwt.encode(self.claims(sub, **changes), self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def public_pem(self, kid: str = "k1") -> bytes:
        return self.keys[kid].public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def forged(self, header: dict[str, Any], secret: bytes | None) -> str:
        """A token with any header: HMAC-SHA256 with `secret`, or unsigned."""
        head = b64(json.dumps(header).encode())
        body = b64(json.dumps(self.claims()).encode())
        message = f"{head}.{body}".encode()
        signature = b"" if secret is None else hmac.new(secret, message, hashlib.sha256).digest()
        return f"{head}.{body}.{b64(signature)}"

    def __enter__(self) -> Issuer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Served:
    base: str
    work: Path
    stderr: list[str]


@contextmanager
def oauth_server(dsh_bin: str, tmp_path: Path, issuer: Issuer) -> Iterator[Served]:
    """`dsh mcp --http 127.0.0.1:0` in OAuth mode, with one static token too."""
    tokens = tmp_path / "tokens"
    tokens.write_text(f"{STATIC[0]}:{STATIC[1]}\n")
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    work = tmp_path / "work"
    work.mkdir()
    process = subprocess.Popen(
        [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--oauth-issuer", issuer.url, "--oauth-audience", AUDIENCE,
         "--oauth-scope", SCOPE, "--token-file", str(tokens),
         "--settings", str(settings), "--settings-only", "--cwd", str(work)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    stderr: list[str] = []
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        stderr.append(line)
        found = re.search(r"http://(127\.0\.0\.1:\d+)/mcp", line)
        assert found, f"no address on stderr: {line!r}"
        yield Served(f"http://{found.group(1)}", work, stderr)
    finally:
        process.terminate()
        try:
            status = process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            pytest.fail("dsh mcp --http did not stop on SIGTERM within 10 s")
        if process.stderr is not None:
            stderr.append(process.stderr.read())
        assert status == 0, "".join(stderr)


# One stateless (2026-07-28) request that runs a call leaving a trace: a
# file in the working directory. Authorised, it runs at once; refused, the
# file must not be there.
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "bash",
}


def touch_call(name: str) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "bash", "arguments": {"command": f"touch {name}"}, "_meta": meta}}


def touch(http: httpx2.Client, base: str, token: str | None, name: str = "marker") -> httpx2.Response:
    auth = {"Authorization": f"Bearer {token}"} if token is not None else {}
    return http.post(f"{base}/mcp", json=touch_call(name), headers={**HEADERS, **auth})


def challenge(response: httpx2.Response) -> dict[str, str]:
    """The parameters of a `Bearer` challenge."""
    value = response.headers["www-authenticate"]
    assert value.startswith("Bearer "), value
    return dict(re.findall(r'(\w+)="([^"]*)"', value))


async def session_check(base: str, token: str, generation: str) -> list[str]:
    """Opens a session with `token`; the tool names."""
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client, streamable_http_client(f"{base}/mcp", http_client=client) as (read, write, *_), ClientSession(read, write) as session:
        with anyio.fail_after(REQUEST_TIMEOUT_S):
            await connect(session, generation)
            return [t.name for t in (await session.list_tools()).tools]


def test_metadata_and_what_is_refused_before_any_call(dsh_bin: str, tmp_path: Path) -> None:
    with Issuer() as issuer, oauth_server(dsh_bin, tmp_path, issuer) as served, httpx2.Client(timeout=10) as http:
        base = served.base
        metadata_url = f"{base}/.well-known/oauth-protected-resource/mcp"
        # The protected-resource metadata, without a token, at both paths.
        expected = {
            "resource": f"{base}/mcp",
            "authorization_servers": [issuer.url],
            "scopes_supported": [SCOPE],
            "bearer_methods_supported": ["header"],
        }
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            document = http.get(f"{base}{path}")
            assert document.status_code == 200, document
            assert document.headers["content-type"] == "application/json"
            # Browser-based clients read it from their own origin.
            assert document.headers["access-control-allow-origin"] == "*"
            assert document.json() == expected
        assert http.post(f"{base}/.well-known/oauth-protected-resource", json={}).status_code == 405
        # Discovery took the OpenID Connect path after RFC 8414's 404, and
        # fetched the keys once.
        assert issuer.requests[:3] == [
            "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/jwks.json",
        ], issuer.requests
        assert issuer.fetches() == 1

        # No token: a 401 that says where the metadata is, and nothing more.
        missing = touch(http, base, None)
        assert missing.status_code == 401, missing
        assert missing.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata_url}"'

        pem = issuer.public_pem()
        refused = {
            "wrong issuer": (issuer.token(iss="http://127.0.0.1:1"), "issued"),
            "wrong audience": (issuer.token(aud="someone-else"), "aud"),
            "expired": (issuer.token(exp=int(time.time()) - 3600), "expired"),
            "not yet valid": (issuer.token(nbf=int(time.time()) + 3600), "not valid yet"),
            "no exp": (issuer.token(exp=None), "exp"),
            "alg none": (issuer.forged({"alg": "none", "kid": "k1", "typ": "JWT"}, None), "alg none"),
            "HS256": (issuer.forged({"alg": "HS256", "kid": "k1", "typ": "JWT"}, b"a-shared-secret"), "HMAC"),
            # The confusion attack: the RSA public key as the HMAC secret.
            "HS256 with the public key": (issuer.forged({"alg": "HS256", "kid": "k1", "typ": "JWT"}, pem), "HMAC"),
            "RS256 with the wrong key": (
                jwt.encode(issuer.claims(), issuer.keys["k2"], algorithm="RS256", headers={"kid": "k1"}), "signature",
            ),
            "not a JWT": ("not-a-jwt-and-not-a-static-token", "JWT"),
        }
        for case, (token, why) in refused.items():
            response = touch(http, base, token)
            assert response.status_code == 401, (case, response.status_code, response.text)
            params = challenge(response)
            assert params["error"] == "invalid_token", (case, params)
            assert why in params["error_description"], (case, params)
            assert params["resource_metadata"] == metadata_url, (case, params)
            # Nothing of the token comes back.
            assert token not in response.text and token not in response.headers["www-authenticate"], case

        # Valid but without the scope: 403 insufficient_scope, naming it.
        unscoped = touch(http, base, issuer.token(scope="openid profile"))
        assert unscoped.status_code == 403, (unscoped.status_code, unscoped.text)
        assert challenge(unscoped) == {"error": "insufficient_scope", "scope": SCOPE, "resource_metadata": metadata_url}
        # The scope in `scp` counts too; and this request shape does run
        # when the token is good, so the refusals above ran nothing.
        scp = touch(http, base, issuer.token(scope=None, scp=["x", SCOPE]), "scp-ok")
        assert scp.status_code == 200 and (served.work / "scp-ok").exists(), (scp.status_code, scp.text)
        good = touch(http, base, issuer.token(), "control")
        assert good.status_code == 200 and (served.work / "control").exists(), (good.status_code, good.text)
        static = touch(http, base, STATIC[1], "static-ok")
        assert static.status_code == 200 and (served.work / "static-ok").exists(), (static.status_code, static.text)

        # A token in the query is still refused outright.
        query = http.post(f"{base}/mcp?access_token={issuer.token()}", json=touch_call("marker"), headers=HEADERS)
        assert query.status_code == 400, query

    assert not (served.work / "marker").exists(), "a refused request ran its call"
    # No token reached the log.
    log = "".join(served.stderr)
    assert "dsh mcp: OAuth resource server for" in log, log
    for token, _ in refused.values():
        assert token not in log


def test_keys_rotated_in_are_fetched_but_not_for_every_unknown_kid(dsh_bin: str, tmp_path: Path) -> None:
    with Issuer() as issuer, oauth_server(dsh_bin, tmp_path, issuer) as served, httpx2.Client(timeout=10) as http:
        base = served.base
        assert issuer.fetches() == 1
        # The issuer rotates in k2 after dsh started: a token signed with it
        # makes dsh fetch the keys again, and passes.
        issuer.published = ["k1", "k2"]
        names = anyio.run(session_check, base, issuer.token(kid="k2"), "2025-11-25")
        assert names[:4] == ["bash", "bash_output", "bash_write", "bash_kill"], names
        assert issuer.fetches() == 2, issuer.requests
        started = time.monotonic()
        # k3 is never published. Within the interval, unknown kids (made up
        # or not) fetch nothing more.
        for kid in ("k3", "made-up-1", "made-up-2", "made-up-3"):
            token = jwt.encode(issuer.claims(), issuer.keys["k3"], algorithm="RS256", headers={"kid": kid})
            response = touch(http, base, token)
            assert response.status_code == 401, response
            assert "kid" in challenge(response)["error_description"], response.headers
        assert issuer.fetches() == 2, issuer.requests
        # After it, k3 makes dsh fetch once more; still unknown, still refused.
        time.sleep(max(0.0, REFRESH_INTERVAL_S + 0.5 - (time.monotonic() - started)))
        response = touch(http, base, issuer.token(kid="k3"))
        assert response.status_code == 401 and "kid" in challenge(response)["error_description"], response
        assert issuer.fetches() == 3, issuer.requests
        # k1 and k2 still pass.
        for kid in ("k1", "k2"):
            response = touch(http, base, issuer.token(kid=kid), f"{kid}-ok")
            assert response.status_code == 200 and (served.work / f"{kid}-ok").exists(), response
        assert issuer.fetches() == 3, issuer.requests
    assert not (served.work / "marker").exists(), "a refused request ran its call"


@pytest.mark.anyio
@pytest.mark.parametrize("generation", ["2025-11-25", "2026-07-28"])
async def test_subjects_are_agents_and_a_valid_token_runs_commands(
    generation: str, dsh_bin: str, tmp_path: Path
) -> None:
    with Issuer() as issuer, oauth_server(dsh_bin, tmp_path, issuer) as served:
        alice_http = create_mcp_http_client(headers={"Authorization": f"Bearer {issuer.token('alice')}"})
        bob_http = create_mcp_http_client(headers={"Authorization": f"Bearer {issuer.token('bob')}"})
        carol_http = create_mcp_http_client(headers={"Authorization": f"Bearer {STATIC[1]}"})
        async with alice_http, bob_http, carol_http:
            async with streamable_http_client(f"{served.base}/mcp", http_client=alice_http) as (read, write, *_), ClientSession(read, write) as alice:
                with anyio.fail_after(REQUEST_TIMEOUT_S):
                    await connect(alice, generation)
                    names = [t.name for t in (await alice.list_tools()).tools]
                    assert names[:4] == ["bash", "bash_output", "bash_write", "bash_kill"], names
                    echoed = await alice.call_tool("bash", {"command": "echo over-oauth"})
                    assert text(echoed) == "over-oauth\n[exit code: 0]", text(echoed)
                    touched = await alice.call_tool("bash", {"command": "touch ran"})
                    assert not touched.is_error and (served.work / "ran").exists(), text(touched)
                    started = await alice.call_tool("bash", {"command": "sleep 30", "run_in_background": True})
                    task = re.search(r"bash-\d+", text(started)).group(0)
                    # Another subject of the same issuer is another agent; so
                    # is the static token's principal.
                    for other_http in (bob_http, carol_http):
                        async with streamable_http_client(f"{served.base}/mcp", http_client=other_http) as (oread, owrite, *_), ClientSession(oread, owrite) as other:
                            await connect(other, generation)
                            refused = await other.call_tool("bash_kill", {"task_id": task})
                            assert refused.is_error and "another agent" in text(refused), text(refused)
                    killed = await alice.call_tool("bash_kill", {"task_id": task})
                    assert not killed.is_error and "killed background task" in text(killed), text(killed)


def test_oauth_settings_are_checked_at_start(dsh_bin: str, tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [dsh_bin, "mcp", "--http", "127.0.0.1:0", *args],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
        )

    https = run("--oauth-issuer", "https://as.example", "--oauth-audience", AUDIENCE)
    assert https.returncode == 2 and "--jwks-file" in https.stderr, https
    unauthenticated = run("--oauth-issuer", "http://127.0.0.1:1", "--oauth-audience", AUDIENCE, "--allow-unauthenticated")
    assert unauthenticated.returncode == 2, unauthenticated
    no_audience = run("--oauth-issuer", "http://127.0.0.1:1")
    assert no_audience.returncode == 2 and "--oauth-audience" in no_audience.stderr, no_audience
    empty = tmp_path / "jwks.json"
    empty.write_text(json.dumps({"keys": [{"kty": "oct", "k": b64(b"secret"), "kid": "h"}]}))
    symmetric = run("--oauth-issuer", "http://127.0.0.1:1", "--oauth-audience", AUDIENCE, "--jwks-file", str(empty))
    assert symmetric.returncode == 2 and "no key" in symmetric.stderr, symmetric
    # No token is generated in OAuth mode.
    assert not (tmp_path / ".local/state/dsh/mcp-token").exists()
