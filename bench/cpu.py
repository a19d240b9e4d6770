"""CPU in use over an interval, for the machine and for some processes, from ``/proc``.

A throughput figure means little without what bounded it: the output says how many of
the machine's cores were busy and how many the worker processes used themselves.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CpuClock"]


@dataclass
class CpuClock:
    """CPU seconds used by the machine and by some processes, read from ``/proc`` (Linux;
    elsewhere every figure is None), so the output can say what bounds throughput."""

    pids: tuple[int, ...] = ()
    _machine: tuple[float, float] | None = None
    _procs: float | None = None
    _wall: float = 0.0

    def start(self) -> None:
        """Take the first reading."""
        self._machine, self._procs, self._wall = (
            _machine(),
            _procs_cpu(self.pids),
            time.perf_counter(),
        )

    def stop(self) -> dict[str, float | None]:
        """Cores in use over the interval: the machine's (busy, of ``os.cpu_count()``) and
        the processes' own."""
        machine, procs, wall = _machine(), _procs_cpu(self.pids), time.perf_counter() - self._wall
        busy = None
        if machine is not None and self._machine is not None:
            total = machine[1] - self._machine[1]
            busy = (
                (machine[0] - self._machine[0]) / total * (os.cpu_count() or 1) if total else None
            )
        used = None
        if procs is not None and self._procs is not None and wall > 0:
            used = (procs - self._procs) / wall
        return {
            "machine_cores_busy": busy,
            "worker_cores": used,
            "cores": float(os.cpu_count() or 1),
        }


def _machine() -> tuple[float, float] | None:
    """(busy, total) jiffies of all CPUs from ``/proc/stat``."""
    try:
        fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def _procs_cpu(pids: tuple[int, ...]) -> float | None:
    """User + system CPU seconds of ``pids`` so far."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = stat.rsplit(")", 1)[1].split()
        total += (float(fields[11]) + float(fields[12])) / tick  # utime, stime
    return total
