"""The loop guard over observation evidence: a repeat is no progress, new data is.

Every successful call now leaves evidence, so the guard must not read a repeated
identical call's fresh evidence item (new call id, version and time) as something new.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.nodes.executor.stages.evidence import observation_evidence
from execgraph.nodes.loop_guard import reply_progress, update_progress
from execgraph.state.reducers import fold_progress
from execgraph.testing import ScriptedChatModel
from execgraph.tools import InvokeContext, ToolSpec, tool_spec


@tool_spec(effect="read")
def status(job: str) -> str:
    """The job's status."""
    return "running"


def _result(spec: ToolSpec, data: Any, call_id: str, tmp_path: Path) -> dict[str, Any]:
    ctx = InvokeContext(run_id="r", call_id=call_id, attempt_id="a", workspace_root=tmp_path)
    item = observation_evidence(spec, spec.input_model(job="j"), data, False, ctx)
    return {"status": "OK", "data": data, "evidence": [item.model_dump(mode="json")]}


def test_the_same_observation_again_is_no_progress_new_data_is(tmp_path: Path) -> None:
    progress: dict[str, Any] = {}
    moved = []
    for turn, data in enumerate(["running", "running", "done"]):
        action = ("status", {"job": "j"}, _result(status, data, f"c{turn}", tmp_path))
        update = update_progress(progress, [action], f"t{turn}")
        moved.append(update["moved"])
        progress = fold_progress(progress, update)
    assert moved == [True, False, True]


def _call(name: str, call_id: str, **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _run(tmp_path: Path, spec: ToolSpec) -> dict[str, Any]:
    replies = [_call(spec.name, f"s{i}", job="j") for i in range(4)]
    replies.append(_call("finish", "f", output="done"))
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[spec],
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    return app.invoke({"task": {"goal": "Wait for j."}}, {"configurable": {"thread_id": "o"}})


def test_a_repeated_identical_call_still_stops_the_run(tmp_path: Path) -> None:
    out = _run(tmp_path, status)
    assert out["status"] == "FAILED"
    assert out["error"]["message"].startswith("no progress: the last 3 turns repeated")
    assert len(out["evidence"]) == 1  # one source, observed four times


def test_polling_that_sees_new_data_is_progress(tmp_path: Path) -> None:
    counter = itertools.count()

    @tool_spec(effect="read")
    def poll(job: str) -> str:
        """The job's progress."""
        return f"{next(counter) * 25}%"

    out = _run(tmp_path, poll)
    assert out["status"] == "COMPLETED", out.get("error")
    [item] = out["evidence"].values()
    assert item["value"] == "75%" and "conflict" not in item  # the newest observation


def test_the_same_rejected_answer_again_is_no_progress_a_new_one_is_only_remembered() -> None:
    progress: dict[str, Any] = {"stale": 2}
    first = reply_progress(progress, "I do not know.", ["no output"], "t1:reply")
    assert "moved" not in first  # a new answer: remembered, the count left alone
    progress = fold_progress(progress, first)
    assert progress["stale"] == 2
    again = reply_progress(progress, "I do not know.", ["no output"], "t2:reply")
    assert fold_progress(progress, again)["stale"] == 3
    other = reply_progress(progress, "I do not know.", ["another reason"], "t3:reply")
    assert "moved" not in other  # judged anew: not the same rejection
