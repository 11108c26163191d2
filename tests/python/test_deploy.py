"""deploy/: the Kubernetes manifests against the API schemas of named
Kubernetes versions (kubernetes-validate's bundled JSON schemas, no network),
the properties the deployment rests on read from the YAML, and the
Containerfile's ENTRYPOINT run as the image would run it: the same arguments
(plus the Deployment's) on a loopback address, /healthz and the HEALTHCHECK
command answering, the allowed Host let through, SIGTERM stopping it.

No container engine or cluster is needed: the image itself is not built here.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
KUBE = DEPLOY / "kubernetes"
CONTAINERFILE = DEPLOY / "Containerfile"

# The oldest Kubernetes minor still commonly run and the newest whose schemas
# kubernetes-validate (pinned in requirements.txt) bundles.
KUBERNETES_VERSIONS = ["1.30.0", "1.37.0"]
UID = 10001
PORT = 8787


# --- reading the files ----------------------------------------------------------


def manifests() -> list[tuple[str, dict[str, Any]]]:
    """Every document of every manifest in deploy/kubernetes, by file."""
    found = []
    for path in sorted(KUBE.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                found.append((path.name, doc))
    return found


def kustomization() -> dict[str, Any]:
    return yaml.safe_load((KUBE / "kustomization.yaml").read_text())


def generated() -> list[tuple[str, dict[str, Any]]]:
    """The ConfigMaps kustomization.yaml generates, as kustomize would (less
    the hash suffix)."""
    maps = []
    for gen in kustomization().get("configMapGenerator", []):
        data = {Path(f).name: (KUBE / f).read_text() for f in gen["files"]}
        maps.append(
            (
                "kustomization.yaml",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": gen["name"]}, "data": data},
            )
        )
    return maps


def one(kind: str) -> dict[str, Any]:
    docs = [doc for _, doc in manifests() if doc["kind"] == kind]
    assert len(docs) == 1, f"expected one {kind}, found {len(docs)}"
    return docs[0]


def instructions() -> list[tuple[str, str]]:
    """The Containerfile's instructions (continuations joined, comments out)."""
    lines: list[tuple[str, str]] = []
    pending = ""
    for raw in CONTAINERFILE.read_text().splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        text = pending + stripped
        pending = ""
        keyword, _, rest = text.partition(" ")
        lines.append((keyword.upper(), rest.strip()))
    return lines


def instruction(keyword: str) -> list[str]:
    return [rest for kw, rest in instructions() if kw == keyword]


def entrypoint() -> list[str]:
    (text,) = instruction("ENTRYPOINT")
    argv = json.loads(text)
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), text
    return argv


def dsh_argv() -> list[str]:
    """The ENTRYPOINT from `dsh` on (after an init such as `tini --`)."""
    argv = entrypoint()
    return argv[argv.index("dsh"):]


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def container() -> dict[str, Any]:
    (c,) = one("Deployment")["spec"]["template"]["spec"]["containers"]
    return c


def port_number(c: dict[str, Any], port: int | str) -> int:
    if isinstance(port, int):
        return port
    (number,) = [p["containerPort"] for p in c["ports"] if p.get("name") == port]
    return number


# --- the schemas ------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid_for_the_kubernetes_api(version: str) -> None:
    docs = manifests() + generated()
    assert {doc["kind"] for _, doc in docs} >= {
        "Namespace", "Deployment", "Service", "Secret", "NetworkPolicy", "ConfigMap",
    }
    namespace = kustomization()["namespace"]
    for name, doc in docs:
        if doc["kind"] != "Namespace":
            # What kustomize's namespace transformer adds.
            doc = {**doc, "metadata": {**doc["metadata"], "namespace": namespace}}
        try:
            # Strict: an unknown field (a typo, a field of another version) fails.
            validated = kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as e:
            where, why = ".".join(map(str, e.absolute_path)), e.message
        else:
            assert validated == version.rsplit(".", 1)[0]
            continue
        pytest.fail(f"{name}: {doc['kind']} is invalid for Kubernetes {version}: {where}: {why}")


def test_the_strict_schema_catches_a_misspelt_field() -> None:
    deployment = one("Deployment")
    spec = deployment["spec"]["template"]["spec"]
    broken = {**deployment, "spec": {**deployment["spec"], "template": {
        **deployment["spec"]["template"], "spec": {**spec, "securityContex": {}}}}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES_VERSIONS[0], strict=True)


def test_the_kustomization_names_every_manifest_and_what_they_reference() -> None:
    k = kustomization()
    listed = set(k["resources"])
    present = {p.name for p in KUBE.glob("*.yaml")} - {"kustomization.yaml"}
    assert listed == present, f"kustomization.yaml lists {sorted(listed)}, the directory has {sorted(present)}"
    pod = one("Deployment")["spec"]["template"]["spec"]
    configmaps = {v["configMap"]["name"] for v in pod["volumes"] if "configMap" in v}
    assert configmaps == {g["name"] for g in k["configMapGenerator"]}
    (image,) = k["images"]
    assert container()["image"].split(":")[0] == image["name"]
    assert one("Namespace")["metadata"]["name"] == k["namespace"]


