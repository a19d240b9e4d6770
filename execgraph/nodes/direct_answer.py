"""A tool whose output is the answer (``return_direct``): the run ends with it.

LangChain's ``return_direct`` tools end ``create_agent``'s loop with their output: the
model is not asked again. In a ReAct run, a turn whose calls are all of tools declared so,
and all succeeded, ends the same way: the next turn calls no model; it hands their output
(the data the model would have read, one call's after another) to the verifier as the
run's answer, judged as any answer is. A call that failed or was refused goes back to the
model as usual (``create_agent`` would end on it, but a refusal is not an answer), and so
does an output larger than the call's output bound (the run holds only its preview, no
answer); a graph with an answer format (``response_format``) still needs the model's
structured finish.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from execgraph.nodes.deps import RunDeps
from execgraph.state.contracts import Decision, DecisionKind
from execgraph.state.errors import ExecGraphError

__all__ = ["direct_answer"]


def direct_answer(state: Mapping[str, Any], deps: RunDeps) -> dict[str, Any] | None:
    """The answer the last turn's calls give (a decision, as state holds one), or None
    when any of them is of a tool not declared ``return_direct``, did not succeed, or
    answered more than its output bound keeps."""
    pending = state.get("pending") or []
    if not pending or deps.answer_format is not None:
        return None
    results = state.get("results") or {}
    texts: list[str] = []
    for request in pending:
        result = results.get(request["call_id"])
        if result is None or result.get("status") != "OK" or result.get("truncated"):
            return None
        try:
            spec = deps.executor.registry.resolve(
                str(result["tool_name"]), result.get("tool_version") or None
            )
        except ExecGraphError:
            return None
        if not spec.return_direct:
            return None
        data = result.get("data")
        texts.append(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False))
    turn = int(state.get("turn", 0))
    decision = Decision(
        decision_id=f"t{turn}:direct", kind=DecisionKind.ANSWER, content="\n\n".join(texts)
    )
    return decision.model_dump(mode="json")
