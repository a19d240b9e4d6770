"""Graphs from registered names: a name nobody registered is refused and never imported."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from execgraph.engines.graphs import Graphs
from execgraph.engines.spec import RunSpec
from execgraph.state.errors import UsageError
from execgraph.tools import tool_spec

UNIMPORTED = "tests.support.cli_raising_tools"


@tool_spec(effect="read")
def echo(text: str) -> str:
    """Say it back."""
    return text


def test_an_unregistered_name_is_refused_without_importing_it() -> None:
    sys.modules.pop(UNIMPORTED, None)
    graphs = Graphs()
    graphs.add_tools("mine", [echo])
    for name in (f"{UNIMPORTED}:raising_demo", "shutil:rmtree", "demo"):
        with pytest.raises(UsageError, match=r"is registered here \(registered: mine\)"):
            graphs.tool_set(name)
    assert UNIMPORTED not in sys.modules


def test_the_operators_references_are_imported_and_checked_when_registered() -> None:
    graphs = Graphs()
    chosen = graphs.add_ref(f"raising={UNIMPORTED}:raising_demo")
    assert chosen.name == "raising" and graphs.tool_set("raising") is chosen
    with pytest.raises(UsageError, match="must name a non-empty list of tools"):
        graphs.add_ref("os:sep")
    with pytest.raises(UsageError, match="registered already"):
        graphs.add_tools("raising", [echo])
    assert graphs.names == ["raising"]


def test_an_engine_acting_for_its_operator_may_import_a_reference_on_first_use(
    tmp_path: Path,
) -> None:
    graphs = Graphs(import_refs=True)
    ref = "tests.support.cli_slow_tools:TOOLS"
    assert graphs.tool_set(ref).name == ref
    assert [t.name for t in graphs.tools(RunSpec("r", {}, tools=ref), tmp_path)] == [
        "search_corpus"
    ]


def test_a_graph_is_built_from_the_names_alone(tmp_path: Path) -> None:
    graphs = Graphs()
    graphs.add_tools("mine", lambda workspace: [echo])
    graphs.add_model("scripted", lambda: "never-a-real:model")
    with pytest.raises(UsageError, match="unknown architecture 'loop'"):
        graphs.build(RunSpec("r", {}, arch="loop", tools="mine"), workspace=tmp_path)
    assert graphs.model("SCRIPTED") == "never-a-real:model"
    assert graphs.model("openai:gpt-4o-mini") == "openai:gpt-4o-mini"
