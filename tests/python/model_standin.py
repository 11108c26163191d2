"""A local stand-in for a model service, for driving real agent CLIs offline.

One scripted turn: the first request that offers the scripted tool gets a
streamed call of it; the request that carries the tool's result back gets a
short closing answer, and the result is recorded for the test to read. Every
other request (a title, a summary, a warm-up) gets a short text answer. It
speaks the two wire formats the CLIs under test use, on loopback:

- Anthropic's Messages API (`POST /v1/messages`, streamed as server-sent
  events, or one JSON body when `stream` is false), which Claude Code reaches
  through `ANTHROPIC_BASE_URL`;
- OpenAI's Responses API (`POST /v1/responses`, streamed), which Codex reaches
  through a `model_providers` entry whose `base_url` ends in `/v1`.

Anything else is answered 404 and recorded, so a test can say what a client
asked for that the stand-in does not serve.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CLOSING_ANSWER = "Done."


@dataclass
class ToolResult:
    """What the client sent back for the scripted call."""

    text: str
    is_error: bool
    raw: Any


@dataclass
class Script:
    """The call the model makes, and what came of it."""

    tool: str
    arguments: dict[str, Any]
    # Set by the server; read by the test after the client exits.
    results: list[ToolResult] = field(default_factory=list)
    offered_tools: list[list[str]] = field(default_factory=list)
    unserved: list[str] = field(default_factory=list)
    calls_made: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def result(self) -> ToolResult:
        assert self.calls_made == 1, (
            f"the stand-in was never asked with {self.tool!r} among the tools; "
            f"tool lists it saw: {self.offered_tools}; unserved: {self.unserved}"
        )
        assert len(self.results) == 1, (
            f"the client never sent back a result for {self.tool!r} "
            f"(tool lists seen: {self.offered_tools}; unserved: {self.unserved})"
        )
        return self.results[0]


def _flatten(content: Any) -> str:
    """The text of a tool result's content, in either wire format."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_flatten(part) for part in content)
    if isinstance(content, dict):
        for key in ("text", "output", "content"):
            if key in content:
                return _flatten(content[key])
    return json.dumps(content)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


# --- Anthropic Messages ---------------------------------------------------------


def _anthropic_result(body: dict[str, Any]) -> ToolResult | None:
    messages = body.get("messages") or []
    if not messages or messages[-1].get("role") != "user":
        return None
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            return ToolResult(
                _flatten(block.get("content", "")), bool(block.get("is_error")), block
            )
    return None


def _anthropic_reply(body: dict[str, Any], blocks: list[dict[str, Any]], stop: str) -> tuple[str, bytes]:
    model = body.get("model", "stand-in")
    usage = {"input_tokens": 10, "output_tokens": 5}
    if not body.get("stream"):
        message = {
            "id": "msg_standin",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        return "application/json", json.dumps(message).encode()
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_standin",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage,
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", _sse(events)


def _anthropic(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    tools = [tool.get("name", "") for tool in body.get("tools") or []]
    result = _anthropic_result(body)
    with script.lock:
        script.offered_tools.append(tools)
        if result is not None:
            script.results.append(result)
            return _anthropic_reply(body, [{"type": "text", "text": CLOSING_ANSWER}], "end_turn")
        if script.tool in tools and script.calls_made == 0:
            script.calls_made += 1
            call = {
                "type": "tool_use",
                "id": "toolu_standin_1",
                "name": script.tool,
                "input": script.arguments,
            }
            return _anthropic_reply(body, [call], "tool_use")
    return _anthropic_reply(body, [{"type": "text", "text": "OK."}], "end_turn")


# --- OpenAI Responses -----------------------------------------------------------


def _responses_result(body: dict[str, Any]) -> ToolResult | None:
    items = body.get("input") or []
    for item in reversed(items if isinstance(items, list) else []):
        if isinstance(item, dict) and item.get("type") in (
            "function_call_output",
            "custom_tool_call_output",
            "mcp_tool_call_output",
        ):
            output = item.get("output")
            is_error = isinstance(output, dict) and output.get("success") is False
            return ToolResult(_flatten(output), is_error, item)
    return None


def _tool_names(body: dict[str, Any]) -> dict[str, tuple[str | None, str]]:
    """Each offered function by its full name: `NAMESPACE__NAME` for one
    inside a namespace (how Codex offers an MCP server's tools), mapped to
    the namespace and the name a call gives."""
    names: dict[str, tuple[str | None, str]] = {}
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            namespace = tool.get("name", "")
            for inner in tool.get("tools") or []:
                if inner.get("name"):
                    names[f"{namespace}__{inner['name']}"] = (namespace, inner["name"])
            continue
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if name:
            names[name] = (None, name)
    return names


def _responses_reply(items: list[dict[str, Any]]) -> tuple[str, bytes]:
    response = {"id": "resp_standin", "object": "response", "status": "in_progress", "output": []}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": response})
    ]
    for index, item in enumerate(items):
        events.append(
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": item})
        )
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
        )
    done = {
        **response,
        "status": "completed",
        "output": items,
        "usage": {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        },
    }
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return "text/event-stream", _sse(events)


def _message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_standin",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _responses(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    tools = _tool_names(body)
    result = _responses_result(body)
    with script.lock:
        script.offered_tools.append(list(tools))
        if result is not None:
            script.results.append(result)
            return _responses_reply([_message(CLOSING_ANSWER)])
        if script.tool in tools and script.calls_made == 0:
            script.calls_made += 1
            namespace, name = tools[script.tool]
            call = {
                "type": "function_call",
                "id": "fc_standin_1",
                "call_id": "call_standin_1",
                "name": name,
                "arguments": json.dumps(script.arguments),
                "status": "completed",
            }
            if namespace is not None:
                call["namespace"] = namespace
            return _responses_reply([call])
    return _responses_reply([_message("OK.")])


# --- the server -----------------------------------------------------------------


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the test reports what matters

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:  # noqa: N802
            with script.lock:
                script.unserved.append(f"GET {self.path}")
            self._send(404, "application/json", b'{"error":"not served by the stand-in"}')

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            path = self.path.split("?", 1)[0]
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._send(400, "application/json", b'{"error":"body is not JSON"}')
                return
            if path.endswith("/v1/messages"):
                content_type, payload = _anthropic(script, body)
            elif path.endswith("/v1/responses"):
                content_type, payload = _responses(script, body)
            else:
                with script.lock:
                    script.unserved.append(f"POST {self.path}")
                self._send(404, "application/json", b'{"error":"not served by the stand-in"}')
                return
            self._send(200, content_type, payload)

    return Handler


@contextmanager
def model_standin(script: Script) -> Iterator[str]:
    """Serves `script` on a loopback port; yields the base URL (no `/v1`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

