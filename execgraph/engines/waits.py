"""A run's waits, seen from outside: what each waits for, since when, until when; the
answers that end the expired ones; and the delivery of an awaited event.

Expiry is judged by the execution store's clock (:mod:`execgraph.state.waits`): a run
whose wait passed its deadline is ended by its expiry policy the next time it is resumed
(``execgraph resume RUN``, ``Runs.resume`` on either engine; a Temporal workflow resumes
itself at the deadline): the engine answers each expired wait, and the node that waits
applies the policy, judging the deadline by the same clock (an answer cannot make a wait
expire early, nor late).

A tool's own question (``interrupt()`` inside the tool) keeps the value the tool asked
with; its wait is logged by the executor, and a run's view carries it beside the
question, as the interrupt's ``wait`` (:func:`tool_waits`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from execgraph.engines.spec import Answers, RunView
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store.base import ExecutionStore

__all__ = ["Wait", "deliver", "earliest_deadline", "expired_answers", "tool_waits", "waits_of"]

_EXPIRED_APPROVAL = {"action": "reject", "reason": "the wait expired", "approver": "expiry"}


@dataclass(frozen=True)
class Wait:
    """One pending wait: ``kind`` (approval, question, wait, or a tool's own), what it
    waits for, since and until when (the store's clock; None where it has no deadline),
    and what its expiry does."""

    id: str
    kind: str
    what: str
    since: float | None
    until: float | None
    on_expiry: str

    def expired(self, now: float) -> bool:
        """Whether the deadline passed at ``now`` (the store's clock)."""
        return self.until is not None and now > self.until


def _what(value: Mapping[str, Any]) -> str:
    kind = value.get("kind")
    if kind == "approval":
        return f"approval of {value.get('tool')} (call {value.get('call_id')})"
    if kind == "question":
        return f"an answer to: {value.get('question')}"
    if kind == "wait":
        return f"the event {value.get('event')!r}"
    if kind == "tool":
        return f"an answer to {value.get('tool')}'s question: {value.get('question')}"
    return str(value.get("question") or value.get("kind") or "an answer")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def waits_of(view: RunView) -> list[Wait]:
    """The run's pending waits, in the order of its interrupts."""
    found = []
    for item in view.interrupts:
        value = item.get("value")
        if not isinstance(value, Mapping):
            value = {"question": str(value)}
        if isinstance(item.get("wait"), Mapping):  # a tool's own question: its wait
            value = item["wait"]
        found.append(
            Wait(
                id=str(item["id"]),
                kind=str(value.get("kind") or "interrupt"),
                what=_what(value),
                since=_number(value.get("asked_at")),
                until=_number(value.get("expires_at")),
                on_expiry=str(value.get("on_expiry") or "reject"),
            )
        )
    return found


def tool_waits(
    interrupts: Sequence[dict[str, Any]], store: ExecutionStore, run_id: str
) -> list[dict[str, Any]]:
    """``interrupts``, each a tool's own question with its logged wait as ``wait`` (the
    latest stamp of that interrupt: an escalated one after the first)."""
    if not interrupts:
        return list(interrupts)
    logged = {
        str(e.payload.get("interrupt_id")): dict(e.payload)
        for e in store.events(run_id, types=[EventType.WAIT_STARTED])
        if e.payload.get("kind") == "tool"
    }
    return [
        {**item, "wait": logged[str(item["id"])]} if str(item["id"]) in logged else item
        for item in interrupts
    ]


def earliest_deadline(interrupts: Sequence[Mapping[str, Any]]) -> float | None:
    """The first deadline among ``interrupts``' waits (the store's clock), if any has one."""
    view = RunView("", "WAITING", interrupts=[dict(i) for i in interrupts])
    until = [w.until for w in waits_of(view) if w.until is not None]
    return min(until) if until else None


def expired_answers(view: RunView, now: float) -> Answers:
    """Answers that end each wait of ``view`` expired at ``now`` (the store's clock); the
    node that waits applies the wait's own expiry policy."""
    answers: Answers = {}
    for wait in waits_of(view):
        if wait.expired(now):
            answers[wait.id] = _EXPIRED_APPROVAL if wait.kind == "approval" else {"expired": True}
    return answers


def deliver(view: RunView, event: str, data: Any = None) -> Answers:
    """The answers that deliver ``event`` (with ``data``) to the run waiting for it.

    Raises:
        UsageError: the run waits for no event of that name.
    """
    for item in view.interrupts:
        value = item.get("value")
        if not isinstance(value, Mapping):
            continue
        if value.get("kind") == "wait" and value.get("event") == event:
            return {str(item["id"]): {"event": event, "data": data}}
    raise UsageError(f"run {view.run_id!r} waits for no event named {event!r}")
