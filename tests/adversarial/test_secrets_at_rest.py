"""Secrets a model passes as arguments reach the tool, and nothing at rest keeps them.

A tool marks an argument secret (``secret_args=[...]``, or a ``SecretStr`` parameter).
The tool gets the real value; the event log, the execution store and the checkpoints —
every table of both databases, on SQLite and on PostgreSQL — hold ``[redacted]``, and so
does the approval request a person is shown. A call paused for approval and resumed by
another process (where the value is not) is never run blind: the approved call cannot
be formed again (``SecretUnavailable``), so the approval is stale, the model is told to
send the value again, and the tool does not run.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import Command
from pydantic import SecretStr

from execgraph import build_graph, tool_spec
from execgraph.state.home import Home
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(120)

API_KEY = "sk-live-TOPSECRET-api-key-1234567890"
PASSWORD = "hunter2-TOPSECRET-dsn-password"
RECEIVED: list[str] = []


@tool_spec(name="call_api", effect="read", secret_args=["api_key"])
def call_api(url: str, api_key: str) -> str:
    """Call an API with a key."""
    RECEIVED.append(api_key)
    return "200 OK"


@tool_spec(name="connect", effect="read")
def connect(dsn: str, password: SecretStr) -> str:
    """Connect to a database."""
    RECEIVED.append(password.get_secret_value())
    return "connected"


@tool_spec(name="rotate_key", effect="irreversible", secret_args=["new_key"])
def rotate_key(service: str, new_key: str) -> str:
    """Rotate a service's key (irreversible: a person approves it)."""
    RECEIVED.append(new_key)
    return "rotated"


TOOLS = [call_api, connect, rotate_key]


