"""Hostile model output and task input become typed refusals (issue 20, items 10 and 11).

Lone surrogates in a call, arguments that are not an object, two calls under one id, a
budget of NaN or infinity, an argument of megabytes: each used to crash the run, lose a
result, disable a limit or be stored many times over. Each is a scripted model's reply
here, run through the real graph, store and checkpointer.
"""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from execgraph.graph import build_graph
from execgraph.nodes.decide import parse_reply
from execgraph.nodes.executor import DEFAULT_MAX_ARGUMENT_BYTES
from execgraph.nodes.model.call import call_model
from execgraph.state.events import EventType, make_event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.adapters import FileAdapter
from tests.support.executor import Counter, config, make_deps, make_executor, request
from tests.support.hostile_input import call, finish, run_react, text_of


def _note_tool(seen: Counter) -> Any:
    @tool_spec(effect="write")
    def note(text: str) -> str:
        """Write a note."""
        seen.add(text)
        return "noted"

    return note


def _constructed(name: str, args: Any, call_id: str) -> AIMessage:
    """An AIMessage as an integration that skips LangChain's validation could hand over."""
    tool_call = {"name": name, "args": args, "id": call_id, "type": "tool_call"}
    return AIMessage.model_construct(
        content="",
        tool_calls=[tool_call],
        invalid_tool_calls=[],
        additional_kwargs={},
        response_metadata={},
        type="ai",
        id=None,
        name=None,
        usage_metadata=None,
    )


def _repair_notes(shown: list[Any]) -> list[str]:
    return [text_of(m) for m in shown if isinstance(m, ToolMessage) and "rejected" in text_of(m)]


# ----------------------------------------------------------------------- lone surrogates

SURROGATE_CALLS = {
    "argument value": call("note", {"text": "a\ud800b"}, "c1"),
    "argument key": call("note", {"text": "a", "\udcff": "b"}, "c1"),
    "tool name": call("no\ud800te", {"text": "a"}, "c1"),
    "call id": call("note", {"text": "a"}, "c\udc80"),
}


@pytest.mark.parametrize("where", sorted(SURROGATE_CALLS))
def test_a_lone_surrogate_in_a_call_is_refused_and_the_run_goes_on(
    tmp_path: Path, where: str
) -> None:
    seen = Counter()
    replies = [SURROGATE_CALLS[where], call("note", {"text": "fine"}, "c2"), finish()]
    out, model, store = run_react(tmp_path, replies, [_note_tool(seen)])
    assert out["status"] == "COMPLETED", out.get("error")
    assert seen.effects == ["fine"]  # the hostile call never ran; its repair did
    notes = _repair_notes(model.calls[1])
    assert notes and all("surrogate" in n for n in notes), notes
    logged = store.events("adv")  # the whole log reads back
    assert any(e.type is EventType.MODEL_CALLED for e in logged)


