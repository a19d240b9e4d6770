"""Canonical hashing of arguments: what approvals, records and loop guards bind to."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["canonical_json", "stable_hash"]


def canonical_json(value: Any) -> str:
    """Key-sorted, whitespace-free JSON; non-JSON values fall back to their ``str``."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def stable_hash(value: Any) -> str:
    """sha256 of the canonical JSON form."""
    # surrogatepass: a lone surrogate from a model is hashable data, not a crash
    return hashlib.sha256(canonical_json(value).encode("utf-8", "surrogatepass")).hexdigest()
