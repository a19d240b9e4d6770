"""A person at the terminal answers a run's interrupts: approvals and questions.

Approve, reject or edit an approval; answer a question. Every answer becomes a resume
value the runtime validates again (an edit is a new request, validated and authorized
anew); a closed stdin is "no answer", never a guess.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from execgraph.cli.render import short

__all__ = ["prompt_answer"]


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
