"""What a person is shown of a pending call before they answer it.

An approval is only as good as what the approver read. Every argument is shown, inert
(:mod:`execgraph.cli.inert`), and unambiguous: a string is shown bare only when it is
plain words (letters, digits, ``. / @ : + - _``, single spaces), anything else as JSON,
so ``to="alice, amount=1"`` can never read as two arguments. An argument too long for
one line is cut visibly, saying how long it is and which command shows every argument in
full (``execgraph status RUN --call C``), and so is one the engine did not carry (a run
on Temporal sends long arguments as their size and hash: :mod:`execgraph.engines.temporal.
messages`). Each call is named with the hash of its arguments, and the commands printed
to answer it carry that hash (``--args-hash``), so the answer applies only to the call
that was shown.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from execgraph.cli.inert import inert, short
from execgraph.tools.provenance import describe_provenance

__all__ = [
    "SHOWN_CHARS",
    "approval_detail",
    "approval_text",
    "call_text",
    "follow_ups",
    "hash_shown",
    "interrupt_summary",
    "value_text",
    "wait_summary",
]

SHOWN_CHARS = 500
"""Characters of one argument shown on a line; a longer one is cut visibly (its length
and the command showing it whole are printed)."""

_HEAD = 200  # of a cut argument, shown before the cut
_BARE = re.compile(r"[\w./@:+-]+(?: [\w./@:+-]+)*")


def hash_shown(value: Mapping[str, Any]) -> str:
    """The prefix of a call's ``args_hash`` a person is shown (and types back)."""
    return inert(str(value.get("args_hash") or ""))[:12]


def value_text(value: Any, limit: int | None = None) -> str:
    """One argument's value as shown: plain words bare, anything else as JSON, inert;
    cut to ``limit`` characters with a visible ``…``."""
    if isinstance(value, str) and _BARE.fullmatch(value):
        text = value
    else:
        text = inert(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text


def call_text(name: Any, args: Mapping[str, Any] | None, limit: int = 40) -> str:
    """``name(key=value, ...)`` on one line, each value cut to ``limit`` (progress, trace)."""
    inner = ", ".join(f"{inert(str(k))}={value_text(v, limit)}" for k, v in (args or {}).items())
    return f"{short(name, 80)}({inner})"


def _argument(name: str, value: Any, elided: Mapping[str, Any]) -> tuple[str, bool]:
    """``name=value`` as an approval shows it, and whether it was cut."""
    if name in elided:
        size = elided[name].get("chars") if isinstance(elided[name], Mapping) else None
        return f"{inert(name)}=<{size} characters, not shown here>", True
    text = value_text(value)
    if len(text) <= SHOWN_CHARS:
        return f"{inert(name)}={text}", False
    return f"{inert(name)}={text[:_HEAD]}… <{len(text)} characters in all>", True


def approval_text(value: Mapping[str, Any], flags: str = "") -> str:
    """``approval of tool(args) [call C] · args H``: every argument, or where one is too
    long to show here, its length and the command that shows every argument."""
    found = value.get("elided")
    elided: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    shown = [_argument(str(k), v, elided) for k, v in (value.get("arguments") or {}).items()]
    call = short(value.get("call_id"), 40)
    args = ", ".join(text for text, _ in shown)
    line = f"approval of {short(value.get('tool'), 80)}({args}) [call {call}]"
    line += f" · args {hash_shown(value)}"
    if any(cut for _, cut in shown):
        line += f" (every argument: execgraph status {short(value.get('run_id'), 130)}"
        line += f" --call {call}{flags})"
    return line


def interrupt_summary(value: Any, flags: str = "") -> str:
    """One line naming what an interrupt waits for (and since when, until when)."""
    if not isinstance(value, Mapping):
        return short(value, 100)
    kind = value.get("kind")
    if kind == "approval":
        return approval_text(value, flags) + _deadline(value)
    if kind == "question":
        return f"an answer to: {short(value.get('question', ''), 120)}" + _deadline(value)
    if kind == "wait":
        return f"the event {short(value.get('event', ''), 120)}" + _deadline(value)
    return short(value, 100)


def wait_summary(item: Mapping[str, Any], flags: str = "") -> str:
    """One line naming what a pending interrupt (``{"id", "value"}``) waits for; a tool's
    own question also says until when (its ``wait``, logged beside it)."""
    wait = item.get("wait")
    if not isinstance(wait, Mapping):
        return interrupt_summary(item.get("value"), flags)
    asked = f"an answer to {short(wait.get('tool'), 80)}'s question: "
    return asked + short(item.get("value"), 120) + _deadline(wait)


def _deadline(value: Mapping[str, Any]) -> str:
    """`` · since …, until … (then reject)``: a wait's times, by the store's clock."""
    if not isinstance(value.get("expires_at"), int | float):
        return ""
    since = f"since {_when(value.get('asked_at'))}, " if value.get("asked_at") else ""
    then = short(value.get("on_expiry") or "reject", 20)
    return f" · waiting {since}until {_when(value.get('expires_at'))} (then {then})"


def follow_ups(run_id: str, values: Sequence[Any], suffix: str = "") -> list[str]:
    """The exact commands that continue a run waiting on ``values``: first, for each
    approval, the one bound to the call as shown (refused if it changed since)."""
    run = short(run_id, 130)
    approvals = [v for v in values if isinstance(v, Mapping) and v.get("kind") == "approval"]
    commands = [
        f"execgraph approve {run} --call {short(v.get('call_id'), 40)} --args-hash {hash_shown(v)}"
        for v in approvals
    ]
    if approvals:
        commands += [f"execgraph approve {run}", f"execgraph reject {run}"]
        commands.append(f"execgraph edit {run} --args '{{...}}'")
    if any(isinstance(v, Mapping) and v.get("kind") == "question" for v in values):
        commands.append(f"execgraph resume {run} --answer '...'")
    commands.append(f"execgraph cancel {run}")
    return [command + suffix for command in commands]


def _when(ts: Any) -> str:
    if not isinstance(ts, int | float):
        return "–"
    return time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(ts))


