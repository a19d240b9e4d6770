"""What can act on the world: tool specs, the registry, the policy engine, adapters."""

from execgraph.tools.adapters.base import Adapter
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.mcp import amcp_tools, mcp_tools
from execgraph.tools.policy import PolicyDecision, PolicyEngine, PolicyRule
from execgraph.tools.registry import ToolRegistry, from_langchain
from execgraph.tools.spec import ToolSpec, tool_spec

__all__ = [
    "Adapter",
    "AdapterOutput",
    "InvokeContext",
    "PolicyDecision",
    "PolicyEngine",
    "PolicyRule",
    "ToolRegistry",
    "ToolSpec",
    "amcp_tools",
    "from_langchain",
    "mcp_tools",
    "tool_spec",
]
