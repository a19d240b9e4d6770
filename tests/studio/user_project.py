"""A user's project as Studio serves it: their tools module, their own graph module, their
``langgraph.json`` (which serves execgraph.studio over their tools through
EXECGRAPH_TOOLS / EXECGRAPH_MODEL), and ChatOpenAI configured by OPENAI_BASE_URL /
OPENAI_API_KEY, in the tests the scripted server."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tests.support.openai_server import OpenAIServer
from tests.support.studio import Server

__all__ = ["USER_CONFIG", "USER_GRAPH", "USER_TOOLS", "UserServer"]

USER_TOOLS = """
import os
from pathlib import Path

from langchain_core.tools import tool


@tool
def lookup_order(order_id: str) -> str:
    \"\"\"Look up an order's status.\"\"\"
    return f"order {order_id}: delivered, 42.00 EUR"


lookup_order.metadata = {"effect": "read"}


@tool
def refund_order(order_id: str, amount: float) -> str:
    \"\"\"Refund an order.\"\"\"
    with Path(os.environ["REFUNDS_FILE"]).open("a") as out:
        out.write(f"{order_id} {amount}\\n")
    return "refunded"


tools = [lookup_order, refund_order]  # refund_order declares nothing: irreversible
"""

USER_GRAPH = """
from langchain_openai import ChatOpenAI

from execgraph import build_graph
from my_tools import tools

graph = build_graph(
    "react", model=ChatOpenAI(model="gpt-4o-mini", max_retries=0), tools=tools, checkpointer=False
)
"""

USER_CONFIG = {
    "dependencies": ["."],
    "graphs": {"shop": "./agent.py:graph", "react": "execgraph.studio:react"},
    "env": {"EXECGRAPH_TOOLS": "my_tools:tools", "EXECGRAPH_MODEL": "openai:gpt-4o-mini"},
}


@dataclass(frozen=True)
class UserServer:
    """``langgraph dev`` over a user's project, its scripted model, where refunds land."""

    server: Server
    model: OpenAIServer
    refunds: Path
