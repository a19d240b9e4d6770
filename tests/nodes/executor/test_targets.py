"""A call's targets: named from its normalized arguments, their state read by the tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from execgraph.nodes.executor.targets import read_state, target_names, target_state
from execgraph.state.errors import PermanentError, ToolRaised
from execgraph.tools import tool_spec

STATES = {"doc:a": "v1", "doc:broken": "raise", "doc:bug": "bug"}


def _state(key: str, args: Any, root: Path) -> str | None:
    value = STATES.get(key)
    if value == "raise":
        raise PermanentError("cannot read it")
    if value == "bug":
        raise KeyError("secret internals")
    return value


@tool_spec(effect="write", targets=["doc:{name}", "doc:{name}", "lane:{lane}"], read_state=_state)
def put(name: str, lane: str | None = None) -> str:
    """Write a doc."""
    return ""


def _args(**values: Any) -> BaseModel:
    return put.input_model.model_validate(values)


def test_target_names_are_formatted_deduplicated_and_skip_what_the_call_lacks() -> None:
    assert target_names(put, {"name": "a"}) == ("doc:a",)
    assert target_names(put, {"name": "a", "lane": "x"}) == ("doc:a", "lane:x")


def test_read_state_keeps_typed_errors_and_withholds_foreign_ones(tmp_path: Path) -> None:
    assert read_state(put, "doc:a", _args(name="a"), tmp_path) == "v1"
    with pytest.raises(PermanentError):
        read_state(put, "doc:broken", _args(name="broken"), tmp_path)
    with pytest.raises(ToolRaised) as info:
        read_state(put, "doc:bug", _args(name="bug"), tmp_path)
    assert "secret" not in info.value.message


def test_target_state_leaves_out_what_cannot_be_read(tmp_path: Path) -> None:
    assert target_state(put, _args(name="a"), {"name": "a"}, tmp_path) == {"doc:a": "v1"}
    assert target_state(put, _args(name="zzz"), {"name": "zzz"}, tmp_path) == {}  # None: unknown
    for name in ("broken", "bug"):
        assert target_state(put, _args(name=name), {"name": name}, tmp_path) == {}
    assert target_state(put.with_(read_state=None), _args(name="a"), {"name": "a"}, tmp_path) == {}
