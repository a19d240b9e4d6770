"""8. 20 concurrent threads sharing one SQLite execution store and one checkpointer.

Twenty Python threads each run their own run (thread id) of the step workload; they share
one ``SqliteSaver`` and, for execgraph, one ``SqliteExecutionStore``. The figures are the
throughput in tool steps per second and the runs that failed, with any ``database is
locked`` error counted apart.

With the scripted model answering at once, the runs are bound by CPU under one GIL: the
throughput compares the Python work each framework does per step. The same runs again
with a model that takes :data:`MODEL_LATENCY_S` a call (a fast provider) are bound by
the model's wait, as deployed agents are: that row shows whether sharing one store and
one saver costs anything once the CPU is not the limit.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from bench.core import Bench, Row, Target
from bench.workload import (
    EXECGRAPH,
    build_app,
    config,
    durability,
    first_input,
    open_saver,
    scripted_replies,
)
from execgraph.testing import ScriptedChatModel

__all__ = ["measure", "run_concurrent"]

THREADS = 20
MODEL_LATENCY_S = 0.1
"""How long each model call of the latency-bound row takes."""


def _answering_after(latency_s: float, replies: list[Any]) -> list[Any]:
    """``replies``, each given only after ``latency_s`` seconds (the call's wait)."""

    def after(reply: Any) -> Any:
        def call(_messages: Any) -> Any:
            time.sleep(latency_s)
            return reply

        return call

    return [after(reply) for reply in replies] if latency_s else replies


def run_concurrent(
    bench: Bench, framework: str, steps: int, *, model_latency_s: float = 0.0
) -> dict[str, Any]:
    """Run THREADS runs of ``steps`` steps at once; throughput and failures."""
    directory = bench.fresh_dir(f"conc-{framework}")
    saver = open_saver(directory / "checkpoints.db")
    store = None
    if framework == EXECGRAPH:
        from execgraph.state.store.sqlite import SqliteExecutionStore

        store = SqliteExecutionStore(directory / "exec.db")
    apps = [
        build_app(
            framework,
            ScriptedChatModel(
                _answering_after(
                    model_latency_s, scripted_replies(framework, steps, prefix=f"t{t}-")
                )
            ),
            directory,
            saver=saver,
            store=store,
        )
        for t in range(THREADS)
    ]
    errors: list[str] = []
    done: list[str] = []
    guard = threading.Lock()
    barrier = threading.Barrier(THREADS + 1)

    def work(index: int) -> None:
        barrier.wait()
        try:
            out = apps[index].invoke(
                first_input(framework, steps), config(f"conc-{index}"), **durability(framework)
            )
            ok = out.get("status") == "COMPLETED" if framework == EXECGRAPH else True
            with guard:
                (done if ok else errors).append(str(out.get("status", "")))
        except Exception as exc:  # counted and reported, never hidden
            with guard:
                errors.append(f"{type(exc).__name__}: {exc}")

    workers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(THREADS)]
    for worker in workers:
        worker.start()
    barrier.wait()
    start = time.perf_counter()
    for worker in workers:
        worker.join(timeout=1800)
    elapsed = time.perf_counter() - start
    hung = sum(worker.is_alive() for worker in workers)
    locked = sum("locked" in e.lower() for e in errors)
    result = {
        "steps_per_s": len(done) * steps / elapsed,
        "elapsed_s": elapsed,
        "completed": len(done),
        "errors": len(errors) + hung,
        "lock_errors": locked,
        "first_error": errors[0][:200] if errors else "",
    }
    bench.log(f"  {framework:<20} {result}")
    return result


def measure(bench: Bench) -> list[Row]:
    """Rows: throughput ratio (CPU-bound, then model-bound), and execgraph's failed runs
    (target: none)."""
    steps = 5 if bench.quick else 20
    bench.log(f"concurrency: {THREADS} threads x {steps} steps")
    ours = run_concurrent(bench, EXECGRAPH, steps)
    base = run_concurrent(bench, "create_agent", steps)
    waited = {"model_latency_s": MODEL_LATENCY_S}
    ours_waiting = run_concurrent(bench, EXECGRAPH, steps, **waited)
    base_waiting = run_concurrent(bench, "create_agent", steps, **waited)
    bench.extras["concurrency"] = {
        EXECGRAPH: ours,
        "create_agent": base,
        f"{EXECGRAPH}, model {MODEL_LATENCY_S:g} s": ours_waiting,
        f"create_agent, model {MODEL_LATENCY_S:g} s": base_waiting,
    }
    note = f"{ours['completed']}/{THREADS} runs completed in {ours['elapsed_s']:.1f} s"
    if ours["first_error"]:
        note += f"; first error: {ours['first_error']}"
    failed = ours["errors"] + ours_waiting["errors"]
    return [
        Row(
            "8 concurrency",
            f"{THREADS} threads x {steps} steps throughput",
            ours["steps_per_s"],
            base["steps_per_s"],
            "steps/s",
            "create_agent, shared saver",
            note=note,
        ),
        Row(
            "8 concurrency",
            f"{THREADS} threads x {steps} steps, model calls of {MODEL_LATENCY_S * 1000:.0f} ms",
            ours_waiting["steps_per_s"],
            base_waiting["steps_per_s"],
            "steps/s",
            "create_agent, shared saver",
            note=(
                f"{ours_waiting['completed']}/{THREADS} runs completed in "
                f"{ours_waiting['elapsed_s']:.1f} s"
            ),
        ),
        Row(
            "8 concurrency",
            "failed runs (lock errors)",
            float(failed),
            float(base["errors"] + base_waiting["errors"]),
            "runs",
            "create_agent",
            Target(0, "execgraph = 0", on="value"),
            note=(
                f"lock errors: execgraph {ours['lock_errors'] + ours_waiting['lock_errors']}, "
                f"create_agent {base['lock_errors'] + base_waiting['lock_errors']}"
            ),
        ),
    ]
