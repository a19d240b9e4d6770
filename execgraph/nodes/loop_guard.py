"""Loop guard: repeated actions that bring nothing new are not progress.

An action's signature is its tool and canonical arguments; its observation hash is the
hash of what came back. A turn makes progress when it does something not done before
(a new cursor, a new query), sees something not seen before (polling that finally
changes), or adds evidence. After ``threshold`` turns without progress the run stops.

A reply is judged too: an answer (a ``finish``, or a reply without tool calls) the
verifier rejected for the same reasons as the same answer before is a turn without
progress, so a model repeating one rejected answer is stopped as one repeating a call
is. A new answer records itself without resetting the count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from execgraph.nodes.executor import stable_hash

__all__ = ["action_signature", "reply_progress", "update_progress"]


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
    turn: str,
) -> dict[str, Any]:
    """One turn's ``(tool, arguments, result)`` triples as an update of the guard's memory.

    The update names only what is new — action+observation pairs and evidence facts not
    remembered — and whether anything was; ``fold_progress`` (the channel's reducer)
    counts the turns that moved nothing.
    """
    seen = set((progress or {}).get("seen", []))
    facts = set((progress or {}).get("facts", []))
    new_seen: list[str] = []
    new_facts: list[str] = []
    for tool, arguments, result in actions:
        pair = f"{action_signature(tool, arguments)}:{_observation_hash(result)}"
        if pair not in seen:
            seen.add(pair)
            new_seen.append(pair)
        for item in (result or {}).get("evidence", []):
            fact = _fact(item)
            if fact not in facts:
                facts.add(fact)
                new_facts.append(fact)
    return {
        "turn": turn,
        "seen": new_seen,
        "facts": new_facts,
        "moved": bool(new_seen or new_facts),
    }


def reply_progress(
    progress: Mapping[str, Any] | None, content: str, failed: Iterable[str], turn: str
) -> dict[str, Any]:
    """A rejected answer as an update of the guard's memory.

    Its signature is the answer's text with the reasons it was rejected; seen before, the
    turn moved nothing (``moved`` False); new, it is only remembered (no ``moved``: the
    count of turns without progress stays as it was).
    """
    pair = f"reply:{stable_hash({'answer': content, 'failed': list(failed)})[:16]}"
    if pair in set((progress or {}).get("seen", [])):
        return {"turn": turn, "seen": [], "facts": [], "moved": False}
    return {"turn": turn, "seen": [pair], "facts": []}
