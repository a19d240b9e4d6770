"""LangGraph's durable floor runs the same script and keeps nothing that grows."""

from __future__ import annotations

from pathlib import Path

from bench.workload import build_app, config, first_input, run_steps, scripted_replies
from execgraph.testing import ScriptedChatModel


def test_the_floor_takes_every_step_and_checkpoints_each(tmp_path: Path) -> None:
    record = run_steps("langgraph_floor", 5, tmp_path)
    assert record.status == "DONE"  # the script's five tool calls, then its answer
    assert len(record.stamps) == 6  # one model call per step, and the last
    assert record.db_bytes > 0  # checkpoints on disk


def test_the_floors_state_stays_the_same_size(tmp_path: Path) -> None:
    sizes = []
    for n in (3, 30):
        model = ScriptedChatModel(scripted_replies("langgraph_floor", n))
        app = build_app("langgraph_floor", model, tmp_path / str(n))
        out = app.invoke(first_input("langgraph_floor", n), config(), durability="sync")
        assert out["steps"] == n + 1 and len(out["messages"]) == 1
        sizes.append(len(repr(app.get_state(config()).values)))
    assert abs(sizes[1] - sizes[0]) <= 2  # only the counter's digits differ
