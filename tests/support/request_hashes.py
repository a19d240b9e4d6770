"""A write tool whose arguments normalization changes, and the argument hash computed
here, apart from the runtime, for the tests of a request's two hashes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from execgraph.tools import tool_spec

__all__ = ["args_hash", "save"]


@tool_spec(effect="write", path_args=["path"], aliases={"file": "path"})
def save(path: str, text: str, tag: str = "draft") -> str:
    """Save a note."""
    return "saved"


def args_hash(arguments: dict[str, Any]) -> str:
    """The hex SHA-256 of ``arguments`` as canonical JSON."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()
