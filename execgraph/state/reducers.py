"""Named, pure, two-argument reducers for :mod:`execgraph.state.schema`.

LangGraph calls a channel's reducer with the current value and one update. Parallel
branches (one executor call per ``Send``) write the same channels in one superstep, so
every reducer here is order-insensitive for distinct keys and idempotent for a replayed
update: a charge, an event or a piece of evidence seen twice counts once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.utils import convert_to_messages
from langgraph.graph.message import REMOVE_ALL_MESSAGES

__all__ = [
    "EVIDENCE_WINDOW",
    "HISTORY_WINDOW",
    "MESSAGES_WINDOW",
    "PINNED_MESSAGES",
    "PROGRESS_MEMORY",
    "REPLAY_WINDOW",
    "RESULTS_WINDOW",
    "add_budget",
    "add_messages_window",
    "append_window",
    "budget_batch",
    "dedupe_events",
    "events_batch",
    "evidence_batch",
    "fold_progress",
    "history_batch",
    "latest_batch",
    "merge_evidence",
    "merge_results",
    "messages_batch",
    "progress_batch",
    "replace_plan_if_newer",
    "results_batch",
    "sticky_status",
]

# How many recent charge / event ids a channel remembers to recognise a replay. Replays
# arrive within a superstep or two, so a bounded window keeps state O(1) in run length.
REPLAY_WINDOW = 32

_TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "BUDGET_EXHAUSTED", "PARTIAL"}


def _evidence_items(update: Mapping[str, Any] | Iterable[Mapping[str, Any]] | None) -> list:
    if update is None:
        return []
    if isinstance(update, Mapping):
        return list(update.values())
    return list(update)


#: Evidence sources kept in state (see :func:`merge_evidence`).
EVIDENCE_WINDOW = 64


def merge_evidence(
    left: Mapping[str, dict[str, Any]] | None,
    right: Mapping[str, dict[str, Any]] | Iterable[Mapping[str, Any]] | None,
    *,
    window: int | None = EVIDENCE_WINDOW,
) -> dict[str, dict[str, Any]]:
    """Merge evidence as a set keyed by ``source_id``.

    A higher ``version`` replaces a lower one. The same version with a different
    ``value`` is a conflict: the first value stays, the other is kept under
    ``conflicts`` and the item is flagged, so contrary evidence is never silently lost.
    """
    merged: dict[str, dict[str, Any]] = dict(left or {})
    for item in _evidence_items(right):
        key = item["source_id"]
        current = merged.get(key)
        if current is None or item.get("version", 1) > current.get("version", 1):
            merged[key] = dict(item)
        elif item.get("version", 1) == current.get("version", 1):
            # Same version, other value(s): keep the first, flag and keep every other one,
            # including conflicts an update already carries (a subgraph's merged evidence).
            known = list(current.get("conflicts", []))
            conflicts = list(known)
            for value in [item.get("value"), *item.get("conflicts", [])]:
                if value != current.get("value") and value not in conflicts:
                    conflicts.append(value)
            if conflicts != known or (conflicts and not current.get("conflict")):
                merged[key] = {**current, "conflicts": sorted(conflicts, key=str), "conflict": True}
    if window is not None and len(merged) > window:
        merged = dict(list(merged.items())[-window:])
    return merged


def add_budget(left: Mapping[str, Any] | None, right: Mapping[str, Any] | None) -> dict[str, Any]:
    """Add budget usage per kind; an update whose charge ids were all seen is a replay.

    Value and update share one shape: ``{"used": {kind: amount}, "charges": [ids]}``.
    """
    used: dict[str, float] = dict((left or {}).get("used", {}))
    history: list[str] = list((left or {}).get("charges", []))
    charges = list((right or {}).get("charges", []))
    seen = set(history)
    if not right or (charges and all(c in seen for c in charges)):
        return {"used": used, "charges": history}
    for kind, amount in right.get("used", {}).items():
        used[kind] = used.get(kind, 0) + amount
    history = (history + [c for c in charges if c not in seen])[-REPLAY_WINDOW:]
    return {"used": used, "charges": history}


#: Results kept in state: enough for the transcript window and a turn's parallel calls.
#: Every result is also in the execution store, which is what the verifier checks.
RESULTS_WINDOW = 16


def merge_results(
    left: Mapping[str, dict[str, Any]] | None,
    right: Mapping[str, dict[str, Any]] | None,
    *,
    window: int | None = RESULTS_WINDOW,
) -> dict[str, dict[str, Any]]:
    """Merge ToolResults by ``call_id``; a later result for a call (a reconciliation) wins.

    Only the newest ``RESULTS_WINDOW`` calls stay, so state is O(1) in run length.
    """
    merged = dict(left or {})
    merged.update(right or {})
    if window is not None and len(merged) > window:
        merged = dict(list(merged.items())[-window:])
    return merged


def dedupe_events(
    left: Mapping[str, Any] | None,
    right: Mapping[str, Any] | Iterable[str] | None,
    *,
    window: int | None = REPLAY_WINDOW,
) -> dict[str, Any]:
    """Count events by id, ignoring ids already seen; keep a bounded tail of recent ids.

    The value is ``{"count": n, "recent": [event ids]}``; an update may be the same shape
    or a plain list of event ids. The full events live in the execution store.
    ``window=None`` keeps every id (one node's updates folded into one, which the channel
    then counts in full).
    """
    count = int((left or {}).get("count", 0))
    recent = list((left or {}).get("recent", []))
    if right is None:
        return {"count": count, "recent": recent}
    if isinstance(right, str):
        ids = [right]  # one id, not its characters
    else:
        ids = right.get("recent", []) if isinstance(right, Mapping) else list(right)
    seen = set(recent)
    for event_id in ids:
        if event_id not in seen:
            seen.add(event_id)
            recent.append(event_id)
            count += 1
    return {"count": count, "recent": recent if window is None else recent[-window:]}


def sticky_status(left: str | None, right: str | None) -> str | None:
    """Take the newer status unless the current one is terminal: terminal is sticky."""
    if left in _TERMINAL:
        return left
    return right if right is not None else left


def replace_plan_if_newer(
    left: Mapping[str, Any] | None, right: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Replace the plan only with one of a higher ``version``."""
    if right is None:
        return dict(left) if left is not None else None
    if left is None or right.get("version", 0) > left.get("version", 0):
        return dict(right)
    return dict(left)


