"""Two embedded worker processes on one home, one stopped (SIGSTOP) past its leases and
woken (SIGCONT) after the other took its run over and finished it: nothing happens twice,
and the woken worker reports that it lost the run, never that it completed it.

Each trial runs one run (two ``post`` calls, then finish) on worker ``A``
(``python -m tests.adversarial.test_fencing_embedded HOME``, 1 s leases). ``A`` is
stopped inside a post (before its effect) or between the two posts; once its leases
have lapsed, worker ``B`` resumes the run (``invoke(None, cfg)``), takes it over and
finishes it; then ``A`` is woken. The resource is a SQLite ledger that books every effect
it is asked for (it does not deduplicate), so a stale owner's late post would be booked
twice; ``post`` checks its fencing token right before the effect
(``ctx.check_fence()``), which is what refuses it. ``B`` does not post again a call it
took over from an owner that may still run it (``post`` is not idempotent): that call is
``unknown``, for a person to reconcile. Every trial ends with no entry booked twice,
``A`` answering ``FencedOut`` (never ``COMPLETED``), ``B`` answering ``COMPLETED``, and
the log's ``run.finished``, the execution records and the checkpoint agreeing.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import FencedOut
from execgraph.tools import AdapterOutput, InvokeContext, tool_spec

REPO = Path(__file__).resolve().parents[2]
TRIALS = int(os.environ.get("FENCING_TRIALS", "20"))
LEASE_S = 1.0
ENTRIES = 2
HOLD_S = 0.2  # inside the tool before its effect, and in the model: windows to stop in
_HOME: list[Path] = []  # the worker's home (set by _serve)

pytestmark = pytest.mark.timeout(300)


# -- the worker process ------------------------------------------------------------------


def _ledger(home: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(home / "ledger.db", timeout=30, isolation_level=None)
    conn.execute(
        "CREATE TABLE IF NOT EXISTS effects (key TEXT, entry TEXT, fence INTEGER, pid INTEGER)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS refused (key TEXT, entry TEXT, pid INTEGER)")
    return conn


def _tools(home: Path) -> list[Any]:
    busy = home / "busy"

    def probe(args: Any, ctx: InvokeContext) -> AdapterOutput:
        with closing(_ledger(home)) as conn:
            sql = "SELECT 1 FROM effects WHERE key = ?"
            return AdapterOutput(
                committed=conn.execute(sql, (ctx.idempotency_key,)).fetchone() is not None
            )

    @tool_spec(name="post", effect="write", version="1.0.0", reconcile=probe, retry=None)
    def post(entry: str, ctx: InvokeContext) -> str:
        """Book ``entry`` in the ledger (every call books: running twice books twice)."""
        busy.mkdir(exist_ok=True)
        mark = busy / str(os.getpid())
        mark.write_text(entry)
        try:
            time.sleep(HOLD_S)
            with closing(_ledger(home)) as conn:
                conn.execute("BEGIN IMMEDIATE")
                row = (ctx.idempotency_key, entry, os.getpid())
                try:
                    ctx.check_fence()  # right before the effect: a stale owner acts on nothing
                except FencedOut:
                    conn.execute("INSERT INTO refused VALUES (?, ?, ?)", row)
                    conn.execute("COMMIT")
                    raise
                conn.execute(
                    "INSERT INTO effects VALUES (?, ?, ?, ?)", (*row[:2], ctx.fence, row[2])
                )
                conn.execute("COMMIT")
            return f"posted {entry}"
        finally:
            mark.unlink(missing_ok=True)

    return [post]


def _next_post(messages: list[Any]) -> Any:
    """Post ``e0``, ``e1``, then finish; before ``e1`` it thinks a moment (between the
    posts, outside any tool or transaction: a window to be stopped in)."""
    from langchain_core.messages import AIMessage

    done = sum(1 for m in messages if m.type == "tool")
    if done == 1:
        mark = _HOME[0] / "busy" / str(os.getpid())
        mark.write_text("thinking")
        time.sleep(HOLD_S)
        mark.unlink(missing_ok=True)
    if done >= ENTRIES:
        return AIMessage(
            "", tool_calls=[{"name": "finish", "args": {"output": "posted"}, "id": "f"}]
        )
    return AIMessage(
        "", tool_calls=[{"name": "post", "args": {"entry": f"e{done}"}, "id": f"p{done}"}]
    )


def _serve(home: Path) -> None:
    import execgraph.nodes.executor.record_lease as record_lease
    import execgraph.persistence.run_lease as run_lease
    from execgraph.graph import build_graph
    from execgraph.state.errors import ExecGraphError
    from execgraph.testing import ScriptedChatModel

    _HOME.append(home)
    faulthandler.register(signal.SIGUSR1)  # the torture asks a silent worker for its stacks
    run_lease.RUN_LEASE_S, run_lease.RENEW_EVERY_S = LEASE_S, LEASE_S / 4
    record_lease.LEASE_S, record_lease.RENEW_EVERY_S = LEASE_S, LEASE_S / 4
    app = build_graph(
        "react",
        model=ScriptedChatModel([_next_post] * 10_000, keep_calls=2),
        tools=_tools(home),
        home=home,
        workspace=home / "ws",
    )
    print(json.dumps({"ready": os.getpid()}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        cfg = {"configurable": {"thread_id": cmd["thread"]}}
        task = {"task": {"goal": "Post the entries"}} if cmd["op"] == "start" else None
        try:
            out = app.invoke(task, cfg)
            reply: dict[str, Any] = {"status": str(out.get("status"))}
        except ExecGraphError as exc:
            reply = {"error": type(exc).__name__, "message": str(exc)}
        print(json.dumps(reply), flush=True)


# -- the torture -------------------------------------------------------------------------


class _Worker:
    def __init__(self, home: Path, name: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        argv = [sys.executable, "-m", "tests.adversarial.test_fencing_embedded", str(home)]
        self.log = home.parent / f"{name}.log"
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(self.log, "w"),  # noqa: SIM115 - the child keeps it
            text=True,
        )
        self.pid = self.recv(120)["ready"]

    def send(self, op: str, thread: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"op": op, "thread": thread}) + "\n")
        self.proc.stdin.flush()

    def recv(self, timeout_s: float = 60) -> dict[str, Any]:
        import select

        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            with suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGUSR1)
                time.sleep(1)
            raise AssertionError(f"worker said nothing:\n{self.log.read_text()[-12000:]}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        with suppress(ProcessLookupError):
            os.kill(self.proc.pid, signal.SIGCONT)
        self.proc.kill()
        self.proc.wait(30)


def _wait(check: Any, bound_s: float, step_s: float = 0.005) -> Any:
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step_s)
    return None


def _in_tool(home: Path, pid: int) -> str | None:
    with suppress(OSError):
        return (home / "busy" / str(pid)).read_text() or None
    return None


def _write_locked(home: Path) -> bool:
    """Whether a stopped process holds the write lock of one of the home's databases."""
    for name in ("exec.db", "checkpoints.db"):
        with closing(sqlite3.connect(home / name, timeout=0.05)) as conn:
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.rollback()
            except sqlite3.OperationalError:
                return True
    return False


