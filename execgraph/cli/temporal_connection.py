"""Reaching Temporal from the command line: where the runs live, and talking to it.

One connection per command; Temporal's refusals (an unreachable server, an unknown
namespace or run, a run id already used) become one-line CliErrors, and a query or update
that no worker answers is reported after a bound, never waited on forever.
"""

from __future__ import annotations

import asyncio
import shlex
import socket
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from execgraph.cli.options import DEFAULT_NAMESPACE, exit_without_teardown
from execgraph.cli.runs import CliError
from execgraph.state.errors import UsageError

if TYPE_CHECKING:  # imported when used: the CLI starts without temporalio loaded
    from execgraph.temporal.client import TemporalRuns

__all__ = ["ANSWER_S", "Temporal", "ask", "engine_target", "reachable", "run_on"]

_T = TypeVar("_T")

ANSWER_S = 30.0
"""How long a query or update may wait for a worker to answer it: longer means no worker
polls the task queue (or none is alive), which is reported, not waited on forever."""


@dataclass(frozen=True)
class Temporal:
    """Where the runs live: a Temporal server, a task queue its workers poll, a namespace."""

    address: str
    task_queue: str
    namespace: str = DEFAULT_NAMESPACE

    def flags(self) -> str:
        """What a printed follow-up command needs to reach the same runs."""
        parts = ["--engine", "temporal", "--address", self.address]
        parts += ["--task-queue", self.task_queue]
        if self.namespace != DEFAULT_NAMESPACE:
            parts += ["--namespace", self.namespace]
        return " " + " ".join(shlex.quote(p) for p in parts)


def run_on(where: Temporal, go: Callable[[TemporalRuns], Coroutine[Any, Any, int]]) -> int:
    """Connect, run ``go(runs)``; Temporal's failures become one-line CliErrors.

    The error is raised only after ``asyncio.run`` returned and built fresh (no traceback
    holding the client): a Temporal client freed while Python shuts down aborts it.
    """

    reachable(where.address)
    exit_without_teardown()

    async def main() -> int | CliError:
        from execgraph.temporal import TemporalRuns

        try:
            runs = await TemporalRuns.connect(
                where.address, task_queue=where.task_queue, namespace=where.namespace
            )
        except RuntimeError as exc:  # the SDK's "Failed client connect: ..."
            return CliError(f"cannot reach the Temporal server at {where.address}: {exc}")
        try:
            return await go(runs)
        except UsageError as exc:
            return CliError(str(exc), code=getattr(exc, "code", 2))
        except Exception as exc:
            found = _translated(where, exc)
            if found is None:
                raise
            return found

    outcome = asyncio.run(main())
    if isinstance(outcome, CliError):
        raise outcome
    return outcome


def reachable(address: str) -> None:
    """A CliError unless something listens at ``address`` (HOST:PORT).

    Checked with a plain socket before the SDK connects: a failed SDK connect leaves
    threads behind that can crash the interpreter as it exits (seen with temporalio 1.x).
    """
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise CliError(f"--address {address!r} is not HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise CliError(f"cannot reach the Temporal server at {address}: {reason}") from None


def _translated(where: Temporal, exc: Exception) -> CliError | None:
    """Temporal's refusals as the CLI's bad input (None: an internal error)."""
    from temporalio.exceptions import WorkflowAlreadyStartedError
    from temporalio.service import RPCError, RPCStatusCode

    if isinstance(exc, WorkflowAlreadyStartedError):
        return CliError(
            f"run {exc.workflow_id!r} already exists on Temporal (a run id is used once); "
            f"give another --run-id"
        )
    if isinstance(exc, RPCError) and "namespace" in exc.message.lower():
        return CliError(
            f"Temporal at {where.address} refused namespace {where.namespace!r}: {exc.message}"
        )
    if isinstance(exc, RPCError) and exc.status == RPCStatusCode.NOT_FOUND:
        return CliError(f"Temporal knows no such run: {exc.message}")
    if isinstance(exc, RPCError):
        return CliError(f"Temporal refused: {exc.message}")
    return None


async def ask(where: Temporal, call: Awaitable[_T]) -> _T:
    """A query or update, bounded: one no worker answers is reported, not waited on."""
    try:
        return await asyncio.wait_for(call, ANSWER_S)
    except TimeoutError:
        raise CliError(
            f"no worker answered within {ANSWER_S:g} s on task queue {where.task_queue!r} "
            f"at {where.address}; start one with: execgraph worker --task-queue "
            f"{shlex.quote(where.task_queue)} --address {where.address}",
            code=1,
        ) from None


def engine_target(engine: str, address: str, task_queue: str, namespace: str) -> Temporal | None:
    """``--engine``: None for the embedded engine, else where the Temporal runs live."""
    if engine == "embedded":
        return None
    if engine != "temporal":
        raise CliError(f"unknown engine {engine!r}; choose embedded or temporal")
    return Temporal(address, task_queue, namespace)
