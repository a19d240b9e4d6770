"""CPU in use over an interval, for the machine and for named groups of processes, from
``/proc`` (Linux; elsewhere every figure is None).

A throughput figure means little without what bounded it: the output says how many of
the machine's cores were busy, and how many of them the workers, the Temporal server,
PostgreSQL and the benchmark's own client used; the rest is everyone else's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CpuClock", "bench_processes"]

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


@dataclass
class CpuClock:
    """Cores busy over ``start()``..``stop()``: the machine's, and each group's that
    ``groups()`` names (read at both ends; a process that appears between them counts
    from zero, one that ends is lost)."""

    groups: Callable[[], Mapping[str, set[int]]] = dict
    _machine: tuple[float, float, float] | None = None
    _cpu: dict[int, float] = field(default_factory=dict)
    _wall: float = 0.0

    def start(self) -> None:
        """Take the first reading."""
        pids = set().union(*self.groups().values())
        self._machine, self._cpu = _machine(), _cpu_s(pids)
        self._wall = time.perf_counter()

    def stop(self) -> dict[str, float | None]:
        """``machine_cores_busy`` (of ``cores``) and ``<group>_cores`` for each group."""
        wall = time.perf_counter() - self._wall
        machine = _machine()
        out: dict[str, float | None] = {"cores": float(os.cpu_count() or 1)}
        busy = irq = None
        if machine is not None and self._machine is not None:
            total = machine[1] - self._machine[1]
            if total:
                busy = (machine[0] - self._machine[0]) / total * (out["cores"] or 1)
                irq = (machine[2] - self._machine[2]) / total * (out["cores"] or 1)
        out["machine_cores_busy"] = busy
        # interrupts, mostly the loopback traffic between the processes: no process's own
        out["irq_cores"] = irq
        for name, pids in self.groups().items():
            now = _cpu_s(pids)
            spent = sum(cpu - self._cpu.get(pid, 0.0) for pid, cpu in now.items())
            out[f"{name}_cores"] = spent / wall if machine is not None and wall > 0 else None
        return out


def bench_processes(workers: set[int], postgres_port: int | None) -> dict[str, set[int]]:
    """This benchmark's processes by role: ``workers``, ``temporal`` (the dev server, a
    child of this process), ``postgres`` (the postmaster listening on ``postgres_port``
    and its backends) and ``client`` (this process)."""
    table = _processes()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _comm, _cmd) in table.items():
        children.setdefault(ppid, []).append(pid)

    def below(root: int) -> set[int]:
        found, todo = set(), [root]
        while todo:
            for child in children.get(todo.pop(), []):
                found.add(child)
                todo.append(child)
        return found

    mine = below(me)
    temporal = {p for p in mine if table[p][1].startswith("temporal")}
    postgres: set[int] = set()
    if postgres_port is not None:
        flag = f"-p {postgres_port} "
        for pid, (_ppid, comm, cmd) in table.items():
            if comm == "postgres" and flag in cmd + " ":
                postgres |= {pid} | below(pid)
    return {"workers": workers, "temporal": temporal, "postgres": postgres, "client": {me}}


def _processes() -> dict[int, tuple[int, str, str]]:
    """pid -> (ppid, command name, command line) of every process we can read."""
    table = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry.name)] = (ppid, comm, cmd)
    return table


def _machine() -> tuple[float, float, float] | None:
    """(busy, total, of which irq and softirq) jiffies of all CPUs from ``/proc/stat``."""
    try:
        fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8]), sum(fields[5:7])


def _cpu_s(pids: set[int]) -> dict[int, float]:
    """User + system CPU seconds so far of each of ``pids`` still running."""
    spent = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        spent[pid] = (float(fields[11]) + float(fields[12])) / _TICK  # utime, stime
    return spent
