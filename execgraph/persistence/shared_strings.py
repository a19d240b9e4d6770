"""SharingSerializer: a checkpoint's long strings, stored once per thread.

One accepted tool argument lives in four state channels of a turn — the decisions, the
requests dispatched (``pending``), the model's transcript (``history``) and the user's
``messages`` — and LangGraph serializes each write on its own. Wrapped around the saver's
serializer, this writes a string longer than :data:`INLINE_CHARS` once, into the
checkpoint database's ``shared_strings`` table (keyed by thread and SHA-256, in the same
transaction as the row that first needs it), and leaves a short stand-in in the blob:
``"\\x00execgraph.shared:sha256:<hex>"``, a string, so every typed field (a message's
``content``) still validates. Loading puts the strings back.

Only a value whose serialized form is longer than :data:`INLINE_CHARS` is walked, and only
a blob holding the stand-in's prefix on the way back: small steps pay one length check.
Strings inside objects the walk does not know (not a dict, list, tuple, pydantic model or
``Send``) are left in place, stored as before.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterable
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.types import Send
from pydantic import BaseModel

__all__ = ["INLINE_CHARS", "PREFIX", "SharingSerializer"]

INLINE_CHARS = 16 * 1024
"""A string longer than this (in characters) is stored once, out of the blob."""

PREFIX = "\x00execgraph.shared:"
_PREFIX_BYTES = PREFIX.encode()

Fetch = Callable[[Iterable[str]], dict[str, bytes]]
"""Reads shared strings by ref: ``{ref: utf-8 bytes}`` for those found."""


def _ref(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _rebuild(value: Any, text: Callable[[str], str]) -> Any:
    """``value`` with every string passed through ``text`` (the same object where none
    changed, so untouched parts are not copied)."""
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        items = {k: _rebuild(v, text) for k, v in value.items()}
        return value if all(items[k] is v for k, v in value.items()) else items
    if isinstance(value, list | tuple):
        seq = [_rebuild(v, text) for v in value]
        if all(a is b for a, b in zip(seq, value, strict=True)):
            return value
        if isinstance(value, list):
            return seq
        return tuple(seq) if type(value) is tuple else type(value)(*seq)  # a named tuple
    if isinstance(value, BaseModel):
        changed = {}
        for name, field_value in value.__dict__.items():
            new = _rebuild(field_value, text)
            if new is not field_value:
                changed[name] = new
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, Send):
        arg = _rebuild(value.arg, text)
        return value if arg is value.arg else Send(value.node, arg, timeout=value.timeout)
    return value


class SharingSerializer(SerializerProtocol):
    """Wraps ``inner`` so long strings are written once (see the module docstring).

    ``take_pending()`` hands the saver the strings this thread met since it last asked,
    as ``(ref, utf-8 bytes)``, to insert in the transaction of the rows that refer to
    them (a saver serializes a row and writes it on one thread).
    """

    def __init__(self, inner: SerializerProtocol, fetch: Fetch) -> None:
        self.inner = inner
        self._fetch = fetch
        self._local = threading.local()

    def _pending(self) -> dict[str, bytes]:
        pending: dict[str, bytes] | None = getattr(self._local, "pending", None)
        if pending is None:
            pending = self._local.pending = {}
        return pending

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        kind, data = self.inner.dumps_typed(obj)
        if len(data) <= INLINE_CHARS:
            return kind, data
        met: dict[str, bytes] = {}

        def share(text: str) -> str:
            if len(text) <= INLINE_CHARS or text.startswith(PREFIX):
                return text
            raw = text.encode("utf-8", "surrogatepass")
            ref = _ref(raw)
            met[ref] = raw
            return PREFIX + ref

        shared = _rebuild(obj, share)
        if not met:
            return kind, data
        self._pending().update(met)
        return self.inner.dumps_typed(shared)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        value = self.inner.loads_typed(data)
        if _PREFIX_BYTES not in data[1]:
            return value
        refs: set[str] = set()

        def collect(text: str) -> str:
            if text.startswith(PREFIX):
                refs.add(text[len(PREFIX) :])
            return text

        _rebuild(value, collect)
        found = self._fetch(refs) if refs else {}

        def restore(text: str) -> str:
            if text.startswith(PREFIX) and text[len(PREFIX) :] in found:
                return found[text[len(PREFIX) :]].decode("utf-8", "surrogatepass")
            return text

        return _rebuild(value, restore)

    def take_pending(self) -> list[tuple[str, bytes]]:
        """The strings this thread met since its last call (and forget them)."""
        pending = self._pending()
        taken = list(pending.items())
        pending.clear()
        return taken
