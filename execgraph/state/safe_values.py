"""Safe values: what a tool returned, made storable whatever it holds.

A tool's return value is data from outside the runtime, and some values cannot be written
as UTF-8 JSON at all: a lone surrogate (in a string or a dict key), bytes that are not
UTF-8, an object whose ``repr``/``str`` raises, a cycle, nesting deeper than a JSON
encoder recurses, an integer too long to print. Left as they are, any of these raises in
the middle of a run (``UnicodeEncodeError``, ``RuntimeError`` …) and, on a durable
engine, the step is retried and the tool re-run. :func:`safe_json` turns each into a
*typed* value instead, so the run goes on and the model reads what happened:

- a lone surrogate is written as its escape text (``"\\\\ud800"``), as the event log does
  (:mod:`execgraph.state.surrogates`);
- bytes that are UTF-8 become their text; other bytes become
  ``{"unstorable": "bytes", "size": N, "base64": "…"}``;
- anything that cannot be converted becomes ``{"unstorable": "object", "class": NAME,
  "reason": …}`` (a cycle, too deep, an exception while converting);
- an integer too long to print becomes ``{"unstorable": "int", "bits": N}``; a NaN or
  infinite float its name as text (JSON has neither).

The common case (plain JSON data) is converted once by pydantic and checked once; the
walk runs only when that fails.
"""

from __future__ import annotations

import base64
import json
import math
import sys
from typing import Any

from pydantic_core import to_jsonable_python

from execgraph.state.surrogates import scrub_surrogates

__all__ = ["MAX_DEPTH", "safe_dumps", "safe_json"]

MAX_DEPTH = 64
"""Nesting kept; deeper containers become an ``unstorable`` marker (a JSON encoder or a
database's JSON parser recurses, and would stop far below Python's own limit)."""


def safe_json(value: Any) -> Any:
    """``value`` as JSON-safe data (dicts with text keys, lists, text, finite numbers,
    booleans, None) that encodes as UTF-8; never raises for what a tool returns."""
    return safe_dumps(value)[0]


def safe_dumps(value: Any) -> tuple[Any, str]:
    """:func:`safe_json` of ``value`` and its JSON text (``ensure_ascii=False``), which
    encodes as UTF-8. An object pydantic does not know is written as its ``str``."""
    try:
        plain = to_jsonable_python(value, fallback=str)
        text = json.dumps(plain, ensure_ascii=False, allow_nan=False)
        text.encode()
    except Exception:  # any failure: walk the value and type each part that fails
        plain = _walk(value, 0, set())
        text = json.dumps(plain, ensure_ascii=False, allow_nan=False)
    return plain, text


def _object(value: Any, reason: str) -> dict[str, Any]:
    return {"unstorable": "object", "class": _text(type(value).__name__), "reason": reason}


def _text(text: str) -> str:
    return scrub_surrogates(text) if isinstance(text, str) else str(text)


def _bytes(value: bytes | bytearray | memoryview) -> Any:
    raw = bytes(value)
    try:
        return _text(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return {"unstorable": "bytes", "size": len(raw), "base64": base64.b64encode(raw).decode()}


def _number(value: int | float) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        limit = sys.get_int_max_str_digits() or 4300
        if value.bit_length() > limit * 3:  # 3 bits a decimal digit, conservatively
            return {"unstorable": "int", "bits": value.bit_length()}
        return int(value)
    if math.isfinite(value):
        return float(value)
    return str(value)  # "nan", "inf", "-inf"


def _walk(value: Any, depth: int, seen: set[int]) -> Any:
    if value is None:
        return None
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, int | float):
        return _number(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return _bytes(value)
    if depth >= MAX_DEPTH:
        return _object(value, "nested too deep")
    if id(value) in seen:
        return _object(value, "contains itself")
    if isinstance(value, dict | list | tuple | set | frozenset):
        seen.add(id(value))
        try:
            if isinstance(value, dict):
                return {_key(k): _walk(v, depth + 1, seen) for k, v in value.items()}
            return [_walk(v, depth + 1, seen) for v in value]
        finally:
            seen.discard(id(value))
    try:  # a model, a dataclass, a date: pydantic knows it; anything else is its str
        converted = to_jsonable_python(value, fallback=str, bytes_mode="base64")
    except RecursionError:
        return _object(value, "nested too deep")
    except Exception as exc:
        return _object(value, f"cannot be converted ({type(exc).__name__})")
    seen.add(id(value))
    try:
        return _walk(converted, depth + 1, seen)
    finally:
        seen.discard(id(value))


def _key(key: Any) -> str:
    """A dict key as text (JSON keys are text): a surrogate escaped, a number printed."""
    if isinstance(key, str):
        return _text(key)
    try:
        return _text(str(key))
    except Exception:  # a key whose str raises (or an int too long to print)
        return _text(type(key).__name__)
