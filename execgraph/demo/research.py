"""The research-assistant demo: the publish tool, the citation check and the task itself.

Publishing is the demo's one irreversible act, so it is built to be provable: the copy is
atomic (temp file, fsync, ``os.replace``), read back before success is claimed, and
``reconcile`` can tell after a crash whether it landed by comparing hashes. The citation
check makes "a report with sources" a fact on evidence: every ``[doc-id]`` in the report
must name a document this run actually read.
"""

from __future__ import annotations

import errno
import hashlib
import re
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.contracts import Evidence, SuccessCheck, TaskContract
from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    VerificationError,
)
from execgraph.tools.fileio import atomic_replace, os_error, sha256_file
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.paths import confine_path, normalize_relpath
from execgraph.tools.spec import ToolSpec

__all__ = [
    "CITATION_RE",
    "RESEARCH_CHECKS",
    "RESEARCH_GOAL",
    "PublishReportArgs",
    "check_citations",
    "publish_tool",
    "research_task",
]

CITATION_RE = re.compile(r"\[([a-z0-9-]+)\]")
"""A citation in a report: a corpus doc id in square brackets, e.g. ``[rag-freshness]``."""

RESEARCH_GOAL = (
    "Compare retrieval-augmented generation (RAG) vs long-context models on freshness, "
    "cost and traceability, and write a report with sources."
)
_PUBLISH_DOC = (
    "Publish a finished workspace report by copying it to the outbox. Irreversible: "
    "it needs a person's approval."
)
_DEFAULT_OUTBOX = "published"
_MAX_REPORT_BYTES = 4 * 1024 * 1024


class PublishReportArgs(BaseModel):
    """Arguments of ``publish_report``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="workspace-relative path of the report, e.g. 'report.md'")


# --------------------------------------------------------------------------- publish


def _os_error(exc: OSError, rel: str, verb: str) -> ExecGraphError:
    """Typed file errors, worded for a report being published."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and verb == "read":
        return TargetNotFound(f"no file at {rel!r} to publish")
    if exc.errno == errno.EISDIR:
        return PermanentError(f"{rel!r} is a directory, not a report")
    return os_error(exc, rel, verb)


