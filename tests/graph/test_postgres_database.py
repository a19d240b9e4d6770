"""``build_graph(..., database=DSN)``: the execution store and LangGraph's ``PostgresSaver``
on one PostgreSQL database, shared by processes, set up once however many open it at once."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.types import Command

from execgraph.graph import build_graph
from execgraph.persistence.postgres import SharedPostgresSaver, open_database
from execgraph.state.errors import StoreError, UsageError
from execgraph.state.store.postgres import PostgresExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from tests.support.pg_runs import answer, build_app, cfg, effects, release, spawn, task

pytestmark = pytest.mark.timeout(300)


def _store_and_saver(app: Any) -> tuple[Any, Any]:
    return app.run_store, app.checkpointer


def test_one_dsn_opens_the_store_and_the_checkpointer_on_that_database(
    postgres_database: str, tmp_path: Path
) -> None:
    app = build_app(postgres_database, tmp_path)
    store, saver = _store_and_saver(app)
    assert isinstance(store, PostgresExecutionStore)
    assert isinstance(saver, SharedPostgresSaver)
    with psycopg.connect(postgres_database) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
            ).fetchall()
        }
    assert {"execgraph_executions", "execgraph_events", "checkpoints", "checkpoint_writes"} <= (
        tables
    )


def test_invoke_runs_to_completed_on_postgres(postgres_database: str, tmp_path: Path) -> None:
    app = build_app(postgres_database, tmp_path)
    assert app.invoke(task("sync"), cfg("sync"))["__interrupt__"]
    out = app.invoke(Command(resume="approve"), cfg("sync"))
    assert out["status"] == "COMPLETED"
    assert effects(tmp_path, "sync") == 1
    # the records and the checkpoints are in the database, not in the home
    assert [r.tool for r in app.run_store.committed("sync")] == ["pay"]
    assert not (tmp_path / "home" / "checkpoints.db").exists()
    assert not (tmp_path / "home" / "exec.db").exists()


def test_ainvoke_runs_to_completed_on_the_same_saver(
    postgres_database: str, tmp_path: Path
) -> None:
    app = build_app(postgres_database, tmp_path)

    async def run() -> dict[str, Any]:
        assert (await app.ainvoke(task("async"), cfg("async")))["__interrupt__"]
        return dict(await app.ainvoke(Command(resume="approve"), cfg("async")))

    assert asyncio.run(run())["status"] == "COMPLETED"
    # begun async, read sync: one saver, the same rows
    assert app.get_state(cfg("async")).values["status"] == "COMPLETED"
    assert effects(tmp_path, "async") == 1


def test_an_approval_is_resumed_from_another_process(
    postgres_database: str, tmp_path: Path
) -> None:
    app = build_app(postgres_database, tmp_path)
    assert app.invoke(task("cross"), cfg("cross"))["__interrupt__"]
    assert effects(tmp_path, "cross") == 0
    reply = answer(spawn(postgres_database, tmp_path, "cross", "approve"))
    assert reply == {"status": "COMPLETED", "paused": False}
    assert effects(tmp_path, "cross") == 1
    # this process sees the other's checkpoints and records
    assert app.get_state(cfg("cross")).values["status"] == "COMPLETED"
    [record] = app.run_store.committed("cross")
    assert record.tool == "pay" and record.result["outcome"] == "succeeded"


def test_state_history_is_read_from_postgres(postgres_database: str, tmp_path: Path) -> None:
    app = build_app(postgres_database, tmp_path)
    app.invoke(task("hist"), cfg("hist"))
    app.invoke(Command(resume="approve"), cfg("hist"))
    history = list(app.get_state_history(cfg("hist")))
    assert len(history) >= 3
    assert history[0].values["status"] == "COMPLETED"
    steps = [h.metadata["step"] for h in history if h.metadata]
    assert steps == sorted(steps, reverse=True)  # newest first, one per step
    # another process's graph on the same DSN reads the same history
    other = build_app(postgres_database, tmp_path)
    assert [h.config for h in other.get_state_history(cfg("hist"))] == [h.config for h in history]


@pytest.mark.timeout(600)
def test_six_processes_opening_a_fresh_database_at_once_all_succeed(
    postgres_database: str, tmp_path: Path
) -> None:
    threads = [f"open-{n}" for n in range(6)]
    procs = [spawn(postgres_database, tmp_path, thread, "open") for thread in threads]
    release(tmp_path, threads)  # the barrier: every process started, then one instant
    replies = [answer(p, 300.0) for p in procs]
    assert replies == [{"status": "COMPLETED"}] * 6
    assert [effects(tmp_path, f"open-{n}") for n in range(6)] == [1] * 6
    with psycopg.connect(postgres_database) as conn:
        migrations = conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v").fetchall()
        schema = conn.execute("SELECT version FROM execgraph_schema").fetchall()
    assert [v for (v,) in migrations] == list(range(len(migrations)))  # each made once
    assert len(schema) == 1


def test_database_with_store_or_checkpointer_is_a_usage_error(
    postgres_database: str, tmp_path: Path
) -> None:
    executions = SqliteExecutionStore(tmp_path / "exec.db")
    for extra in (
        {"store": executions},
        {"execution_store": executions},
        {"checkpointer": object()},
    ):
        with pytest.raises(UsageError, match="without store= or checkpointer="):
            build_graph(
                "react",
                model=ScriptedChatModel([]),
                tools=[],
                home=tmp_path,
                database=postgres_database,
                **extra,
            )
    with pytest.raises(UsageError, match="postgresql://"):
        build_graph("react", model=ScriptedChatModel([]), tools=[], home=tmp_path, database="x.db")


def test_an_unreachable_database_is_a_store_error_naming_it_without_password(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # How long opening keeps trying does not matter here, only what it says when it gives up.
    monkeypatch.setitem(open_database.__kwdefaults__, "connect_timeout_s", 1.0)
    with socket_free_port() as port:
        dsn = f"postgresql://alice:s3cret@127.0.0.1:{port}/ledgerdb?connect_timeout=2"
    with pytest.raises(StoreError) as info:
        build_graph(
            "react",
            model=ScriptedChatModel([]),
            tools=[],
            home=tmp_path,
            database=dsn,
            **{},
        )
    message = str(info.value)
    assert "ledgerdb on 127.0.0.1" in message and "s3cret" not in message


def test_a_failing_checkpoint_write_is_a_store_error_naming_the_database(
    postgres_database: str, tmp_path: Path
) -> None:
    app = build_app(postgres_database, tmp_path)
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute("DROP TABLE checkpoint_writes")
    with pytest.raises(StoreError, match=r"checkpoint database .* on "):
        app.invoke(task("broken"), cfg("broken"))


class socket_free_port:
    """A port nothing listens on (bound, then closed)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port: int = s.getsockname()[1]
        return port

    def __exit__(self, *exc: object) -> None:
        return None


