"""Optimistic concurrency in the run graphs: a write carries what the run read of its target.

The model passes no hash: the run observed ``file:notes.txt`` when it read it, so the write
of that file is guarded by the hash it saw, and a write based on a stale read is refused
at validate without touching the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.contracts import ToolResult
from execgraph.state.events import EventType
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters import FileAdapter

ORIGINAL = "draft 1\n"
THEIRS = "edited by someone else\n"
MINE = "draft 2, from what I read\n"


def call(name: str, args: dict[str, Any], i: str = "0") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}-{i}"}])


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


Meddle = Callable[[Path], None]


def _run(
    tmp_path: Path, writes: list[str], meddle: dict[int, Meddle] | None = None
) -> tuple[dict[str, Any], Path, SqliteExecutionStore]:
    """Read notes.txt, then write it once per ``writes`` (one turn each), then abort.

    ``meddle[i]`` changes the workspace behind the run's back just before write ``i`` is
    decided (after the turn before it ran).
    """
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text(ORIGINAL)

    def write(i: int, content: str) -> Callable[[list[BaseMessage]], AIMessage]:
        def reply(messages: list[BaseMessage]) -> AIMessage:
            if meddle and i in meddle:
                meddle[i](ws)
            path = "./notes.txt" if i == 0 else "notes.txt"  # spelled two ways: one target
            return call("write_file", {"path": path, "content": content}, f"w{i}")

        return reply

    replies: list[Any] = [call("read_file", {"path": "notes.txt"})]
    replies += [write(i, content) for i, content in enumerate(writes)]
    replies.append(call("abort", {"reason": "done"}))
    model = ScriptedChatModel(replies)
    store = SqliteExecutionStore(tmp_path / "exec.db")
    app = build_graph(
        "react",
        model=model,
        tools=[FileAdapter(ws)],
        store=store,
        checkpointer=InMemorySaver(),
        workspace=ws,
        home=tmp_path,
    )
    out = app.invoke({"task": {"goal": "revise notes.txt"}}, {"configurable": {"thread_id": "r"}})
    model.assert_consumed()
    return out, ws, store


def _writes(out: dict[str, Any]) -> list[ToolResult]:
    """The run's write_file results, in turn order."""
    results = [ToolResult.model_validate(r) for r in out["results"].values()]
    writes = [r for r in results if r.tool_name == "write_file"]
    return sorted(writes, key=lambda r: int(r.call_id.split(".")[0][1:]))


def _theirs(ws: Path) -> None:
    (ws / "notes.txt").write_text(THEIRS)


def test_a_write_based_on_a_stale_read_is_refused_at_validate(tmp_path: Path) -> None:
    out, ws, store = _run(tmp_path, [MINE], {0: _theirs})
    [result] = _writes(out)
    assert result.outcome == "failed" and result.error is not None
    assert result.error.type == "StateGuardMismatch" and result.error.phase == "validate"
    assert "file:notes.txt" in result.error.message  # guarded by the read, not by the model
    assert result.error.retryable is True and result.status == "RETRYABLE_ERROR"
    assert result.side_effect.attempted is False
    assert (ws / "notes.txt").read_text() == THEIRS  # never overwritten
    types = [e.type for e in store.events(out["contract"]["run_id"], call_id=result.call_id)]
    assert EventType.TOOL_VALIDATION_FAILED in types and EventType.TOOL_STARTED not in types


def test_the_same_write_after_an_unchanged_read_succeeds(tmp_path: Path) -> None:
    out, ws, _ = _run(tmp_path, [MINE])
    [result] = _writes(out)
    assert result.outcome == "succeeded", result.error
    assert (ws / "notes.txt").read_text() == MINE
    assert out["evidence"]["file:notes.txt"]["value"] == _sha(MINE)  # the verified write's


def test_a_second_write_is_guarded_by_the_first_ones_result(tmp_path: Path) -> None:
    out, ws, _ = _run(tmp_path, [MINE, "draft 3\n"])
    assert [r.outcome for r in _writes(out)] == ["succeeded", "succeeded"]
    assert (ws / "notes.txt").read_text() == "draft 3\n"


@pytest.mark.parametrize("change", ["rewrite", "delete"])
def test_a_change_after_the_runs_own_write_is_caught_too(tmp_path: Path, change: str) -> None:
    def meddle(ws: Path) -> None:
        _theirs(ws) if change == "rewrite" else (ws / "notes.txt").unlink()

    out, ws, _ = _run(tmp_path, [MINE, "draft 3\n"], {1: meddle})
    first, second = _writes(out)
    assert first.outcome == "succeeded"
    assert second.error is not None and second.error.type == "StateGuardMismatch"
    if change == "rewrite":
        assert (ws / "notes.txt").read_text() == THEIRS
    else:
        assert not (ws / "notes.txt").exists()
