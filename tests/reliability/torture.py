"""Crash-resume torture: SIGKILL a run at random points, resume it in new processes, count.

A trial runs one workload (see :mod:`tests.reliability.crash_worker`) on its own SQLite
checkpointer and execution store. Each attempt is a new worker process; attempt ``k`` is
SIGKILLed after a random delay with probability ``kill_p * decay**k`` (the last allowed
attempt never is), and the next attempt resumes the same thread, until one reaches a
terminal status. Then the world is compared with the store and the final state:

* duplicates: an effect performed more than once (ledger lines or transfers per entry;
  publications started when the published copy was already in place);
* lost commits: a result committed in the store that is missing from the final state,
  differs from it, or claims an effect the world does not hold;
* orphans: an effect in the world whose record never committed it (the run was told
  otherwise);
* unknown left: records still ``started`` after the run, or ``unknown`` results that no
  probe reconciled (expected for the probe-less transfer; reported, not a failure).

Run: ``python -m tests.reliability.torture --trials 200 [--arch react]
[--workload demo|ledger] [--seed N]``. Exit status 1 if any duplicate or lost commit.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.state.store.sql_locks import RUN_KEY_PREFIX
from execgraph.state.store.worker import owner_gone

__all__ = [
    "Forkserver",
    "Records",
    "Summary",
    "TrialResult",
    "analyze",
    "lock_held",
    "main",
    "run_trials",
]

REPO = Path(__file__).resolve().parents[2]
_WORKER = [sys.executable, "-m", "tests.reliability.crash_worker"]


class Forkserver:
    """A ``crash_worker serve`` process: every attempt is a fresh fork of it."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [*_WORKER, "serve"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._line(120.0)  # {"ready": pid}

    def _line(self, timeout_s: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            raise RuntimeError("the fork server stopped answering")
        return json.loads(line)

    def attempt(self, cmd: dict[str, Any]) -> dict[str, Any]:
        """Run one attempt; returns {pid, killed, timeout, code}."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._line(float(cmd["timeout"]) + 60.0)

    def close(self) -> None:
        """Stop the server; SIGTERM makes it kill and reap a running attempt first."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _exec_attempt(cmd: dict[str, Any]) -> dict[str, Any]:
    """The same attempt as a brand-new interpreter (slower: imports everything again)."""
    args = ["attempt", "--dir", cmd["dir"], "--workload", cmd["workload"], "--arch", cmd["arch"]]
    env = {**os.environ, "TORTURE_CRASH": cmd.get("crash") or ""}
    with open(cmd["log"], "ab") as log:
        proc = subprocess.Popen(
            [*_WORKER, *args, "--lock", cmd.get("lock", "shared")],
            cwd=REPO,
            stdout=log,
            stderr=log,
            env=env,
        )
    limit = cmd["timeout"] if cmd["kill_after"] is None else cmd["kill_after"]
    try:
        code = proc.wait(limit)
        return {"pid": proc.pid, "killed": False, "timeout": False, "code": code}
    except subprocess.TimeoutExpired:
        proc.kill()  # SIGKILL
        code = proc.wait(60)
        return {"pid": proc.pid, "killed": True, "timeout": cmd["kill_after"] is None, "code": code}


@dataclass
class TrialResult:
    """What one trial did and found."""

    index: int
    status: str
    attempts: int = 0
    kills: int = 0
    duplicates: int = 0
    lost_commits: int = 0
    orphans: int = 0
    unknown_left: int = 0
    leaked_locks: int = 0
    stalled: int = 0
    notes: list[str] = field(default_factory=list)


Records = tuple[list[dict[str, Any]], list[str]]
"""Every execution record of a trial (key, call_id, tool, state, result), and the locks
still held."""


def lock_held(key: str, owner: str, until: float) -> bool:
    """Whether a lock row still holds anything after a run.

    A run lease keeps its row when released (it names the last owner, to fence others),
    and one whose owner was killed is taken over at once: only an unexpired lease of a
    live owner is held. Every resource lock row is held.
    """
    if key.startswith(RUN_KEY_PREFIX):
        return until > time.time() and not owner_gone(owner)
    return True


def _records(base: Path) -> Records:
    """Every execution record, and the locks still held, read straight from the store."""
    conn = sqlite3.connect(f"file:{base / 'exec.db'}?mode=ro", uri=True, timeout=30)
    try:
        rows = conn.execute("SELECT idempotency_key, call_id, tool, state, result FROM executions")
        records = [
            {"key": k, "call_id": c, "tool": t, "state": s, "result": json.loads(r or "null")}
            for k, c, t, s, r in rows.fetchall()
        ]
        rows = conn.execute("SELECT key, owner, lease_until FROM locks").fetchall()
        locks = [f"{k} (owner {o})" for k, o, until in rows if lock_held(k, o, until)]
        return records, locks
    finally:
        conn.close()


def _keyed(path: Path) -> Counter[str]:
    """Effect lines per idempotency key (``... key=<key> pid=<pid>``)."""
    counts: Counter[str] = Counter()
    for line in path.read_text().splitlines() if path.exists() else []:
        counts[line.split(" key=", 1)[1].split(" pid=", 1)[0]] += 1
    return counts


def _effects(base: Path) -> tuple[Counter[str], int]:
    """(effects per key, duplicated effects) in the trial's world."""
    world, counts, dups = base / "workspace", Counter[str](), 0
    for name in ("ledger.txt", "transfers.txt"):
        counts.update(_keyed(world / name))
        # per entry, not per key: the same entry booked under two call ids is a duplicate too
        lines = (world / name).read_text().splitlines() if (world / name).exists() else []
        dups += sum(n - 1 for n in Counter(line.split(" ", 1)[0] for line in lines).values())
    log = base / "effects.log"
    for line in log.read_text().splitlines() if log.exists() else []:
        entry = json.loads(line)
        dups += int(entry["already"])  # a publication begun after one had landed
    if (world / "published" / "report.md").exists():
        for entry in map(json.loads, log.read_text().splitlines()):
            counts[entry["key"]] = 1
    return counts, dups


def analyze(base: Path, result: TrialResult, records: Records | None = None) -> None:
    """Compare the world, the store and the final state of a finished trial.

    ``records``: the trial's records and held locks (default: read from ``base/exec.db``;
    a trial on another store passes its own).
    """
    final = json.loads((base / "final.json").read_text())
    results: dict[str, Any] = final["results"]
    records, locks = records if records is not None else _records(base)
    result.leaked_locks = len(locks)
    result.notes.extend(f"lock still held: {lock}" for lock in locks)
    result.stalled = sum(
        1 for r in results.values() if (r.get("error") or {}).get("type") == "LockTimeout"
    )
    effects, result.duplicates = _effects(base)
    claimed = {r["key"] for r in records if r["state"] == "committed"}
    committed_keys, denied_keys = set(), set()
    for rec in records:
        if not rec["key"].endswith(f":{rec['call_id']}"):
            continue  # a bookkeeping row (e.g. an unresolved-write marker), not a call
        if rec["state"] != "committed":
            result.unknown_left += 1
            result.notes.append(f"pending record {rec['key']}")
            continue
        stored = rec["result"]
        in_state = results.get(rec["call_id"])
        claims_effect = stored["side_effect"]["committed"] is True
        if rec["tool"] in ("append_ledger", "post_transfer", "publish_report") and claims_effect:
            committed_keys.add(rec["key"])
            if not effects.get(rec["key"]):
                result.lost_commits += 1
                result.notes.append(f"{rec['key']} committed but its effect is absent")
        if stored["side_effect"]["committed"] is False:
            denied_keys.add(rec["key"])
        if in_state is None or in_state["outcome"] != stored["outcome"]:
            result.lost_commits += 1
            result.notes.append(f"{rec['key']} committed but not in the final state")
        if stored["outcome"] == "unknown" and not stored.get("reconciled"):
            result.unknown_left += 1
    for key in effects:
        if key in denied_keys or (key not in committed_keys and key not in claimed):
            result.orphans += 1
            result.notes.append(f"effect {key} present, but its record says it did not happen")


def run_trial(
    index: int,
    root: Path,
    opts: argparse.Namespace,
    runner: Any,
    window_s: float,
) -> TrialResult:
    """Kill and resume one trial until it reaches a terminal status."""
    rng = random.Random(opts.seed * 100_003 + index)
    base = root / f"trial-{index:04d}"
    base.mkdir(parents=True)
    result = TrialResult(index, "STUCK")
    for k in range(opts.max_attempts):
        last = k == opts.max_attempts - 1
        kill = not last and rng.random() < opts.kill_p * opts.decay**k
        cmd = {
            "dir": str(base),
            "workload": opts.workload,
            "arch": opts.arch,
            "log": str(base / "worker.log"),
            "kill_after": rng.uniform(0.0, window_s) if kill else None,
            "lock": opts.ledger_lock,
            "timeout": opts.attempt_timeout,
        }
        answer = runner(cmd)
        result.attempts += 1
        result.kills += int(answer["killed"] and not answer["timeout"])
        if answer["timeout"]:
            result.notes.append(f"attempt {k} hit the {opts.attempt_timeout}s timeout")
        if answer["code"] == 0 and (base / "final.json").exists():
            result.status = json.loads((base / "final.json").read_text())["status"]
            analyze(base, result)
            break
        if not answer["killed"]:
            result.notes.append(f"attempt {k} exited with {answer['code']}")
    return result


@dataclass
class Summary:
    """Totals over all trials."""

    trials: list[TrialResult]

    def total(self, name: str) -> int:
        return sum(getattr(t, name) for t in self.trials)

    def statuses(self) -> Counter[str]:
        return Counter(t.status for t in self.trials)

    def render(self, header: str) -> str:
        attempts, kills = self.total("attempts"), self.total("kills")
        lines = [
            header,
            f"trials: {len(self.trials)}",
            f"attempts: {attempts}  kills: {kills}  resumes: {attempts - len(self.trials)}",
            f"duplicates: {self.total('duplicates')}",
            f"lost commits: {self.total('lost_commits')}",
            f"orphan effects: {self.total('orphans')}",
            f"unknown left: {self.total('unknown_left')}",
            f"locks leaked after the run: {self.total('leaked_locks')}  "
            f"calls failed on a leaked lock (LockTimeout): {self.total('stalled')}",
            "terminal statuses: " + ", ".join(f"{s}={n}" for s, n in self.statuses().items()),
        ]
        return "\n".join(lines)


def _calibrate(runner: Any, root: Path, opts: argparse.Namespace) -> float:
    """Time one undisturbed run; kills land anywhere in 1.2x that window."""
    base = root / "calibration"
    base.mkdir(parents=True)
    cmd = {
        "dir": str(base),
        "workload": opts.workload,
        "arch": opts.arch,
        "log": str(base / "worker.log"),
        "kill_after": None,
        "lock": opts.ledger_lock,
        "timeout": opts.attempt_timeout,
    }
    start = time.monotonic()
    answer = runner(cmd)
    if answer["code"] != 0:
        raise RuntimeError(f"calibration run failed; see {base / 'worker.log'}")
    return max(0.2, 1.2 * (time.monotonic() - start))


def run_trials(opts: argparse.Namespace, root: Path, server: Forkserver | None = None) -> Summary:
    """Run every trial under ``root``; a fork server started here is always shut down."""
    own = server is None and opts.spawn == "fork"
    server = Forkserver() if own else server
    runner = server.attempt if server is not None else _exec_attempt
    try:
        window = opts.window or _calibrate(runner, root, opts)
        trials = []
        for i in range(opts.trials):
            trials.append(run_trial(i, root, opts, runner, window))
            if opts.verbose:
                t = trials[-1]
                print(f"trial {i}: {t.status} kills={t.kills} {t.notes}", flush=True)
        return Summary(trials)
    finally:
        if own and server is not None:
            server.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Crash-resume torture for execgraph.")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--arch", default="react")
    parser.add_argument("--workload", choices=("demo", "ledger"), default="demo")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--spawn", choices=("fork", "exec"), default="fork")
    parser.add_argument("--max-attempts", type=int, default=8)
    parser.add_argument(
        "--ledger-lock",
        choices=("shared", "entry"),
        default="shared",
        help="one lock for every ledger append, or one per entry",
    )
    parser.add_argument("--kill-p", type=float, default=0.9)
    parser.add_argument("--decay", type=float, default=0.6)
    parser.add_argument("--window", type=float, default=0.0, help="kill window (s); 0: measure")
    parser.add_argument("--attempt-timeout", type=float, default=240.0)
    parser.add_argument("--dir", default="", help="keep trial directories here")
    parser.add_argument("--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="torture-") as scratch:
        root = Path(opts.dir or scratch) / f"{opts.workload}-{opts.arch}-{opts.seed}"
        root.mkdir(parents=True, exist_ok=False)
        summary = run_trials(opts, root)
    header = (
        f"torture: workload={opts.workload} arch={opts.arch} seed={opts.seed} pid={os.getpid()}"
    )
    print(summary.render(header))
    for t in summary.trials:
        if t.duplicates or t.lost_commits or t.orphans:
            print(f"  trial {t.index}: {t.status} {t.notes}")
    return 1 if summary.total("duplicates") or summary.total("lost_commits") else 0


if __name__ == "__main__":
    sys.exit(main())
