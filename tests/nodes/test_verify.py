"""The verifier on ordinary tools: a success is evidence (unverified), a failure is not.

A task with no success checks (a bare goal) ends with the model's answer, judged on the
run's own actions; one that needs more says so with a check, e.g. ``min_evidence`` with
``value="verified"``, which observations alone never satisfy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.errors import TargetNotFound
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def lookup(city: str) -> str:
    """Look the weather up."""
    if city == "Atlantis":
        raise TargetNotFound("no such city")
    return f"{city}: sunny"


def _call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _finish(call_id: str, output: str = "sunny") -> AIMessage:
    return _call("finish", call_id, output=output)


def _run(tmp_path: Path, replies: list[AIMessage], **task: Any) -> tuple[dict[str, Any], Any]:
    model = ScriptedChatModel(replies)
    app = build_graph(
        "react", model=model, tools=[lookup], checkpointer=InMemorySaver(), home=tmp_path
    )
    out = app.invoke({"task": {"goal": "Weather?", **task}}, {"configurable": {"thread_id": "v"}})
    return out, model


def test_a_bare_goal_is_accepted_on_a_plain_tools_observation(tmp_path: Path) -> None:
    out, model = _run(tmp_path, [_call("lookup", "l1", city="Paris"), _finish("f1")])
    assert out["status"] == "COMPLETED", out.get("error")
    assert out["output"] == "sunny" and len(model.calls) == 2
    passed = ["lookup succeeded"]  # a bare goal's checks are its own actions
    assert out["verification"] == {"turn": 2, "passed": passed, "failed": [], "accepted": True}


def test_a_bare_goals_answer_without_tools_ends_the_run_at_once(tmp_path: Path) -> None:
    replies = [_finish("f0"), _call("lookup", "l1", city="Paris"), _finish("f1")]
    out, model = _run(tmp_path, replies)
    assert out["status"] == "COMPLETED" and out["output"] == "sunny"
    assert len(model.calls) == 1 and out["evidence"] == {}  # a chat turn: one model call
    assert out["verification"] == {"turn": 1, "passed": [], "failed": [], "accepted": True}


def test_a_failed_call_is_no_evidence(tmp_path: Path) -> None:
    replies = [
        _call("lookup", "l1", city="Atlantis"),
        _finish("f1"),
        _call("abort", "a1", reason="x"),
    ]
    out, model = _run(tmp_path, replies)
    assert out["evidence"] == {}
    # A read that found nothing is no unmet action: the answer ends the bare goal.
    assert out["status"] == "COMPLETED" and len(model.calls) == 2


def test_observations_do_not_satisfy_a_check_for_verified_evidence(tmp_path: Path) -> None:
    checks = [{"kind": "min_evidence", "count": 1, "value": "verified"}]
    replies = [_call("lookup", "l1", city="Paris"), _finish("f1"), _call("abort", "a1", reason="x")]
    out, _ = _run(tmp_path, replies, success_checks=checks)
    assert out["status"] == "FAILED"
    assert out["verification"]["failed"] == ["only 0 of 1 verified evidence item(s) so far"]
