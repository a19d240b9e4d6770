"""Lone surrogates: text a Python ``str`` can hold but no UTF-8 encoder can write.

A model's JSON may carry ``"\\ud800"`` (a half of a UTF-16 pair, alone): ``json.loads``
accepts it, and the ``str`` then fails every strict UTF-8 encode — a store row, a JSON
event, an HTTP body. The runtime refuses such a candidate where it enters (decide,
normalize, resolve), and the event log scrubs what still reaches it, so a logged event can
never crash a run.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["has_surrogate", "scrub_surrogates"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` (keys included, nested in dicts, lists, tuples)
    holds a surrogate code point."""
    if isinstance(value, str):
        return not value.isascii() and _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(has_surrogate(v) for v in value)
    return False


def _scrub_text(text: str) -> str:
    # backslashreplace: the developer still reads which code point the model sent.
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every surrogate written as its ``\\udXXX`` escape text (the same
    object when there is none, so the common case allocates nothing)."""
    if not has_surrogate(value):
        return value
    if isinstance(value, str):
        return _scrub_text(value)
    if isinstance(value, dict):
        return {scrub_surrogates(k): scrub_surrogates(v) for k, v in value.items()}
    scrubbed = [scrub_surrogates(v) for v in value]
    return tuple(scrubbed) if isinstance(value, tuple) else scrubbed  # a key stays a key
