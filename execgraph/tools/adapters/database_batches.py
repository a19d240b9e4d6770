"""Multi-row writes for :class:`~execgraph.tools.adapters.database.DatabaseAdapter`.

A batch write applies one declared statement to many rows. Rows are grouped in batches of
``batch_size``, and **each batch is its own transaction**: a batch commits whole or not at
all, and a failure in batch *k* leaves batches *1..k-1* durable. So a failure midway is
not a lie in either direction — not "failed" (rows did commit) and not "succeeded" — but
a ``partial`` outcome that names the committed row keys, the pending ones (the failed
batch and every later one), the typed error that stopped it, and a
:class:`~execgraph.state.contracts.RecoveryRef`: finish by calling the tool again with the
pending rows (they are in ``data["pending_rows"]``), undo by the committed keys.

A failure in the first batch commits nothing and is raised as the typed error it is, as
a single write would be. A lost response while a later batch commits leaves that batch
neither committed nor pending for sure: its keys stay in ``pending`` and ``stopped_by``
says the commit is unknown, so a finish re-checks them first.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from execgraph.state.contracts import Evidence, PartialProgress, RecoveryRef
from execgraph.state.errors import (
    ExecGraphError,
    ObservationStatus,
    TargetNotFound,
    ToolDeclarationError,
)
from execgraph.tools.adapters._db_backends import Backend, Statement
from execgraph.tools.invocation import AdapterOutput, InvokeContext

__all__ = ["batch_input_model", "batch_runner", "row_key"]


def batch_input_model(
    name: str, row_model: type[BaseModel], key: tuple[str, ...], max_rows: int
) -> type[BaseModel]:
    """``{"rows": [row, ...]}`` with 1..``max_rows`` rows and no other field."""
    missing = [k for k in key if k not in row_model.model_fields]
    if missing:
        raise ToolDeclarationError(f"{name}: key fields {missing} are not fields of row_model")
    rows_field: Any = (list[row_model], Field(min_length=1, max_length=max_rows))  # type: ignore[valid-type]
    return create_model(
        f"{name}_input", __config__=ConfigDict(extra="forbid", frozen=True), rows=rows_field
    )


def row_key(row: dict[str, Any], index: int, key: tuple[str, ...]) -> str:
    """The name a row goes by in ``committed`` / ``pending``: its key fields, or its index."""
    if not key:
        return f"row {index}"
    return "/".join(str(row.get(field)) for field in key)


def _partial(
    *,
    adapter: str,
    tool: str,
    ctx: InvokeContext,
    keys: list[str],
    rows: list[dict[str, Any]],
    done: int,
    exc: ExecGraphError,
    key: tuple[str, ...],
    evidence: list[Evidence],
) -> AdapterOutput:
    committed, pending = keys[:done], keys[done:]
    unknown = exc.status is ObservationStatus.UNKNOWN
    stopped = f"{exc.type}: {exc.message}"
    if unknown:
        stopped += " (the first pending batch may have committed: check it before finishing)"
    by = f"key ({', '.join(key)})" if key else "row position"
    recovery = RecoveryRef(
        kind="database",
        ref=f"database:{adapter}:{tool}:{ctx.call_id}",
        finish=f"call {tool} again with only the {len(pending)} pending row(s)",
        undo=f"the {len(committed)} committed row(s) are durable; compensate them by {by}",
    )
    data = {
        "rows_committed": len(committed),
        "rows_pending": len(pending),
        "committed": committed,
        "pending": pending,
        "pending_rows": rows[done:],
        "stopped_by": stopped,
        "recovery_ref": recovery.ref,
    }
    return AdapterOutput(
        data=data,
        committed=True,
        summary=(
            f"{tool} committed {len(committed)} of {len(keys)} row(s), then stopped "
            f"({exc.type}); recovery: {recovery.ref}"
        ),
        evidence=tuple(evidence),
        partial=PartialProgress(
            committed=committed, pending=pending, stopped_by=stopped, recovery_ref=recovery
        ),
    )


def batch_runner(
    *,
    adapter: str,
    tool: str,
    backend: Backend,
    stmt: Statement,
    key: tuple[str, ...],
    batch_size: int,
    expect_rows: bool,
    precheck: Callable[[InvokeContext], None],
) -> Callable[[BaseModel, InvokeContext], AdapterOutput]:
    """The ``run`` of a batch write tool: one transaction per batch, partial on a midway stop."""

    def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        precheck(ctx)
        rows: list[dict[str, Any]] = [r.model_dump() for r in getattr(args, "rows", [])]
        keys = [row_key(r, i, key) for i, r in enumerate(rows)]
        batches: Sequence[range] = [
            range(i, min(i + batch_size, len(rows))) for i in range(0, len(rows), batch_size)
        ]
        done = 0
        affected_total = 0
        evidence: list[Evidence] = []
        for number, batch in enumerate(batches):
            try:
                affected = 0
                with backend.transaction(read_only=False, ctx=ctx, tool=tool) as tx:
                    for i in batch:
                        _, _, count = tx.execute(stmt, stmt.bind(rows[i]), ctx.output_budget)
                        if expect_rows and count == 0:
                            raise TargetNotFound(f"{tool} matched no rows for {keys[i]}")
                        affected += count
                    ctx.check_fence()  # a stale owner's batch is rolled back
                    tx.commit()
            except ExecGraphError as exc:
                if done == 0:
                    raise  # nothing committed: an ordinary typed failure
                return _partial(
                    adapter=adapter, tool=tool, ctx=ctx, keys=keys, rows=rows, done=done,
                    exc=exc, key=key, evidence=evidence,
                )  # fmt: skip
            done = batch.stop
            affected_total += affected
            evidence.append(
                Evidence(
                    source_id=f"db:{adapter}:{tool}:{ctx.call_id}:batch{number}",
                    kind="db_write",
                    value=json.dumps({"rows_affected": affected, "rows": keys[batch.start : done]}),
                    call_id=ctx.call_id,
                    observed_at=time.time(),
                )
            )
        return AdapterOutput(
            data={"rows_committed": len(rows), "rows_affected": affected_total, "committed": keys},
            committed=True,
            summary=f"{tool} committed {len(rows)} row(s) in {len(batches)} transaction(s)",
            evidence=tuple(evidence),
        )

    return run
