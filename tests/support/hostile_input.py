"""Helpers for the adversarial input tests: scripted runs, a hostile HTTP server, and a
reader of model inputs that finds text outside the untrusted wrapper as a model would."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from execgraph.graph import build_graph
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel

__all__ = [
    "call",
    "finish",
    "hostile_server",
    "outside_wrapper",
    "run_react",
    "text_of",
]

# A model reads a wrapper as open from any <tool_output ...> up to the first closing tag
# it would recognize: any case, spaces around '/', '-' or a space for '_'.
_OPEN = re.compile(r"<\s*tool[\s_-]*output\b[^>]*>", re.IGNORECASE)
_CLOSE = re.compile(r"<\s*/\s*tool[\s_-]*output\s*>", re.IGNORECASE)
# How a reader sees lookalikes (the test's own table, not the runtime's): brackets drawn
# like '<' and '>', and the Cyrillic/Greek letters and ASCII digits that pass for Latin ones.
_SEEN = str.maketrans(
    {
        "\u2039": "<", "\u2329": "<", "\u3008": "<", "\u27e8": "<", "\u203a": ">",
        "\u043e": "o", "\u03bf": "o", "\u041e": "o", "0": "o", "\u0442": "t", "\u03c4": "t",
        "\u0440": "p", "\u03c1": "p", "\u03c5": "u", "\u04cf": "l", "\u0456": "l", "1": "l",
        "\u2013": "-", "\u2011": "-",
    }
)  # fmt: skip


def read_by_eye(text: str) -> str:
    """``text`` as a reader sees it: undrawn format characters gone, compatibility forms
    (fullwidth, math letters) as their plain ones, lookalikes as what they pass for."""
    drawn = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", drawn).translate(_SEEN)


def call(name: str, args: Any, call_id: str) -> AIMessage:
    """A reply with one tool call."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def finish(output: str = "done", call_id: str = "fin") -> AIMessage:
    """A reply that finishes the run."""
    return call("finish", {"output": output}, call_id)


def run_react(
    tmp_path: Path,
    replies: Sequence[Any],
    tools: Sequence[Any],
    *,
    task: dict[str, Any] | None = None,
    thread_id: str = "adv",
    **settings: Any,
) -> tuple[dict[str, Any], ScriptedChatModel, SqliteExecutionStore]:
    """One ReAct run over a real SQLite store and checkpointer; returns the final state,
    the model (its ``calls`` are what the model was shown) and the store."""
    model = ScriptedChatModel(list(replies))
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react", model=model, tools=list(tools), home=tmp_path, store=store, **settings
    )
    spec = task or {"goal": "go", "budgets": {"model_calls": 8, "tool_calls": 8}}
    out = app.invoke({"task": spec}, {"configurable": {"thread_id": thread_id}})
    return out, model, store


def text_of(message: BaseMessage) -> str:
    """A message's text content."""
    return message.content if isinstance(message.content, str) else str(message.content)


def outside_wrapper(text: str) -> str:
    """``text`` without its untrusted blocks, each read the way a model would read it:
    from an opening tag to the first tag that closes it."""
    text = read_by_eye(text)
    out, pos = [], 0
    while True:
        opened = _OPEN.search(text, pos)
        if opened is None:
            out.append(text[pos:])
            return "".join(out)
        out.append(text[pos : opened.start()])
        closed = _CLOSE.search(text, opened.end())
        if closed is None:
            return "".join(out)  # an unclosed block runs to the end
        pos = closed.end()


@contextmanager
def hostile_server(headers: dict[str, str]) -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering every GET with ``headers``; yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            body = b'{"ok": true}'
            self.send_response(200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
