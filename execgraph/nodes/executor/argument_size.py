"""How big a call's arguments are, and the refusal of a call beyond its run's bound.

A model can hand a tool megabytes in one argument, and every turn copies a call's
arguments several times over (the logged reply, the decision, the queued request, the
checkpointed conversation): a 16 MiB argument once took 219 MB on disk. So the run's
``max_argument_bytes`` (its task's; default
:data:`~execgraph.state.contracts.DEFAULT_MAX_ARGUMENT_BYTES`, 1 MiB) bounds the arguments'
normalized JSON, measured in UTF-8 bytes: decide refuses a reply beyond it before it is
queued or checkpointed, and validate refuses any other request (a plan step, a direct
executor call, a person's edit) before it is reserved.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_json

from execgraph.state.contracts import DEFAULT_MAX_ARGUMENT_BYTES
from execgraph.state.errors import ArgumentsTooLarge

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "argument_bytes",
    "logged_arguments",
    "oversized",
    "size_text",
]

_MIB = 1 << 20


def argument_bytes(arguments: Any) -> int:
    """UTF-8 bytes of ``arguments`` as compact JSON (key order does not change the size).

    pydantic-core's encoder is several times faster than ``json``'s on the hot path; the
    standard one measures what it cannot encode (a lone surrogate).
    """
    try:
        return len(to_json(arguments, fallback=str))
    except PydanticSerializationError:
        text = json.dumps(arguments, separators=(",", ":"), ensure_ascii=False, default=str)
        return len(text.encode("utf-8", "surrogatepass"))


def size_text(size: int) -> str:
    """``size`` as a person reads it: bytes, or MiB (with the exact bytes) from 1 MiB on."""
    return f"{size / _MIB:.1f} MiB ({size} bytes)" if size >= _MIB else f"{size} bytes"


def oversized(size: int, limit: int) -> ArgumentsTooLarge | None:
    """The refusal of arguments of ``size`` bytes against ``limit`` (None: they fit)."""
    if size <= limit:
        return None
    return ArgumentsTooLarge(
        f"the arguments are {size_text(size)} of JSON; the limit is {size_text(limit)}"
    )


def logged_arguments(arguments: Any, limit: int) -> Any:
    """``arguments`` as an event may hold them: as they are, or (beyond ``limit``) only
    their size, so a refused call is not stored by the log that reports it."""
    size = argument_bytes(arguments)
    if size <= limit:
        return arguments
    return {"omitted": ArgumentsTooLarge.__name__, "bytes": size}
