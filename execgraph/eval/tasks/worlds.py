"""Building blocks of the tasks' worlds: files, a corpus, SQLite, a service, programs.

Each helper makes one real thing under the run's directory and returns the adapter that
acts on it; the task module wires them into a :class:`~execgraph.eval.tasks.common.World`.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from execgraph.demo.corpus import CorpusAdapter
from execgraph.eval.tasks.server import Route, TaskServer
from execgraph.tools.adapters.database import DatabaseAdapter
from execgraph.tools.adapters.files import FileAdapter
from execgraph.tools.adapters.http import HttpAdapter
from execgraph.tools.adapters.process import ProcessAdapter
from execgraph.tools.spec import Effect

__all__ = [
    "FAST_PROCESS_S",
    "FAST_S",
    "corpus",
    "database",
    "files",
    "http",
    "programs",
    "rows",
    "spec",
    "states",
    "succeeded",
    "text_of",
    "workspace",
]

FAST_S = 0.4
"""The time limit a ``read_timeout`` fault gives a slow HTTP read (answered after 1.2 s)."""
FAST_PROCESS_S = 1.0
"""The time limit a ``read_timeout`` fault gives a slow program (it sleeps 3 s, once):
longer than an HTTP one, since a loaded machine may take a good part of a second just to
start an interpreter."""


def workspace(workdir: Path, content: Mapping[str, str]) -> Path:
    """``workdir/workspace`` holding ``content`` (relative path -> text)."""
    root = workdir / "workspace"
    for rel, text in content.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    return root


def files(root: Path) -> FileAdapter:
    """The workspace file tools (read_file, list_files, write_file, patch_file)."""
    return FileAdapter(root)


def corpus(workdir: Path, docs: Mapping[str, tuple[str, str]]) -> CorpusAdapter:
    """A corpus of ``doc id -> (title, text)`` under ``workdir/corpus`` (kept short, so a
    whole document fits one observation)."""
    root = workdir / "corpus"
    root.mkdir(parents=True, exist_ok=True)
    for doc_id, (title, text) in docs.items():
        (root / f"{doc_id}.md").write_text(f"# {title}\n\n{text}\n")
    return CorpusAdapter(root)


def database(workdir: Path, script: str) -> tuple[Path, DatabaseAdapter]:
    """A SQLite file made by ``script`` and an adapter on it (tools declared by the task)."""
    path = workdir / "data.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(script)
    return path, DatabaseAdapter(f"sqlite:///{path}", name="shop")


def rows(path: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """What the database holds now (for a checker)."""
    with sqlite3.connect(path) as conn:
        return list(conn.execute(sql, params))


def http(
    server: TaskServer, *, timeout_s: float = 5.0, writes: tuple[str, ...] = ()
) -> HttpAdapter:
    """HTTP tools allowed on the task's own server only; ``writes`` are URL prefixes whose
    writes can be reconciled through the server's status endpoint. A flaky server's
    client gets at most :data:`FAST_S` x 2.5 per request, so its late answers time out."""
    if server.flakiness is not None:
        timeout_s = min(timeout_s, FAST_S * 2.5)
    endpoints = {f"{server.base}{p}": f"{server.base}/status/{{idempotency_key}}" for p in writes}
    return HttpAdapter(
        [server.host],
        allow_private=True,
        default_timeout_s=timeout_s,
        status_endpoints=endpoints,
    )


def programs(*, effect: Effect = "read", timeout_s: float = 10.0) -> ProcessAdapter:
    """``run_process`` allowed to run this interpreter as ``python`` (the tasks' scripts)."""
    return ProcessAdapter(
        {"python": sys.executable},
        effect=effect,
        default_timeout_s=timeout_s,
        grace_s=0.2,
    )


def spec(
    goal: str,
    checks: list[dict[str, Any]],
    *,
    allowed: list[str] | None = None,
    budgets: Mapping[str, float] | None = None,
    deliverables: list[str] | None = None,
    data_scope: list[str] | None = None,
) -> dict[str, Any]:
    """A TaskSpec dict with the suite's default budgets."""
    task: dict[str, Any] = {
        "goal": goal,
        "success_checks": checks,
        "budgets": dict(budgets or {"model_calls": 24, "tool_calls": 24}),
    }
    if allowed is not None:
        task["allowed_actions"] = allowed
    if deliverables:
        task["deliverables"] = deliverables
    if data_scope:
        task["data_scope"] = data_scope
    return task


Routes = dict[tuple[str, str], Route]


def states(value: str) -> dict[str, Any]:
    """The verifier's check that the answer states ``value``."""
    return {"kind": "output_contains", "value": value, "description": "the answer states it"}


def succeeded(tool: str) -> dict[str, Any]:
    """The verifier's check that a call of ``tool`` succeeded."""
    return {"kind": "tool_succeeded", "target": tool, "description": f"{tool} succeeded"}


def text_of(root: Path, rel: str) -> str:
    """The text of ``root/rel``, or "" when no such file is there (what a checker reads)."""
    path = root / rel
    return path.read_text() if path.is_file() else ""
