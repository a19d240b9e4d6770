"""Home: the files of one embedded execgraph home, named in one place.

A home is a directory (``.execgraph`` in the working directory, or ``$EXECGRAPH_HOME``)
holding everything the embedded default keeps for its runs:

- ``exec.db``: the execution store (records, locks, events, artifacts);
- ``checkpoints.db``: LangGraph's checkpoints;
- ``approval.key``: the key that signs out-of-band approval tokens (mode 0600);
- ``workspace/``: the default workspace tools are confined to;
- ``workspaces/<run id>/``: a run's own workspace, when each run gets one;
- ``runs/<run id>.json``: what the command line records of a run it started.

Every module that opens a home's file asks :class:`Home` for its path, so a change of
layout is a change here. What a home holds is private to its user: a home is made 0700
(:meth:`Home.make`, whoever makes it first: a command, a worker, ``build_graph``), and
its databases, their WAL and shared-memory files, the key and the records 0600
(:func:`private_file`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from execgraph.state.errors import StoreError, UsageError

__all__ = ["Home", "check_run_id", "default_home", "private_file"]

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def default_home() -> Path:
    """Where the embedded default keeps its files: ``$EXECGRAPH_HOME`` or ``./.execgraph``."""
    return Path(os.environ.get("EXECGRAPH_HOME") or Path.cwd() / ".execgraph")


def check_run_id(run_id: str) -> str:
    """``run_id`` if it is safe as one file name (letters, digits, ``.``, ``_``, ``-``; at
    most 128; not starting with a dot), else a UsageError: a run id names files of a home."""
    if not isinstance(run_id, str) or not _RUN_ID.match(run_id) or run_id in (".", ".."):
        raise UsageError(
            f"run id {run_id!r} is not valid: use letters, digits, '.', '_' and '-' "
            "(max 128, starting with a letter or digit)"
        )
    return run_id


@dataclass(frozen=True)
class Home:
    """The layout of one home directory (nothing is created until asked)."""

    root: Path

    @classmethod
    def at(cls, root: str | Path | None = None) -> Home:
        """The home at ``root``, or the default one (:func:`default_home`)."""
        return cls(Path(root) if root is not None else default_home())

    @property
    def exec_db(self) -> Path:
        """The execution store's SQLite file."""
        return self.root / "exec.db"

    @property
    def checkpoints_db(self) -> Path:
        """LangGraph's checkpoints (SQLite)."""
        return self.root / "checkpoints.db"

    @property
    def approval_key(self) -> Path:
        """The approval-token signing key."""
        return self.root / "approval.key"

    @property
    def workspace(self) -> Path:
        """The default workspace."""
        return self.root / "workspace"

    @property
    def runs(self) -> Path:
        """Where the command line records the runs it started."""
        return self.root / "runs"

    def make(self) -> Home:
        """Create the home directory, 0700 (a home someone made before is left as it is).

        Raises:
            StoreError: it cannot be made (a read-only parent, a full disk, ...).
        """
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"the home {self.root} cannot be made: {exc.strerror or exc}") from exc
        return self

    def known_secret(self) -> bytes | None:
        """The approval key if there is one (``$EXECGRAPH_APPROVAL_SECRET``, or this home's
        key file), never made here: what a client signs with must be the workers' key."""
        env = os.environ.get("EXECGRAPH_APPROVAL_SECRET")
        if env:
            return env.encode()
        try:
            key = self.approval_key.read_text().strip()
        except OSError:
            return None
        return key.encode() or None

    def run_workspace(self, run_id: str) -> Path:
        """A run's own workspace, derived from its validated id (never a path a caller
        chose)."""
        return self.root / "workspaces" / check_run_id(run_id)

    def secret(self, *, workspace: Path | None = None) -> bytes:
        """The key that signs approval tokens: ``$EXECGRAPH_APPROVAL_SECRET``, or one made
        once in this home and read back by every later process.

        The key file is mode 0600 (a looser mode found on disk is tightened), made
        atomically (written aside, then hard-linked into place, so two first processes
        agree on one key), in a home created 0700. It must not lie inside ``workspace``:
        tool processes may read their workspace, never the key.

        Raises:
            UsageError: the key would lie inside ``workspace``.
            StoreError: the key cannot be made or read (a full disk, a read-only home, ...).
        """
        env = os.environ.get("EXECGRAPH_APPROVAL_SECRET")
        if env:
            return env.encode()
        path = self.approval_key
        if workspace is not None and path.resolve().is_relative_to(workspace.resolve()):
            raise UsageError(
                f"the approval key {path} would lie inside the workspace {workspace}: "
                "choose a workspace outside the home, or pass approval_secret"
            )
        self.make()
        try:
            if not path.exists():
                _make_key(path)
            if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
                os.chmod(path, 0o600)
            key = path.read_text().strip()
        except OSError as exc:
            raise StoreError(
                f"the approval key at {path} is not usable: {exc.strerror or exc}"
            ) from exc
        if not key:
            raise StoreError(f"the approval key at {path} is empty")
        return key.encode()


def _make_key(path: Path) -> None:
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use that
            os.link(aside, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(aside)


def private_file(path: Path) -> Path:
    """``path`` made private to its user: created 0600 if it is missing, its mode
    tightened to 0600 if it is looser, and so the files SQLite keeps beside a database
    (``-wal``, ``-shm``, ``-journal``: SQLite gives them its database file's mode).

    Raises:
        OSError: it cannot be created or changed (the caller says which store failed).
    """
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    for each in (path, *(path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal"))):
        with contextlib.suppress(FileNotFoundError):
            if stat.S_IMODE(os.stat(each).st_mode) & 0o077:
                os.chmod(each, 0o600)
    return path