def test_a_lone_surrogate_in_a_path_is_a_schema_violation_at_validate(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    deps = make_deps(tmp_path, [FileAdapter(ws)])
    args = {"path": "notes/\ud800.txt", "content": "x"}
    out = make_executor(deps).invoke({"request": request("write_file", args, root=ws)}, config())
    [result] = out["results"].values()
    assert result["error"]["type"] == "SchemaViolation" and result["error"]["phase"] == "validate"
    assert "surrogate" in result["error"]["message"]
    assert list(ws.iterdir()) == []
    assert [e.type for e in deps.store.events("run-1")][-1] is EventType.TOOL_COMPLETED


def test_an_event_carrying_a_lone_surrogate_is_logged_and_read_back(tmp_path: Path) -> None:
    store = SqliteExecutionStore(tmp_path / "exec.db")
    event = make_event(EventType.TOOL_OUTPUT, "r", call_id="c", payload={"text\udc80": "\ud800"})
    store.append_events([event])
    [back] = store.events("r")
    assert back.payload == {"text\\udc80": "\\ud800"}  # the code points, as escape text


# -------------------------------------------------------------------- non-object arguments


@pytest.mark.filterwarnings("ignore::UserWarning")  # LangChain's, dumping the odd args
@pytest.mark.parametrize("args", [["x"], "x", 3, 2.5, True], ids=repr)
def test_arguments_that_are_not_an_object_are_refused_and_reported(
    tmp_path: Path, args: Any
) -> None:
    seen = Counter()
    replies = [_constructed("note", args, "c1"), call("note", {"text": "fine"}, "c2"), finish()]
    out, model, _ = run_react(tmp_path, replies, [_note_tool(seen)])
    assert out["status"] == "COMPLETED", out.get("error")
    assert seen.effects == ["fine"]
    notes = _repair_notes(model.calls[1])
    assert notes and all("not JSON objects" in n for n in notes), notes


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_model_that_keeps_sending_non_objects_fails_typed(tmp_path: Path) -> None:
    replies = [_constructed("note", ["x"], f"c{i}") for i in range(3)]
    out, _, _ = run_react(tmp_path, replies, [_note_tool(Counter())], max_repairs=2)
    assert out["status"] == "FAILED"
    assert out["error"]["type"] == "ModelOutputError"


# ------------------------------------------------------------------- duplicate call ids


def test_two_calls_under_one_id_each_run_and_each_is_answered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    twice = AIMessage(
        content="",
        tool_calls=[
            {"name": "write_file", "args": {"path": "a.txt", "content": "A"}, "id": "dup"},
            {"name": "write_file", "args": {"path": "b.txt", "content": "B"}, "id": "dup"},
        ],
    )
    out, model, _ = run_react(tmp_path, [twice, finish()], [FileAdapter(ws)], workspace=ws)
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "a.txt").read_text() == "A" and (ws / "b.txt").read_text() == "B"
    shown = model.calls[1]
    [ai] = [m for m in shown if isinstance(m, AIMessage) and m.tool_calls]
    ids = [c["id"] for c in ai.tool_calls]
    assert ids[0] == "dup" and len(set(ids)) == 2  # the first keeps the model's id
    answers = {m.tool_call_id: text_of(m) for m in shown if isinstance(m, ToolMessage)}
    assert sorted(answers) == sorted(ids)  # every id answered, once
    assert "a.txt" in answers[ids[0]] and "b.txt" in answers[ids[1]]  # each its own result
    kept = next(m for m in out["messages"] if isinstance(m, AIMessage) and m.tool_calls)
    replied = [m.tool_call_id for m in out["messages"] if isinstance(m, ToolMessage)]
    assert replied[-1] == "fin"  # the accepted finish is answered too
    assert sorted(replied[:-1]) == sorted(ids) == sorted(c["id"] for c in kept.tool_calls)


# ------------------------------------------------------------------------------ budgets


@pytest.mark.parametrize(
    ("kind", "value"),
    [
        ("model_calls", math.nan),
        ("tool_calls", math.inf),
        ("wall_time_s", -math.inf),
        ("cost_usd", math.nan),
        ("tokens_in", -1.0),
    ],
    ids=repr,
)
def test_a_budget_that_is_not_finite_and_positive_is_refused_at_admission(
    tmp_path: Path, kind: str, value: float
) -> None:
    task = {"goal": "go", "budgets": {kind: value}}
    out, model, store = run_react(tmp_path, [], [_note_tool(Counter())], task=task)
    assert out["status"] == "FAILED"
    assert out["error"]["type"] == "AdmissionError" and kind in out["error"]["message"]
    assert model.calls == []  # rejected before any model call
    kinds = [e.type for e in store.events("adv") if e.type != EventType.STATE_CHECKPOINTED]
    assert kinds == [EventType.RUN_REJECTED]


def test_a_non_finite_deadline_is_refused_at_admission(tmp_path: Path) -> None:
    task = {"goal": "go", "deadline_s": math.inf}
    out, model, _ = run_react(tmp_path, [], [_note_tool(Counter())], task=task)
    assert out["error"]["type"] == "AdmissionError" and "deadline_s" in out["error"]["message"]
    assert model.calls == []


# ------------------------------------------------------------------------ argument size


def _stored_bytes(tmp_path: Path) -> tuple[int, int]:
    events = sqlite3.connect(tmp_path / "exec.db")
    logged = events.execute("SELECT coalesce(sum(length(payload)), 0) FROM events").fetchone()[0]
    checkpoints = sqlite3.connect(tmp_path / "checkpoints.db")
    written = checkpoints.execute("SELECT coalesce(sum(length(value)), 0) FROM writes")
    return int(logged), int(written.fetchone()[0])


