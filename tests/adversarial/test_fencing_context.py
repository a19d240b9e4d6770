"""The fencing token reaches the tool: a call's InvokeContext carries its record's fence,
and once another worker took the call over (its lease lapsed while this worker stalled)
the tool's ``check_fence()`` refuses the effect, its cancel signal is set, and this
worker commits nothing (``FencedOut``): the record stays the new owner's.
"""

from __future__ import annotations

import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from execgraph.graph import build_graph
from execgraph.nodes.executor import record_lease
from execgraph.state.errors import FencedOut
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import InvokeContext, tool_spec

OTHER = "elsewhere@boot@1/4242/99/abcdef012345"  # a live worker on another machine
LEASE_S = 0.3


def test_a_tool_taken_over_while_it_stalled_is_refused_at_its_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_lease, "LEASE_S", LEASE_S)
    monkeypatch.setattr(record_lease, "RENEW_EVERY_S", 3600.0)  # a stalled worker renews nothing
    home = tmp_path / "home"
    seen: dict[str, Any] = {}

    @tool_spec(effect="write", version="1.0.0", retry=None)
    def book(entry: str, ctx: InvokeContext) -> str:
        """Book an entry."""
        seen["fence"], seen["held"] = ctx.fence, ctx.holds_fence()
        time.sleep(LEASE_S + 0.2)  # stalled past its lease; another worker takes it over
        with SqliteExecutionStore(home / "exec.db") as other:
            taken = other.take_over(
                ctx.idempotency_key, OTHER, attempt_id="other", lease_s=60, fence=ctx.fence
            )
        seen["taken"] = taken
        try:
            ctx.check_fence()
        except FencedOut:
            seen["refused"], seen["cancelled"] = True, ctx.cancel.is_set()
            raise
        seen["booked"] = entry
        return "booked"

    replies = [
        AIMessage("", tool_calls=[{"name": "book", "args": {"entry": "e0"}, "id": "b"}]),
        AIMessage("", tool_calls=[{"name": "finish", "args": {"output": "ok"}, "id": "f"}]),
    ]
    app = build_graph("react", model=ScriptedChatModel(replies), tools=[book], home=home,
                      workspace=tmp_path / "ws")  # fmt: skip
    cfg = {"configurable": {"thread_id": "t"}}
    with pytest.raises(FencedOut):
        app.invoke({"task": {"goal": "book"}}, cfg)
    assert seen["fence"] == 1 and seen["held"] is True  # its own record, fence 1
    assert seen["taken"] is not None and seen["taken"].fence == 2
    assert seen.get("refused") and seen["cancelled"] and "booked" not in seen
    with SqliteExecutionStore(home / "exec.db") as store:
        [record] = store.pending("t")  # still the new owner's, uncommitted: nothing applied
        assert record.owner == OTHER and record.fence == 2
        assert store.committed("t") == []


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> ExecutionStore:
    if request.param == "sqlite":
        return SqliteExecutionStore(tmp_path / "exec.db")
    from execgraph.state.store.postgres import PostgresExecutionStore  # the extra, here

    return PostgresExecutionStore(request.getfixturevalue("postgres_database"))


def test_the_store_says_whether_a_fence_is_still_held(any_store: ExecutionStore) -> None:
    me = "here@boot@1/1/1/aaaaaaaaaaaa"
    with closing(any_store) as store:
        claim = {"run_id": "r", "call_id": "c", "tool": "t", "version": "1", "args_hash": "h"}
        store.reserve("k", **claim, attempt_id="a1", owner=me, lease_s=0.05)
        assert store.holds_fence("k", me, 1)
        assert not store.holds_fence("k", me, 2) and not store.holds_fence("k", OTHER, 1)
        assert store.lease_run("r", OTHER, lease_s=60).owner == OTHER  # its run, elsewhere
        assert not store.holds_fence("k", me, 1)
        store.release_run("r", OTHER)  # released, it still names OTHER: still fenced
        assert not store.holds_fence("k", me, 1)
        time.sleep(0.1)  # this owner's lease lapses; another takes the call over
        taken = store.take_over("k", OTHER, attempt_id="a2", lease_s=60, fence=1)
        assert taken is not None and taken.fence == 2
        assert not store.holds_fence("k", me, 1) and store.holds_fence("k", OTHER, 2)
