"""Watching a started child until it ends, and making sure nothing of it outlives the call.

The child leads its own session, and every descendant is tracked by its
:class:`~execgraph.tools.proctree.ProcessTree` (a cgroup v2, else a ``/proc`` sweep),
even those that ``setpgid``, ``setsid`` or double-fork. Whatever ends the watch — the
child's exit, a cancel, the deadline, an exception in this thread — the whole tree is
stopped (SIGTERM, a grace period, SIGKILL until it is empty), the child is reaped and its
pipes are drained. The child is polled without being reaped, so its pid (= its process
group id) cannot be reused while the group is signalled.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from typing import Any

from execgraph.tools.adapters._streams import StreamReader
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.proctree import ProcessTree

__all__ = ["Ended", "supervise"]

_POLL_S = 0.02
_KILL_ROUNDS = 250


@dataclass(frozen=True)
class Ended:
    """How a supervised child ended.

    Attributes:
        readers: Its stdout and stderr, read to the end (or to their bound).
        stopped: ``"cancelled"`` or ``"deadline"`` when it was killed, else None.
        leftover: Descendants still running when it exited by itself (they were killed).
    """

    readers: list[StreamReader]
    stopped: str | None
    leftover: int


def _exited(pid: int) -> bool:
    """True once the child has exited, WITHOUT reaping it.

    While the leader stays an unreaped zombie its pid (= the process group id) cannot be
    reused, so signalling the group afterwards can never hit an unrelated process.
    """
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def supervise(
    proc: subprocess.Popen[bytes],
    tree: ProcessTree,
    ctx: InvokeContext,
    deadline: float,
    *,
    grace_s: float,
) -> Ended:
    """Stream the child's output as ``tool.output`` events until it exits, the call is
    cancelled or ``deadline`` passes; then stop its whole tree."""
    assert proc.stdout is not None and proc.stderr is not None
    emit_lock = threading.Lock()
    seq = [0]

    def emit(payload: dict[str, Any]) -> None:
        with emit_lock:  # one total order across both streams
            seq[0] += 1
            ctx.emit("tool.output", {**payload, "call_id": ctx.call_id, "seq": seq[0]})

    readers = [
        StreamReader("stdout", proc.stdout, ctx.output_budget, emit),
        StreamReader("stderr", proc.stderr, ctx.output_budget, emit),
    ]
    for reader in readers:
        reader.start()
    stopped: str | None = None
    leftover = 0
    try:
        while not _exited(proc.pid):
            if ctx.cancel.is_set():
                stopped = "cancelled"
                break
            left = deadline - time.time()
            if left <= 0:
                stopped = "deadline"
                break
            tree.observe()
            ctx.cancel.wait(min(_POLL_S, left))
        if stopped is None:  # the child exited: whatever of its tree still runs is left
            leftover = len([pid for pid in tree.pids() if pid != proc.pid])
    finally:
        # Whatever happened (even an exception in this thread), nothing outlives the call.
        _stop_tree(proc, tree, readers, grace_s)
    return Ended(readers, stopped, leftover)


def _stop_tree(
    proc: subprocess.Popen[bytes], tree: ProcessTree, readers: list[StreamReader], grace_s: float
) -> None:
    """SIGTERM the tree, wait up to ``grace_s``, SIGKILL it until it is empty, reap the
    child, drain the pipes."""
    pgid = proc.pid  # start_new_session: the child leads its own group

    def signal_all(sig: int) -> None:
        tree.signal(sig)
        _signal_group(pgid, sig)

    signal_all(signal.SIGTERM)
    give_up = time.time() + grace_s
    # Wait for the tree and every pipe holder to go, within the grace.
    while time.time() < give_up and not (
        _exited(proc.pid) and not tree.pids() and all(r.done.is_set() for r in readers)
    ):
        time.sleep(_POLL_S)
    signal_all(signal.SIGKILL)
    for _ in range(_KILL_ROUNDS):  # a forking tree may need more than one round
        if not tree.pids():
            break
        time.sleep(_POLL_S)
        signal_all(signal.SIGKILL)
    proc.wait()  # reap; after SIGKILL this returns promptly
    for reader in readers:
        # EOF arrives once the last holder of the pipe is dead. One that escaped every
        # tracker could hold it forever: stop reading after a bound.
        if not reader.done.wait(grace_s + 1.0):
            reader.stop()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
