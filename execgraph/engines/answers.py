"""Answers to a paused run, bound to the interrupts it waits on.

Every answer names the pending interrupt it answers (by id), so an answer meant for one
pause is never taken by a later one. The builders here pick the interrupts an answer is
for (every pending approval, the one covering a call, every question) and refuse, with a
:class:`~execgraph.state.errors.UsageError`, when the run waits for nothing of the kind.
An edit is a new request: the runtime validates and authorizes it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from execgraph.engines.spec import CANCELLED, Answers, RunView
from execgraph.state.errors import UsageError

__all__ = [
    "approvals",
    "approve",
    "call_ids",
    "check_answers",
    "edit",
    "interrupt_kind",
    "refusal",
    "reject",
    "reply",
]


def interrupt_kind(value: Any) -> str | None:
    """``approval`` or ``question`` (None for anything else)."""
    return value.get("kind") if isinstance(value, Mapping) else None


def call_ids(value: Any) -> list[str]:
    """The call id an approval interrupt is about (none for other interrupts)."""
    return [str(value.get("call_id"))] if interrupt_kind(value) == "approval" else []


def approvals(view: RunView, call: str | None = None) -> list[dict[str, Any]]:
    """The pending approvals of ``view`` (the one covering ``call``, when given)."""
    pending = [i for i in view.interrupts if call_ids(i["value"])]
    if not pending:
        raise UsageError(f"run {view.run_id!r} has no pending approval (status {view.status})")
    if call is not None:
        chosen = [i for i in pending if call in call_ids(i["value"])]
        if not chosen:
            ids = ", ".join(c for i in pending for c in call_ids(i["value"]))
            raise UsageError(
                f"run {view.run_id!r} has no pending approval for call {call!r} ({ids})"
            )
        return chosen
    return pending


def _each(chosen: list[dict[str, Any]], answer: dict[str, Any]) -> Answers:
    return {str(i["id"]): dict(answer) for i in chosen}


def approve(view: RunView, call: str | None = None, approver: str = "") -> Answers:
    """Approve the pending approvals (or the one covering ``call``)."""
    return _each(approvals(view, call), {"action": "approve", "approver": approver})


def reject(view: RunView, reason: str = "", call: str | None = None, approver: str = "") -> Answers:
    """Refuse the pending approvals (or the one covering ``call``); the model is told."""
    answer = {"action": "reject", "reason": reason, "approver": approver}
    return _each(approvals(view, call), answer)


def edit(
    view: RunView, arguments: Mapping[str, Any], call: str | None = None, approver: str = ""
) -> Answers:
    """Replace the arguments of the one pending approval (or of ``call``'s)."""
    chosen = approvals(view, call)
    if len(chosen) != 1:
        raise UsageError("edit needs exactly one pending single-call approval; pick it with --call")
    return _each(chosen, {"action": "edit", "arguments": dict(arguments), "approver": approver})


def reply(view: RunView, text: str) -> Answers:
    """Give ``text`` as the answer to every question the run asks."""
    questions = [i for i in view.interrupts if interrupt_kind(i["value"]) == "question"]
    if not questions:
        raise UsageError(
            f"run {view.run_id!r} has no pending question ({view.status}); answer approvals "
            f"with execgraph approve/reject/edit {view.run_id}"
        )
    return _each(questions, {"answer": text})


def refusal(value: Any) -> dict[str, Any]:
    """The resume value that ends one pending interrupt of a cancelled run: a question
    gets a note, an approval a refusal worded as a cancel, not a person's no."""
    if interrupt_kind(value) == "question":
        return {"answer": f"({CANCELLED})"}
    return {"action": "reject", "reason": CANCELLED, "approver": "execgraph cancel"}


def check_answers(view: RunView, answers: Mapping[str, Any]) -> None:
    """Refuse answers that name no interrupt the run waits on (or none at all)."""
    pending = view.pending()
    if not pending:
        raise UsageError(
            f"run {view.run_id!r} is not waiting for a decision (status {view.status})"
        )
    unknown = sorted(set(answers) - pending)
    if unknown or not answers:
        raise UsageError(
            f"answers name no pending interrupt of the run: {unknown or 'none given'}; "
            f"pending: {sorted(pending)}"
        )
