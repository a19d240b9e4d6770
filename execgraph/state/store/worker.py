"""Who a worker is: the process identity that owns execution records and locks.

An execution record in flight belongs to the process running its tool, not to the call:
two processes resuming the same run compute the same call, and only its owner may run it.
The identity is ``machine/pid/start/boot``: where its pids mean something (the host
name, the kernel's boot id and the pid namespace, so two containers or two machines that
share a host name are not taken for one), the process id, the process's start time
(``/proc``; it tells a reused pid from the one that wrote the record) and a random id made
once per process (and again in a forked child, which is a new worker).

:func:`owner_gone` answers, for another identity, "is that worker provably dead?" — only
a worker whose pids this process sees can be checked (its pid no longer runs, or runs a
process started later); for any other owner the answer is "not provably", and its lease
has to expire instead.
That is what lets a crashed worker's call be recovered at once on the same machine while
a live owner anywhere is never taken over.
"""

from __future__ import annotations

import os
import socket
import uuid

__all__ = ["owner_gone", "worker_id"]


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (None: no such process, or no
    ``/proc``); a zombie counts as gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # the name may hold spaces and parens
    if len(fields) < 20 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _machine() -> str:
    """Where this process's pids are meaningful: host name, boot id and pid namespace."""
    parts = [socket.gethostname().replace("/", "_")]
    try:
        with open("/proc/sys/kernel/random/boot_id") as fh:
            parts.append(fh.read().strip()[:8])
        parts.append(str(os.stat("/proc/self/ns/pid").st_ino))
    except OSError:
        pass
    return "@".join(parts)


def _make_id() -> str:
    pid = os.getpid()
    return f"{_machine()}/{pid}/{_start_time(pid) or '-'}/{uuid.uuid4().hex[:12]}"


_ID = [_make_id()]
os.register_at_fork(after_in_child=lambda: _ID.__setitem__(0, _make_id()))


def worker_id() -> str:
    """This process's identity as an owner of records and locks."""
    return _ID[0]


def owner_gone(owner: str) -> bool:
    """Whether the worker ``owner`` is provably dead: an owner from before identities
    (empty), or one on this host whose process no longer runs (or whose pid now belongs
    to a process started later). Never true for this process, nor for another machine."""
    if not owner:
        return True
    if owner == _ID[0]:
        return False
    parts = owner.split("/")
    if len(parts) != 4 or parts[0] != _ID[0].split("/")[0] or not parts[1].isdigit():
        return False
    pid, started = int(parts[1]), parts[2]
    if pid == os.getpid():
        return True  # this pid, another identity: an earlier process (or a parent before fork)
    now = _start_time(pid)
    if now is None:
        if os.path.isdir("/proc"):
            return True
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False
    return started != "-" and now != started
