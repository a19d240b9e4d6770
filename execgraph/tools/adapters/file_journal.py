"""The file tools' intent journal: a write's (pre-image, intended) hashes, noted first.

A note is written durably *before* the replace and outlives a crash, so a new process's
reconcile can prove a write absent (the file still holds its pre-image, or no note exists:
the write never started) or present (it holds the intended content), instead of leaving it
unknown. Notes live in :data:`JOURNAL_DIR` under the workspace root, opened beneath its
descriptor like every other file the tools touch.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from execgraph.state.errors import ExecGraphError
from execgraph.tools.fileio import replace_at
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.resolve_beneath import Beneath

__all__ = ["JOURNAL_DIR", "recall", "remember"]

JOURNAL_DIR = ".execgraph-journal"
"""Where writes note their intent before the replace (hidden from list_files)."""


def _note_rel(ctx: InvokeContext) -> str:
    name = hashlib.sha256((ctx.idempotency_key or ctx.call_id).encode()).hexdigest()[:32]
    return f"{JOURNAL_DIR}/{name}.json"


def remember(root: Path, ctx: InvokeContext, pre: str, intended: str) -> None:
    """Durably note the call's (pre-image, intended) hashes under ``root``."""
    root.mkdir(parents=True, exist_ok=True)  # the root is configuration, not input
    with Beneath(root) as tree:
        spot = tree.locate(_note_rel(ctx), make_parents=True)
        replace_at(spot.dir_fd, spot.name, json.dumps({"pre": pre, "intended": intended}).encode())


def recall(root: Path, ctx: InvokeContext) -> tuple[str, str] | None:
    """The call's noted (pre-image, intended) hashes; None when no readable note exists."""
    try:
        with Beneath(root) as tree:
            note = json.loads(tree.read_all(tree.open_file(_note_rel(ctx))))
        return str(note["pre"]), str(note["intended"])
    except (OSError, ExecGraphError, ValueError, KeyError, TypeError):
        return None
