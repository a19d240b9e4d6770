"""ExecutorMiddleware recording in PostgreSQL, named by a DSN."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langgraph.types import Command

from execgraph.state.store.postgres import PostgresExecutionStore
from tests.middleware.agents import Effects, agent, approval_checkpoint, call, reply

CONFIG: dict[str, Any] = {"configurable": {"thread_id": "thread-pg"}}
EMAIL = reply(call("send_email", "call_mail", to="ann@example.org", body="hello"))


def test_a_dsn_records_in_postgresql_and_a_rerun_replays(
    tmp_path: Path, postgres_database: str
) -> None:
    effects = Effects()
    app = agent(effects, [EMAIL, "sent it", "sent it"], home=tmp_path, store=postgres_database)
    app.invoke({"messages": [("user", "email Ann")]}, CONFIG)
    app.invoke(Command(resume="approve"), CONFIG)
    app.invoke(None, approval_checkpoint(app, CONFIG))

    assert effects.emails == [{"to": "ann@example.org", "body": "hello"}]
    store = PostgresExecutionStore(postgres_database)
    try:
        [record] = store.committed("thread-pg")
        assert record.tool == "send_email" and record.result is not None
        assert record.result["outcome"] == "succeeded"
    finally:
        store.close()