# --- what the deployment rests on ------------------------------------------------


def test_the_pod_runs_unprivileged() -> None:
    pod = one("Deployment")["spec"]["template"]["spec"]
    c = container()
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == UID
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert pod["automountServiceAccountToken"] is False
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    sc = c["securityContext"]
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert not sc.get("capabilities", {}).get("add")
    assert not sc.get("privileged")
    assert sc.get("runAsUser", UID) == UID
    assert all("hostPath" not in v for v in pod["volumes"])
    # The image's user is the pod's.
    (user,) = instruction("USER")
    assert user.split(":")[0] == str(UID)
    # A read-only root: the workspace (the image's WORKDIR), /tmp and HOME are
    # volumes of the pod's own, bounded in size.
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in c["volumeMounts"]}
    workdir = instruction("WORKDIR")[-1]
    home = re.search(r"HOME=(\S+)", " ".join(instruction("ENV"))).group(1)
    for path in (workdir, "/tmp", home):
        assert "emptyDir" in mounts[path], f"{path} is not an emptyDir"
        assert mounts[path]["emptyDir"].get("sizeLimit"), f"{path} has no sizeLimit"
    assert c["resources"]["limits"].keys() >= {"cpu", "memory", "ephemeral-storage"}
    assert one("Deployment")["spec"]["replicas"] == 1


def test_the_probes_ask_healthz_on_the_served_port() -> None:
    c = container()
    assert option(dsh_argv(), "--http").endswith(f":{PORT}")
    for probe in ("livenessProbe", "readinessProbe"):
        get = c[probe]["httpGet"]
        assert get["path"] == "/healthz", probe
        assert port_number(c, get["port"]) == PORT, probe
        # /healthz is answered for any Host; a probe needs no header.
        assert "httpHeaders" not in get
    service = one("Service")
    (port,) = service["spec"]["ports"]
    assert port_number(c, port["targetPort"]) == PORT
    assert service["spec"]["type"] == "ClusterIP"
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_the_token_comes_from_the_secret_and_no_command_may_read_it() -> None:
    c = container()
    pod = one("Deployment")["spec"]["template"]["spec"]
    secret = one("Secret")
    token_file = Path(option(dsh_argv(), "--token-file"))
    # A literal token in the manifest would be in every `kubectl get -o yaml`.
    for env in c.get("env", []):
        assert env["name"] != "DSH_MCP_TOKEN" or "valueFrom" in env, env
    (mount,) = [m for m in c["volumeMounts"] if m["mountPath"] == str(token_file.parent)]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == secret["metadata"]["name"]
    assert mount.get("readOnly") is True
    assert volume["secret"].get("defaultMode", 0o644) & 0o007 == 0, "the token file is world-readable"
    assert token_file.name in secret.get("stringData", secret.get("data", {}))
    # The policy denies reading the token's directory to commands and file tools.
    settings = json.loads((KUBE / "settings.json").read_text())
    assert f"Read(/{token_file.parent}/**)" in settings["permissions"]["deny"]


def test_the_placeholder_token_is_refused_by_dsh(dsh_bin: str, tmp_path: Path) -> None:
    tokens = tmp_path / "tokens"
    tokens.write_text(one("Secret")["stringData"]["tokens"])
    assert "REPLACE" in tokens.read_text()
    done = subprocess.run(
        [dsh_bin, "mcp", "--http", "127.0.0.1:0", "--token-file", str(tokens)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
    )
    assert done.returncode == 2, done.stderr
    assert "16 characters" in done.stderr


def test_the_network_policy_admits_only_the_gateway_and_dns() -> None:
    policy = one("NetworkPolicy")
    labels = one("Deployment")["spec"]["template"]["metadata"]["labels"]
    spec = policy["spec"]
    assert spec["podSelector"]["matchLabels"].items() <= labels.items()
    assert sorted(spec["policyTypes"]) == ["Egress", "Ingress"]
    (ingress,) = spec["ingress"]
    assert [p["port"] for p in ingress["ports"]] == [PORT]
    assert ingress["from"] and all(peer.get("podSelector", {}).get("matchLabels") for peer in ingress["from"])
    assert all("ipBlock" not in peer for peer in ingress["from"])
    for rule in spec["egress"]:
        assert {p["port"] for p in rule["ports"]} == {53}, rule
        assert all("ipBlock" not in peer for peer in rule["to"])


def test_the_allowed_hosts_are_the_service_names() -> None:
    hosts = option_values(container()["args"], "--allowed-host")
    name = one("Service")["metadata"]["name"]
    namespace = kustomization()["namespace"]
    assert f"{name}.{namespace}.svc.cluster.local" in hosts
    assert all(h == name or h.startswith(f"{name}.{namespace}") for h in hosts), hosts


def option_values(argv: list[str], name: str) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == name]