HISTORY_WINDOW = 16


def append_window(
    left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """Append items with an ``id``, skipping ids already present; keep the last 16.

    Used for the recent-turns transcript: the model sees a bounded window, the full
    history lives in the event log.
    """
    merged = list(left or [])
    seen = {item.get("id") for item in merged}
    for item in right or []:
        if item.get("id") not in seen:
            merged.append(item)
            seen.add(item.get("id"))
    return merged[-HISTORY_WINDOW:]


#: Messages kept in state's ``messages`` channel: about the turns the model sees
#: (``HISTORY_WINDOW``) as AI and tool messages. The event log keeps the whole run.
MESSAGES_WINDOW = 32

#: Human messages, and system messages, the window keeps however many turns follow them
#: (the newest of each kind): the request a long run answers and the developer's
#: instructions stay in the conversation. They count against ``MESSAGES_WINDOW``.
PINNED_MESSAGES = 4

_Messages = BaseMessage | Sequence[Any] | Mapping[str, Any] | str


def _stable_id(anchor: str, index: int, message: BaseMessage) -> str:
    """An id for a message that came without one, the same whenever this write is folded.

    LangGraph's ``add_messages`` draws a random id; a delta channel folds a write again
    when it rebuilds the channel (``get_state``, a new process), which must give the
    same value, so the id is derived from the message and the one before it instead.
    """
    body = json.dumps(message.content, sort_keys=True, default=str)
    digest = hashlib.sha256(f"{anchor}|{index}|{message.type}|{body}".encode()).hexdigest()
    return f"{message.type}-{digest[:20]}"


def _pinned(messages: Sequence[BaseMessage]) -> set[int]:
    """Positions of the newest ``PINNED_MESSAGES`` human and system messages each."""
    left = {HumanMessage: PINNED_MESSAGES, SystemMessage: PINNED_MESSAGES}
    pinned: set[int] = set()
    for index in range(len(messages) - 1, -1, -1):
        kind = type(messages[index])
        if left.get(kind):
            left[kind] -= 1
            pinned.add(index)
    return pinned


def _cut(messages: list[Any], window: int) -> list[Any]:
    """The newest messages that fit ``window`` with the pinned ones kept before them.

    The tail starts where the pinned messages older than it and the tail together fit;
    tool messages left at its start (their AI message cut away) are dropped, so a window
    never starts with an answer to a call it does not show.
    """
    pinned = _pinned(messages)
    start = len(messages) - window
    older = sum(1 for i in pinned if i < start)
    while older + len(messages) - start > window:
        older += start in pinned  # the tail's first message leaves it, kept if pinned
        start += 1
    while start < len(messages) and isinstance(messages[start], ToolMessage):
        start += 1
    return [messages[i] for i in sorted(pinned) if i < start] + messages[start:]


def add_messages_window(
    left: Sequence[BaseMessage] | None,
    right: _Messages | None,
    *,
    window: int | None = MESSAGES_WINDOW,
) -> list[AnyMessage]:
    """Merge messages by id as LangGraph's ``add_messages`` does; keep the newest ``window``.

    A message whose id is already present replaces it in place, a ``RemoveMessage``
    deletes its id (``REMOVE_ALL_MESSAGES`` clears the channel), anything else is
    appended; dicts, tuples and strings are converted as ``add_messages`` converts them.
    A message without an id gets a deterministic one (see :func:`_stable_id`), so a
    replayed write folds to the same value. The window keeps the newest messages and,
    however old, the newest ``PINNED_MESSAGES`` human and system messages (the user's
    request and the developer's instructions); tool messages left at the start of the
    newest part (their AI message cut away) are dropped too.
    """
    merged: list[BaseMessage | None] = list(left or [])
    if not all(isinstance(m, BaseMessage) for m in merged):
        # A state written back from a snapshot (LangGraph Server's "re-run from here",
        # ``update_state`` with plain dicts) holds message dicts: read them as add_messages
        # reads its input.
        merged = list(convert_to_messages(merged))  # type: ignore[arg-type]
    if right is None:
        return [m for m in merged if m is not None]  # type: ignore[misc]
    incoming = right if isinstance(right, list | tuple) else [right]
    position = {m.id: i for i, m in enumerate(merged) if m is not None}
    anchor = str(merged[-1].id) if merged and merged[-1] is not None else ""
    for index, message in enumerate(convert_to_messages(incoming)):  # type: ignore[arg-type]
        if message.id is None:
            message = message.model_copy(update={"id": _stable_id(anchor, index, message)})
        if isinstance(message, RemoveMessage):
            if message.id == REMOVE_ALL_MESSAGES:
                merged, position = [], {}
            elif message.id in position:  # an id the window already let go of: nothing to do
                merged[position.pop(message.id)] = None
            continue
        if message.id in position:
            merged[position[message.id]] = message
        else:
            position[message.id] = len(merged)
            merged.append(message)
    kept: list[Any] = [m for m in merged if m is not None]
    if window is not None and len(kept) > window:
        kept = _cut(kept, window)
    return kept


#: Action/observation pairs and evidence facts the loop guard remembers: enough to catch
#: a loop (which repeats recent actions), O(1) in run length.
PROGRESS_MEMORY = 32


def _fold_tools(
    left: Mapping[str, Mapping[str, Any]] | None, right: Mapping[str, Mapping[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """What the run's calls came to per tool: a success sticks, else the newest failure;
    a bug (``"bug"``) sticks too, whatever the tool's other calls came to, so a bug after
    an earlier success of the same tool still stops the run."""
    tools = {name: dict(entry) for name, entry in (left or {}).items()}
    for name, entry in (right or {}).items():
        kept = tools.get(name, {})
        if not kept.get("ok"):
            tools[name] = {**entry, "bug": kept["bug"]} if kept.get("bug") else dict(entry)
        elif entry.get("bug") and not kept.get("bug"):
            tools[name] = {**kept, "bug": entry["bug"]}
    return tools


def fold_progress(
    left: Mapping[str, Any] | None, right: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Fold one turn's loop-guard observation into the guard's memory.

    An update is ``{"turn": id, "seen": [new pairs], "facts": [new facts], "moved": bool}``;
    the value keeps the newest pairs and facts and ``stale``, the count of consecutive
    turns that moved nothing. An update for the turn already folded is a replay; one
    without ``moved`` judges no turn (it only records, see below) and leaves ``stale``.

    An update may also carry ``tools``: per tool name, what this turn's calls of it came
    to (``{"ok": True}``, or ``{"ok": False, "why": ...}``). The value keeps one entry per
    tool the run called: a success sticks, a failure is replaced by a newer one, and the
    first bug a tool raised sticks (see :mod:`execgraph.nodes.run_actions`).
    """
    value = {"turn": None, "seen": [], "facts": [], "stale": 0, **(left or {})}
    if not right or right.get("turn") == value["turn"]:
        return value
    seen = list(value["seen"]) + [p for p in right.get("seen", []) if p not in value["seen"]]
    facts = list(value["facts"]) + [f for f in right.get("facts", []) if f not in value["facts"]]
    folded: dict[str, Any] = {
        "turn": right.get("turn"),
        "seen": seen[-PROGRESS_MEMORY:],
        "facts": facts[-PROGRESS_MEMORY:],
        "stale": int(value["stale"]),
    }
    if "moved" in right:
        folded["stale"] = 0 if right["moved"] else int(value["stale"]) + 1
    if value.get("tools") or right.get("tools"):
        folded["tools"] = _fold_tools(value.get("tools"), right.get("tools"))
    return folded


def _batched(reducer: Callable[[Any, Any], Any], name: str) -> Callable[[Any, Sequence[Any]], Any]:
    def batch(value: Any, updates: Sequence[Any]) -> Any:
        for update in updates:
            value = reducer(value, update)
        return value

    batch.__name__ = batch.__qualname__ = name
    batch.__doc__ = f"``{reducer.__name__}`` over a batch of updates (a DeltaChannel reducer)."
    batch.__wrapped__ = reducer  # type: ignore[attr-defined]  # inspect.unwrap finds the fold
    return batch


# Batch forms for LangGraph's DeltaChannel, which folds a list of writes per call. Each
# reducer above is a left fold, so batching them cannot change the result.
results_batch = _batched(merge_results, "results_batch")
budget_batch = _batched(add_budget, "budget_batch")
events_batch = _batched(dedupe_events, "events_batch")
evidence_batch = _batched(merge_evidence, "evidence_batch")
history_batch = _batched(append_window, "history_batch")
progress_batch = _batched(fold_progress, "progress_batch")
messages_batch = _batched(add_messages_window, "messages_batch")


def latest_batch(value: Any, updates: Sequence[Any]) -> Any:
    """The last update wins (a plain field kept in a DeltaChannel)."""
    return updates[-1] if updates else value
