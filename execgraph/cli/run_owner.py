"""Which process drives a run: a pid file beside the run's metadata, best effort.

``cancel`` and ``status`` read it to say "process N stops the run at its next poll", and a
second process refuses to drive a run a live one is driving.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from execgraph.state.errors import CliError

__all__ = ["ensure_not_driven", "owned", "owner_alive"]


def _owner_file(home: Path, run_id: str) -> Path:
    return home / "runs" / f"{run_id}.pid"


@contextmanager
def owned(home: Path, run_id: str) -> Iterator[None]:
    """Mark this process as the one driving ``run_id`` (for ``cancel`` and ``status``)."""
    path = _owner_file(home, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(str(os.getpid()))
    try:
        yield
    finally:
        try:
            if path.read_text().strip() == str(os.getpid()):
                path.unlink()
        except OSError:
            pass


def owner_alive(home: Path, run_id: str) -> int | None:
    """The pid of a live process driving ``run_id``, if any (best effort)."""
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


def ensure_not_driven(home: Path, run_id: str) -> None:
    """Refuse to drive a run another live process is driving."""
    pid = owner_alive(home, run_id)
    if pid is not None:
        raise CliError(f"run {run_id!r} is being driven by process {pid}; wait or cancel it")