@pytest.mark.timeout(120)
def test_an_oversized_argument_is_refused_naming_size_and_limit_and_stored_once(
    tmp_path: Path,
) -> None:
    seen = Counter()
    big = "x" * (2 * DEFAULT_MAX_ARGUMENT_BYTES)
    replies = [call("note", {"text": big}, "c1"), call("note", {"text": "small"}, "c2"), finish()]
    out, model, _ = run_react(tmp_path, replies, [_note_tool(seen)])
    assert out["status"] == "COMPLETED", out.get("error")
    assert seen.effects == ["small"]
    [note] = _repair_notes(model.calls[1])
    assert "2.0 MiB" in note and "1.0 MiB" in note, note
    logged, checkpointed = _stored_bytes(tmp_path)
    assert logged < 1.2 * len(big)  # the reply, once, in its model.called event
    assert checkpointed < len(big) // 10  # no copy in any checkpoint


def test_the_argument_limit_is_the_tasks_to_set(tmp_path: Path) -> None:
    seen = Counter()
    replies = [call("note", {"text": "y" * 600}, "c1"), call("note", {"text": "ok"}, "c2")]
    task = {"goal": "go", "max_argument_bytes": 500, "budgets": {"model_calls": 3}}
    out, model, _ = run_react(tmp_path, [*replies, finish()], [_note_tool(seen)], task=task)
    assert out["status"] == "COMPLETED", out.get("error")
    assert seen.effects == ["ok"]
    assert "500 bytes" in _repair_notes(model.calls[1])[0]


def test_an_oversized_request_is_refused_at_validate_before_anything_is_stored(
    tmp_path: Path,
) -> None:
    seen = Counter()
    deps = make_deps(tmp_path, [_note_tool(seen)])
    big = "z" * (DEFAULT_MAX_ARGUMENT_BYTES + 1)
    out = make_executor(deps).invoke(
        {"request": request("note", {"text": big}, root=tmp_path)}, config()
    )
    [result] = out["results"].values()
    error = result["error"]
    assert error["type"] == "ArgumentsTooLarge" and error["phase"] == "validate"
    assert str(DEFAULT_MAX_ARGUMENT_BYTES) in error["message"].replace(",", "")
    assert len(seen) == 0
    logged = sum(len(e.model_dump_json()) for e in deps.store.events("run-1"))
    assert logged < 10_000  # the refusal's events name the size, not the text


def test_a_replayed_turn_refuses_what_the_log_says_it_refused() -> None:
    # The log writes the surrogate as escape text, which alone would parse as a fine call:
    # a turn re-run after a crash must still refuse the reply the first run refused.
    model = ScriptedChatModel([call("note", {"text": "a\ud800"}, "c1")])
    turn = call_model(
        model,
        [],
        lambda ai: parse_reply(ai, "t1"),
        max_repairs=0,
        left=None,
        run_id="r",
        turn_id="t1",
    )
    assert not turn.parsed and turn.problem is not None and "surrogate" in turn.problem
    logged = json.loads(turn.events[0].model_dump_json())["payload"]  # as the store keeps it
    replayed = call_model(
        ScriptedChatModel([]),  # a new model call would fail the test
        [],
        lambda ai: parse_reply(ai, "t1"),
        max_repairs=0,
        left=None,
        run_id="r",
        turn_id="t1",
        recorded=lambda seq: logged if seq == 1 else None,
    )
    assert not replayed.parsed and replayed.problem == turn.problem


def test_a_plan_carrying_a_lone_surrogate_is_sent_back_before_any_step_runs(tmp_path: Path) -> None:
    seen = Counter()
    bad = {"steps": [{"id": "s1", "tool": "note", "arguments": {"text": "a\ud800b"}}]}
    good = {"steps": [{"id": "s1", "tool": "note", "arguments": {"text": "fine"}}]}
    model = ScriptedChatModel(
        [call("submit_plan", bad, "p1"), call("submit_plan", good, "p2"), finish()]
    )
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "plan_execute", model=model, tools=[_note_tool(seen)], home=tmp_path, store=store
    )
    cfg = {"configurable": {"thread_id": "plan"}}
    spec = {"goal": "go", "budgets": {"model_calls": 8, "tool_calls": 8}}
    out = app.invoke({"task": spec}, cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert seen.effects == ["fine"]  # the repaired plan ran; the hostile one never did
    shown = [text_of(m) for m in model.calls[1]]
    assert any("lone surrogate" in t for t in shown)  # the planner is told why, at once:
    assert not any("Replanning because" in t for t in shown)  # not after a step failed
    requested = [e for e in store.events("plan") if e.type == EventType.TOOL_REQUESTED]
    assert len(requested) == 1  # the hostile plan's step was never requested
