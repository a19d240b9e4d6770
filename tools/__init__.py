"""What can act on the world: tool specs, the registry, the policy engine, adapters."""

from tools.adapters.base import Adapter, AdapterOutput, InvokeContext
from tools.policy import PolicyDecision, PolicyEngine, PolicyRule
from tools.registry import ToolRegistry, from_langchain
from tools.spec import ToolSpec, tool_spec

__all__ = [
    "Adapter",
    "AdapterOutput",
    "InvokeContext",
    "PolicyDecision",
    "PolicyEngine",
    "PolicyRule",
    "ToolRegistry",
    "ToolSpec",
    "from_langchain",
    "tool_spec",
]
