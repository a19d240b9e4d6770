"""A real, local OpenAI-compatible HTTP server with scripted replies.

Provider integrations (``langchain-openai``'s ``ChatOpenAI``) are tested against a real
socket rather than a patched client, so request building, response parsing and the
malformed-arguments path (``invalid_tool_calls``) are exercised exactly as in production.

Only ``POST /v1/chat/completions`` is served, non-streaming and ``stream: true`` (SSE).
Every request is recorded; a request with no scripted reply left gets HTTP 500 and is
listed in :attr:`OpenAIServer.unexpected`, so a test cannot pass on a reply it never
scripted.

Use :class:`OpenAIServer` as a context manager, or the ``openai_server`` fixture (import it
into a ``conftest.py``), which also keeps proxies away from 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

__all__ = [
    "Completion",
    "OpenAIServer",
    "RecordedRequest",
    "ToolCall",
    "error",
    "isolate_from_network",
    "openai_server",
    "text",
    "tool_call",
    "tool_calls",
]

_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")


@dataclass(frozen=True)
class ToolCall:
    """One tool call as the wire carries it: ``arguments`` is a raw (maybe invalid) string."""

    name: str
    arguments: str
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")


@dataclass(frozen=True)
class Completion:
    """One scripted reply: assistant text and/or tool calls, or an HTTP error."""

    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    status: int = 200
    error_message: str = ""


@dataclass(frozen=True)
class RecordedRequest:
    """A request as received: method, path, lower-cased headers and the parsed JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def text(content: str) -> Completion:
    """A plain assistant reply."""
    return Completion(content=content)


def tool_call(name: str, arguments: Mapping[str, Any] | str, id: str | None = None) -> ToolCall:
    """A tool call; a mapping is JSON-encoded, a string is sent verbatim (malformed on purpose)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ToolCall(name=name, arguments=raw) if id is None else ToolCall(name, raw, id)


def tool_calls(*calls: ToolCall, content: str | None = None) -> Completion:
    """An assistant reply that calls tools."""
    return Completion(content=content, tool_calls=tuple(calls))


def error(status: int, message: str = "scripted error") -> Completion:
    """An HTTP error reply in OpenAI's error format."""
    return Completion(status=status, error_message=message)


def _tokens(text: str) -> int:
    return (len(text) + 3) // 4


def _usage(body: Mapping[str, Any], reply: Completion) -> dict[str, int]:
    prompt = _tokens(json.dumps(body.get("messages", []))) + _tokens(
        json.dumps(body.get("tools", []))
    )
    completion = _tokens(reply.content or "") + sum(
        _tokens(c.name + c.arguments) for c in reply.tool_calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _finish(reply: Completion) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def _wire_calls(reply: Completion) -> list[dict[str, Any]]:
    return [
        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
        for c in reply.tool_calls
    ]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        owner = self.server.owner
        owner._record(
            RecordedRequest(
                "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
            )
        )
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":  # a query may ride along
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        reply = owner._next(self.path)
        if reply is None:
            message = f"scripted OpenAI server: no reply left ({owner.scripted} scripted)"
            self._json(500, {"error": {"message": message, "type": "server_error"}})
        elif reply.status != 200:
            self._json(reply.status, {"error": {"message": reply.error_message, "type": "x"}})
        elif body.get("stream"):
            self._stream(body, reply)
        else:
            self._json(200, self._completion(body, reply))

    def _completion(self, body: Mapping[str, Any], reply: Completion) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = _wire_calls(reply)
        finish = _finish(reply)
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            ],
            "usage": _usage(body, reply),
        }

    def _stream(self, body: Mapping[str, Any], reply: Completion) -> None:
        """Server-sent events: role, content, one delta per tool call, finish, usage, DONE."""
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "unknown"),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**base, "choices": [choice]}

        events = [chunk({"role": "assistant", "content": reply.content or ""})]
        for index, call in enumerate(_wire_calls(reply)):
            events.append(chunk({"tool_calls": [{"index": index, **call}]}))
        events.append(
            chunk({}, reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop"))
        )
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append({**base, "choices": [], "usage": _usage(body, reply)})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.close_connection = True

    def _json(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, owner: OpenAIServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


class OpenAIServer:
    """OpenAI-compatible server on a free 127.0.0.1 port, replying from a script.

    Attributes:
        requests: every request received, in arrival order.
        unexpected: paths of requests that arrived after the script ran out.
    """

    def __init__(self, replies: Iterable[Completion] = ()) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Completion] = deque(replies)
        self.scripted = len(self._queue)
        self.requests: list[RecordedRequest] = []
        self.unexpected: list[str] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        if self._server is None:
            raise RuntimeError("OpenAIServer is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` to an OpenAI client."""
        return f"http://127.0.0.1:{self.port}/v1"

    def add(self, *replies: Completion) -> None:
        """Append replies to the script."""
        with self._lock:
            self._queue.extend(replies)
            self.scripted += len(replies)

    def start(self) -> OpenAIServer:
        """Bind and serve in a daemon thread."""
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="openai-server", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()
        self._server = self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next(self, path: str) -> Completion | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            self.unexpected.append(path)
            return None


def isolate_from_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep clients on 127.0.0.1: no proxy, no inherited OpenAI endpoint or key."""
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_KEY", "OPENAI_ORG_ID"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A running :class:`OpenAIServer` with an empty script (``server.add(...)`` replies)."""
    isolate_from_network(monkeypatch)
    with OpenAIServer() as server:
        yield server
