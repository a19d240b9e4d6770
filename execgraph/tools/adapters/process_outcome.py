"""What a child's end means: its data and evidence, and the error the model is told.

The model must see a clear status, and a status must never claim more than was observed:
a child killed mid-way (or one that left a daemon behind) may have acted part-way, so a
write's outcome is then unknown, never a success. Every error raised here carries what
was observed (an :class:`AdapterOutput` with the bounded streams and the evidence), read
with :func:`~execgraph.tools.invocation.output_of`. The whole mapping is the table in
:mod:`execgraph.tools.adapters.process`.
"""

from __future__ import annotations

import time
from typing import Literal

from execgraph.state.contracts import Evidence
from execgraph.state.errors import PermanentError, ResponseLostError, ToolCancelled, TransientError
from execgraph.tools.adapters._streams import store_artifact
from execgraph.tools.adapters.process_supervisor import Ended
from execgraph.tools.invocation import AdapterOutput, InvokeContext, attach_output
from execgraph.tools.spec import Effect

__all__ = ["ProcessExitError", "ProcessLeftoverError", "outcome"]


class ProcessExitError(PermanentError):
    """The program ran to completion and reported failure with a non-zero exit status."""

    def __init__(self, message: str, *, exit_code: int, output: AdapterOutput) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output


class ProcessLeftoverError(ProcessExitError):
    """The program exited but left descendants running (a daemon): they were killed, and
    the call is not a success, since what they were doing was cut short."""


def outcome(
    code: int,
    program: str,
    argv: list[str],
    ctx: InvokeContext,
    ended: Ended,
    *,
    effect: Effect,
    on_nonzero: Literal["error", "data"],
) -> AdapterOutput:
    """The output of a child that exited with ``code`` (negative: killed by a signal).

    Raises:
        ProcessExitError: a non-zero exit status (unless ``on_nonzero="data"``).
        ProcessLeftoverError: exit status 0, but descendants were still running.
        ToolCancelled: cancelled while it ran.
        ResponseLostError: out of time while a write ran (the outcome is unknown).
        TransientError: out of time while a read ran.
    """
    out, err = ended.readers
    stopped, leftover = ended.stopped, ended.leftover
    data = {
        "program": program,
        "args": argv,
        "exit_code": code,
        "stopped": stopped,
        "leftover_processes": leftover,
        "stdout": out.text(),
        "stderr": err.text(),
        "stdout_bytes": out.total,
        "stderr_bytes": err.total,
        "stdout_truncated": out.truncated,
        "stderr_truncated": err.truncated,
    }
    now = time.time()
    evidence = [
        Evidence(
            source_id=f"process:{ctx.call_id}:exit_code",
            kind="exit_code",
            value=str(code),
            call_id=ctx.call_id,
            verified=stopped is None and not leftover,
            observed_at=now,
        )
    ]
    for reader in ended.readers:
        evidence.append(
            Evidence(
                source_id=f"process:{ctx.call_id}:{reader.stream}",
                kind=f"{reader.stream}_sha256",
                value=reader.hexdigest(),
                ref=store_artifact(ctx, reader.kept_bytes(), reader.stream),
                call_id=ctx.call_id,
                verified=stopped is None and not leftover and not reader.abandoned,
                observed_at=now,
            )
        )
    acted = effect != "read"
    name = program
    whole = stopped is None and not leftover
    output = AdapterOutput(
        data=data,
        # Killed mid-way (it, or a daemon it left), a write may have acted part-way.
        committed=acted if whole else (None if acted else False),
        summary=f"{name} exited with status {code}" if stopped is None else f"{name} {stopped}",
        evidence=tuple(evidence),
        truncated=out.truncated or err.truncated,
    )
    if stopped is None and ((code == 0 and not leftover) or on_nonzero == "data"):
        return output
    error: Exception
    if stopped == "cancelled":
        error = ToolCancelled(
            f"cancelled while {name!r} was running; its process tree was killed"
            + ("; effects it had already made are unknown" if acted else "")
        )
    elif stopped == "deadline" and acted:
        error = ResponseLostError(
            f"{name!r} ran out of time and its process tree was killed; it may have "
            "acted part-way, so the outcome is unknown and must be reconciled"
        )
    elif stopped == "deadline":
        error = TransientError(f"{name!r} ran out of time and was killed")
    elif code == 0:
        error = ProcessLeftoverError(
            f"{name!r} exited with status 0 but left {leftover} process(es) running; "
            "they were killed, so the call did not complete",
            exit_code=code,
            output=output,
        )
    else:
        how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        error = ProcessExitError(f"{name!r} {how}", exit_code=code, output=output)
    raise attach_output(error, output)