def _rows(value: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    tool, version = short(value.get("tool"), 80), short(value.get("version"), 40)
    yield "tool", f"{tool} {version} ({short(value.get('effect'), 40)})"
    arguments = value.get("arguments") or {}
    yield "args", inert(json.dumps(arguments, ensure_ascii=False, sort_keys=True, default=str))
    yield "hash", f"sha256 {inert(str(value.get('args_hash') or ''))}"
    yield "reason", short(value.get("reason") or "", 400)
    yield "expires", _when(value.get("expires_at"))
    for target, state in (value.get("target_state") or {}).items():
        yield "target", f"{short(target, 120)} {short(state, 80)}"


def approval_detail(console: Console, value: Mapping[str, Any], flags: str = "") -> None:
    """A pending approval in full: the tool, every argument as JSON (inert, never cut),
    the hash an answer is bound to, the reason and the expiry."""
    head = f"approval needed · call {short(value.get('call_id'), 40)}"
    console.print(Text(head, style="bold yellow"), soft_wrap=True)
    for label, text in _rows(value):
        console.print(Text(f"  {label:<7} ", style="dim") + Text(text), soft_wrap=True)
    provenance = value.get("provenance")
    if isinstance(provenance, Mapping) and provenance:
        console.print(Text("  where the arguments came from:", style="dim"), soft_wrap=True)
        for line in describe_provenance(provenance):
            console.print(Text(f"    {inert(line)}"), soft_wrap=True)
    elided = value.get("elided") or {}
    if elided:
        names = ", ".join(inert(str(name)) for name in elided)
        run, call = short(value.get("run_id"), 130), short(value.get("call_id"), 40)
        shown = f"  not carried here: {names}; every argument: execgraph status {run} --call "
        console.print(Text(shown + call + flags, style="yellow"), soft_wrap=True)