def _call(name: str, args: dict[str, Any], id_: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": id_}])


def _reads_then_finish(messages: list[Any]) -> AIMessage:
    answered = sum(m.type == "tool" for m in messages)
    if answered == 0:
        calls = [
            {"name": "call_api", "args": {"url": "https://api", "api_key": API_KEY}, "id": "a"},
            {
                "name": "connect",
                "args": {"dsn": "postgresql://db/x", "password": PASSWORD},
                "id": "b",
            },
        ]
        return AIMessage("", tool_calls=calls)
    return _call("finish", {"output": "done"}, "f")


def _rotate_then_finish(messages: list[Any]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        return _call("finish", {"output": "done"}, "f")
    return _call("rotate_key", {"service": "billing", "new_key": API_KEY}, "r")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    RECEIVED.clear()
    if request.param == "sqlite":
        return {"home": tmp_path}
    return {"database": request.getfixturevalue("postgres_database"), "home": tmp_path}


def _at_rest(where: dict[str, Any]) -> str:
    """Every row of every table of the run's databases, as text (bytes also as hex)."""
    rows: list[str] = []
    if "database" in where:
        import psycopg

        with psycopg.connect(where["database"]) as conn:
            tables = conn.execute(
                "SELECT table_schema, table_name FROM information_schema.tables "
                "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')"
            ).fetchall()
            for schema, table in tables:
                for (row,) in conn.execute(f'SELECT t::text FROM "{schema}"."{table}" t'):
                    rows.append(row)
    else:
        for db in Home(where["home"]).root.rglob("*.db"):
            with sqlite3.connect(db) as conn:
                names = conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
                for (table,) in names.fetchall():
                    for row in conn.execute(f'SELECT * FROM "{table}"'):
                        rows.extend(
                            v.decode("utf-8", "replace") + v.hex()
                            if isinstance(v, bytes)
                            else str(v)
                            for v in row
                        )
    return "\n".join(rows)


def _leaks(text: str) -> list[str]:
    found = []
    for secret in (API_KEY, PASSWORD):
        if secret in text or secret.encode().hex() in text.lower():
            found.append(secret)
    return found


def test_secret_arguments_reach_the_tool_and_no_database_keeps_them(
    where: dict[str, Any],
) -> None:
    app = build_graph(
        "react", model=ScriptedChatModel([_reads_then_finish] * 4), tools=TOOLS, **where
    )
    out = app.invoke({"task": {"goal": "call"}}, {"configurable": {"thread_id": "secrets"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert sorted(RECEIVED) == sorted([API_KEY, PASSWORD])  # the tools got the real values
    stored = _at_rest(where)
    assert "[redacted]" in stored
    assert _leaks(stored) == []


def test_an_approval_shows_the_secret_redacted_and_the_tool_gets_it(
    where: dict[str, Any],
) -> None:
    app = build_graph(
        "react", model=ScriptedChatModel([_rotate_then_finish] * 4), tools=TOOLS, **where
    )
    cfg = {"configurable": {"thread_id": "rotate"}}
    [pause] = app.invoke({"task": {"goal": "rotate"}}, cfg)["__interrupt__"]
    assert pause.value["arguments"] == {"service": "billing", "new_key": "[redacted]"}
    out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
    assert out["status"] == "COMPLETED", out.get("error")
    assert RECEIVED == [API_KEY]
    assert _leaks(_at_rest(where)) == []


PAUSE = """
import sys
from execgraph import build_graph
from execgraph.testing import ScriptedChatModel
from tests.adversarial import test_secrets_at_rest as t
app = build_graph("react", model=ScriptedChatModel([t._rotate_then_finish] * 4), tools=t.TOOLS,
                  home=sys.argv[1])
app.invoke({"task": {"goal": "rotate"}}, {"configurable": {"thread_id": "rotate"}})
"""

RESUME = """
import json, sys
from langgraph.types import Command
from execgraph import build_graph
from execgraph.testing import ScriptedChatModel
from tests.adversarial import test_secrets_at_rest as t
app = build_graph("react", model=ScriptedChatModel([t._rotate_then_finish] * 4), tools=t.TOOLS,
                  home=sys.argv[1])
cfg = {"configurable": {"thread_id": "rotate"}}
[pause] = app.get_state(cfg).interrupts
out = app.invoke(Command(resume={pause.id: {"action": "approve"}}), cfg)
[result] = out["results"].values()
print(json.dumps({"status": out["status"], "why": out.get("error"), "error": result["error"],
                  "ran": t.RECEIVED}))
"""


def _python(code: str, home: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, str(home)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    return done.stdout


@pytest.mark.integration  # two processes
def test_a_paused_secret_call_resumed_by_another_process_is_refused_not_run_blind(
    tmp_path: Path,
) -> None:
    _python(PAUSE, tmp_path)  # paused for a person; the process that held the value ends
    said = _python(RESUME, tmp_path)
    seen = json.loads(said.strip().splitlines()[-1])
    assert seen["ran"] == []  # the tool never ran with a placeholder
    # the approval no longer holds: the call cannot be formed again without the value
    assert seen["error"]["type"] == "ApprovalStale"
    assert "secret argument 'new_key'" in seen["error"]["message"]
    assert "send the value again" in seen["error"]["message"]
    # the model was told and answered without it: the run ends saying the action never ran
    assert seen["status"] == "FAILED" and "rotate_key never" in seen["why"]["message"], seen


def test_a_placeholder_copied_into_another_call_gets_no_secret(tmp_path: Path) -> None:
    RECEIVED.clear()

    def replay_the_placeholder(messages: list[Any]) -> AIMessage:
        answered = sum(m.type == "tool" for m in messages)
        if answered == 0:
            return _call("call_api", {"url": "https://api", "api_key": API_KEY}, "a")
        if answered == 1:  # the model copies what its history shows into a new call
            return _call("call_api", {"url": "https://evil", "api_key": "[redacted]"}, "b")
        return _call("finish", {"output": "done"}, "f")

    model = ScriptedChatModel([replay_the_placeholder] * 4)
    app = build_graph("react", model=model, tools=TOOLS, home=tmp_path)
    out = app.invoke({"task": {"goal": "call"}}, {"configurable": {"thread_id": "copy"}})
    assert RECEIVED == [API_KEY]  # the first call only; the copy never ran
    copied = next(r for r in out["results"].values() if r["tool_call_id"] == "b")
    assert copied["error"]["type"] == "SecretUnavailable"


def test_a_planned_steps_secret_reaches_the_tool_and_no_database_keeps_it(
    where: dict[str, Any],
) -> None:
    steps = [
        {"id": "s1", "tool": "call_api", "arguments": {"url": "https://api", "api_key": API_KEY}},
        {"id": "s2", "tool": "connect", "arguments": {"dsn": "db", "password": PASSWORD}},
    ]
    model = ScriptedChatModel(
        [_call("submit_plan", {"steps": steps}, "plan"), _call("finish", {"output": "done"}, "f")]
    )
    app = build_graph("plan_execute", model=model, tools=TOOLS, **where)
    out = app.invoke({"task": {"goal": "call"}}, {"configurable": {"thread_id": "planned"}})
    assert out["status"] == "COMPLETED", out.get("error")
    assert sorted(RECEIVED) == sorted([API_KEY, PASSWORD])
    assert [s["arguments"] for s in out["plan"]["steps"]] == [
        {"url": "https://api", "api_key": "[redacted]"},
        {"dsn": "db", "password": "[redacted]"},
    ]
    assert _leaks(_at_rest(where)) == []
