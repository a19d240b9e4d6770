"""Long strings of event payloads, stored once: content-addressed, shared by every event.

One accepted tool argument reaches the log three times — in the model's reply
(``model.called``), the decision (``decision.recorded``) and the request
(``tool.requested``) — and a tool's output may repeat too. Each event stays complete in
meaning, but a string longer than :data:`INLINE_CHARS` is written once, as an artifact
keyed by its SHA-256 (``kind="event_value"``), in the same transaction as the event; the
event's row holds ``{"$execgraph.shared": "sha256:..."}`` in its place, and reading the
event puts the string back. So 500 KB of file content costs 500 KB in the log, not 1.5 MB,
and every reader (``events()``, replay, the CLI) sees the events as they were logged.

Small payloads pay nothing: only a row whose JSON is longer than :data:`INLINE_CHARS` is
walked on write, and only one holding the marker on read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from execgraph.state.store.rows import artifact_ref

__all__ = ["INLINE_CHARS", "MARK", "restore_shared", "share_long_strings", "shared_refs"]

INLINE_CHARS = 16 * 1024
"""A payload string longer than this (in characters) is stored once, out of the row."""

MARK = "$execgraph.shared"
"""The key of the one-key object that stands for a shared string in a stored row."""


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def share_long_strings(body: str, put: Callable[[str, bytes], None]) -> str:
    """``body`` (an event row's JSON) with each long string replaced by its reference;
    ``put(ref, data)`` stores each one (idempotently: the same string, the same ref)."""
    if len(body) <= INLINE_CHARS:
        return body

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            if len(value) <= INLINE_CHARS:
                return value
            data = _bytes(value)
            ref = artifact_ref(data)
            put(ref, data)
            return {MARK: ref}
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return json.dumps(walk(json.loads(body)), ensure_ascii=False, separators=(",", ":"))


def _is_mark(value: Mapping[str, Any]) -> bool:
    return len(value) == 1 and isinstance(value.get(MARK), str)


def shared_refs(body: str) -> set[str]:
    """The refs a stored row's JSON points at (none: it holds no shared string)."""
    if MARK not in body:
        return set()
    refs: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if _is_mark(value):
                refs.add(value[MARK])
                return
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(json.loads(body))
    return refs


def restore_shared(body: str, data: Mapping[str, bytes]) -> str:
    """A stored row's JSON with each reference replaced by its string from ``data``
    (a ref missing from ``data`` stays as it is: the row reads, its gap shows)."""
    if MARK not in body:
        return body

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            if _is_mark(value) and value[MARK] in data:
                return data[value[MARK]].decode("utf-8", "surrogatepass")
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return json.dumps(walk(json.loads(body)), ensure_ascii=False)
