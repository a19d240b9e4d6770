"""The research-assistant demo under each architecture, driven by the offline policy."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.demo.build import build_demo_graph, demo_task
from execgraph.demo.corpus import DEFAULT_CORPUS as CORPUS


def _run(tmp_path: Path, arch: str, action: str = "approve") -> tuple[dict[str, Any], Path, int]:
    app = build_demo_graph(arch, home=tmp_path, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": f"demo-{arch}"}}
    out = app.invoke({"task": demo_task()}, cfg)
    pauses = 0
    while "__interrupt__" in out:
        pauses += 1
        out = app.invoke(
            Command(resume={i.id: {"action": action} for i in out["__interrupt__"]}), cfg
        )
    return out, tmp_path / "workspace", pauses


@pytest.mark.parametrize("arch", ["react", "plan_execute", "hybrid"])
def test_demo_completes_with_resolving_citations(tmp_path: Path, arch: str) -> None:
    out, ws, pauses = _run(tmp_path, arch)
    assert out["status"] == "COMPLETED", out.get("error")
    assert pauses == 1  # one approval, for publishing
    published = (ws / "published" / "report.md").read_text()
    cited = set(re.findall(r"\[([a-z0-9-]+)\]", published))
    assert len(cited) >= 3 and all((CORPUS / f"{c}.md").is_file() for c in cited)
    # the seed case: a finish rejected while a citation cannot be located, a read, acceptance
    rejected = [f["text"] for f in out["feedback"] if f["text"].startswith("finish rejected")]
    assert rejected and "cannot be located" in rejected[0]
    missing = re.search(r"citation \[([a-z0-9-]+)\]", rejected[0]).group(1)  # type: ignore[union-attr]
    assert f"doc:{missing}" in out["evidence"]
    assert out["verification"]["accepted"] is True


def test_demo_rejected_publish_never_publishes(tmp_path: Path) -> None:
    out, ws, _ = _run(tmp_path, "react", action="reject")
    assert out["status"] != "COMPLETED"
    assert not (ws / "published").exists()
    assert (ws / "report.md").exists()  # the draft is kept


def test_fixed_workflow_cannot_recover_and_ends_partial(tmp_path: Path) -> None:
    out, _, pauses = _run(tmp_path, "workflow")
    assert out["status"] == "PARTIAL" and pauses == 0
    assert any("cannot be located" in item for item in out["open_items"])


def test_hybrid_gate_asks_per_call_and_an_edit_is_asked_again(tmp_path: Path) -> None:
    app = build_demo_graph("hybrid", home=tmp_path, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "gate"}}
    out = app.invoke({"task": demo_task()}, cfg)
    [pause] = out["__interrupt__"]
    assert pause.value["kind"] == "approval" and pause.value["tool"] == "publish_report"
    edit = {"action": "edit", "arguments": {"path": "./report.md"}}
    out = app.invoke(Command(resume={pause.id: edit}), cfg)
    [again] = out["__interrupt__"]
    assert again.value["arguments"] == {"path": "report.md"}  # normalized, shown again
    out = app.invoke(Command(resume={again.id: {"action": "approve"}}), cfg)
    assert out["status"] == "COMPLETED"
    assert (tmp_path / "workspace" / "published" / "report.md").exists()


@pytest.mark.parametrize("arch", ["react", "plan_execute"])
def test_the_offline_policy_plans_a_least_privilege_contract(tmp_path: Path, arch: str) -> None:
    app = build_demo_graph(
        arch, home=tmp_path, checkpointer=InMemorySaver(), contract="least_privilege"
    )
    cfg = {"configurable": {"thread_id": f"demo-lp-{arch}"}}
    out = app.invoke({"task": demo_task()}, cfg)
    while "__interrupt__" in out:
        out = app.invoke(Command(resume={i.id: "approve" for i in out["__interrupt__"]}), cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert sorted(out["contract"]["allowed_actions"]) == [
        "publish_report",
        "read_document",
        "search_corpus",
        "write_file",
    ]
