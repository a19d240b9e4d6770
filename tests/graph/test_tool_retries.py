"""Retries with operation semantics: what is safe to redo is redone, nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.state.errors import ResponseLostError, ToolDeclarationError, TransientError
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.retry import RetryPolicy
from tests.support.executor import Counter, config, make_deps, make_executor, request

pytestmark = pytest.mark.timeout(60)


def _flaky(fails: int, *, effect: str = "read", **kw: Any) -> tuple[Any, Counter]:
    seen = Counter()

    @tool_spec(name="fetch", effect=effect, **kw)  # type: ignore[arg-type]
    def fetch(q: str) -> str:
        """Fetch something from a service that is briefly overloaded."""
        seen.add(q)
        if len(seen) <= fails:
            raise TransientError("the service is busy", retry_after_s=0.05)
        return "ok"

    return fetch, seen


def _call(tmp_path: Path, tool: Any) -> tuple[dict[str, Any], Any]:
    deps = make_deps(tmp_path, [tool])
    out = make_executor(deps).invoke(
        {"request": request("fetch", {"q": "x"}, root=tmp_path, call_id="c1")}, config()
    )
    return out["results"]["c1"], deps


def test_a_read_that_fails_transiently_is_retried_and_each_attempt_logged(
    tmp_path: Path,
) -> None:
    tool, seen = _flaky(2)
    result, deps = _call(tmp_path, tool)
    assert result["outcome"] == "succeeded" and result["attempts"] == 3
    assert len(seen) == 3
    retried = [e for e in deps.store.events("run-1", call_id="c1") if e.type == "tool.retried"]
    assert [e.payload["attempt"] for e in retried] == [1, 2]
    assert all(e.payload["error"] == "TransientError" for e in retried)
    assert all(e.payload["after_s"] >= 0.05 for e in retried)  # retry_after_s honoured


def test_a_write_is_not_retried_unless_it_is_idempotent(tmp_path: Path) -> None:
    plain, plain_seen = _flaky(1, effect="write")
    result, _ = _call(tmp_path / "a", plain)
    assert result["status"] == "RETRYABLE_ERROR" and result["attempts"] == 1
    assert len(plain_seen) == 1
    safe, safe_seen = _flaky(1, effect="write", idempotent=True)
    result, _ = _call(tmp_path / "b", safe)
    assert result["outcome"] == "succeeded" and result["attempts"] == 2
    assert len(safe_seen) == 2


def test_an_unknown_outcome_is_never_retried_even_for_an_idempotent_write(
    tmp_path: Path,
) -> None:
    sent = Counter()

    @tool_spec(name="fetch", effect="write", idempotent=True)
    def post(q: str) -> str:
        """Post, losing the response."""
        sent.add(q)
        raise ResponseLostError("the connection dropped after the post")

    result, _ = _call(tmp_path, post)
    assert result["outcome"] == "unknown" and result["attempts"] == 1
    assert len(sent) == 1


def test_retry_none_and_a_short_policy_are_honoured(tmp_path: Path) -> None:
    never, never_seen = _flaky(1, retry=None)
    assert _call(tmp_path / "a", never)[0]["attempts"] == 1 and len(never_seen) == 1
    twice, twice_seen = _flaky(5, retry=RetryPolicy(max_attempts=2, backoff_s=0.01))
    result, _ = _call(tmp_path / "b", twice)
    assert result["status"] == "RETRYABLE_ERROR" and result["attempts"] == 2
    assert len(twice_seen) == 2


def test_retrying_a_plain_write_is_a_declaration_error() -> None:
    with pytest.raises(ToolDeclarationError, match="idempotent=True"):
        _flaky(1, effect="write", retry=RetryPolicy())


@pytest.mark.parametrize("limit", [1, 2, 5])
def test_retries_are_charged_and_never_overshoot_the_tool_call_budget(
    tmp_path: Path, limit: int
) -> None:
    tool, seen = _flaky(100)  # always busy
    replies = [
        AIMessage("", tool_calls=[{"name": "fetch", "args": {"q": "x"}, "id": f"c{i}"}])
        for i in range(10)
    ]
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=[tool],
        checkpointer=InMemorySaver(),
        home=tmp_path,
    )
    task = {"goal": "fetch", "budgets": {"tool_calls": limit, "model_calls": 10}}
    out = app.invoke({"task": task}, {"configurable": {"thread_id": "t"}})
    assert out["status"] == "BUDGET_EXHAUSTED"
    assert out["budget"]["used"]["tool_calls"] == len(seen) <= limit
