"""A run is bound to the release it was admitted under; it is not continued under another."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph import ScriptedChatModel, build_graph, tool_spec
from execgraph.state.errors import AdmissionError, ReleaseMismatch

published: list[str] = []


@tool_spec(effect="irreversible")
def publish(title: str) -> str:
    """Publish a page."""
    published.append(title)
    return f"published {title}"


PUBLISH = {"tool_calls": [{"name": "publish", "args": {"title": "Launch"}}]}
FINISH = {"tool_calls": [{"name": "finish", "args": {"output": "Published."}}]}
CONFIG: Any = {"configurable": {"thread_id": "launch-1"}}


def _graph(home: Path, release: str | None, replies: list[Any]) -> Any:
    return build_graph(
        "react", model=ScriptedChatModel(replies), tools=[publish], home=home, release_ref=release
    )


def _paused(home: Path) -> None:
    published.clear()
    out = _graph(home, "v1", [PUBLISH]).invoke({"task": {"goal": "Publish it."}}, CONFIG)
    assert out["status"] == "WAITING"
    assert out["contract"]["release_ref"] == "v1"


def test_a_resume_under_another_release_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    _paused(tmp_path)
    other = _graph(tmp_path, "v2", [FINISH])
    with pytest.raises(ReleaseMismatch, match="bound to release 'v1'; this graph is 'v2'"):
        other.invoke(Command(resume="approve"), CONFIG)
    with pytest.raises(ReleaseMismatch):
        other.invoke(None, CONFIG)  # a continue after a crash
    with pytest.raises(ReleaseMismatch):
        other.invoke({"task": {"goal": "Something else."}}, CONFIG)  # a new input while paused
    with pytest.raises(ReleaseMismatch):
        asyncio.run(other.ainvoke(Command(resume="approve"), CONFIG))
    with pytest.raises(ReleaseMismatch, match="no release"):
        _graph(tmp_path, None, [FINISH]).invoke(Command(resume="approve"), CONFIG)
    assert published == []
    assert other.get_state(CONFIG).values["status"] == "WAITING"
    # Its own release finishes it.
    out = _graph(tmp_path, "v1", [FINISH]).invoke(Command(resume="approve"), CONFIG)
    assert out["status"] == "COMPLETED" and published == ["Launch"]


def test_a_finished_thread_takes_a_new_request_under_the_new_release(tmp_path: Path) -> None:
    _paused(tmp_path)
    _graph(tmp_path, "v1", [FINISH]).invoke(Command(resume="approve"), CONFIG)
    out = _graph(tmp_path, "v2", [FINISH]).invoke({"task": {"goal": "Say done."}}, CONFIG)
    assert out["status"] == "COMPLETED" and out["contract"]["release_ref"] == "v2"


def test_a_task_for_another_release_is_refused_at_admission(tmp_path: Path) -> None:
    model = ScriptedChatModel([FINISH])
    app = build_graph("react", model=model, tools=[publish], home=tmp_path, release_ref="v1")
    out = app.invoke({"task": {"goal": "Publish it.", "release_ref": "v0"}}, CONFIG)
    assert out["status"] == "FAILED"
    assert out["error"]["type"] == "ReleaseMismatch"
    assert "meant for release 'v0'; this graph is 'v1'" in out["error"]["message"]
    assert model.remaining == 1  # no model call was spent
    assert issubclass(ReleaseMismatch, AdmissionError)
