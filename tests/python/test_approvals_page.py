"""The approval page of `dsh mcp --approvals-page` in a real browser.

The official MCP Python SDK is the client, over stdio, and declares no
elicitation: dsh cannot ask it, so an *ask* waits on the page. Debian's
chromium, headless, driven by Selenium through chromium-driver (both
installed by .ci/run), is the person: it opens the link dsh prints on
stderr, sees the ask arrive live (server-sent events; the test waits with
WebDriverWait, never a sleep), and clicks. A plain HTTP client checks that
the page refuses requests without the token or cookie, and a write from
another origin. Over HTTP (`--http`), a client without elicitation waits
on the same page, answered with `dsh approvals` from a terminal.

A screenshot of the page with an ask waiting is kept as
`target/approvals-page.png` (under CARGO_TARGET_DIR when set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from http_support import TOKENS
from http_support import http_server as serve_http
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait
from support import EXIT_DEADLINE_S, REQUEST_TIMEOUT_S, Spawned, cmdline, connect, gone_within, one_error, text

SETTINGS = {"permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)"]}}
# How long the page may take to show a change.
BROWSER_WAIT_S = 20.0
REPO = Path(__file__).resolve().parents[2]


def target_dir() -> Path:
    configured = os.environ.get("CARGO_TARGET_DIR")
    if not configured:
        return REPO / "target"
    path = Path(configured)
    return path if path.is_absolute() else REPO / path


def find_program(*names: str) -> str:
    for name in names:
        if os.path.isabs(name) and os.access(name, os.X_OK):
            return name
        if found := shutil.which(name):
            return found
    pytest.fail(f"none of {names} is installed (.ci/run installs chromium and chromium-driver)")


def start_browser(profile: Path) -> webdriver.Chrome:
    options = webdriver.ChromeOptions()
    # The real binary, not Debian's wrapper script.
    options.binary_location = find_program("/usr/lib/chromium/chromium", "chromium")
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--window-size=1100,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    service = Service(executable_path=find_program("chromedriver", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


def http(
    method: str, url: str, headers: dict[str, str] | None = None, body: bytes | None = None
) -> tuple[int, str]:
    """One request by a plain HTTP client (no cookie jar): status and body."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=REQUEST_TIMEOUT_S) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


async def page_url(stderr_path: Path) -> str:
    """The link dsh prints on stderr once the page serves."""
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while time.monotonic() < deadline:
        found = re.search(r"approvals page at (http://\S+)", stderr_path.read_text())
        if found:
            return found.group(1)
        await anyio.sleep(0.02)
    pytest.fail(f"no approvals page link on stderr: {stderr_path.read_text()!r}")


def ask_card(driver: webdriver.Chrome, command: str) -> Any:
    """Waits until the page shows an ask for `command`; its card."""
    xpath = f"//article[contains(@class, 'ask')][.//pre[@class='command' and text()={json.dumps(command)}]]"
    return WebDriverWait(driver, BROWSER_WAIT_S).until(
        EC.visibility_of_element_located((By.XPATH, xpath))
    )


def wait_gone(driver: webdriver.Chrome, card: Any) -> None:
    WebDriverWait(driver, BROWSER_WAIT_S).until(EC.staleness_of(card))


def error_code(result: types.CallToolResult) -> str | None:
    meta = result.meta or {}
    return (meta.get("dsh/error") or {}).get("code")


@pytest.mark.anyio
async def test_the_page_in_a_browser(dsh_bin: str, spawned: Spawned, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps(SETTINGS))
    stderr_path = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        env={
            "CLAUDE_CONFIG_DIR": "/nonexistent/dsh-tests-claude-config",
            "XDG_STATE_HOME": str(tmp_path / "state"),
        },
        command=dsh_bin,
        args=[
            "mcp", "--settings", str(settings), "--settings-only", "--cwd", str(work),
            "--approvals-page", "--approvals-wait", "120",
        ],
    )
    driver: webdriver.Chrome | None = None
    try:
        with one_error(), anyio.fail_after(180), stderr_path.open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                pid = spawned.process.pid
                # No elicitation callback: the SDK declares no elicitation.
                async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S * 6) as session:
                    await session.initialize()
                    url = await page_url(stderr_path)
                    driver = await anyio.to_thread.run_sync(start_browser, tmp_path / "profile")
                    await exercise(session, driver, url, work)
            assert await gone_within(pid, None, EXIT_DEADLINE_S), "dsh mcp still running"
            assert list((tmp_path / "state" / "dsh" / "approvals").iterdir()) == [], "state file left"
    finally:
        if driver is not None:
            await anyio.to_thread.run_sync(driver.quit)
        print("--- dsh stderr:")
        print(stderr_path.read_text() if stderr_path.exists() else "")


