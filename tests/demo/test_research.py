"""The research demo's publish tool, citation check and task, on real files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from execgraph.demo.research import (
    RESEARCH_CHECKS,
    PublishReportArgs,
    check_citations,
    publish_tool,
    research_task,
)
from execgraph.state.contracts import (
    Evidence,
    SuccessCheck,
    TaskContract,
    TaskSpec,
    ToolResult,
    Workspace,
)
from execgraph.state.errors import (
    PathEscapeError,
    PermanentError,
    TargetNotFound,
    VerificationError,
)
from execgraph.state.events import EventType
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from tests.support.executor import config, make_deps, make_executor, request

REPORT = (
    "# RAG vs long context\n\n"
    "Indexes stay fresh [rag-freshness]; prompts cost [long-context-cost].\n"
)


def sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "report.md").write_text(REPORT)
    return ws


def ctx_for(root: Path, call_id: str = "c1") -> InvokeContext:
    return InvokeContext(run_id="r1", call_id=call_id, attempt_id="a1", workspace_root=root)


def publish(root: Path, path: str = "report.md", outbox: Path | None = None) -> AdapterOutput:
    spec = publish_tool(outbox)
    return spec.run(PublishReportArgs(path=path), ctx_for(root))


# --------------------------------------------------------------------------- publish


def test_publish_tool_spec_shape() -> None:
    spec = publish_tool()
    assert spec.name == "publish_report" and spec.version == "1.0.0"
    assert spec.effect == "irreversible" and spec.path_args == ("path",)
    assert spec.locks == ("publish:{path}",)
    assert spec.verify is not None and spec.reconcile is not None
    assert set(spec.input_model.model_json_schema()["properties"]) == {"path"}


def test_publish_copies_atomically_and_verifies(root: Path) -> None:
    spec = publish_tool()
    args = PublishReportArgs(path="./report.md")
    out = spec.run(args, ctx_for(root))
    published = root / "published" / "report.md"
    assert published.read_text() == REPORT
    assert out.data == {"published": "published/report.md", "sha256": sha(REPORT)}
    assert out.committed is True
    assert os.listdir(root / "published") == ["report.md"]  # no temp file left behind
    assert spec.verify is not None
    [evidence] = spec.verify(args, out, ctx_for(root))
    assert evidence.source_id == "publication:report.md" and evidence.kind == "publication"
    assert evidence.value == sha(REPORT) and evidence.verified is True
    assert evidence.call_id == "c1"


def test_republishing_replaces_the_copy_whole(root: Path) -> None:
    publish(root)
    (root / "report.md").write_text("v2 [a] [b]\n")
    out = publish(root)
    assert (root / "published" / "report.md").read_text() == "v2 [a] [b]\n"
    assert out.data["sha256"] == sha("v2 [a] [b]\n")
    assert os.listdir(root / "published") == ["report.md"]


def test_publish_nested_path_and_custom_outbox(root: Path, tmp_path: Path) -> None:
    (root / "drafts").mkdir()
    (root / "drafts" / "r.md").write_text("draft")
    outbox = tmp_path / "outbox"
    out = publish(root, "drafts/r.md", outbox)
    assert (outbox / "drafts" / "r.md").read_text() == "draft"
    assert out.data == {"published": "outbox/drafts/r.md", "sha256": sha("draft")}
    assert not (root / "published").exists()


def test_verify_refuses_a_copy_that_changed(root: Path) -> None:
    spec = publish_tool()
    args = PublishReportArgs(path="report.md")
    out = spec.run(args, ctx_for(root))
    (root / "published" / "report.md").write_text("tampered")
    assert spec.verify is not None
    with pytest.raises(VerificationError):
        spec.verify(args, out, ctx_for(root))
    (root / "published" / "report.md").unlink()
    with pytest.raises(VerificationError):
        spec.verify(args, out, ctx_for(root))


def test_reconcile_answers_from_the_published_copy(root: Path) -> None:
    spec = publish_tool()
    assert spec.reconcile is not None
    args = PublishReportArgs(path="report.md")
    absent = spec.reconcile(args, ctx_for(root))
    assert absent is not None and absent.committed is False
    publish(root)
    landed = spec.reconcile(args, ctx_for(root))
    assert landed is not None and landed.committed is True
    assert landed.data == {"published": "published/report.md", "sha256": sha(REPORT)}
    (root / "published" / "report.md").write_text("someone else's copy")
    assert spec.reconcile(args, ctx_for(root)) is None  # cannot tell
    assert spec.reconcile(PublishReportArgs(path="../x"), ctx_for(root)) is None


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd", "drafts/../../x.md"])
def test_publish_refuses_paths_outside_the_workspace(root: Path, path: str) -> None:
    (root.parent / "outside.md").write_text("not yours")
    with pytest.raises(PathEscapeError):
        publish(root, path)
    assert not (root / "published").exists()


def test_publish_refuses_a_symlinked_outbox_escape(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, root / "published")
    with pytest.raises(PathEscapeError):
        publish(root)
    assert list(elsewhere.iterdir()) == []


def test_publish_missing_source_and_directory_are_typed(root: Path) -> None:
    with pytest.raises(TargetNotFound) as info:
        publish(root, "nope.md")
    assert str(root) not in info.value.message
    (root / "dir.md").mkdir()
    with pytest.raises(PermanentError):
        publish(root, "dir.md")
    assert not (root / "published").exists()


# --------------------------------------------------------------------------- citations


def contract(root: Path) -> TaskContract:
    spec = TaskSpec.model_validate(research_task())
    return TaskContract(
        run_id="r1",
        actor=spec.actor,
        goal=spec.goal,
        deliverables=spec.deliverables,
        allowed_actions=[],
        success_checks=spec.success_checks,
        stop_conditions=[],
        budgets=spec.budgets,
        deadline=None,
        approval_rules=[],
        data_scope=spec.data_scope,
        workspace=Workspace(root=str(root)),
    )


def read_view(*doc_ids: str, kind: str = "document") -> dict[str, Any]:
    items = [Evidence(source_id=f"doc:{d}", kind=kind, value=d, verified=True) for d in doc_ids]
    return {"evidence": {e.source_id: e.model_dump(mode="json") for e in items}}


def citations(value: str | None = "2", target: str = "report.md") -> SuccessCheck:
    return SuccessCheck(kind="citations_resolve", target=target, value=value)


def test_citations_all_resolved(root: Path) -> None:
    view = read_view("rag-freshness", "long-context-cost", "rag-cost")
    assert check_citations(citations(), view, contract(root)) is None
    assert check_citations(citations(None), view, contract(root)) is None  # default 2
    assert RESEARCH_CHECKS["citations_resolve"] is check_citations and len(RESEARCH_CHECKS) == 1


def test_citation_never_read_is_named_exactly(root: Path) -> None:
    reason = check_citations(citations(), read_view("rag-freshness"), contract(root))
    assert reason == "citation [long-context-cost] cannot be located: the document was never read"
    search_only = {"evidence": {"doc:rag-freshness": {"source_id": "x", "kind": "search"}}}
    reason = check_citations(citations(), search_only, contract(root))
    assert reason is not None and reason.startswith("citation [rag-freshness] ")


def test_too_few_citations(root: Path) -> None:
    (root / "one.md").write_text("Only [rag-freshness], twice [rag-freshness].")
    view = read_view("rag-freshness")
    reason = check_citations(citations("2", "one.md"), view, contract(root))
    assert reason == "one.md cites 1 source; at least 2 required"
    (root / "none.md").write_text("No sources at all.")
    reason = check_citations(citations("3", "none.md"), view, contract(root))
    assert reason == "none.md cites 0 sources; at least 3 required"


def test_missing_or_escaping_report(root: Path) -> None:
    (root / "report.md").unlink()
    reason = check_citations(citations(), read_view(), contract(root))
    assert reason == "report.md does not exist"
    reason = check_citations(citations(target="../x.md"), read_view(), contract(root))
    assert reason is not None and "workspace" in reason
    (root / "r.md").write_text("[a] [b]")
    reason = check_citations(citations("many", "r.md"), read_view("a", "b"), contract(root))
    assert reason is not None and "not a whole number" in reason


# --------------------------------------------------------------------------- task


def test_research_task_validates_as_a_task_spec() -> None:
    task = research_task()
    spec = TaskSpec.model_validate(task)
    assert "freshness, cost and traceability" in spec.goal and "RAG" in spec.goal
    kinds = [(c.kind, c.target, c.value) for c in spec.success_checks]
    assert kinds == [
        ("citations_resolve", "report.md", "3"),
        ("tool_succeeded", "publish_report", None),
        ("output_contains", None, "traceability"),
    ]
    assert {k.value: v for k, v in spec.budgets.items()} == {"model_calls": 30, "tool_calls": 30}
    assert spec.data_scope == ["report.md", "drafts/**"]
    assert TaskSpec.model_validate(research_task("out/r.md")).data_scope[0] == "out/r.md"


# --------------------------------------------------------------------------- executor


def test_publish_through_the_executor_pauses_then_publishes_once(
    root: Path, tmp_path: Path
) -> None:
    deps = make_deps(tmp_path, [publish_tool()])
    app = make_executor(deps)
    req = request("publish_report", {"path": "./report.md"}, root=root)
    out = app.invoke({"request": req}, config())
    [pause] = out["__interrupt__"]
    assert pause.value["tool"] == "publish_report" and pause.value["version"] == "1.0.0"
    assert pause.value["arguments"] == {"path": "report.md"}
    assert not (root / "published").exists()  # nothing before the person answers
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), config())
    result = ToolResult.model_validate(out["results"]["call-1"])
    assert result.outcome == "succeeded" and result.side_effect.committed is True
    assert result.data == {"published": "published/report.md", "sha256": sha(REPORT)}
    assert (root / "published" / "report.md").read_text() == REPORT
    assert os.listdir(root / "published") == ["report.md"]
    evidence = out["evidence"]["publication:report.md"]
    assert evidence["verified"] is True and evidence["value"] == sha(REPORT)
    events = [e.type for e in deps.store.events("run-1", call_id="call-1")]
    assert events.count(EventType.TOOL_STARTED) == 1  # published exactly once
    record = deps.store.get("run-1:call-1")
    assert record is not None and record.state == "committed"
