"""State stays O(1) in run length, on real SQLite checkpoints.

A ReAct step of calls no rule could pause is one superstep (one checkpoint); the channels
written every step are DeltaChannels, so a checkpoint holds the step's update rather than
every window again;
the windows are bounded; and what state let go of is still seen by the verifier (from the
execution store) and rebuilt exactly by a new process.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sqlite3
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

import langchain_core.tools
import langgraph.graph
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

import execgraph.graph
import execgraph.nodes
import execgraph.state
import execgraph.tools
from execgraph.graph import build_graph
from execgraph.nodes.react import TURN_DESTINATIONS
from execgraph.state.reducers import HISTORY_WINDOW, PROGRESS_MEMORY, REPLAY_WINDOW, RESULTS_WINDOW
from execgraph.state.schema import SNAPSHOT_EVERY
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec


@tool_spec(effect="read")
def noop(i: int) -> str:
    """Do nothing and say ok."""
    return "ok"


@tool_spec(effect="read")
def marker() -> str:
    """Leave a mark the success check looks for."""
    return "marked"


@tool_spec(effect="irreversible")
def publish(doc: str) -> str:
    """Publish (needs approval)."""
    return "published"


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _steps(n: int, *, last: AIMessage | None = None) -> list[AIMessage]:
    replies = [_call("noop", {"i": k}, f"c{k}") for k in range(n)]
    return [*replies, last or _call("finish", {"output": "done"}, "fin")]


def _app(tmp_path: Path, replies: list[Any]) -> tuple[Any, sqlite3.Connection]:
    conn = sqlite3.connect(tmp_path / "checkpoints.db", check_same_thread=False)
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[noop, marker, publish],
        checkpointer=SqliteSaver(conn),
        home=tmp_path,
        loop_threshold=10**6,
    )
    return app, conn


def _task(n: int, target: str = "noop") -> dict[str, Any]:
    checks = [{"kind": "tool_succeeded", "target": target}]
    budgets = {"model_calls": n + 5, "tool_calls": n + 5}
    return {"task": {"goal": "go", "success_checks": checks, "budgets": budgets}}


def _cfg() -> dict[str, Any]:
    return {"configurable": {"thread_id": "growth"}}


def _blob_sizes(conn: sqlite3.Connection) -> list[int]:
    rows = conn.execute("SELECT length(checkpoint) FROM checkpoints WHERE checkpoint_ns = ''")
    return [int(r[0]) for r in rows.fetchall()]


def test_a_react_step_is_one_checkpoint(tmp_path: Path) -> None:
    counts = []
    for n in (10, 30):
        (tmp_path / str(n)).mkdir()
        app, conn = _app(tmp_path / str(n), _steps(n))
        assert app.invoke(_task(n), _cfg(), durability="sync")["status"] == "COMPLETED"
        counts.append(conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0])
    assert counts[1] - counts[0] == 20


def test_a_turn_routes_itself_so_no_branch_reads_the_state(tmp_path: Path) -> None:
    """The turn returns ``Command(goto=...)``: a branch after it would read a fresh copy
    of every channel each step. Its destinations are still declared, so it draws."""
    app, _ = _app(tmp_path, _steps(1))
    assert not app.builder.branches.get("decide")
    edges = {(e.source, e.target) for e in app.get_graph().edges}
    assert {("decide", d) for d in TURN_DESTINATIONS} <= edges
    assert app.invoke(_task(1), _cfg(), durability="sync")["status"] == "COMPLETED"


def test_checkpoints_do_not_grow_with_the_run(tmp_path: Path) -> None:
    app, conn = _app(tmp_path, _steps(120))
    out = app.invoke(_task(120), _cfg(), durability="sync")
    assert out["status"] == "COMPLETED"
    sizes = _blob_sizes(conn)  # one per step, in order (rowid)
    middle, end = sizes[40:80], sizes[80:120]  # steps 40-80 and 80-120: windows full
    assert max(end) <= max(middle) * 1.05
    assert sum(end) <= sum(middle) * 1.05
    # a typical checkpoint holds no window at all; a full snapshot comes every SNAPSHOT_EVERY
    assert sorted(end)[len(end) // 2] < 4_000


def test_state_windows_are_bounded(tmp_path: Path) -> None:
    n = 3 * REPLAY_WINDOW // 2
    app, _ = _app(tmp_path, _steps(n))
    out = app.invoke(_task(n), _cfg(), durability="sync")
    assert out["status"] == "COMPLETED"
    assert len(out["results"]) == RESULTS_WINDOW
    assert len(out["history"]) == HISTORY_WINDOW
    assert len(out["events"]["recent"]) == REPLAY_WINDOW
    assert out["events"]["count"] > REPLAY_WINDOW  # the count is not windowed
    assert len(out["budget"]["charges"]) == REPLAY_WINDOW
    assert out["budget"]["used"]["tool_calls"] == n  # nor are the sums
    assert len(out["progress"]["seen"]) == PROGRESS_MEMORY


def test_the_verifier_sees_results_state_let_go_of(tmp_path: Path) -> None:
    n = RESULTS_WINDOW + 8
    replies = [_call("marker", {}, "m0"), *_steps(n)]
    app, _ = _app(tmp_path, replies)
    out = app.invoke(_task(n + 1, target="marker"), _cfg(), durability="sync")
    assert "t1.c0" not in out["results"]  # the marker call left state's window ...
    assert out["status"] == "COMPLETED", out.get("error")  # ... and still counts


def test_a_new_process_rebuilds_the_delta_channels_exactly(tmp_path: Path) -> None:
    n = 70  # past two snapshots of every delta channel
    pause = _call("publish", {"doc": "r.md"}, "pub")
    app, conn = _app(tmp_path, _steps(n, last=pause))
    out = app.invoke(_task(n + 1), _cfg(), durability="sync")
    assert out["status"] == "WAITING"
    before = app.get_state(_cfg()).values
    conn.close()

    # a new connection and a new graph, as a new process would open them
    again, _ = _app(tmp_path, [_call("finish", {"output": "done"}, "fin")])
    snapshot = again.get_state(_cfg())
    for key in ("results", "history", "budget", "events", "progress"):
        assert snapshot.values[key] == before[key], key
    [asked] = snapshot.interrupts
    done = again.invoke(Command(resume={asked.id: {"action": "approve"}}), _cfg())
    assert done["status"] == "COMPLETED"
    assert done["budget"]["used"]["tool_calls"] == n + 1
    assert done["results"][f"t{n + 1}.c0"]["data"] == "published"


_STDLIB = sysconfig.get_paths()["stdlib"]
_PACED = ("threading.py", "queue.py", os.path.join("concurrent", "futures"))
#: Functions of execgraph's whose call count follows the clock: the lease keeper forgets a
#: renewer when it wakes with none of its leases held, and the next call's lease asks the
#: renewer's period again (how often depends on when the keeper woke, not on the step).
_CLOCK_PACED = {("record_lease.py", "every_s")}
#: What a step's work is made of: execgraph's own code and the LangGraph / LangChain code
#: it drives. Builtins, the test harness (hypothesis's GC callback) and anything else in
#: the process are left out: their call counts follow the garbage collector and the clock.
_COUNTED = (
    *(
        str(Path(layer.__file__).resolve().parent)
        for layer in (execgraph, execgraph.graph, execgraph.nodes, execgraph.tools, execgraph.state)
    ),
    *(str(Path(m.__file__).resolve().parents[1]) for m in (langgraph.graph, langchain_core.tools)),
)


def _scheduler_paced(filename: str) -> bool:
    """Not a step's own work: a standard-library thread primitive, whose call count follows
    the scheduler, or code outside execgraph, LangGraph and LangChain."""
    if filename.startswith(_STDLIB) and any(part in filename for part in _PACED):
        return True
    return not str(Path(filename).resolve()).startswith(_COUNTED)


def _paced_by_the_scheduler(stats: dict[Any, Any]) -> set[Any]:
    """The functions of a profile whose call count the scheduler decides: those of
    :func:`_scheduler_paced`, and those only they called (a future's done-callback runs on
    the profiled thread when the future finished first, else on the pool's thread, which
    is not profiled), and so on down. Finalizers too: a ``__del__`` runs when the garbage
    collector reaches its object, on whichever thread allocates at that moment (a worker
    loop left by an earlier test in the same process was closed in one window once)."""
    threads = {w for w in stats if w[0].startswith(_STDLIB) and any(p in w[0] for p in _PACED)}
    threads |= {w for w in stats if w[2] == "__del__"}  # run when the collector chooses
    grown = True
    while grown:
        grown = False
        for where, (*_, callers) in stats.items():
            if where not in threads and callers and all(c in threads for c in callers):
                threads.add(where)
                grown = True
    clocked = {w for w in stats if (Path(w[0]).name, w[2]) in _CLOCK_PACED}
    return threads | clocked | {where for where in stats if _scheduler_paced(where[0])}


def test_a_late_step_does_exactly_the_work_of_an_early_one(tmp_path: Path) -> None:
    """Python calls per step, counted by cProfile (no clock): every function runs as
    often in steps 224-287 of a run as in steps 32-95. Windows hold whole snapshot
    periods, so each sees the same DeltaChannel snapshots. Anything that grew with the
    run (a scan of the history, a copy of a growing list) would count more calls late.

    The standard library's thread primitives are left out, and what only they call: how
    often a ``Condition`` wait or a ``Future.result`` loops, or whether a done-callback
    runs on the profiled thread, depends on which thread the scheduler runs first, not on
    how long the run is (one call more in one window of 64 steps, seen in CI).
    """
    windows = {
        "early": (SNAPSHOT_EVERY, 3 * SNAPSHOT_EVERY),
        "late": (7 * SNAPSHOT_EVERY, 9 * SNAPSHOT_EVERY),
    }
    profiles = {name: cProfile.Profile() for name in windows}

    def reply(k: int, message: AIMessage) -> Callable[[list[Any]], AIMessage]:
        def call(_messages: list[Any]) -> AIMessage:
            for name, (start, stop) in windows.items():
                if k == start:
                    profiles[name].enable()
                elif k == stop:
                    profiles[name].disable()
            return message

        return call

    n = 9 * SNAPSHOT_EVERY + 4
    replies = [reply(k, message) for k, message in enumerate(_steps(n))]
    app, _ = _app(tmp_path, replies)
    assert app.invoke(_task(n), _cfg(), durability="sync")["status"] == "COMPLETED"

    counts = {}
    for name, profile in profiles.items():
        stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
        paced = _paced_by_the_scheduler(stats)
        counts[name] = {
            where: calls for where, (_, calls, *_) in stats.items() if where not in paced
        }
    assert sum(counts["early"].values()) > 1000 * 2 * SNAPSHOT_EVERY  # the steps were profiled
    grew = {f: (counts["early"].get(f, 0), c) for f, c in counts["late"].items()}
    assert {f: pair for f, pair in grew.items() if pair[1] > pair[0]} == {}
