"""The whole process tree of one tool call: every descendant, found and killed.

A child's descendants can leave its process group (``setpgid``), its session (``setsid``)
or its parentage (a double fork re-parents the grandchild to init), so signalling the
group misses them. Two trackers, the first that works here wins:

* :class:`CgroupTree`: the child joins a fresh cgroup v2 (between ``fork`` and ``exec``),
  and every descendant is born in it whatever it does with groups, sessions and parents;
  ``cgroup.procs`` lists them and ``cgroup.kill`` kills them all at once. Needs a writable
  cgroup2 hierarchy (root, or a delegated subtree).
* :class:`SweepTree`: a fallback that sweeps ``/proc`` for the descendants of the child by
  parent links, its process group and session, and a marker variable in the environment
  the child was started with (inherited by every descendant that does not clear it),
  remembering every pid (with its start time, against pid reuse) it has seen, repeated
  until none is left. Its limit: a descendant that cleared its environment, left the
  session and whose parent exited before any sweep saw it is not found.
  ``PR_SET_CHILD_SUBREAPER`` would close that gap but is process-wide: every orphan of any
  library's child would become this process's zombie, so it is not used.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Protocol

__all__ = [
    "MARKER",
    "SWEEP_S",
    "CgroupTree",
    "ProcessTree",
    "SweepTree",
    "cgroup_base",
    "open_tree",
]

_POLL_S = 0.02
#: The environment variable that marks a call's processes for the fallback sweep.
MARKER = "EXECGRAPH_PROCESS_TREE"
#: How often the fallback sweep looks at ``/proc`` while a child runs.
SWEEP_S = 0.1


class ProcessTree(Protocol):
    """The descendants of one child, whatever they did to leave its group."""

    def preexec(self) -> None:
        """Run in the child before ``exec`` (async-signal-light work only)."""

    def environ(self) -> dict[str, str]:
        """Variables the child must be started with for the tracker to find its tree."""

    def started(self, pid: int) -> None:
        """The child is running as ``pid``."""

    def observe(self) -> None:
        """Called on every supervision tick while the child runs (cheap, rate-limited)."""

    def pids(self) -> list[int]:
        """Every live process of the tree, the child included while it lives."""

    def signal(self, sig: int) -> None:
        """Send ``sig`` to every process of the tree."""

    def close(self) -> None:
        """Release what the tracker holds (after the tree is empty)."""


def _own_cgroup() -> str | None:
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                return line[3:]
    except OSError:
        return None
    return None


def _cgroup2_mount() -> str | None:
    try:
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                return left.split()[4]
    except OSError:
        return None
    return None


def cgroup_base() -> Path | None:
    """This process's own cgroup v2 directory, when it can hold new child cgroups."""
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None
    base = Path(mount) / own.lstrip("/")
    return base if os.access(base, os.W_OK) and (base / "cgroup.procs").exists() else None


class CgroupTree:
    """A fresh cgroup v2 per call: descendants cannot leave it."""

    def __init__(self, base: Path) -> None:
        self.path = base / f"execgraph-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self.path.mkdir()
        self._procs = str(self.path / "cgroup.procs")
        self._kill = self.path / "cgroup.kill"

    def preexec(self) -> None:
        """Join the cgroup (in the child, before ``exec``)."""
        fd = os.open(self._procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def environ(self) -> dict[str, str]:
        """None needed."""
        return {}

    def started(self, pid: int) -> None:
        """Nothing to learn: membership is the kernel's."""

    def observe(self) -> None:
        """Nothing to watch."""

    def pids(self) -> list[int]:
        """The cgroup's members (exited ones are gone from the list)."""
        try:
            with open(self._procs) as fh:
                return [int(line) for line in fh.read().split()]
        except OSError:
            return []

    def signal(self, sig: int) -> None:
        """``cgroup.kill`` for SIGKILL (atomic, even against a forking tree), else each pid."""
        if sig == signal.SIGKILL and self._kill.exists():
            with contextlib.suppress(OSError):
                self._kill.write_text("1")
                return
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def close(self) -> None:
        """Remove the (empty) cgroup; a populated one is retried briefly, then left."""
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(_POLL_S)


def _stat(pid: str) -> tuple[int, int, int, str, int] | None:
    """(ppid, pgrp, session, state, start time) of a live process, None if gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[1].split()
    return int(fields[1]), int(fields[2]), int(fields[3]), fields[0], int(fields[19])


class SweepTree:
    """Descendants found by sweeping ``/proc`` (see the module's note on its limit)."""

    def __init__(self) -> None:
        self._leader = -1
        self._known: dict[int, int] = {}  # pid -> start time
        self._next_sweep = 0.0
        self._marker = f"{MARKER}={uuid.uuid4().hex}".encode()

    def preexec(self) -> None:
        """Nothing to do in the child."""

    def environ(self) -> dict[str, str]:
        """The marker every descendant inherits."""
        name, _, value = self._marker.decode().partition("=")
        return {name: value}

    def _marked(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                return self._marker in fh.read().split(b"\0")
        except OSError:
            return False

    def started(self, pid: int) -> None:
        """Remember the child: its pid is also its process group and session id."""
        self._leader = pid
        info = _stat(str(pid))
        if info is not None:
            self._known[pid] = info[4]

    def observe(self) -> None:
        """Sweep every ``SWEEP_S`` while the child runs, to learn descendants while their
        parent links still lead to it."""
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + SWEEP_S
            self.pids()

    def pids(self) -> list[int]:
        """Sweep ``/proc`` until the set of tree members stops growing."""
        table: dict[int, tuple[int, int, int, str, int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                info = _stat(name)
                if info is not None and info[3] not in ("Z", "X"):
                    table[int(name)] = info
        known = {pid for pid, start in self._known.items() if table.get(pid, (0,) * 5)[4] == start}
        known |= {pid for pid in table if pid not in known and self._marked(pid)}
        grew = True
        while grew:
            grew = False
            for pid, (ppid, pgrp, session, _, _) in table.items():
                joined = ppid in known or self._leader in (pgrp, session)
                if pid not in known and joined:
                    known.add(pid)
                    grew = True
        for pid in known:
            self._known[pid] = table[pid][4]
        return sorted(known)

    def signal(self, sig: int) -> None:
        """Signal every member found by a fresh sweep."""
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def close(self) -> None:
        """Nothing is held."""


@functools.cache
def _remove_stale(base: Path) -> None:
    """Once per process: remove the empty cgroups of execgraph processes that died."""
    for path in base.glob("execgraph-*-*"):
        owner = path.name.split("-")[1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            with contextlib.suppress(OSError):
                path.rmdir()


def open_tree(kind: str) -> ProcessTree:
    """``"cgroup"``, ``"sweep"`` or ``"auto"`` (a cgroup when one can be made here)."""
    if kind in ("auto", "cgroup"):
        base = cgroup_base()
        if base is not None:
            _remove_stale(base)
            try:
                return CgroupTree(base)
            except OSError:
                pass
        if kind == "cgroup":
            raise OSError("no writable cgroup v2 hierarchy for the process tree")
    return SweepTree()