# --- the Containerfile ---------------------------------------------------------------


def test_the_containerfile_builds_dsh_in_two_stages() -> None:
    stages = instruction("FROM")
    assert stages[0].split()[0].startswith("rust:1-bookworm"), stages
    assert stages[-1].split()[0] == "debian:bookworm-slim", stages
    assert any("cargo build --release --locked -p dsh" in run for run in instruction("RUN"))
    assert instruction("EXPOSE") == [str(PORT)]
    (check,) = instruction("HEALTHCHECK")
    assert "/healthz" in check
    installed = " ".join(instruction("RUN"))
    for package in ("bash", "ca-certificates"):
        assert package in installed
    init = entrypoint()[: entrypoint().index("dsh")]
    if init:
        assert init[0] in installed, f"the ENTRYPOINT's {init[0]} is not installed"
    # What the image copies from the build context exists and is not ignored.
    ignored = [line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert "target" in ignored
    for copy in instruction("COPY"):
        if copy.startswith("--from"):
            continue
        sources = copy.split()[:-1]
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
            assert not any(Path(source).match(p) or source.startswith(p + "/") for p in ignored), source
    # The settings the ENTRYPOINT names are the ones the image copies.
    settings = option(dsh_argv(), "--settings")
    assert any(c.split()[-1] == settings for c in instruction("COPY")), settings


def test_every_flag_of_the_entrypoint_and_the_deployment_is_dsh_mcps(dsh_bin: str) -> None:
    help_text = subprocess.run([dsh_bin, "mcp", "--help"], capture_output=True, text=True,
                               timeout=30, check=True).stdout
    for flag in [a for a in dsh_argv() + container()["args"] if a.startswith("--")]:
        assert re.search(rf"(^|\s){re.escape(flag)}[\s=,]", help_text), f"{flag} is not a flag of dsh mcp"


@contextmanager
def served(dsh_bin: str, tmp_path: Path, token: str) -> Iterator[tuple[str, int, subprocess.Popen[str]]]:
    """The ENTRYPOINT and the Deployment's args, with the image's paths mapped
    to files here and the address on loopback; yields (host, port, process)."""
    settings = tmp_path / "settings.json"
    settings.write_text((KUBE / "settings.json").read_text())
    tokens = tmp_path / "tokens"
    tokens.write_text(f"gateway:{token}\n")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    argv = dsh_argv() + container()["args"]
    mapped = {option(argv, "--http"): "127.0.0.1:0", option(argv, "--settings"): str(settings),
              option(argv, "--token-file"): str(tokens)}
    argv = [dsh_bin] + [mapped.get(a, a) for a in argv[1:]]
    process = subprocess.Popen(
        argv, cwd=workspace, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path)},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        assert found, f"no address on stderr: {line!r} ({shlex.join(argv)})"
        yield "127.0.0.1", int(found.group(1)), process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def request(port: int, method: str, path: str, headers: dict[str, str], body: str | None = None) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        return response.status, response.read().decode(errors="replace")
    finally:
        conn.close()


def test_the_entrypoint_serves_healthz_admits_the_service_host_and_stops_on_sigterm(
    dsh_bin: str, tmp_path: Path
) -> None:
    token = secrets.token_hex(32)
    host = option_values(container()["args"], "--allowed-host")[-1]
    initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test_deploy", "version": "0"}}})
    mcp_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    with served(dsh_bin, tmp_path, token) as (_, port, process):
        assert request(port, "GET", "/healthz", {"Host": "10.1.2.3:8787"}) == (200, "ok")
        # The image's HEALTHCHECK, on this port.
        check = json.loads(instruction("HEALTHCHECK")[0].split("CMD", 1)[1])
        check = [a.replace(f"/{PORT}", f"/{port}") for a in check]
        assert subprocess.run(check, timeout=10).returncode == 0, check
        # The Service's name is let through with the token; a foreign Host and
        # a missing token are not.
        status, body = request(port, "POST", "/mcp", {**mcp_headers, "Host": f"{host}:{PORT}",
                                                      "Authorization": f"Bearer {token}"}, initialize)
        assert status == 200, body
        assert '"serverInfo"' in body
        status, _ = request(port, "POST", "/mcp", {**mcp_headers, "Host": "attacker.example",
                                                   "Authorization": f"Bearer {token}"}, initialize)
        assert status == 403
        status, _ = request(port, "POST", "/mcp", {**mcp_headers, "Host": host}, initialize)
        assert status == 401
        process.send_signal(signal.SIGTERM)
        try:
            assert process.wait(timeout=10) == 0
        except subprocess.TimeoutExpired:
            pytest.fail("dsh mcp did not stop on SIGTERM within 10 s")
