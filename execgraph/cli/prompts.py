"""Answers to a run's interrupts: a person at the terminal, or the unattended rules.

Approvals (approve / reject / edit) and questions. Every answer becomes a resume value the
runtime validates again (an edit is a new request, validated and authorized anew); a
closed stdin is "no answer", never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from execgraph.cli.render import CANCELLED, short
from execgraph.cli.runs import Answerer, CliError
from execgraph.tools.provenance import describe_provenance

__all__ = [
    "answer_questions",
    "automatic_answer",
    "call_ids",
    "interrupt_kind",
    "prompt_answer",
    "select_approvals",
]


def _read(console: Console, prompt: str) -> str | None:
    try:
        return console.input(Text(prompt, style="bold")).strip()
    except EOFError:
        return None


def _ask_edit(console: Console, value: Mapping[str, Any]) -> dict[str, Any] | None:
    current = json.dumps(value.get("arguments") or {})
    while True:
        raw = _read(console, f"new arguments as a JSON object (now {current}): ")
        if raw is None:
            return None
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            console.print(Text(f"not JSON: {exc.msg}", style="red"))
            continue
        if isinstance(parsed, dict):
            return parsed
        console.print(Text("the arguments must be a JSON object", style="red"))


def _show_approval(console: Console, value: Mapping[str, Any]) -> None:
    console.print(Text(f"approval needed · call {value.get('call_id')}", style="bold yellow"))
    rows = [
        ("tool", f"{value.get('tool')} {value.get('version')} ({value.get('effect')})"),
        ("args", json.dumps(value.get("arguments") or {}, sort_keys=True)),
        ("reason", str(value.get("reason") or "")),
    ]
    for label, text in rows:
        console.print(Text(f"  {label:<7} ", style="dim") + Text(text), soft_wrap=True)
    provenance = value.get("provenance")
    if isinstance(provenance, Mapping) and provenance:
        console.print(Text("  where the arguments came from:", style="dim"))
        for line in describe_provenance(provenance):
            console.print(Text(f"    {line}"), soft_wrap=True)


def _ask_approval(console: Console, value: Mapping[str, Any]) -> dict[str, Any] | None:
    _show_approval(console, value)
    choices = "approve / reject / edit"
    while True:
        raw = _read(console, f"{choices}? [a/r/e] ")
        if raw is None:
            return None
        choice = raw.lower()[:1]
        if choice == "a":
            return {"action": "approve", "approver": "cli"}
        if choice == "r":
            reason = _read(console, "reason (optional): ")
            return {"action": "reject", "reason": reason or "", "approver": "cli"}
        if choice == "e":
            arguments = _ask_edit(console, value)
            edited = {"action": "edit", "arguments": arguments, "approver": "cli"}
            return None if arguments is None else edited
        console.print(Text(f"please answer one of: {choices}", style="red"))


def prompt_answer(console: Console, value: Any) -> dict[str, Any] | None:
    """Ask a person to answer one interrupt (None: no answer, e.g. stdin closed)."""
    kind = value.get("kind") if isinstance(value, Mapping) else None
    if kind == "question":
        console.print(Text(f"question: {value.get('question', '')}", style="bold yellow"))
        answer = _read(console, "answer: ")
        return None if answer is None else {"answer": answer}
    if kind == "approval":
        return _ask_approval(console, value)
    console.print(Text(f"the run waits on an unknown interrupt: {short(value, 120)}", "red"))
    return None


def interrupt_kind(value: Any) -> str | None:
    """``approval`` or ``question`` (None for anything else)."""
    return value.get("kind") if isinstance(value, Mapping) else None


def call_ids(value: Any) -> list[str]:
    """The call id an approval interrupt is about (none for other interrupts)."""
    return [str(value.get("call_id"))] if interrupt_kind(value) == "approval" else []


def automatic_answer(value: Any, answerer: Answerer) -> dict[str, Any] | None:
    """The unattended resume value for one interrupt (None: a person must answer)."""
    kind = interrupt_kind(value)
    if answerer == "reject":  # a cancel: nothing more is to run
        if kind == "question":
            return {"answer": f"({CANCELLED})"}
        return {"action": "reject", "reason": CANCELLED, "approver": "execgraph cancel"}
    if answerer == "approve" and kind == "approval":
        return {"action": "approve", "approver": "auto-approve"}
    return None


def select_approvals(
    state: Any, run_id: str, call: str | None, *, single: bool = False
) -> list[Any]:
    """The pending approval interrupts to answer (all, or the one covering ``call``)."""
    pending = [i for i in state.interrupts if call_ids(i.value)]
    if not pending:
        status = state.values.get("status") or "unknown"
        raise CliError(f"run {run_id!r} has no pending approval (status {status})")
    if call is not None:
        pending = [i for i in pending if call in call_ids(i.value)]
        if not pending:
            ids = ", ".join(c for i in state.interrupts for c in call_ids(i.value))
            raise CliError(f"run {run_id!r} has no pending approval for call {call!r} ({ids})")
    if single and (len(pending) != 1 or interrupt_kind(pending[0].value) != "approval"):
        raise CliError("edit needs exactly one pending single-call approval; pick it with --call")
    return pending


def answer_questions(state: Any, run_id: str, answer: str) -> dict[str, Any]:
    """Resume values giving ``answer`` to every pending question of the run."""
    questions = [i for i in state.interrupts if interrupt_kind(i.value) == "question"]
    if not questions:
        raise CliError(
            f"run {run_id!r} has no pending question; answer approvals with "
            f"execgraph approve/reject/edit {run_id}"
        )
    return {q.id: {"answer": answer} for q in questions}