def _trial(home: Path, a: _Worker, b: _Worker, thread: str, inside: bool) -> dict[str, Any]:
    began = time.monotonic()
    a.send("start", thread)
    # inside: in the post of e0, before its effect; between: e0 booked, deciding on e1.
    # (Never inside a store transaction: a process stopped holding SQLite's write lock
    # holds up the whole home until it is woken; such a stop is made again.)
    where = "e0" if inside else "thinking"
    assert _wait(lambda: _in_tool(home, a.pid) == where, 30), f"A never reached {where}"
    time.sleep(0.03)
    os.kill(a.pid, signal.SIGSTOP)
    for _ in range(20):  # stopped inside a store transaction (a lease renewal): again
        if not _write_locked(home):
            break
        os.kill(a.pid, signal.SIGCONT)
        time.sleep(0.005)
        os.kill(a.pid, signal.SIGSTOP)
    stopped = time.monotonic()
    try:
        time.sleep(LEASE_S + 0.3)  # A's leases lapse
        b.send("resume", thread)
        taken = b.recv()
        b_done = time.monotonic()
    finally:
        os.kill(a.pid, signal.SIGCONT)
    woken = a.recv()
    took = {k: round(v - began, 2) for k, v in (("stop", stopped), ("B", b_done))}
    took["A"] = round(time.monotonic() - began, 2)
    return {"thread": thread, "inside": inside, "A": woken, "B": taken, "s": took}


def _state(home: Path, thread: str) -> tuple[Any, Any, list[Any]]:
    from execgraph.engines.embedded.foreign import read_home_state
    from execgraph.state.home import Home
    from execgraph.state.store.sqlite import SqliteExecutionStore

    with SqliteExecutionStore(home / "exec.db") as store:
        finished = [e.payload for e in store.events(thread) if e.type == "run.finished"]
        records = [(r.state, (r.result or {}).get("outcome")) for r in store.committed(thread)]
        records += [(r.state, None) for r in store.pending(thread)]
    logged = finished[-1].get("status") if finished else None
    return logged, read_home_state(Home(home), thread).values.get("status"), records


def test_a_stopped_owner_woken_after_a_takeover_repeats_no_effect_and_reports_no_completion(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a, b = _Worker(home, "a"), _Worker(home, "b")
    try:
        trials = []
        for n in range(TRIALS):
            thread = f"f{n}"
            trial = _trial(home, a, b, thread, inside=n % 2 == 0)
            trial["log"], trial["checkpoint"], trial["records"] = _state(home, thread)
            trials.append(trial)
            a, b = b, a  # each worker is the stopped one in turn
    finally:
        a.close()
        b.close()
    report = "\n".join(json.dumps(t) for t in trials)
    with closing(_ledger(home)) as conn:
        keys = Counter(r[0] for r in conn.execute("SELECT key FROM effects").fetchall())
        refused = conn.execute("SELECT COUNT(*) FROM refused").fetchone()[0]
    assert [k for k, n in keys.items() if n > 1] == [], report  # no effect twice
    inside = sum(1 for t in trials if t["inside"])
    # stopped inside e0: B took e0 over from an owner that may still run it, so e0 is
    # unknown (not posted again), and A's late post was refused by its fence
    assert sum(keys.values()) == TRIALS * ENTRIES - inside, report
    assert refused == inside, report
    for t in trials:
        assert t["B"] == {"status": "COMPLETED"}, report
        assert t["A"].get("error") == "FencedOut", report  # never COMPLETED
        assert t["log"] == t["checkpoint"] == "COMPLETED", report
        first = "unknown" if t["inside"] else "succeeded"
        assert t["records"] == [("committed", first), ("committed", "succeeded")], report
    print(report)
    print(f"{TRIALS} trials; {refused} late posts of stopped owners refused by their fence")


if __name__ == "__main__":
    _serve(Path(sys.argv[1]))
