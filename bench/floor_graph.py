"""LangGraph's durable floor: the least a checkpointed agent step can cost in LangGraph.

One node per step calls the model and runs the tool it asked for; the state keeps only a
step counter and the last reply (no history, no reducers), on the same ``SqliteSaver`` with
``durability="sync"`` as the other frameworks. No agent built on LangGraph's checkpointer
can take a step for less, so it bounds what any ratio against a run *without* a
checkpointer can reach.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph

__all__ = ["build_floor"]

_ASK = [HumanMessage("Call the tool until told to stop.")]


class FloorState(TypedDict, total=False):
    """A step counter and the last reply: nothing that grows with the run."""

    steps: int
    messages: list[AIMessage]


def build_floor(model: Any, tool: BaseTool, checkpointer: Any) -> Any:
    """One node (model call + tool call) looping until the model stops calling the tool."""
    bound = model.bind_tools([tool])

    def step(state: FloorState, config: RunnableConfig) -> FloorState:
        reply = bound.invoke(_ASK, config)
        for call in reply.tool_calls:
            tool.invoke(call["args"], config)
        return {"steps": state.get("steps", 0) + 1, "messages": [reply]}

    def again(state: FloorState) -> str:
        return "step" if state["messages"][-1].tool_calls else END

    builder = StateGraph(FloorState)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", again, ["step", END])
    return builder.compile(checkpointer=checkpointer).with_config(recursion_limit=10**7)
