"""A Temporal worker for execgraph runs: the workflows, the activities, shared state.

Start as many as you like, on as many machines, on one task queue
(``execgraph worker --task-queue Q --database postgresql://...``): Temporal hands each
advance to one of them, and all of them read and write the same execution store and
checkpoints. Without ``database`` the workers share one machine's embedded SQLite home.

A worker runs only what its operator configured: the tool sets and models registered in
its :class:`~execgraph.engines.graphs.Graphs` when it started (``execgraph worker --tools
pkg.mod:tools``). A client's spec names a registered tool set; a name the worker does not
know fails the run, and is never imported. A run's workspace is derived by the worker
from the run id, checked to be one safe file name (``Home.run_workspace``); nothing a
client sends names a directory.

Every worker must build the same graph for a spec: the same tool sets registered under
the same names, and one approval key (``$EXECGRAPH_APPROVAL_SECRET``, or a shared home),
or a token signed on one worker is refused on another. The same key signs a person's
answers (:mod:`execgraph.engines.temporal.approvers`): a worker accepts an answer only
when it is signed with it, so a client answering a run needs the key too.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from execgraph.engines.graphs import Graphs
from execgraph.engines.reading import replay_with
from execgraph.engines.temporal.activities import Advancer
from execgraph.engines.temporal.approvers import ApproverCheck
from execgraph.engines.temporal.messages import RunSpec
from execgraph.engines.temporal.workflow import ExecgraphLook, ExecgraphRun, Timing
from execgraph.replaying import ReplayReport
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import UsageError
from execgraph.state.home import Home
from execgraph.tools.registry import ToolLike

__all__ = ["SharedGraphs", "make_worker", "sandbox_runner", "serve"]

_CACHED = 64


class SharedGraphs:
    """The graphs of the runs a worker advances, over one store and one checkpointer.

    ``graphs`` are the tool sets and models the operator registered. ``database`` is a
    ``postgresql://`` DSN (every worker on every machine names the same one); without it
    the worker uses the SQLite files under ``home``, and the runs' workspaces are under
    ``home`` either way. The store and the checkpointer are opened once per worker;
    graphs are compiled per spec and kept for the last 64 specs.
    """

    def __init__(
        self, graphs: Graphs, *, database: str | None = None, home: str | Path | None = None
    ) -> None:
        self.graphs = graphs
        self.home = Home.at(home)
        self.database = database
        self._shared: dict[str, Any] = {}
        self._graphs: OrderedDict[tuple[Any, ...], RunGraph] = OrderedDict()
        self._lock = threading.Lock()

    def workspace(self, spec: RunSpec) -> Path:
        """The run's workspace: derived from its id, which must be one safe file name."""
        return self.home.run_workspace(spec.run_id)

    def __call__(self, spec: RunSpec) -> RunGraph:
        workspace = self.workspace(spec)  # refuses an id that is no safe file name
        self.graphs.tool_set(spec.tools)  # refuses a tool set nobody registered
        key = (spec.arch, spec.model, spec.tools, str(workspace))
        with self._lock:
            if key in self._graphs:
                self._graphs.move_to_end(key)
                return self._graphs[key]
            graph = self.graphs.build(spec, workspace=workspace, **self._state())
            self._graphs[key] = graph
            while len(self._graphs) > _CACHED:
                self._graphs.popitem(last=False)
            return graph

    def _state(self) -> dict[str, Any]:
        if not self._shared:
            store: Any
            saver: Any
            if self.database is not None:
                from execgraph.persistence.postgres import open_database

                store, saver = open_database(self.database)
            else:
                from execgraph.persistence.saver import open_embedded_saver
                from execgraph.state.store.sqlite import SqliteExecutionStore

                self.home.make()
                store = SqliteExecutionStore(self.home.exec_db)
                saver = open_embedded_saver(self.home.checkpoints_db)
            self._shared = {"home": self.home.root, "store": store, "checkpointer": saver}
        return self._shared

    def tools(self, spec: RunSpec) -> list[ToolLike]:
        """The tools of ``spec``'s run (what its trace prices calls by)."""
        return self.graphs.tools(spec, self.workspace(spec))

    def replay(self, spec: RunSpec) -> ReplayReport:
        """Replay ``spec``'s recorded run on this worker's records."""
        with self._lock:
            store = self._state()["store"]
        return replay_with(spec, self.graphs.tool_set(spec.tools), store, self.workspace(spec))


def sandbox_runner() -> SandboxedWorkflowRunner:
    """Temporal's workflow sandbox with execgraph passed through whole: the workflow
    imports only its messages, and they are the worker's own modules, imported once (a
    replayer checking recorded histories uses the same runner)."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules("execgraph")
    return SandboxedWorkflowRunner(restrictions=restrictions)


def make_worker(
    client: Client,
    task_queue: str,
    graphs: Callable[[RunSpec], RunGraph],
    *,
    max_concurrent: int = 16,
    heartbeat_s: float | None = None,
    approval_key: bytes | None = None,
) -> Worker:
    """A Temporal ``Worker`` running execgraph's workflows and activities.

    ``graphs(spec)`` gives the run's compiled graph: a :class:`SharedGraphs` over the
    tool sets you registered, or a function of yours building one on shared state (it
    decides alone what a spec may run). ``max_concurrent`` advances run at once, each on
    a thread of its own. ``heartbeat_s``: how often a running advance heartbeats
    (default: a third of the workflow's heartbeat timeout). ``approval_key``: the key
    answers must be signed with (default: the approval key of the home of ``graphs``, a
    :class:`SharedGraphs`, else of the default home; ``$EXECGRAPH_APPROVAL_SECRET`` first).
    """
    beat = heartbeat_s if heartbeat_s is not None else Timing.heartbeat.total_seconds() / 3
    advancer = Advancer(graphs, heartbeat_s=beat, threads=max_concurrent)
    if approval_key is None:
        home = graphs.home if isinstance(graphs, SharedGraphs) else Home.at()
        approval_key = home.secret()
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[ExecgraphRun, ExecgraphLook],
        activities=[advancer.advance, advancer.look],
        workflow_runner=sandbox_runner(),
        max_concurrent_activities=max_concurrent,
        interceptors=[ApproverCheck(approval_key)],
    )


async def serve(
    task_queue: str,
    *,
    graphs: Graphs,
    address: str = "127.0.0.1:7233",
    namespace: str = "default",
    database: str | None = None,
    home: str | Path | None = None,
    max_concurrent: int = 16,
    heartbeat_s: float | None = None,
    ready: Callable[[], None] | None = None,
) -> None:
    """Run one worker serving ``graphs`` until SIGINT/SIGTERM (or the task is cancelled).

    ``ready`` is called once the worker polls its task queue.
    """
    client = await Client.connect(address, namespace=namespace)
    await _namespace_exists(client, namespace)  # before "ready", not after a failed poll
    shared = SharedGraphs(graphs, database=database, home=home)
    shared.home.make()  # the worker's home: private from the start
    worker = make_worker(
        client, task_queue, shared, max_concurrent=max_concurrent, heartbeat_s=heartbeat_s
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        if ready is not None:
            ready()
        await stop.wait()


async def _namespace_exists(client: Client, namespace: str) -> None:
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest
    from temporalio.service import RPCError, RPCStatusCode

    try:
        await client.workflow_service.describe_namespace(
            DescribeNamespaceRequest(namespace=namespace)
        )
    except RPCError as exc:
        if exc.status == RPCStatusCode.NOT_FOUND:
            raise UsageError(f"Temporal has no namespace {namespace!r}") from None
        raise
