"""``execgraph.replay``: replay a recorded run from any execution store, from Python.

The mechanism is :func:`execgraph.replaying.replay_run` (a scripted model answering from
the recorded ``model.called`` events, tools answering from the recorded results). This is
its public door: it opens the store by URL when given one (a SQLite file or a
``postgresql://`` DSN, so a run recorded on either backend replays the same way), builds the
architecture by name, and defaults the task to the recorded goal. Runs on Temporal keep
their records in the worker's store: replay them with ``execgraph replay --engine
temporal`` (a worker replays them) or give this function that store's DSN.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from execgraph.graph.build import build_graph
from execgraph.replaying import ReplayReport, replay_run
from execgraph.state.errors import UsageError
from execgraph.state.events import EventType
from execgraph.state.store import open_store
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.registry import ToolLike

__all__ = ["replay"]


def _recorded_goal(store: ExecutionStore, run_id: str) -> str:
    admitted = store.events(run_id, types=(EventType.RUN_ADMITTED,))
    goal = next((e.payload.get("goal") for e in admitted if e.payload), None)
    if not isinstance(goal, str) or not goal:
        raise UsageError(f"run {run_id!r} has no recording in this store")
    return goal


def replay(
    run_id: str,
    *,
    tools: Iterable[ToolLike],
    store: ExecutionStore | str | Path,
    arch: str | Callable[..., Any] = "react",
    task: Mapping[str, Any] | None = None,
    policy: Any = None,
    checks: Mapping[str, Any] | None = None,
    workspace: Path | None = None,
    stages: Any = None,
) -> ReplayReport:
    """Re-run ``run_id``'s control logic with no model call and no side effect; report it.

    Every figure of the report is measured from the replay: the model calls it made and
    how many the recording answered, the effectful calls answered from the recording, the
    files of its workspace copy that changed (none, unless a tool wrote despite replay).

    Args:
        run_id: The recorded run.
        tools: The run's tools (their names, versions and effects; not what they do).
        store: The store holding the recording: an :class:`ExecutionStore`, a SQLite file
            path or ``sqlite:///`` URL, or a ``postgresql://`` DSN (opened and closed here).
        arch: The architecture's name, or a callable building the graph
            (``functools.partial(build_graph, "react", stages=...)``).
        task: The recorded task; defaults to ``{"goal": <the recorded goal>}``.
        policy: A policy to replay under (a changed policy shows up in the diff).
        checks: Extra success checks (a changed verifier shows up in the diff).
        workspace: The run's workspace; the verifier reads a copy of it.
        stages: The workflow stages, for ``arch="workflow"`` and ``"hybrid"``.

    Raises:
        UsageError: The store has no recording of ``run_id``.

    Example:
        >>> from execgraph import replay
        >>> report = replay("run-1", tools=[...], store="runs.db")  # doctest: +SKIP
        >>> report.same, report.diff  # doctest: +SKIP
    """
    opened = not isinstance(store, ExecutionStore)
    records = open_store(store) if not isinstance(store, ExecutionStore) else store
    try:
        wanted = dict(task) if task is not None else {"goal": _recorded_goal(records, run_id)}
        if callable(arch):
            build = arch
        else:
            build = partial(build_graph, arch, **({"stages": stages} if stages else {}))
        return replay_run(
            build, tools, records, run_id, wanted, policy=policy, checks=checks,
            workspace=workspace,
        )  # fmt: skip
    finally:
        if opened:
            records.close()
