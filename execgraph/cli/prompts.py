"""A person at the terminal answers a run's interrupts: approvals and questions.

Approve, reject or edit an approval (shown in full first: every argument, inert, and the
hash the answer is bound to); answer a question. Every answer becomes a resume value the
runtime validates again (an edit is a new request, validated and authorized anew); a
closed stdin is "no answer", never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from execgraph.cli.approvals import approval_detail
from execgraph.cli.inert import short

__all__ = ["prompt_answer"]


def _read(console: Console, prompt: str) -> str | None:
    try:
        return console.input(Text(prompt, style="bold")).strip()
    except EOFError:
        return None


def _ask_edit(console: Console, value: Mapping[str, Any]) -> dict[str, Any] | None:
    current = short(json.dumps(value.get("arguments") or {}, default=str), 2000)
    while True:
        raw = _read(console, f"new arguments as a JSON object (now {current}): ")
        if raw is None:
            return None
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError as exc:
            console.print(Text(f"not JSON: {short(exc.msg, 200)}", style="red"))
            continue
        if isinstance(parsed, dict):
            return parsed
        console.print(Text("the arguments must be a JSON object", style="red"))


def _ask_approval(console: Console, value: Mapping[str, Any]) -> dict[str, Any] | None:
    approval_detail(console, value)
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
        question = short(value.get("question", ""), 2000)
        console.print(Text(f"question: {question}", style="bold yellow"), soft_wrap=True)
        answer = _read(console, "answer: ")
        return None if answer is None else {"answer": answer}
    if kind == "approval":
        return _ask_approval(console, value)
    console.print(Text(f"the run waits on an unknown interrupt: {short(value, 120)}", "red"))
    return None
