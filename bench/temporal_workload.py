"""The Temporal benchmark's workload: a ReAct run that calls a sleeping tool K times.

I/O-bound on purpose: each tool step sleeps (100 ms in the throughput figures), so a run's
time is mostly waiting, and what more workers can add is capacity to wait in parallel.
The scripted model answers from the transcript alone (how many ``wait`` calls it has
made), so any worker, and a retried advance on another worker, gives a run the same next
turn. Every worker builds the same graphs on ONE PostgreSQL database (execution store and
checkpoints), which is what lets Temporal hand any advance to any worker.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from bench.workload import execgraph_task, tool_call
from execgraph.engines.temporal.messages import RunSpec
from execgraph.graph import build_graph
from execgraph.state.compiled import RunGraph
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

__all__ = ["TOOL", "Workload", "WorkloadGraphs", "run_spec", "script"]

TOOL = "wait"


@tool_spec(name=TOOL, effect="read")
def wait(i: int, seconds: float) -> str:
    """Wait ``seconds`` (an I/O-bound tool: a remote call, a query), then say ok."""
    if seconds > 0:
        time.sleep(seconds)
    return "ok"


@dataclass(frozen=True)
class Workload:
    """``steps`` tool calls per run, each sleeping ``sleep_s``, then ``finish``."""

    steps: int = 4
    sleep_s: float = 0.1


def script(workload: Workload) -> Callable[[list[BaseMessage]], AIMessage]:
    """The model's turn as a function of the transcript: the next ``wait``, or finish."""

    def turn(messages: list[BaseMessage]) -> AIMessage:
        done = sum(
            isinstance(m, AIMessage) and any(c["name"] == TOOL for c in m.tool_calls)
            for m in messages
        )
        if done < workload.steps:
            args = {"i": done, "seconds": workload.sleep_s}
            return tool_call(TOOL, args, f"wait-{done}")
        return tool_call("finish", {"output": "done"}, "finish-0")

    return turn


def run_spec(run_id: str, workload: Workload) -> RunSpec:
    """The spec a run is started with (its graph is the worker's, built by name)."""
    return RunSpec(run_id, task=execgraph_task(workload.steps, TOOL)["task"])


class WorkloadGraphs:
    """``graph_for`` of a bench worker: one graph per run over one shared store and saver.

    A graph per run, because a scripted model has one cursor for all its callers; its
    replies are a function of the transcript, so a run gets the same turns from any
    worker. The database is opened once (``open_database``: its migrations are safe to
    run from many workers at once); graphs are kept for the last 256 runs.
    """

    def __init__(
        self, dsn: str, home: Path, workload: Workload, *, connect_timeout_s: float = 30.0
    ) -> None:
        from execgraph.persistence.postgres import open_database

        self.workload = workload
        self.home = home
        self.store, self.saver = open_database(
            dsn, max_connections=16, connect_timeout_s=connect_timeout_s
        )
        self._graphs: OrderedDict[str, RunGraph] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, spec: RunSpec) -> RunGraph:
        with self._lock:
            graph = self._graphs.get(spec.run_id)
            if graph is None:
                graph = self._build()
                self._graphs[spec.run_id] = graph
                while len(self._graphs) > 256:
                    self._graphs.popitem(last=False)
            return graph

    def _build(self) -> RunGraph:
        # A run makes steps + 1 model calls; the cursor only bounds how many.
        model = ScriptedChatModel([script(self.workload)] * (self.workload.steps + 8))
        return build_graph(
            "react",
            model=model,
            tools=[wait],
            store=self.store,
            checkpointer=self.saver,
            home=self.home,
            workspace=self.home / "workspace",
            loop_threshold=10**9,
        )

    def run_embedded(self, spec: RunSpec) -> dict[str, Any]:
        """Run ``spec`` to its end in this process (``graph.invoke``), as one machine would."""
        graph = self(spec)
        config: Any = {"configurable": {"thread_id": spec.run_id}}
        inp: Any = {"task": spec.task}
        out: dict[str, Any] = graph.invoke(inp, config)
        return out

    def close(self) -> None:
        """Close the store's and the saver's connection pools."""
        self.saver.close()
        self.store.close()
