"""The names a graph's tools may have: one meaning, one offerer, no lookalikes."""

from __future__ import annotations

import pytest

from execgraph import tool_spec
from execgraph.nodes.toolset import DeclaredRegistry, skeleton
from execgraph.state.errors import ToolDeclarationError


def _tool(name: str, origin: str = "application") -> object:
    def run(x: int) -> int:
        return x

    run.__name__ = name
    return tool_spec(effect="read", name=name)(run).with_(origin=origin)


@pytest.mark.parametrize(
    ("a", "b"),
    [("pay", "Pay"), ("get_sum", "get-sum"), ("file", "fi1e"), ("burn", "bum"), ("Iog", "log")],
)
def test_lookalike_names_are_refused(a: str, b: str) -> None:
    assert skeleton(a) == skeleton(b)
    with pytest.raises(ToolDeclarationError, match="look alike"):
        DeclaredRegistry([_tool(a), _tool(b)])


def test_distinct_names_and_versions_of_one_tool_stay_allowed() -> None:
    first = _tool("search")
    registry = DeclaredRegistry([first, first.with_(version="2.0.0"), _tool("send_email")])
    assert registry.names() == ["search", "send_email"]


@pytest.mark.parametrize("name", ["p\u0430y", "caf\u00e9", "9lives", "x" * 65, "a b"])
def test_a_name_no_provider_accepts_is_refused_at_declaration(name: str) -> None:
    with pytest.raises(ToolDeclarationError, match="not usable"):
        _tool(name)


def test_a_name_belongs_to_one_offerer() -> None:
    with pytest.raises(ToolDeclarationError, match="by the application and by MCP server 'x'"):
        DeclaredRegistry([_tool("pay"), _tool("pay", origin="mcp:x").with_(version="9.0.0")])


def test_a_lookalike_of_a_control_tool_is_reserved() -> None:
    with pytest.raises(ToolDeclarationError, match="reserved for run control"):
        DeclaredRegistry([_tool("Finish")])
