"""The embedded engine: runs driven in this process, their state in a home or PostgreSQL.

A run's checkpoints and execution log are in the home's SQLite files (named by
:class:`~execgraph.state.home.Home`), or in one PostgreSQL database (``database=``, a
DSN), with the home keeping the run's record (:mod:`execgraph.engines.embedded.records`)
and its own workspace (``Home.run_workspace``, derived from the validated id). Any later process
that names the same home (and database) continues the run: the record names the graph,
the checkpoints say where the run is, :func:`~execgraph.engines.advance.advance` decides
what it gets next. Runs started from Python with the embedded defaults are read from the
same records (listed, shown, traced, cancelled), but only their own graph continues them.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from execgraph.engines.advance import (
    Step,
    Watch,
    advance,
    check_task,
    config_of,
    view_of,
    view_of_state,
)
from execgraph.engines.answers import approvals, check_answers
from execgraph.engines.embedded.foreign import (
    PYTHON_ARCH,
    PythonRun,
    Records,
    SavedState,
    continue_in_python,
    home_checkpoint,
    read_home_state,
    read_state,
)
from execgraph.engines.embedded.records import (
    RunMeta,
    check_database,
    database_label,
    ensure_not_driven,
    list_metas,
    load_meta,
    owned,
    owner_alive,
    save_meta,
)
from execgraph.engines.graphs import Graphs
from execgraph.engines.reading import RunTrace, replay_with, trace_of
from execgraph.engines.runs import Answerer, RunRow
from execgraph.engines.spec import Answers, RunSpec, RunView
from execgraph.engines.waits import expired_answers
from execgraph.state.errors import UsageError
from execgraph.state.home import Home, check_run_id, default_home

__all__ = ["EmbeddedRuns"]

_MAX_ROUNDS = 100  # pauses answered in one call before giving up (a loop guard)


class EmbeddedRuns:
    """Runs of one home (and, with ``database``, of one PostgreSQL database).

    ``graphs`` are the tool sets and models runs may name; ``watch`` sees each advance as
    it streams (progress, a running tool's output).
    """

    def __init__(
        self,
        home: Home | Path | str | None = None,
        *,
        database: str | None = None,
        graphs: Graphs | None = None,
        watch: Watch | None = None,
    ) -> None:
        self.home = home if isinstance(home, Home) else Home.at(home)
        self.database = check_database(database)
        self.graphs = graphs if graphs is not None else Graphs()
        self.watch = watch
        self._shared: tuple[Any, Any] | None = None  # PostgreSQL: (store, saver), opened once
        self._sqlite: Any = None  # the home's execution store, opened once when read

    # ------------------------------------------------------------------ where things are

    @property
    def flags(self) -> str:
        """What a printed follow-up command needs to find this home again."""
        default = default_home().expanduser().resolve()
        home = self.home.root
        return "" if home == default else f" --home {shlex.quote(str(home))}"

    @property
    def where(self) -> str:
        """Where these runs are, in words."""
        label = database_label(self.database)
        return f"under {self.home.root}" + (f" and in PostgreSQL {label}" if label else "")

    def _state(self) -> tuple[Any, Any] | None:
        """The PostgreSQL store and checkpointer (None: the home's SQLite files)."""
        if self.database is None:
            return None
        if self._shared is None:
            from execgraph.persistence.postgres import open_database

            self._shared = open_database(self.database)
        return self._shared

    def _store(self) -> Any:
        shared = self._state()
        if shared is not None:
            return shared[0]
        if self._sqlite is None:
            from execgraph.state.store.sqlite import SqliteExecutionStore

            self._sqlite = SqliteExecutionStore(self.home.exec_db)
        return self._sqlite

    def close(self) -> None:
        """Close the stores this engine opened to read (the graphs' own stay with them)."""
        if self._sqlite is not None:
            self._sqlite.close()
            self._sqlite = None
        if self._shared is not None:
            store, saver = self._shared
            saver.close()
            store.close()
            self._shared = None

    def __enter__(self) -> EmbeddedRuns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ runs and graphs

    def known(self, run_id: str) -> RunMeta | PythonRun:
        """The record of ``run_id``, or what the records hold of a run started from
        Python; an unknown run is bad input."""
        meta = load_meta(self.home, run_id)
        if meta is not None:
            return meta
        found = Records(self.home, self.database).run(run_id)
        if found is None:
            raise UsageError(
                f"unknown run id {run_id!r} in {self.home.root} "
                f"(list runs with: execgraph runs{self.flags})"
            )
        return found

    def _meta(self, run_id: str) -> RunMeta:
        run = self.known(run_id)
        if isinstance(run, PythonRun):
            raise UsageError(
                f"run {run_id!r} was started from Python, not by this engine: its graph "
                "(architecture, tools, model) is not recorded, so it cannot be rebuilt here; "
                f"{continue_in_python(run_id)} (execgraph status and trace show it)"
            )
        self._same_database(run)
        return run

    def _same_database(self, meta: RunMeta) -> None:
        """Refuse to continue a run on state other than the state it started on."""
        given = database_label(self.database)
        if meta.database == given:
            return
        if meta.database is None:
            raise UsageError(
                f"run {meta.run_id!r} keeps its state in the SQLite files of its home, not in "
                f"PostgreSQL {given}; drop --database (and unset EXECGRAPH_DATABASE)"
            )
        if given is None:
            raise UsageError(
                f"run {meta.run_id!r} keeps its state in PostgreSQL {meta.database}; give its "
                "DSN with --database or EXECGRAPH_DATABASE"
            )
        raise UsageError(
            f"run {meta.run_id!r} keeps its state in PostgreSQL {meta.database}, not {given}"
        )

    def workspace(self, run_id: str) -> Path:
        """A run's workspace, derived from its validated id."""
        return self.home.run_workspace(run_id)

    def graph(self, spec: RunSpec, *, read_only: bool = False) -> Any:
        """Compile ``spec``'s graph on this engine's state.

        ``read_only`` swaps the model for an empty script: reading state needs the graph's
        shape, not a provider (whose API key may be missing here); a model call would
        fail loudly rather than spend anything.
        """
        extra: dict[str, Any] = {"home": self.home.make().root}  # before the workspace in it
        shared = self._state()
        if shared is not None:
            extra.update(store=shared[0], checkpointer=shared[1])
        if read_only:
            from execgraph.testing import ScriptedChatModel

            extra["model"] = ScriptedChatModel(replies=[])
        return self.graphs.build(spec, workspace=self.workspace(spec.run_id), **extra)

    def _view(self, meta: RunMeta, graph: Any) -> RunView:
        return view_of(
            graph,
            meta.run_id,
            spec=meta.spec,
            driver=owner_alive(self.home, meta.run_id),
            workspace=str(self.workspace(meta.run_id)),
        )

    def _drive(self, meta: RunMeta, graph: Any, step: Step, answerer: Answerer | None) -> RunView:
        """Advance the run here, answering what ``answerer`` answers, to its next pause
        no one here answers or to its end."""
        with owned(self.home, meta.run_id):
            advance(graph, meta.run_id, step, watch=self.watch)
            view = self._view(meta, graph)
            for _ in range(_MAX_ROUNDS):
                if not view.waiting or answerer is None:
                    break
                answers = answerer(view)
                if not answers:
                    break
                advance(graph, meta.run_id, Step(answers=answers), watch=self.watch)
                view = self._view(meta, graph)
        return self._view(meta, graph)

    # ------------------------------------------------------------------ Runs

    def check(self, spec: RunSpec) -> None:
        """Refuse a spec this engine cannot start: an unknown architecture or tool set (a
        reference is imported and checked), a bad or used run id."""
        from execgraph.graph.build import ARCHITECTURES

        if spec.arch not in ARCHITECTURES:
            raise UsageError(
                f"unknown architecture {spec.arch!r}; choose one of {', '.join(ARCHITECTURES)}"
            )
        self.graphs.tool_set(spec.tools)
        check_run_id(spec.run_id)
        if load_meta(self.home, spec.run_id) is not None:
            raise UsageError(
                f"run {spec.run_id!r} already exists; continue it with: "
                f"execgraph resume {spec.run_id}{self.flags}"
            )

    def start(self, spec: RunSpec, *, answerer: Answerer | None = None) -> RunView:
        """Record ``spec`` and drive its run here; a run id used before (here, or for
        another task on the same state) is refused."""
        self.check(spec)
        meta = RunMeta.of(spec, self.workspace(spec.run_id), database_label(self.database))
        graph = self.graph(spec)
        # Another home, or a run started from Python, over the same state: its thread
        # already holds a task (refused before this run is recorded).
        check_task(spec.run_id, graph.get_state(config_of(spec.run_id)).values, spec.task)
        save_meta(self.home, meta)
        if self.watch is not None:
            self.watch(
                "started", RunView(spec.run_id, "RUNNING", spec=spec, workspace=meta.workspace)
            )
        return self._drive(meta, graph, Step(task=spec.task), answerer)

    def answer(self, run_id: str, answers: Answers, *, answerer: Answerer | None = None) -> RunView:
        """Answer the run's pending interrupts and drive it on here."""
        meta = self._meta(run_id)
        ensure_not_driven(self.home, run_id)
        graph = self.graph(meta.spec)
        check_answers(self._view(meta, graph), answers)
        return self._drive(meta, graph, Step(answers=answers), answerer)

    def resume(self, run_id: str, *, answerer: Answerer | None = None) -> RunView:
        """Continue the run here (a killed one from its last checkpoint; a paused one
        with ``answerer``'s answers, else it stays paused)."""
        meta = self._meta(run_id)
        ensure_not_driven(self.home, run_id)
        graph = self.graph(meta.spec)
        view = self._view(meta, graph)
        if view.waiting:
            answers = answerer(view) if answerer is not None else None
            if not answers:  # a wait past its deadline ends by its expiry policy
                answers = expired_answers(view, graph.run_store.clock())
            if not answers:
                return view
            return self._drive(meta, graph, Step(answers=answers), answerer)
        if not view.ended and self.watch is not None:
            self.watch("resuming", view)
        return self._drive(meta, graph, Step(task=meta.task), answerer)

    def cancel(
        self, run_id: str, reason: str = "cancelled on request", *, call_id: str | None = None
    ) -> RunView:
        """Log a cancel request; a run no live process drives is ended here, now (a run
        started from Python stops when its own graph runs next). With ``call_id``, only
        that call is cancelled (:mod:`execgraph.engines.call_cancel`) and the run goes on;
        a call pending approval is refused, and the run is driven on here."""
        from execgraph.nodes.cancel import request_cancel

        run = self.known(run_id)
        if call_id is not None:
            return self._cancel_call(run, call_id, reason)
        if isinstance(run, PythonRun):
            store = self._store()
            request_cancel(store, run_id, reason=reason)
            return self.status(run_id)
        self._same_database(run)
        graph = self.graph(run.spec)
        request_cancel(graph.run_store, run_id, reason=reason)
        view = self._view(run, graph)
        if view.driver is not None or view.ended:
            return view
        return self._drive(run, graph, Step(task=run.task, cancel=reason), None)

    def _cancel_call(self, run: RunMeta | PythonRun, call_id: str, reason: str) -> RunView:
        from execgraph.engines.call_cancel import approval_refusal, cancel_call, pending_approval

        view = self.status(run.run_id)
        waiting = pending_approval(view.interrupts, call_id)
        if waiting is not None and isinstance(run, RunMeta):
            return self.answer(run.run_id, {waiting: approval_refusal(reason)})
        if isinstance(run, RunMeta):
            self._same_database(run)
            store = self.graph(run.spec, read_only=True).run_store
        else:
            store = self._store()
        cancel_call(store, run.run_id, call_id, reason)
        return self.status(run.run_id)

    def status(self, run_id: str) -> RunView:
        """Where the run is (read from its checkpoint; nothing runs)."""
        run = self.known(run_id)
        if isinstance(run, RunMeta):
            self._same_database(run)
            return self._view(run, self.graph(run.spec, read_only=True))
        state = self._saved(run_id)
        if not state.values and run.finished:
            state = SavedState({"status": run.finished})  # ran without a checkpointer
        return view_of_state(run_id, state, driver=owner_alive(self.home, run_id))

    def approval(self, run_id: str, call_id: str) -> dict[str, Any]:
        """The pending approval request of ``call_id``, as the run's checkpoint holds it."""
        (found,) = approvals(self.status(run_id), call_id)
        return dict(found["value"])

    def _saved(self, run_id: str) -> SavedState:
        shared = self._state()
        if shared is not None:
            return read_state(shared[1], run_id)
        return read_home_state(self.home, run_id)

    def _values(self, run: RunMeta | PythonRun) -> dict[str, Any]:
        if isinstance(run, PythonRun):
            return dict(self._saved(run.run_id).values)
        graph = self.graph(run.spec, read_only=True)
        return dict(graph.get_state(config_of(run.run_id)).values)

    def events(self, run_id: str, after: int = 0) -> list[Any]:
        """The run's logged events, from the ``after``-th on."""
        run = self.known(run_id)
        if isinstance(run, RunMeta):
            self._same_database(run)
        return list(self._store().events(run_id)[after:])

    def trace(self, run_id: str) -> RunTrace:
        """The run's events, evidence and final state values, and its tools' costs."""
        run = self.known(run_id)
        tools = None
        if isinstance(run, RunMeta):
            self._same_database(run)
            tools = self.graphs.tools(run.spec, self.workspace(run_id))
        return trace_of(self._store(), run_id, self._values(run), tools)

    def replay(self, run_id: str) -> Any:
        """Replay the recorded run with the tools and checks it ran with."""
        meta = self._meta(run_id)
        tool_set = self.graphs.tool_set(meta.tools)
        return replay_with(meta.spec, tool_set, self._store(), self.workspace(run_id))

    def reconcile(
        self, run_id: str, call_id: str, *, happened: bool, decided_by: str, note: str = ""
    ) -> Any:
        """Record a person's verdict on a call whose outcome is unknown."""
        from execgraph.nodes.executor import reconcile

        run = self.known(run_id)
        if isinstance(run, RunMeta):
            self._same_database(run)
        return reconcile(
            self._store(), run_id, call_id, happened=happened, decided_by=decided_by, note=note
        )

    def runs(self) -> list[RunRow]:
        """The runs this engine started, then those started from Python, oldest first."""
        rows = []
        metas = list_metas(self.home)
        here = database_label(self.database)
        for meta in metas:
            if meta.database != here and meta.database is not None:
                shown = f"on PostgreSQL {meta.database} (execgraph status {meta.run_id} --database)"
            elif meta.database != here:
                shown = f"in the SQLite files of {self.home.root}"
            else:
                shown = self._listed_status(meta.run_id, "NOT STARTED")
            rows.append(RunRow(meta.run_id, meta.arch, meta.model, meta.created, shown))
        for run in Records(self.home, self.database).runs({m.run_id for m in metas}):
            shown = self._listed_status(run.run_id, run.finished or "UNKNOWN")
            rows.append(RunRow(run.run_id, PYTHON_ARCH, run.model, run.created, shown))
        return rows

    def _listed_status(self, run_id: str, otherwise: str) -> str:
        """A listed run's status from its last checkpoint (no graph is built)."""
        saved = self._checkpoint(run_id)
        if saved is None:
            return otherwise
        status, waiting = saved
        return "WAITING" if waiting else status or otherwise

    def _checkpoint(self, run_id: str) -> tuple[str | None, bool] | None:
        config: Any = {"configurable": {"thread_id": run_id, "checkpoint_ns": ""}}
        shared = self._state()
        if shared is not None:
            found = shared[1].get_tuple(config)
        else:
            found = home_checkpoint(self.home, config)
        if found is None:
            return None
        status = found.checkpoint.get("channel_values", {}).get("status")
        waiting = any(write[1] == "__interrupt__" for write in found.pending_writes or ())
        return (str(status) if status else None), waiting
