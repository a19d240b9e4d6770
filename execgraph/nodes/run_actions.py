"""What a run's own actions came to, per tool: the checks of a task that declares none.

A task with success checks is judged on them. A bare goal — a task without checks, or
``{"messages": [...]}`` as with ``create_agent`` — is judged on what the run itself tried
to do: each action the model asked for in this run must have succeeded at least once.
An action is a call of a tool that is not a declared read (a write, an irreversible
tool, or a name no tool declares). A tool whose every call was refused by a policy,
rejected by a person, refused as not offered, or failed, is an *unmet action*: the run
may still end with the model's answer, but never as a plain ``COMPLETED``
(:mod:`execgraph.nodes.verify`). A failed call followed by a successful call of the same
tool (the model corrected its arguments) is met. A read that failed is something the
model did not learn, which its answer has to reflect; a task that needs the read to
succeed says so with a check (``tool_succeeded``).

The record is one entry per tool name in the loop guard's memory (``progress["tools"]``,
folded by :func:`execgraph.state.reducers.fold_progress`), written as each turn's
results are observed (:mod:`execgraph.nodes.turn_progress`), so it covers this run only
(a thread's next run starts with a fresh memory) and stays bounded by the number of
tools.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from execgraph.state.errors.tool_bugs import raised_type

__all__ = ["WHY_CHARS", "met_actions", "tool_bug", "tool_outcomes", "unmet_actions"]

WHY_CHARS = 200
"""Bound on why one tool's calls did not succeed, as the verification reports it."""


def _why(result: Mapping[str, Any]) -> str:
    error = result.get("error") or {}
    status = str(result.get("status") or result.get("outcome") or "failed")
    message = str(error.get("message") or "")
    return (f"{status}: {message}" if message else status)[:WHY_CHARS]


def tool_outcomes(
    call_ids: Iterable[str], results: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, Any]]:
    """What the calls ``call_ids`` came to, per tool (the ``tools`` of a progress update).

    Calls without a result yet (waiting for a person) are left out. A call whose tool
    raised an exception nobody declared (a ``ToolRaised`` error: a bug in the tool) is
    named in its tool's entry (``"bug": [call id, exception type]``), whatever the tool's
    other calls came to: the run stops for it (:func:`tool_bug`).
    """
    tools: dict[str, dict[str, Any]] = {}
    bugs: dict[str, list[str]] = {}
    for call_id in call_ids:
        result = results.get(call_id)
        if result is None or not result.get("tool_name"):
            continue
        name = str(result["tool_name"])
        if result.get("outcome") == "succeeded":
            tools[name] = {"ok": True}
        elif not tools.get(name, {}).get("ok"):
            tools[name] = {"ok": False, "why": _why(result)}
        error = result.get("error") or {}
        if error.get("type") == "ToolRaised" and name not in bugs:
            bugs[name] = [str(call_id), raised_type(str(error.get("message") or ""))]
    for name, bug in bugs.items():
        tools[name] = {**tools[name], "bug": bug}
    return tools


def tool_bug(state: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The first bug a tool of this run raised: its tool, call id and exception type."""
    for name, entry in _tools(state).items():
        bug = entry.get("bug")
        if bug:
            return name, str(bug[0]), str(bug[1])
    return None


def _tools(state: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
    return (state.get("progress") or {}).get("tools") or {}


def met_actions(state: Mapping[str, Any]) -> list[str]:
    """The tools this run called that succeeded, as the verification lists them."""
    return [f"{name} succeeded" for name, entry in _tools(state).items() if entry.get("ok")]


def unmet_actions(state: Mapping[str, Any], reads: Collection[str] = ()) -> list[str]:
    """The tools this run called that never succeeded, each with why (its newest
    failure), but for the tools named in ``reads`` (the declared reads)."""
    return [
        f"{name} never succeeded ({entry.get('why') or 'failed'})"
        for name, entry in _tools(state).items()
        if not entry.get("ok") and name not in reads
    ]