async def exercise(session: ClientSession, driver: webdriver.Chrome, url: str, work: Path) -> None:
    base = url.split("/?", 1)[0]
    host = base.removeprefix("http://")
    run = anyio.to_thread.run_sync

    # Without the link or a cookie: nothing.
    for path in ("/", "/api/state", "/events"):
        status, _ = await run(http, "GET", base + path)
        assert status == 401, (path, status)
    status, _ = await run(
        http, "POST", base + "/api/asks/1",
        {"Origin": base, "Content-Type": "application/json"}, b'{"answer":"allowOnce"}',
    )
    assert status == 401, status
    status, _ = await run(http, "GET", base + "/?token=" + "0" * 64)
    assert status == 403, status

    # The browser signs in with the link; the token leaves the address bar.
    await run(driver.get, url)
    await run(
        lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
            EC.text_to_be_present_in_element((By.ID, "status"), "live")
        )
    )
    assert driver.current_url == base + "/", driver.current_url
    cookies = {c["name"]: c for c in driver.get_cookies()}
    cookie = cookies[f"dsh_approvals_{host.rsplit(':', 1)[1]}"]
    assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict", cookie
    # The link was good once.
    status, _ = await run(http, "GET", url)
    assert status == 403, status

    # An ask arrives live and is allowed by a click.
    results: dict[str, types.CallToolResult] = {}

    async def call(name: str, command: str) -> None:
        results[name] = await session.call_tool("bash", {"command": command})

    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "approved", "touch approved")
        card = await run(ask_card, driver, "touch approved")
        assert "Bash(touch approved)" in card.text, card.text
        assert str(work) in card.text, card.text
        shot = target_dir() / "approvals-page.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        assert await run(driver.save_screenshot, str(shot)), "no screenshot"
        ask_id = card.get_attribute("data-id")

        # Another origin, even with the browser's own cookie, answers nothing.
        session_cookie = f"{cookie['name']}={cookie['value']}"
        status, said = await run(
            http, "POST", f"{base}/api/asks/{ask_id}",
            {"Origin": "http://evil.example", "Cookie": session_cookie, "Content-Type": "application/json"},
            b'{"answer":"allowOnce"}',
        )
        assert status == 403, (status, said)
        status, state = await run(http, "GET", base + "/api/state", {"Cookie": session_cookie})
        assert status == 200 and [a["id"] for a in json.loads(state)["pending"]] == [ask_id], state
        assert "approved" not in results and not (work / "approved").exists()

        await run(card.find_element(By.CSS_SELECTOR, "button[data-answer='allowOnce']").click)
        await run(wait_gone, driver, card)
    done = results["approved"]
    assert done.is_error is False, text(done)
    assert (work / "approved").exists()

    # A second ask, rejected by a click.
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "rejected", "touch rejected")
        card = await run(ask_card, driver, "touch rejected")
        await run(card.find_element(By.CSS_SELECTOR, "button[data-answer='rejectOnce']").click)
        await run(wait_gone, driver, card)
    refused = results["rejected"]
    assert refused.is_error is True, refused
    assert error_code(refused) == "PERMISSION_DENIED", refused
    assert not (work / "rejected").exists()
    empty = await run(driver.find_element, By.ID, "pending")
    assert "Nothing waits for an answer." in empty.text

    # A call running now is listed with its elapsed time, until it ends.
    row_xpath = "//div[@id='running']//tr[.//code[text()='run `sleep 3`']]"
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "slept", "sleep 3")
        row = await run(
            lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
                EC.visibility_of_element_located((By.XPATH, row_xpath))
            )
        )
        elapsed = await run(lambda: row.find_element(By.CLASS_NAME, "elapsed").text)
        assert re.fullmatch(r"\d+ s", elapsed), elapsed
    assert results["slept"].is_error is False, text(results["slept"])
    await run(
        lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
            EC.invisibility_of_element_located((By.XPATH, row_xpath))
        )
    )
    assert "No call is running." in (await run(driver.find_element, By.ID, "running")).text

    # A running call shows its output so far, and the Kill button stops it:
    # its command is killed and its client gets the call's end.
    def sleepers() -> list[int]:
        return [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc"))) if cmdline(pid) == "sleep 67"]

    row_xpath = "//div[@id='running']//tr[.//code[contains(text(), 'sleep 67')]]"
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, "killed", "echo output-so-far; sleep 67")
        row = await run(
            lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
                EC.text_to_be_present_in_element((By.XPATH, row_xpath), "output-so-far")
            )
            and driver.find_element(By.XPATH, row_xpath)
        )
        deadline = time.monotonic() + BROWSER_WAIT_S
        while not sleepers():
            assert time.monotonic() < deadline, "the call's sleep never started"
            await anyio.sleep(0.02)
        await run(row.find_element(By.CSS_SELECTOR, "button.kill").click)
    killed = results["killed"]
    assert killed.is_error is True, text(killed)
    assert error_code(killed) == "ABORTED", killed
    deadline = time.monotonic() + EXIT_DEADLINE_S
    while sleepers():
        assert time.monotonic() < deadline, "the killed call's sleep is still running"
        await anyio.sleep(0.02)
    await run(
        lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
            EC.invisibility_of_element_located((By.XPATH, row_xpath))
        )
    )

    # The last calls of the audit log, with how each was decided.
    await run(
        lambda: WebDriverWait(driver, BROWSER_WAIT_S).until(
            EC.text_to_be_present_in_element((By.ID, "records"), "bash `touch approved`")
        )
    )
    records = (await run(driver.find_element, By.ID, "records")).text
    assert "approval page answered allowOnce" in records, records
    assert "PERMISSION_DENIED" in records, records


