"""``advance``: what a run gets next, decided in one place, then run to its next pause.

A run's LangGraph thread is in one of a few states, and each says what to feed it:

- never started (no checkpoint): its task;
- started with another task: nothing, refused (a run id names one task, whichever engine,
  namespace or process asks: :func:`check_task`);
- paused on interrupts: the answers, when they name what it waits on and each approval's
  answer is bound to the arguments it asks about now (a retried advance whose answers
  were already taken, or a run asked something new since, stays put);
- ended (a terminal status, nothing scheduled): nothing; it is reported as it is;
- anything else was stopped between steps (a killed process, a lost worker): ``None``,
  which continues from the last checkpoint and replays the saved writes.

A cancel logs the request in the run's execution store first (a running tool sees it
within a poll), then ends a paused run by refusing what it waits on. The embedded engine,
a Temporal worker's activity and a Python caller all advance runs through this function.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from langgraph.types import Command

from execgraph.engines.answers import binding_problem, refusal
from execgraph.engines.spec import TERMINAL, RunView
from execgraph.engines.waits import tool_waits
from execgraph.nodes.cancel import request_cancel
from execgraph.state.compiled import RunGraph
from execgraph.state.contracts import ApprovalDecision
from execgraph.state.errors import UsageError
from execgraph.state.errors.tool_bugs import is_tool_bug

__all__ = ["Step", "Watch", "advance", "check_task", "next_input", "view_of"]

Watch = Callable[[str, Any], None]
"""Sees a run while it advances: ``(mode, chunk)`` of LangGraph's ``updates`` and
``custom`` stream modes (a node's update; a running tool's output or progress)."""

_STAY = object()  # nothing to run: the run is reported as it is


@dataclass(frozen=True)
class Step:
    """What a caller has for a run: its task, answers to its pause, or a cancel.

    ``cancel`` is the reason a cancel gives (None: not a cancel).
    """

    task: Mapping[str, Any] | None = None
    answers: Mapping[str, Any] | None = None
    cancel: str | None = None


def config_of(thread: str) -> Any:
    """The LangGraph config of a run: its id is the thread id."""
    return {"configurable": {"thread_id": thread}}


def _status(values: Mapping[str, Any]) -> str:
    return str(values.get("status") or "RUNNING")


def task_digest(task: Mapping[str, Any]) -> str:
    """A task's identity: the sha256 of its canonical JSON."""
    body = json.dumps(dict(task), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def check_task(thread: str, values: Mapping[str, Any], task: Mapping[str, Any] | None) -> None:
    """Refuse ``task`` for a thread that holds another: a run id names one task.

    ``values`` are the thread's state (empty: it never started, anything may start it).
    Run before a run is recorded and again where it is advanced, so a second namespace,
    a new cluster or another home over the same state never reports the old run's end as
    this task's.

    Raises:
        UsageError: the thread was started with a task other than ``task``.
    """
    stored = values.get("task") if values else None
    if task is None or not isinstance(stored, Mapping):
        return
    if task_digest(stored) != task_digest(task):
        raise UsageError(
            f"run {thread!r} already holds another task (its stored task differs from the "
            "one given); a run id names one task: start this one under another run id"
        )


def _resumed(answer: Any) -> Any:
    """A bound answer as the runtime reads it (its ``args_hash`` checked here already,
    kept where the approval decision carries it)."""
    if isinstance(answer, Mapping) and "args_hash" not in ApprovalDecision.model_fields:
        return {k: v for k, v in answer.items() if k != "args_hash"}
    return answer


def next_input(state: Any, step: Step, thread: str = "") -> Any:
    """The input ``step`` gives ``thread`` whose state is ``state`` (``_STAY``: none)."""
    pending = {i.id: i.value for i in state.interrupts}
    ended = not state.next and _status(state.values or {}) in TERMINAL
    if not state.values:
        if step.task is None:
            raise UsageError("the run has not started and no task was given to start it")
        return {"task": dict(step.task)}  # a cancelled one is ended CANCELLED at once
    check_task(thread, state.values, step.task)
    if step.cancel is not None:
        if pending:
            return Command(resume={k: refusal(v) for k, v in pending.items()})
        return _STAY if ended else None
    if pending:
        answers = dict(step.answers or {})
        shown = [{"id": k, "value": v} for k, v in pending.items()]
        if not answers or binding_problem(shown, answers):
            return _STAY  # still (or newly) waiting for a person
        return Command(resume={k: _resumed(v) for k, v in answers.items()})
    return _STAY if ended else None


def advance(graph: RunGraph, thread: str, step: Step, *, watch: Watch | None = None) -> RunView:
    """Decide what ``thread`` gets next from ``step``, run it there, report where it is.

    ``watch`` sees the run as it goes (streamed); without it the graph is invoked.
    """
    config = config_of(thread)
    inp = next_input(graph.get_state(config), step, thread)  # refused before a cancel is logged
    if step.cancel is not None:
        request_cancel(graph.run_store, thread, step.cancel)  # type: ignore[attr-defined]
    if inp is not _STAY:
        try:
            if watch is None:
                graph.invoke(inp, config)
            else:
                for mode, chunk in graph.stream(inp, config, stream_mode=["updates", "custom"]):
                    watch(mode, chunk)
        except Exception as exc:
            if not is_tool_bug(exc):
                raise
            # A tool's bug stopped the run, FAILED and recorded, its traceback logged: the
            # engine reports the run as it is (the view's error names the bug).
    return view_of(graph, thread)


def view_of(graph: RunGraph, thread: str, **known: Any) -> RunView:
    """Where ``thread`` is, from its last checkpoint (``known``: more RunView fields); a
    tool's own question carries its wait (:func:`~execgraph.engines.waits.tool_waits`)."""
    view = view_of_state(thread, graph.get_state(config_of(thread)), **known)
    store = getattr(graph, "run_store", None)
    if view.interrupts and store is not None:
        view = replace(view, interrupts=tool_waits(view.interrupts, store, thread))
    return view


def view_of_state(thread: str, state: Any, **known: Any) -> RunView:
    """A RunView of a checkpointed state (any object with ``values`` and ``interrupts``)."""
    values = dict(state.values or {})
    interrupts = [{"id": str(i.id), "value": _plain(i.value)} for i in state.interrupts]
    status = "WAITING" if interrupts else str(values.get("status") or "")
    return RunView(
        run_id=thread,
        status=status or ("RUNNING" if values else "NOT STARTED"),
        interrupts=interrupts,
        output=str(values.get("output") or ""),
        error=_message(values.get("error")),
        values=values,
        **known,
    )


def _message(error: Any) -> str:
    if isinstance(error, Mapping):
        return str(error.get("message") or json.dumps(error, default=str))
    return str(error or "")


def _plain(value: Any) -> dict[str, Any]:
    """An interrupt's value as JSON holds it (what JSON cannot hold, as text)."""
    plain = json.loads(json.dumps(value, default=str))
    return plain if isinstance(plain, dict) else {"text": str(plain)}
