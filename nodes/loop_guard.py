"""Loop guard: repeated actions that bring nothing new are not progress.

An action's signature is its tool and canonical arguments; its observation hash is the
hash of what came back. A turn makes progress when it does something not done before
(a new cursor, a new query), sees something not seen before (polling that finally
changes), or adds evidence. After ``threshold`` turns without progress the run stops.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from nodes.executor.hashing import stable_hash

__all__ = ["MEMORY", "action_signature", "update_progress"]

MEMORY = 128  # signatures and facts remembered; enough to catch loops, O(1) in run length


def action_signature(tool: str, arguments: Mapping[str, Any]) -> str:
    """Tool plus canonical arguments."""
    return stable_hash({"tool": tool, "arguments": arguments})[:16]


def _observation_hash(result: Mapping[str, Any] | None) -> str:
    if result is None:
        return "none"
    return stable_hash({"status": result.get("status"), "data": result.get("data")})[:16]


def _fact(item: Mapping[str, Any]) -> str:
    # Kind and value only: adapters stamp versions and source ids per call or per read, so
    # an identical re-read must not look like new evidence.
    return stable_hash([item.get("kind"), item.get("value")])[:16]


def update_progress(
    progress: Mapping[str, Any] | None,
    actions: Iterable[tuple[str, Mapping[str, Any], Mapping[str, Any] | None]],
) -> dict[str, Any]:
    """Fold one turn's ``(tool, arguments, result)`` triples into the guard's memory.

    Returns the new memory: ``seen`` (action+observation pairs), ``facts`` (evidence
    fingerprints), ``stale`` (consecutive turns without progress).
    """
    seen = list((progress or {}).get("seen", []))
    facts = list((progress or {}).get("facts", []))
    moved = False
    for tool, arguments, result in actions:
        pair = f"{action_signature(tool, arguments)}:{_observation_hash(result)}"
        if pair not in seen:
            seen.append(pair)
            moved = True
        for item in (result or {}).get("evidence", []):
            fact = _fact(item)
            if fact not in facts:
                facts.append(fact)
                moved = True
    stale = 0 if moved else int((progress or {}).get("stale", 0)) + 1
    return {"seen": seen[-MEMORY:], "facts": facts[-MEMORY:], "stale": stale}
