"""4. Parallel fan-out: 3 and 10 tools sleeping 100 ms in one model turn.

execgraph's figure is the gap between its first and second model call: dispatch, the
executor pipeline for every call (approvals off: the tool is ``read``), observe, verify and
the next decide's preamble, with a SQLite checkpointer in execgraph's default durability
(its last checkpoint on disk before ``invoke`` returns). The baseline is ``ToolNode``
alone (in a one-node graph, as it needs a graph to run) on the same calls;
``create_agent``'s gap between its model calls is shown for context. Async tools run under
``ainvoke`` with an ``AsyncSqliteSaver`` on the same kind of file. A batch takes ~0.1 s,
so each case runs seven times and the median is kept: one stall of the machine moves a
single sample by more than the margin the target leaves.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from bench.core import Bench, Row, Target
from bench.workload import (
    EXECGRAPH,
    build_app,
    config,
    durability,
    finish_reply,
    first_input,
    tool_call,
)
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec

__all__ = ["measure"]

SLEEP_S = 0.1


@tool_spec(effect="read")
def sleepy(i: int) -> str:
    """Sleep 100 ms, then say ok."""
    time.sleep(SLEEP_S)
    return "ok"


@tool("sleepy")
def lc_sleepy(i: int) -> str:
    """Sleep 100 ms, then say ok."""
    time.sleep(SLEEP_S)
    return "ok"


@tool("sleepy")
async def lc_asleepy(i: int) -> str:
    """Sleep 100 ms without blocking, then say ok."""
    await asyncio.sleep(SLEEP_S)
    return "ok"


lc_asleepy.metadata = {"effect": "read"}  # declared, as execgraph runs it (undeclared: approval)


def batch(k: int) -> AIMessage:
    """One model turn calling ``sleepy`` k times with different arguments."""
    calls = [{"name": "sleepy", "args": {"i": j}, "id": f"p{j}"} for j in range(k)]
    return AIMessage(content="", tool_calls=calls)


def _tool_node_graph(lc_tool: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode([lc_tool]))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    return builder.compile()


def tool_node_ms(k: int, is_async: bool) -> float:
    """ToolNode alone on k calls."""
    graph = _tool_node_graph(lc_asleepy if is_async else lc_sleepy)
    state = {"messages": [batch(k)]}
    start = time.perf_counter()
    out = asyncio.run(graph.ainvoke(state)) if is_async else graph.invoke(state)
    elapsed = (time.perf_counter() - start) * 1000
    assert len(out["messages"]) == k + 1
    return elapsed


async def _ainvoke(
    framework: str, model: Any, directory: Path, tools: list[Any], args: tuple[Any, ...]
) -> Any:
    """Run under ``ainvoke`` with an ``AsyncSqliteSaver`` (SqliteSaver has no async API)."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with AsyncSqliteSaver.from_conn_string(str(directory / "checkpoints.db")) as saver:
        app = build_app(framework, model, directory, saver=saver, tools=tools)
        return await app.ainvoke(*args, **durability(framework))


def agent_gap_ms(bench: Bench, framework: str, k: int, is_async: bool) -> tuple[float, str]:
    """Gap between a framework's first and second model call around one k-tool batch."""
    stamps: list[float] = []

    def stamped(reply: AIMessage) -> Any:
        def call(_messages: Any) -> AIMessage:
            stamps.append(time.perf_counter())
            return reply

        return call

    replies = [stamped(batch(k)), stamped(finish_reply(framework))]
    if framework == EXECGRAPH:  # if the finish is rejected (calls failed), end the run
        replies.append(tool_call("abort", {"reason": "the batch failed"}, "abort-0"))
    model = ScriptedChatModel(replies)
    if framework == EXECGRAPH:
        tools: list[Any] = [lc_asleepy if is_async else sleepy]
    else:
        tools = [lc_asleepy if is_async else lc_sleepy]
    directory = bench.fresh_dir(f"par-{framework}-{k}")
    args = (first_input(framework, k, "sleepy"), config())
    if is_async:
        out = asyncio.run(_ainvoke(framework, model, directory, tools, args))
    else:
        app = build_app(framework, model, directory, tools=tools)
        out = app.invoke(*args, **durability(framework))
    status = "ok"
    if framework == EXECGRAPH:
        failed = [r for r in out.get("results", {}).values() if r.get("status") != "OK"]
        if failed or out.get("status") != "COMPLETED":
            first = failed[0] if failed else {}
            status = (
                f"{out.get('status')}: {len(failed)}/{k} calls failed "
                f"({first.get('status')}: {(first.get('error') or {}).get('message', '')})"
            )
    if len(stamps) < 2:  # the run ended before its second model call
        return float("nan"), f"{status}; ended after {len(stamps)} model call(s)"
    return (stamps[1] - stamps[0]) * 1000, status


def measure(bench: Bench) -> list[Row]:
    """Rows: execgraph's batch time vs ToolNode's, sync and async, 3 and 10 tools."""
    reps = 1 if bench.quick else 7
    sizes = (3,) if bench.quick else (3, 10)
    rows: list[Row] = []
    for is_async in (False, True):
        kind = "async" if is_async else "sync"
        for k in sizes:
            bench.log(f"parallel: {k} {kind} tools x {reps}")
            ours, node, agent, statuses = [], [], [], set()
            for _ in range(reps):
                gap, status = agent_gap_ms(bench, EXECGRAPH, k, is_async)
                ours.append(gap)
                statuses.add(status)
                node.append(tool_node_ms(k, is_async))
                agent.append(agent_gap_ms(bench, "create_agent", k, is_async)[0])
            median = statistics.median
            target = Target(1.15, "<= 1.15x") if k == 3 or is_async else None
            note = f"create_agent turn {median(agent):.0f} ms"
            failed = statuses != {"ok"}
            if failed:  # a batch whose calls failed is no result, however fast
                note += f"; execgraph took {median(ours):.0f} ms but " + "; ".join(
                    sorted(statuses - {"ok"})
                )
            rows.append(
                Row(
                    "4 parallel",
                    f"{k} x 100 ms {kind}",
                    None if failed else median(ours),
                    median(node),
                    "ms",
                    "ToolNode alone",
                    target,
                    note,
                )
            )
    return rows