# --- over HTTP: the same page for an HTTP client with nobody to ask ------------


def dsh_approvals(dsh_bin: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`dsh approvals ARGS…` finding the server's state file under `home`."""
    return subprocess.run(
        [dsh_bin, "approvals", *args],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)},
        capture_output=True, text=True, timeout=REQUEST_TIMEOUT_S,
    )


def waiting_asks(dsh_bin: str, home: Path) -> list[dict[str, Any]]:
    """Polls `dsh approvals list --json` until an ask waits."""
    deadline = time.monotonic() + REQUEST_TIMEOUT_S
    while True:
        listed = dsh_approvals(dsh_bin, home, "list", "--json")
        if listed.returncode == 0 and (asks := json.loads(listed.stdout)):
            return asks
        assert time.monotonic() < deadline, f"no ask appeared: {listed}"
        time.sleep(0.05)


@pytest.mark.anyio
@pytest.mark.parametrize("generation", ["2025-11-25", "2026-07-28"])
async def test_an_http_client_without_elicitation_waits_on_the_page(
    generation: str, dsh_bin: str, tmp_path: Path
) -> None:
    with serve_http(dsh_bin, tmp_path, flags=["--approvals-page", "--approvals-wait", "60"]) as server:
        http_client = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKENS['alice']}"})
        async with http_client, streamable_http_client(server.url, http_client=http_client) as (read, write, *_):
            async with ClientSession(read, write, read_timeout_seconds=REQUEST_TIMEOUT_S * 2) as session:
                with anyio.fail_after(REQUEST_TIMEOUT_S):
                    await connect(session, generation)
                results: dict[str, types.CallToolResult] = {}

                async def call(command: str) -> None:
                    results[command] = await session.call_tool("bash", {"command": command})

                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "touch over-http")
                    asks = await anyio.to_thread.run_sync(waiting_asks, dsh_bin, tmp_path)
                    assert len(asks) == 1, asks
                    assert asks[0]["command"] == "touch over-http", asks
                    # The principal, and the client as it introduced itself.
                    assert asks[0]["agent"] == "alice", asks
                    assert asks[0]["client"], asks
                    answered = await anyio.to_thread.run_sync(
                        lambda: dsh_approvals(dsh_bin, tmp_path, "allow", asks[0]["id"])
                    )
                    assert answered.returncode == 0, answered
                done = results["touch over-http"]
                assert done.is_error is False, text(done)
                assert (server.work / "over-http").exists()
