"""Database adapter: user-declared, parameterized statements on SQLite or PostgreSQL.

The model never writes SQL. A user declares each tool as a named statement with ``:name``
placeholders and a pydantic parameter model; the model only fills the parameters, which are
always bound by the driver, never spliced into the text. Read tools run in read-only
transactions (so a mis-declared write is refused by the database itself); on PostgreSQL,
where READ ONLY does not stop server-file, signal or dblink side effects, they also run as an
unprivileged role and their statement is analysed when declared (``_pg_read_role``,
``_pg_read_guard``); on SQLite they cannot load a cell longer than ``max_cell_bytes``. Write
tools run in one transaction and then read their effect back after the commit, so the
evidence proves what is durable rather than what the statement claimed.

Each call opens its own connection: calls arrive on executor pool threads, and a connection
per call keeps cancellation (``connection.cancel()`` / SQLite's progress handler) scoped to
exactly one call. PostgreSQL needs ``psycopg`` (``pip install "execgraph[postgres]"``).
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    ToolDeclarationError,
    VerificationError,
)
from execgraph.tools.adapters._db_backends import Backend, PostgresBackend, SqliteBackend, Statement
from execgraph.tools.adapters._pg_read_role import READ_ROLE
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.requirements import Requirement
from execgraph.tools.spec import Effect, ToolSpec

__all__ = ["DEFAULT_MAX_CELL_BYTES", "READ_ROLE", "DatabaseAdapter"]

_VERIFY_ROW_BUDGET = 16 * 1024
DEFAULT_MAX_CELL_BYTES = 1024 * 1024


def _digest(rows: list[dict[str, Any]]) -> str:
    """sha256 of a canonical JSON rendering: equal rows give equal evidence."""
    text = json.dumps(rows, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _strict_model(
    name: str, params_model: type[BaseModel] | None, names: tuple[str, ...]
) -> type[BaseModel]:
    """The tool's input model: the user's model with extra keys refused, or one built from
    the placeholders (scalars only) when the user gave none."""
    if params_model is None:
        scalar = str | int | float | bool | None
        fields: dict[str, Any] = {n: (scalar, ...) for n in names}
        return create_model(
            f"{name}_input", __config__=ConfigDict(extra="forbid", frozen=True), **fields
        )
    if params_model.model_config.get("extra") == "forbid":
        return params_model
    config = ConfigDict(**{**params_model.model_config, "extra": "forbid"})
    return type(f"{name}_input", (params_model,), {"model_config": config})


class DatabaseAdapter:
    """Declared SQL statements as tools, on one SQLite file or PostgreSQL database.

    Args:
        url: ``sqlite:///relative.db``, ``sqlite:////absolute.db`` or ``postgresql://...``.
            The URL (and any password in it) never appears in messages or lock keys.
        name: Adapter name; also the database lane lock key ``database:{name}`` of writes.
        max_cell_bytes: Longest string or blob a read may load (SQLite: in results and in
            filters alike); a longer one is refused with a PermanentError naming the limit
            before it is copied into memory.
        read_role: PostgreSQL role read tools run as (``SET LOCAL ROLE``). Unset, a
            privileged connection (superuser, or allowed to write server files or signal
            sessions) reads as :data:`READ_ROLE`, created once as a NOLOGIN member of
            ``pg_read_all_data``; an unprivileged connection reads as itself.

    Example:
        >>> db = DatabaseAdapter("sqlite:////tmp/shop.db")  # doctest: +SKIP
        >>> db.query_tool(name="find_orders",
        ...     sql="SELECT id, item FROM orders WHERE customer = :customer")  # doctest: +SKIP
    """

    def __init__(
        self,
        url: str,
        *,
        name: str = "database",
        max_cell_bytes: int = DEFAULT_MAX_CELL_BYTES,
        read_role: str | None = None,
    ) -> None:
        if not name.isidentifier():
            raise ToolDeclarationError(f"adapter name must be an identifier, got {name!r}")
        if max_cell_bytes < 1:
            raise ToolDeclarationError("max_cell_bytes must be a positive number of bytes")
        self.name = name
        self._backend: Backend
        if url.startswith("sqlite:"):
            self._backend = SqliteBackend(url, max_cell_bytes)
        elif url.startswith(("postgresql://", "postgres://")):
            self._backend = PostgresBackend(url, read_role)
        else:
            raise ToolDeclarationError("database url must start with sqlite:/// or postgresql://")
        self._tools: list[ToolSpec] = []
        self._closed = False
        # Every tool needs the database: a run that may use one checks it at admission.
        self._needs = (
            Requirement(f"database:{name}", f"the database {name!r}", self._backend.reachable),
        )

    def __repr__(self) -> str:
        return f"DatabaseAdapter(name={self.name!r}, dialect={self._backend.dialect!r})"

    # ------------------------------------------------------------------ declaration

    def query_tool(
        self,
        *,
        name: str,
        sql: str,
        params_model: type[BaseModel] | None = None,
        description: str | None = None,
        version: str = "1.0.0",
        max_rows: int = 10_000,
        timeout_s: float | None = None,
    ) -> ToolSpec:
        """Declare a read tool: ``sql`` runs in a read-only transaction.

        On PostgreSQL ``sql`` must be one SELECT / WITH / VALUES / TABLE / SHOW statement
        calling no side-effecting function (``dblink*``, ``lo_*``, ``pg_terminate_backend``,
        ``set_config``, ...), else ToolDeclarationError; it runs as an unprivileged role.

        Args:
            name: Tool name the model calls.
            sql: One statement with ``:name`` placeholders (never ``?`` or ``$1``).
            params_model: Pydantic model of the placeholders; built from them if omitted.
            description: What the model is told; defaults to a generic sentence.
            version: Exact tool version.
            max_rows: Row cap on top of the call's output budget.
            timeout_s: Default deadline when the request carries none.
        """
        stmt = self._backend.compile(sql, read=True)
        model = self._checked_model(name, params_model, stmt)

        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            self._precheck(ctx)
            params = stmt.bind(args.model_dump())
            with self._backend.transaction(read_only=True, ctx=ctx, tool=name) as tx:
                rows, truncated, _ = tx.execute(stmt, params, ctx.output_budget, max_rows)
            evidence = self._evidence(
                f"{name}:{_digest([params])[:16]}", "db_query_result", rows, truncated, ctx
            )
            return AdapterOutput(
                data={"rows": rows, "row_count": len(rows)},
                committed=None,
                summary=f"{len(rows)} row(s){' (truncated)' if truncated else ''}",
                evidence=(evidence,),
                truncated=truncated,
            )

        return self._add(
            ToolSpec(
                name=name,
                version=version,
                description=description or f"Run the declared read-only query {name}.",
                input_model=model,
                effect="read",
                run=run,
                timeout_s=timeout_s,
                requires=self._needs,
            )
        )

    def write_tool(
        self,
        *,
        name: str,
        sql: str,
        params_model: type[BaseModel] | None = None,
        verify_sql: str | None = None,
        description: str | None = None,
        version: str = "1.0.0",
        effect: Effect = "write",
        expect_rows: bool = False,
        timeout_s: float | None = None,
    ) -> ToolSpec:
        """Declare a write tool: ``sql`` runs in one transaction, then ``verify_sql`` reads back.

        Args:
            name: Tool name the model calls.
            sql: One statement with ``:name`` placeholders; may end in ``RETURNING ...``,
                whose first row's columns are also available to ``verify_sql``.
            params_model: Pydantic model of the placeholders; built from them if omitted.
            verify_sql: Read-after-write query run after the commit, in a read-only
                transaction; its row count and row hash become verified evidence.
            description: What the model is told.
            version: Exact tool version.
            effect: ``write`` or ``irreversible`` (a DELETE may deserve approval).
            expect_rows: Zero affected rows is TargetNotFound and nothing is committed.
            timeout_s: Default deadline when the request carries none.
        """
        if effect == "read":
            raise ToolDeclarationError("write_tool needs effect 'write' or 'irreversible'")
        stmt = self._backend.compile(sql)
        check = self._backend.compile(verify_sql, read=True) if verify_sql else None
        model = self._checked_model(name, params_model, stmt)

        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            self._precheck(ctx)
            values = args.model_dump()
            with self._backend.transaction(read_only=False, ctx=ctx, tool=name) as tx:
                returned, _, affected = tx.execute(stmt, stmt.bind(values), ctx.output_budget)
                if expect_rows and affected == 0:
                    raise TargetNotFound(f"{name} matched no rows; nothing was changed")
                ctx.check_fence()  # a stale owner's write is rolled back, never committed
                tx.commit()
            evidence = [
                Evidence(
                    source_id=f"db:{self.name}:{name}:{ctx.call_id}",
                    kind="db_write",
                    value=json.dumps({"rows_affected": affected}),
                    call_id=ctx.call_id,
                    verified=False,
                    observed_at=time.time(),
                )
            ]
            data: dict[str, Any] = {"rows_affected": affected, "returned": returned}
            summary = f"{affected} row(s) affected"
            if check is not None:
                try:
                    readback, rb_evidence = self._read_back(name, check, values, returned, ctx)
                except ExecGraphError as exc:
                    # Committed already: a failed read-back must not turn into a failure that
                    # invites a retry of the write. The verify stage can try again.
                    summary += f"; read-after-write did not run ({exc.type})"
                else:
                    data["verified_rows"] = readback
                    evidence.append(rb_evidence)
                    summary += f"; read-after-write found {len(readback)} row(s)"
            return AdapterOutput(
                data=data, committed=True, summary=summary, evidence=tuple(evidence)
            )

        def verify(args: BaseModel, output: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
            assert check is not None
            returned = (output.data or {}).get("returned") or []
            rows, ev = self._read_back(name, check, args.model_dump(), returned, ctx)
            if not rows:
                raise VerificationError(f"read-after-write for {name} found no rows")
            return [ev]

        def reconcile(args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
            # Only a positive read-back proves the write; absence cannot tell (the verify
            # query may need RETURNING values the lost response carried).
            assert check is not None
            try:
                rows, ev = self._read_back(name, check, args.model_dump(), [], ctx)
            except ExecGraphError:
                return None
            if not rows:
                return None
            return AdapterOutput(
                data={"verified_rows": rows}, committed=True, summary="found by read-back",
                evidence=(ev,),
            )  # fmt: skip

        return self._add(
            ToolSpec(
                name=name,
                version=version,
                description=description or f"Run the declared write statement {name}.",
                input_model=model,
                effect=effect,
                run=run,
                locks=(f"database:{self.name}",),
                requires=self._needs,
                verify=verify if check is not None else None,
                reconcile=reconcile if check is not None else None,
                timeout_s=timeout_s,
            )
        )

    def batch_write_tool(
        self,
        *,
        name: str,
        sql: str,
        row_model: type[BaseModel],
        key: str | tuple[str, ...] = (),
        batch_size: int = 1,
        max_rows: int = 1000,
        description: str | None = None,
        version: str = "1.0.0",
        effect: Effect = "write",
        expect_rows: bool = False,
        timeout_s: float | None = None,
    ) -> ToolSpec:
        """Declare a multi-row write: ``sql`` runs once per row, each batch its own transaction.

        The model passes ``{"rows": [...]}``. A failure after the first batch committed
        ends the call ``partial``: the committed and pending row keys, the error that
        stopped it and a recovery reference (:mod:`.database_batches`).

        Args:
            name: Tool name the model calls.
            sql: One statement with ``:name`` placeholders, all fields of ``row_model``.
            row_model: Pydantic model of one row.
            key: Field(s) that name a row in ``committed`` / ``pending`` (default: its index).
            batch_size: Rows per transaction (1: every row commits on its own).
            max_rows: Most rows one call may carry.
            description: What the model is told.
            version: Exact tool version.
            effect: ``write`` or ``irreversible``.
            expect_rows: A row that affects nothing stops the call (TargetNotFound).
            timeout_s: Default deadline when the request carries none.
        """
        from execgraph.tools.adapters.database_batches import batch_input_model, batch_runner

        if effect == "read":
            raise ToolDeclarationError("batch_write_tool needs effect 'write' or 'irreversible'")
        if batch_size < 1 or max_rows < 1:
            raise ToolDeclarationError("batch_size and max_rows must be positive")
        stmt = self._backend.compile(sql)
        self._checked_model(name, row_model, stmt)
        keys = (key,) if isinstance(key, str) else tuple(key)
        run = batch_runner(
            adapter=self.name, tool=name, backend=self._backend, stmt=stmt, key=keys,
            batch_size=batch_size, expect_rows=expect_rows, precheck=self._precheck,
        )  # fmt: skip
        return self._add(
            ToolSpec(
                name=name,
                version=version,
                description=description or f"Apply the declared write {name} to each row.",
                input_model=batch_input_model(name, row_model, keys, max_rows),
                effect=effect,
                run=run,
                locks=(f"database:{self.name}",),
                requires=self._needs,
                timeout_s=timeout_s,
            )
        )

    # ------------------------------------------------------------------ Adapter protocol

    def tools(self) -> list[ToolSpec]:
        """Every tool declared on this adapter so far."""
        return list(self._tools)

    def close(self) -> None:
        """Refuse further calls; connections are per call, so nothing stays open."""
        self._closed = True

    # ------------------------------------------------------------------ internals

    def _add(self, spec: ToolSpec) -> ToolSpec:
        if any(t.name == spec.name for t in self._tools):
            raise ToolDeclarationError(f"tool {spec.name!r} is already declared on this adapter")
        self._tools.append(spec)
        return spec

    @staticmethod
    def _checked_model(
        name: str, params_model: type[BaseModel] | None, stmt: Statement
    ) -> type[BaseModel]:
        model = _strict_model(name, params_model, stmt.names)
        missing = [n for n in stmt.names if n not in model.model_fields]
        if missing:
            raise ToolDeclarationError(
                f"{name}: placeholders {missing} are not fields of params_model"
            )
        return model

    def _precheck(self, ctx: InvokeContext) -> None:
        if self._closed:
            raise PermanentError(f"the database adapter {self.name} is closed")
        if ctx.cancel.is_set():
            raise ToolCancelled("the call was cancelled before the statement ran")
        if ctx.remaining_s() == 0.0:
            raise DeadlineExceeded("the deadline passed before the statement ran")

    def _read_back(
        self,
        tool: str,
        check: Statement,
        values: dict[str, Any],
        returned: list[dict[str, Any]],
        ctx: InvokeContext,
    ) -> tuple[list[dict[str, Any]], Evidence]:
        """Run the verify query after the commit, in its own read-only transaction."""
        merged = {**values, **(returned[0] if returned else {})}
        missing = [n for n in check.names if n not in merged]
        if missing:
            raise VerificationError(
                f"verify_sql of {tool} needs {missing}, which neither the arguments nor "
                "RETURNING provide"
            )
        params = check.bind(merged)
        with self._backend.transaction(read_only=True, ctx=ctx, tool=tool) as tx:
            rows, truncated, _ = tx.execute(check, params, _VERIFY_ROW_BUDGET)
        key = f"{tool}:{_digest([params])[:16]}"
        return rows, self._evidence(key, "db_read_after_write", rows, truncated, ctx)

    def _evidence(
        self,
        key: str,
        kind: str,
        rows: list[dict[str, Any]],
        truncated: bool,
        ctx: InvokeContext,
    ) -> Evidence:
        value = {"row_count": len(rows), "rows_sha256": _digest(rows), "truncated": truncated}
        return Evidence(
            source_id=f"db:{self.name}:{key}",
            kind=kind,
            value=json.dumps(value, sort_keys=True),
            call_id=ctx.call_id,
            # Read straight from the database by the runtime, not reported by a model.
            # An empty read-back proves nothing, so it is not verified.
            verified=bool(rows) or kind == "db_query_result",
            observed_at=time.time(),
        )
