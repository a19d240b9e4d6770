"""What the embedded engine writes beside a run so any later process can continue it.

A run is driven by one process at a time but may be continued by any later one (approve,
resume, cancel), so the names its graph is built from are written to
``runs/<run id>.json`` of the home when it starts: its spec (architecture, model, tool
set, task), its workspace and, when its state is in PostgreSQL, that database's name
(never its DSN, which may hold a password). Statuses come from the checkpoints, never
from this file. While a process drives a run, ``runs/<run id>.pid`` names it, so a
second process refuses to drive it too and ``cancel``/``status`` can say who does.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from execgraph.engines.spec import DEFAULT_TOOLS, RunSpec
from execgraph.state.errors import UsageError
from execgraph.state.home import Home, check_run_id

__all__ = [
    "RunMeta",
    "check_database",
    "database_label",
    "ensure_not_driven",
    "list_metas",
    "load_meta",
    "meta_path",
    "owned",
    "owner_alive",
    "save_meta",
]


_POSTGRES = ("postgresql://", "postgres://")


def check_database(dsn: str | None) -> str | None:
    """``dsn`` if it names a PostgreSQL database (None: the home's SQLite files)."""
    if dsn is not None and not dsn.startswith(_POSTGRES):
        raise UsageError("--database takes a postgresql:// DSN")
    return dsn


def database_label(dsn: str | None) -> str | None:
    """How a record names a database (name, host, port; never a password)."""
    if dsn is None:
        return None
    from execgraph.state.store.postgres import database_name

    return database_name(dsn)


@dataclass(frozen=True)
class RunMeta:
    """What a later process needs to rebuild a run's graph."""

    run_id: str
    arch: str
    model: str
    task: dict[str, Any]
    created: float
    workspace: str
    tools: str = DEFAULT_TOOLS
    database: str | None = None
    """The PostgreSQL database (name, host and port) holding the run's state, if not the
    home's SQLite files."""

    @property
    def spec(self) -> RunSpec:
        """The names the run's graph is built from."""
        return RunSpec(self.run_id, self.task, self.arch, self.model, self.tools)

    @classmethod
    def of(cls, spec: RunSpec, workspace: Path, database: str | None) -> RunMeta:
        """The record of ``spec`` starting now."""
        return cls(
            spec.run_id, spec.arch, spec.model, dict(spec.task), time.time(), str(workspace),
            spec.tools, database,
        )  # fmt: skip


def meta_path(home: Home, run_id: str) -> Path:
    """Where ``run_id``'s record is (the id is checked to be one safe file name)."""
    return home.runs / f"{check_run_id(run_id)}.json"


def save_meta(home: Home, meta: RunMeta) -> None:
    """Write the record; a run id already recorded is refused (a run id names one run)."""
    path = meta_path(home, meta.run_id)
    home.make()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # the task is private
        with open(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(meta), fh, indent=2, sort_keys=True)
    except FileExistsError:
        raise UsageError(f"run {meta.run_id!r} already exists") from None


def load_meta(home: Home, run_id: str) -> RunMeta | None:
    """The record of ``run_id``, None when there is none; unreadable is bad input."""
    path = meta_path(home, run_id)
    if not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        raw["tools"] = raw.get("tools") or DEFAULT_TOOLS  # no name: the demo's tools
        return RunMeta(**raw)
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"run metadata {path} is unreadable ({type(exc).__name__})") from None


def list_metas(home: Home) -> list[RunMeta]:
    """Every run recorded under ``home``, oldest first (unreadable records are skipped)."""
    metas = []
    for path in sorted(home.runs.glob("*.json")):
        with suppress(UsageError):
            found = load_meta(home, path.stem)
            if found is not None:
                metas.append(found)
    return sorted(metas, key=lambda m: (m.created, m.run_id))


def _owner_file(home: Home, run_id: str) -> Path:
    return home.runs / f"{check_run_id(run_id)}.pid"


@contextmanager
def owned(home: Home, run_id: str) -> Iterator[None]:
    """Mark this process as the one driving ``run_id`` while the block runs."""
    path = _owner_file(home, run_id)
    home.make()
    path.parent.mkdir(mode=0o700, exist_ok=True)
    path.write_text(str(os.getpid()))
    try:
        yield
    finally:
        with suppress(OSError):
            if path.read_text().strip() == str(os.getpid()):
                path.unlink()


def owner_alive(home: Home, run_id: str) -> int | None:
    """The pid of another live process driving ``run_id``, if any (best effort)."""
    try:
        pid = int(_owner_file(home, run_id).read_text().strip())
    except (OSError, ValueError):
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def ensure_not_driven(home: Home, run_id: str) -> None:
    """Refuse to drive a run another live process is driving."""
    pid = owner_alive(home, run_id)
    if pid is not None:
        raise UsageError(f"run {run_id!r} is being driven by process {pid}; wait or cancel it")
