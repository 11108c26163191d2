"""Local servers and the content they serve, for test_network_domains.py:
an HTTP (or HTTPS) server on 127.0.0.1 in a thread of the test process that
records every connection it accepts and every request it answers, a
self-signed certificate, a minimal wheel in a PEP 503 simple index, and a
bare git repository served over git's dumb HTTP protocol.

Everything here runs outside dsh: the servers are what a confined command
reaches (or must not reach) through dsh's filtering proxy."""

from __future__ import annotations

import base64
import datetime
import hashlib
import http.server
import socket
import ssl
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio


@dataclass
class Seen:
    """What a server saw: accepted connections (peer address) and requests
    (Host header, path), in order."""

    connections: list[tuple[str, int]] = field(default_factory=list)
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hosts(self) -> list[str]:
        """The host names the requests named (Host header without its port)."""
        with self.lock:
            return [host.rsplit(":", 1)[0] if host.count(":") == 1 else host for host, _ in self.requests]

    def paths(self) -> list[str]:
        with self.lock:
            return [path for _, path in self.requests]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves a directory; records each request in the server's `Seen`."""

    protocol_version = "HTTP/1.0"

    def send_head(self) -> Any:
        seen: Seen = self.server.seen  # type: ignore[attr-defined]
        with seen.lock:
            seen.requests.append((self.headers.get("Host", ""), self.path))
        return super().send_head()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # quiet: what matters is in `Seen`


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    tls: ssl.SSLContext | None = None
    seen: Seen

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = self.socket.accept()
        with self.seen.lock:
            self.seen.connections.append(addr)
        if self.tls is not None:
            # The handshake happens in the request's own thread (on its
            # first read), never in the accepting one.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a refused TLS tunnel) is not an error here


@dataclass
class LocalServer:
    port: int
    seen: Seen
    scheme: str

    def url(self, host: str, path: str = "/") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    async def probe(self, deadline_s: float = 10.0) -> tuple[str, int]:
        """Connects from the test process itself and waits, polling with a
        deadline, until the server has accepted that connection; returns its
        address. The kernel queues connections in the order their handshakes
        completed and the server accepts them in that order, so whatever
        connected before the probe is in `seen.connections` before it."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=deadline_s) as sock:
            mine = sock.getsockname()
            deadline = time.monotonic() + deadline_s
            while True:
                with self.seen.lock:
                    if mine in self.seen.connections:
                        return mine
                if time.monotonic() > deadline:
                    raise AssertionError(f"the server did not accept the probe connection within {deadline_s} s")
                await anyio.sleep(0.01)

    async def reached_since(self, count: int) -> list[tuple[str, int]]:
        """The connections accepted after the first `count`, besides a
        probe's (made now, and waited for)."""
        mine = await self.probe()
        with self.seen.lock:
            return [c for c in self.seen.connections[count:] if c != mine]

    def connection_count(self) -> int:
        with self.seen.lock:
            return len(self.seen.connections)


@contextmanager
def serving(root: Path, tls: ssl.SSLContext | None = None) -> Iterator[LocalServer]:
    """A threaded HTTP server for `root` on 127.0.0.1 (an ephemeral port),
    with TLS when `tls` is given."""
    server = _Server(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    server.seen = Seen()
    server.tls = tls
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield LocalServer(server.server_address[1], server.seen, "https" if tls else "http")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --- TLS ------------------------------------------------------------------------


def self_signed_context(directory: Path, names: list[str]) -> ssl.SSLContext:
    """A server context with a fresh self-signed certificate for `names`
    (written to `directory` as cert.pem and key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    return context


# --- a wheel in a simple index ----------------------------------------------------


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(directory: Path, name: str = "demo", version: str = "1.0") -> Path:
    """A minimal valid pure-Python wheel, `NAME-VERSION-py3-none-any.whl`."""
    dist_info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": f'VERSION = "{version}"\n'.encode(),
        f"{dist_info}/METADATA": (
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: a test wheel\n"
        ).encode(),
        f"{dist_info}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: dsh-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ).encode(),
    }
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in files.items())
    record += f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in files.items():
            zf.writestr(path, data)
    return wheel


def simple_index(root: Path, wheel: Path, project: str = "demo") -> None:
    """`root/simple/PROJECT/index.html` (PEP 503) linking to the wheel,
    copied to `root/files/`."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    data = wheel.read_bytes()
    (files / wheel.name).write_bytes(data)
    digest = hashlib.sha256(data).hexdigest()
    page = root / "simple" / project
    page.mkdir(parents=True, exist_ok=True)
    (page / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n"
        f'<a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a>\n'
        "</body></html>\n"
    )
    (root / "simple" / "index.html").write_text(
        f'<!DOCTYPE html>\n<html><body><a href="{project}/">{project}</a></body></html>\n'
    )


# --- a git repository over dumb HTTP ------------------------------------------------


def _git(args: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def bare_repo(root: Path, scratch: Path, env: dict[str, str], content: str) -> str:
    """`root/repo.git`, a bare repository with one commit holding
    README.txt = `content`, made servable over dumb HTTP; returns the
    commit's id."""
    work = scratch / "repo-work"
    work.mkdir(parents=True)
    _git(["init", "-q", "-b", "main"], work, env)
    (work / "README.txt").write_text(content)
    _git(["add", "README.txt"], work, env)
    _git(["-c", "user.name=dsh tests", "-c", "user.email=tests@dsh.invalid", "commit", "-q", "-m", "one"], work, env)
    commit = _git(["rev-parse", "HEAD"], work, env).strip()
    bare = root / "repo.git"
    _git(["clone", "-q", "--bare", str(work), str(bare)], scratch, env)
    _git(["update-server-info"], bare, env)
    return commit

