"""Built-in success checks. Each looks only at evidence, results, output or the workspace.

A check returns None when it holds, or a short reason it does not; the reason is what a
rejected finish tells the model. Evidence counts as the executor records it: every
successful call leaves some, unverified unless the runtime checked it (see
:mod:`execgraph.nodes.executor.stages.evidence`), so ``value="verified"`` is how a check asks
for more than an observation.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from execgraph.nodes.answer_channel import check_answer_backed
from execgraph.state.contracts import SuccessCheck, TaskContract
from execgraph.state.errors import ExecGraphError
from execgraph.tools.paths import confine_path

__all__ = [
    "BUILTIN_CHECKS",
    "check_evidence",
    "check_file",
    "check_min_evidence",
    "check_output",
    "check_tool",
]


def check_tool(check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract) -> str | None:
    """A call of tool ``target`` succeeded."""
    for result in (view.get("results") or {}).values():
        if result.get("tool_name") == check.target and result.get("outcome") == "succeeded":
            return None
    return f"no successful call of {check.target}"


def check_evidence(
    check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract
) -> str | None:
    """Evidence of kind ``target`` exists (verified by read-after-write if value='verified')."""
    for item in (view.get("evidence") or {}).values():
        if item.get("kind") == check.target and (check.value != "verified" or item.get("verified")):
            return None
    return f"no {'verified ' if check.value == 'verified' else ''}evidence of kind {check.target}"


def check_min_evidence(
    check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract
) -> str | None:
    """At least ``count`` evidence items (one if unset).

    Only of kind ``target`` when it is given, only verified ones when ``value='verified'``.
    Items are sources (evidence is a set keyed by source id), so the same source read twice
    counts once.
    """
    need = check.count or 1
    verified = check.value == "verified"
    have = sum(
        1
        for item in (view.get("evidence") or {}).values()
        if (check.target is None or item.get("kind") == check.target)
        and (not verified or item.get("verified"))
    )
    if have >= need:
        return None
    what = ("verified " if verified else "") + "evidence item(s)"
    if check.target is not None:
        what += f" of kind {check.target}"
    return f"only {have} of {need} {what} so far"


def check_file(check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract) -> str | None:
    """Workspace file ``target`` exists and contains ``value``."""
    try:
        path = confine_path(Path(contract.workspace.root), check.target or "")
    except ExecGraphError as exc:
        return exc.message
    if not path.is_file():
        return f"{check.target} does not exist"
    if check.value and check.value not in path.read_text(errors="replace"):
        return f"{check.target} does not contain {check.value!r}"
    return None


def check_output(
    check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract
) -> str | None:
    """The final output contains ``value``."""
    output = view.get("output") or ""
    if check.value and check.value.lower() not in output.lower():
        return f"the output does not mention {check.value!r}"
    return None if output else "the output is empty"


BUILTIN_CHECKS = {
    "answer_backed": check_answer_backed,
    "tool_succeeded": check_tool,
    "evidence": check_evidence,
    "min_evidence": check_min_evidence,
    "file_contains": check_file,
    "output_contains": check_output,
}
