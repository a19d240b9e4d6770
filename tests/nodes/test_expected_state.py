"""What a run observed of a write's targets becomes the write's compare-and-swap guard."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.nodes.expected_state import guard_writes, observed_state
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.tools import ToolRegistry, tool_spec


def _state(key: str, args: Any, root: Path) -> str | None:
    return None


@tool_spec(effect="write", path_args=["path"], targets=["file:{path}"], read_state=_state,
           aliases={"file": "path"})  # fmt: skip
def save(path: str, text: str = "") -> str:
    """Save text."""
    return "saved"


@tool_spec(effect="read", path_args=["path"], targets=["file:{path}"], read_state=_state)
def peek(path: str) -> str:
    """Read text."""
    return ""


@tool_spec(effect="write", path_args=["path"], targets=["file:{path}"])
def blind(path: str) -> str:
    """A write that cannot read its target's state."""
    return ""


@tool_spec(effect="write", path_args=["path"], read_state=_state)
def unnamed(path: str) -> str:
    """A write that names no target."""
    return ""


REGISTRY = ToolRegistry([save, peek, blind, unnamed])
SEEN = {"file:notes/a.txt": {"source_id": "file:notes/a.txt", "value": "sha-a", "version": 3}}


def _req(tool: str, arguments: dict[str, Any], **kw: Any) -> ToolExecutionRequest:
    return ToolExecutionRequest(
        run_id="r",
        turn_id="t1",
        call_id="c1",
        tool={"name": tool},  # type: ignore[arg-type]
        arguments=arguments,
        workspace={"root": "/ws"},  # type: ignore[arg-type]
        **kw,
    )


def test_a_write_of_an_observed_target_expects_what_was_observed() -> None:
    # spelled differently by the model: normalized (alias, ./) before it is looked up
    req = _req("save", {"file": "./notes/a.txt", "text": "x"})
    assert observed_state(req, REGISTRY, SEEN) == {"file:notes/a.txt": "sha-a"}
    [guarded] = guard_writes([req], REGISTRY, SEEN)
    assert guarded.expected_state == {"file:notes/a.txt": "sha-a"}
    assert guarded.arguments == req.arguments  # the model's arguments are left as they were


def test_nothing_to_guard() -> None:
    assert observed_state(_req("save", {"path": "other.txt"}), REGISTRY, SEEN) == {}
    assert observed_state(_req("peek", {"path": "notes/a.txt"}), REGISTRY, SEEN) == {}  # a read
    assert observed_state(_req("blind", {"path": "notes/a.txt"}), REGISTRY, SEEN) == {}
    assert observed_state(_req("unnamed", {"path": "notes/a.txt"}), REGISTRY, SEEN) == {}
    assert observed_state(_req("nope", {"path": "notes/a.txt"}), REGISTRY, SEEN) == {}
    assert observed_state(_req("save", {"path": "../a.txt"}), REGISTRY, SEEN) == {}  # refused later
    reqs = [_req("save", {"path": "notes/a.txt"})]
    assert guard_writes(reqs, REGISTRY, {}) == reqs and guard_writes(reqs, REGISTRY, None) == reqs


def test_contrary_observations_guard_nothing() -> None:
    conflicted = {"file:notes/a.txt": {**SEEN["file:notes/a.txt"], "conflict": True}}
    assert observed_state(_req("save", {"path": "notes/a.txt"}), REGISTRY, conflicted) == {}


def test_the_callers_expected_state_wins() -> None:
    req = _req("save", {"path": "notes/a.txt"}, expected_state={"file:notes/a.txt": "mine"})
    [guarded] = guard_writes([req], REGISTRY, SEEN)
    assert guarded.expected_state == {"file:notes/a.txt": "mine"}