def test_checkpoint_setup_from_many_sessions_at_once_runs_each_migration_once(
    postgres_database: str,
) -> None:
    """The saver's migrations alone, eight sessions released by one barrier: without the
    advisory lock two ``CREATE TABLE IF NOT EXISTS`` (or ``CREATE INDEX CONCURRENTLY``)
    at once collide, and a migration can be recorded twice."""
    from psycopg.rows import dict_row
    from psycopg_pool import ConnectionPool

    barrier = threading.Barrier(8)
    failures: list[BaseException] = []

    def one() -> None:
        pool: Any = ConnectionPool(
            postgres_database,
            min_size=1,
            max_size=2,
            kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
            open=True,
        )
        try:
            saver = SharedPostgresSaver(pool, dsn=postgres_database, where="test")
            barrier.wait(60)
            saver.setup()
        except BaseException as exc:
            failures.append(exc)
        finally:
            pool.close()

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert failures == []
    with psycopg.connect(postgres_database) as conn:
        migrations = [v for (v,) in conn.execute("SELECT v FROM checkpoint_migrations ORDER BY v")]
    assert migrations == list(range(len(SharedPostgresSaver.MIGRATIONS)))


def test_a_failing_store_write_is_a_store_error_naming_the_database(
    postgres_database: str, tmp_path: Path
) -> None:
    app = build_app(postgres_database, tmp_path)
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute("DROP TABLE execgraph_events CASCADE")
    with pytest.raises(StoreError, match=r"the execution store test_\w+ on 127\.0\.0\.1:\d+ could"):
        app.invoke(task("gone"), cfg("gone"))
