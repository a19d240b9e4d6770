"""The policy-side faults the oracle commits on purpose, once, at a fixed decision.

The fault matrix (:mod:`execgraph.eval.faults`) asks for ``illegal_output``,
``unknown_tool``, ``schema_violation``, ``no_progress`` or ``verification_fails``; the
oracle applies them around its correct decision. What a faulty reply *is* lives here, so
the decisions stay those of a correct policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from execgraph.eval.oracle.reply import Reply, control

__all__ = ["WRONG_ANSWER", "first_action_again", "with_refused_call"]

WRONG_ANSWER = "The task is done."
"""The unfounded result ``verification_fails`` states first (no check can accept it)."""


def with_refused_call(reply: Reply, fault: str, turn: int) -> Reply:
    """``unknown_tool`` / ``schema_violation``: add one refused call to a turn that acts —
    an unknown tool, or bad arguments."""
    meta = {"injected_fault": fault}
    name, args = reply.calls[0][0], reply.calls[0][1]
    if name == "submit_plan":
        first = args["steps"][0]
        bad = {"id": "injected", "tool": "teleport", "arguments": {"to": "mars"}}
        if fault == "schema_violation":
            bad = {"id": "injected", "tool": first["tool"], "arguments": {"bogus": 7}}
        steps = [*args["steps"], {**bad, "depends_on": []}]
        return Reply(calls=[(name, {"steps": steps}, reply.calls[0][2])], meta=meta)
    bad_call = ("teleport", {"to": "mars"}) if fault == "unknown_tool" else (name, {"bogus": 7})
    extra = (*bad_call, f"injected~{turn}")
    return Reply(calls=[*reply.calls, extra], text=reply.text, meta=meta)


def first_action_again(
    repeat: Sequence[tuple[str, dict[str, Any]]], offered: Sequence[str], turn: int
) -> Reply:
    """``no_progress``: the first action (``repeat``) again, whatever was observed."""
    meta = {"injected_fault": "no_progress"}
    if "submit_plan" in offered:
        tool, args = repeat[0]
        ids = [f"again{turn}.{n}" for n in range(4)]
        steps: list[dict[str, Any]] = [
            {"id": i, "tool": tool, "arguments": args, "depends_on": ids[:n][-1:]}
            for n, i in enumerate(ids)
        ]
        return Reply(calls=[("submit_plan", {"steps": steps}, f"again~{turn}")], meta=meta)
    if "revise_plan" in offered:
        reply = control("revise_plan", "reason", "look again", turn)
        return Reply(calls=reply.calls, meta=meta)
    calls = [(n, a, f"again~{turn}.{i}") for i, (n, a) in enumerate(repeat)]
    if any(n in offered for n, _ in repeat) or "finish" not in offered:
        return Reply(calls=calls, meta=meta)
    reply = control("finish", "output", WRONG_ANSWER, turn)
    return Reply(calls=reply.calls, meta=meta)
