"""Answers to a paused run, bound to the interrupts it waits on and to what was shown.

Every answer names the pending interrupt it answers (by id), so an answer meant for one
pause is never taken by a later one. An answer to an approval also carries the
``args_hash`` of the call it answers (the sha256 of the call's normalized arguments, as
its approval request shows it): an interrupt keeps its id when the call it asks about is
edited, so the id alone does not say which arguments a person saw.

The builders here pick the interrupts an answer is for (every pending approval, the one
covering a call, every question), bind each approval to the hash the person was shown
(``args_hash``: the full hash or a prefix of at least :data:`MIN_HASH` hex digits; without
it, to the call as it is now, which the caller prints) and refuse, with a
:class:`~execgraph.state.errors.UsageError`, when the run waits for nothing of the kind or
the call changed since it was shown. :func:`binding_problem` is the one rule; every
engine applies it again where it resumes the run. An edit is a new request: the runtime
validates and authorizes it again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from execgraph.engines.spec import CANCELLED, Answers, RunView
from execgraph.state.errors import UsageError

__all__ = [
    "MIN_HASH",
    "approvals",
    "approve",
    "binding_problem",
    "bound_to",
    "call_ids",
    "check_answers",
    "edit",
    "interrupt_kind",
    "refusal",
    "reject",
    "reply",
]

MIN_HASH = 8
"""Hex digits of an ``args_hash`` a person must give, at least, to name what they saw."""


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


def _bound(chosen: list[dict[str, Any]], answer: dict[str, Any], shown: str | None) -> Answers:
    """``answer`` for each of ``chosen``, each bound to the hash of its call's arguments;
    refused when ``shown`` (a hash, or a prefix of one) is not the hash of each."""
    if shown is not None:
        wanted = shown.strip().lower()
        if len(wanted) < MIN_HASH:
            raise UsageError(f"--args-hash needs at least {MIN_HASH} hex digits")
        for item in chosen:
            now = str(item["value"].get("args_hash") or "")
            if not now.startswith(wanted):
                raise UsageError(
                    f"call {item['value'].get('call_id')} changed since it was shown: its "
                    f"arguments now hash to {now[:12]}, not {wanted[:12]}; look again with "
                    "execgraph status and answer what it shows"
                )
    return {str(item["id"]): bound_to(item["value"], answer) for item in chosen}


def bound_to(value: Any, answer: Mapping[str, Any]) -> dict[str, Any]:
    """``answer`` to the interrupt whose value is ``value``, bound to the hash of its
    call's arguments when it is an approval (a question's answer as it is)."""
    hashed = value.get("args_hash") if interrupt_kind(value) == "approval" else None
    return {**answer, "args_hash": str(hashed)} if hashed else dict(answer)


def approve(
    view: RunView, call: str | None = None, approver: str = "", args_hash: str | None = None
) -> Answers:
    """Approve the pending approvals (or the one covering ``call``), each bound to the
    hash of its arguments; ``args_hash``: the hash the person was shown."""
    answer = {"action": "approve", "approver": approver}
    return _bound(approvals(view, call), answer, args_hash)


def reject(
    view: RunView,
    reason: str = "",
    call: str | None = None,
    approver: str = "",
    args_hash: str | None = None,
) -> Answers:
    """Refuse the pending approvals (or the one covering ``call``); the model is told."""
    answer = {"action": "reject", "reason": reason, "approver": approver}
    return _bound(approvals(view, call), answer, args_hash)


def edit(
    view: RunView,
    arguments: Mapping[str, Any],
    call: str | None = None,
    approver: str = "",
    args_hash: str | None = None,
) -> Answers:
    """Replace the arguments of the one pending approval (or of ``call``'s)."""
    chosen = approvals(view, call)
    if len(chosen) != 1:
        raise UsageError("edit needs exactly one pending single-call approval; pick it with --call")
    answer = {"action": "edit", "arguments": dict(arguments), "approver": approver}
    return _bound(chosen, answer, args_hash)


def reply(view: RunView, text: str) -> Answers:
    """Give ``text`` as the answer to every question the run asks."""
    questions = [i for i in view.interrupts if interrupt_kind(i["value"]) == "question"]
    if not questions:
        raise UsageError(
            f"run {view.run_id!r} has no pending question ({view.status}); answer approvals "
            f"with execgraph approve/reject/edit {view.run_id}"
        )
    return {str(i["id"]): {"answer": text} for i in questions}


def refusal(value: Any) -> dict[str, Any]:
    """The resume value that ends one pending interrupt of a cancelled run: a question
    gets a note, an approval a refusal worded as a cancel, not a person's no."""
    if interrupt_kind(value) == "question":
        return {"answer": f"({CANCELLED})"}
    return {"action": "reject", "reason": CANCELLED, "approver": "execgraph cancel"}


def binding_problem(interrupts: Sequence[Mapping[str, Any]], answers: Mapping[str, Any]) -> str:
    """Why ``answers`` cannot answer a run pending on ``interrupts`` (``{"id", "value"}``
    each), or ``""``: each must name a pending interrupt, and an answer carrying an
    ``args_hash`` must carry the hash of the arguments its approval asks about now."""
    pending = {str(i.get("id")): i.get("value") for i in interrupts}
    unknown = sorted(set(answers) - set(pending))
    if unknown or not answers:
        return (
            f"answers name no pending interrupt of the run: {unknown or 'none given'}; "
            f"pending: {sorted(pending)}"
        )
    for key, answer in answers.items():
        bound = answer.get("args_hash") if isinstance(answer, Mapping) else None
        value = pending[key]
        if bound is None or not isinstance(value, Mapping) or interrupt_kind(value) != "approval":
            continue
        if str(bound) != str(value.get("args_hash")):
            return (
                f"call {value.get('call_id')} changed since it was shown: its arguments now "
                f"hash to {str(value.get('args_hash'))[:12]}, not {str(bound)[:12]}"
            )
    return ""


def check_answers(view: RunView, answers: Mapping[str, Any]) -> None:
    """Refuse answers that name no interrupt the run waits on (or none at all), or that
    answer a call whose arguments changed since they were shown."""
    if not view.pending():
        raise UsageError(
            f"run {view.run_id!r} is not waiting for a decision (status {view.status})"
        )
    problem = binding_problem(view.interrupts, answers)
    if problem:
        raise UsageError(problem)