class _Publisher:
    """The publish tool's runner and hooks, sharing one outbox rule."""

    def __init__(self, outbox: Path | None) -> None:
        self.outbox = outbox

    def target(self, ctx: InvokeContext, rel: str) -> tuple[Path, str]:
        """(absolute destination, label shown to the model) of ``rel`` in the outbox.

        The default outbox lives in the workspace and is confined like any other path, so
        a ``published`` symlink cannot redirect the copy elsewhere.
        """
        if self.outbox is None:
            label = f"{_DEFAULT_OUTBOX}/{rel}"
            return confine_path(Path(ctx.workspace_root), label), label
        return confine_path(self.outbox, rel), f"{self.outbox.name}/{rel}"

    def run(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, PublishReportArgs)
        rel = normalize_relpath(args.path)
        source = confine_path(Path(ctx.workspace_root), rel)
        try:
            content = source.read_bytes()
        except OSError as exc:
            raise _os_error(exc, rel, "read") from None
        sha = hashlib.sha256(content).hexdigest()
        if ctx.cancel.is_set():
            raise ToolCancelled("the publication was cancelled before anything was copied")
        if ctx.deadline is not None and ctx.remaining_s() == 0:
            raise DeadlineExceeded("the deadline passed before the report was published")
        dest, label = self.target(ctx, rel)
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            if self.target(ctx, rel)[0] != dest:  # a directory was swapped for a symlink
                raise PermanentError("the outbox changed while publishing")
            atomic_replace(dest, content)  # readers see the old copy or the new one
        except OSError as exc:
            raise _os_error(exc, label, "publish") from None
        data = {"published": label, "sha256": sha}
        return AdapterOutput(data, True, f"published {rel} as {label} ({len(content)} bytes)")

    def verify(self, args: BaseModel, out: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        """Read the published copy back: success is claimed only if it holds what was sent."""
        assert isinstance(args, PublishReportArgs)
        rel = normalize_relpath(args.path)
        expected = out.data.get("sha256") if isinstance(out.data, dict) else None
        dest, label = self.target(ctx, rel)
        actual = sha256_file(dest)
        if actual is None:
            raise VerificationError(f"{label} could not be read back after publishing")
        if expected is None or actual != expected:
            raise VerificationError(f"{label} does not hold the report that was published")
        return [
            Evidence(
                source_id=f"publication:{rel}",
                kind="publication",
                value=actual,
                verified=True,
                call_id=ctx.call_id,
                observed_at=time.time(),
            )
        ]

    def reconcile(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
        """Did an interrupted publication land? Compare the published copy with the source."""
        assert isinstance(args, PublishReportArgs)
        try:
            rel = normalize_relpath(args.path)
            dest, label = self.target(ctx, rel)
            source = confine_path(Path(ctx.workspace_root), rel)
        except ExecGraphError:
            return None
        if not dest.exists():
            return AdapterOutput({"published": None}, False, f"{label} does not exist")
        published, wanted = sha256_file(dest), sha256_file(source)
        if published is not None and published == wanted:
            data = {"published": label, "sha256": published}
            return AdapterOutput(data, True, f"{label} holds the report")
        return None  # a different copy, or no source left to compare with: cannot tell


def publish_tool(outbox: Path | None = None) -> ToolSpec:
    """The irreversible ``publish_report(path)`` tool.

    Args:
        outbox: Directory receiving published copies; by default ``published/`` inside
            each call's workspace root.

    Returns:
        A ToolSpec locked on ``publish:{path}`` with verify and reconcile hooks.
    """
    publisher = _Publisher(Path(outbox) if outbox is not None else None)
    return ToolSpec(
        name="publish_report",
        version="1.0.0",
        description=_PUBLISH_DOC,
        input_model=PublishReportArgs,
        effect="irreversible",
        run=publisher.run,
        locks=("publish:{path}",),
        path_args=("path",),
        verify=publisher.verify,
        reconcile=publisher.reconcile,
    )


# --------------------------------------------------------------------------- check


def _read_ids(view: Mapping[str, Any]) -> set[str]:
    """Source ids of ``document`` evidence in the view (dicts in state, models in tests)."""
    ids: set[str] = set()
    for key, item in (view.get("evidence") or {}).items():
        fields = item if isinstance(item, Mapping) else getattr(item, "__dict__", {})
        if fields.get("kind") == "document":
            ids.add(str(fields.get("source_id", key)))
    return ids


def check_citations(
    check: SuccessCheck, view: Mapping[str, Any], contract: TaskContract
) -> str | None:
    """Report ``target`` cites at least ``value`` (default 2) documents, all actually read.

    A citation is a ``[doc-id]`` token; it resolves only if the run holds ``document``
    evidence ``doc:<doc-id>``. The first unresolved citation is named exactly as
    ``citation [<id>] cannot be located: ...`` so a policy can go and read it.
    """
    target = check.target or "report.md"
    try:
        path = confine_path(Path(contract.workspace.root), target)
    except ExecGraphError as exc:
        return exc.message
    if not path.is_file():
        return f"{target} does not exist"
    try:
        minimum = int(check.value) if check.value is not None else 2
    except ValueError:
        return f"the minimum number of citations {check.value!r} is not a whole number"
    try:
        with open(path, "rb") as fh:
            text = fh.read(_MAX_REPORT_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return f"{target} could not be read"
    cited = list(dict.fromkeys(CITATION_RE.findall(text)))  # distinct, in order of appearance
    read = _read_ids(view)
    for doc_id in cited:
        if f"doc:{doc_id}" not in read:
            return f"citation [{doc_id}] cannot be located: the document was never read"
    if len(cited) < minimum:
        noun = "source" if len(cited) == 1 else "sources"
        return f"{target} cites {len(cited)} {noun}; at least {minimum} required"
    return None


RESEARCH_CHECKS = {"citations_resolve": check_citations}
"""Success-check kinds the research demo adds (``build_graph(checks=RESEARCH_CHECKS)``)."""


# --------------------------------------------------------------------------- task


def research_task(workspace_report: str = "report.md") -> dict[str, Any]:
    """The demo TaskSpec dict: compare RAG and long context, cite sources, publish.

    Args:
        workspace_report: Workspace-relative path the report is written to.
    """
    return {
        "goal": RESEARCH_GOAL,
        "deliverables": [
            f"{workspace_report}: a comparison of RAG and long-context models on freshness, "
            "cost and traceability, citing corpus documents as [doc-id]",
            f"{_DEFAULT_OUTBOX}/{workspace_report}: the report, published after approval",
        ],
        "success_checks": [
            {
                "kind": "citations_resolve",
                "target": workspace_report,
                "value": "3",
                "description": "the report cites at least 3 documents, each actually read",
            },
            {
                "kind": "tool_succeeded",
                "target": "publish_report",
                "description": "the report was published",
            },
            {
                "kind": "output_contains",
                "value": "traceability",
                "description": "the final answer addresses traceability",
            },
        ],
        "budgets": {"model_calls": 30, "tool_calls": 30},
        "data_scope": [workspace_report, "drafts/**"],
    }
