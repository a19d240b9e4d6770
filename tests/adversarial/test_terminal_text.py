"""What a person sees is what runs: nothing a model, a tool or a client wrote reaches the
terminal as control bytes, on any command, on either engine.

A model calls ``pay(to="ATTACKER-ACCT-666\\x1b[17D\\x1b[Kalice-acct-001")``, which a
terminal draws as ``alice-acct-001``; a tool's ModelRetry message and the model's final
text carry OSC 52 (a clipboard write), a C1 CSI, a bidi override, a zero-width space and
a tag character; on Temporal, a bare client starts a workflow whose id carries an OSC
sequence. Every command a person would run on such a run (``run``, ``status``, ``status
--call``, ``runs``, ``trace``, ``metrics``, ``diagnose``, ``approve``) prints all of it
inert: the attacker's account is shown, escaped, and is what the approval pays.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from execgraph.engines.graphs import Graphs
from execgraph.engines.temporal import SharedGraphs
from tests.adversarial.trust_helpers import (
    HOSTILE_TEXT,
    HOSTILE_TO,
    PAY_TOOLS,
    paid,
    pay_tools,
    raw_cli,
    terminal_controls,
    worker_thread,
)
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

pytestmark = pytest.mark.timeout(300)

MODEL = "openai:gpt-test"
KEY = "terminal-test-approval-key"


def _script(server: OpenAIServer) -> None:
    server.add(
        tool_calls(tool_call("lookup", {"q": "acct \x1b[2J\x1b]0;x\x07"})),
        tool_calls(tool_call("pay", {"to": HOSTILE_TO, "amount": 5})),
        *[tool_calls(tool_call("finish", {"output": HOSTILE_TEXT}))] * 4,
    )


def _task(tmp_path: Path) -> Path:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Pay 5 to alice-acct-001"}))
    return task


def _shown_inert(outputs: dict[str, str]) -> None:
    for command, text in outputs.items():
        assert terminal_controls(text) == [], (command, text)


def _reads(run_id: str, flags: list[str], env: dict[str, str]) -> dict[str, str]:
    """What every read-only command prints of the run."""
    commands = {
        "status": ["status", run_id],
        "runs": ["runs"],
        "trace": ["trace", run_id],
        "metrics": ["metrics", run_id],
        "diagnose": ["diagnose", run_id],
    }
    return {name: raw_cli(*args, *flags, **env)[1] for name, args in commands.items()}


def test_every_command_prints_a_hostile_run_inert_embedded(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    _script(openai_server)
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"}
    flags = ["--home", str(tmp_path / "home")]
    code, started = raw_cli(
        "run", str(_task(tmp_path)), "--model", MODEL, "--tools", PAY_TOOLS,
        "--run-id", "pay-1", "--no-input", *flags, **env,
    )  # fmt: skip
    assert code == 3, started
    outputs = {"run": started, **_reads("pay-1", flags, env)}
    _shown_inert(outputs)
    # the account that will be paid is the one shown, escaped, whole
    assert "ATTACKER-ACCT-666" in outputs["status"] and "alice-acct-001" in outputs["status"]

    code, outputs["approve"] = raw_cli("approve", "pay-1", *flags, **env)
    assert code == 0, outputs["approve"]
    outputs.update({f"{k} (ended)": v for k, v in _reads("pay-1", flags, env).items()})
    _shown_inert(outputs)
    assert "ATTACKER-ACCT-666" in outputs["approve"]
    assert [p["to"] for p in paid(tmp_path / "home" / "workspaces" / "pay-1")] == [HOSTILE_TO]


@pytest.fixture
def pay_worker(
    temporal_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, openai_server: Any
) -> Any:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    graphs = Graphs()
    graphs.add_tools("pay", pay_tools)
    with worker_thread(temporal_address, SharedGraphs(graphs, home=tmp_path / "worker")) as q:
        yield q


def _start_raw(address: str, queue: str, run_id: str) -> None:
    """A bare Temporal client starts ``execgraph.run`` under a hostile workflow id."""

    async def go() -> None:
        client = await Client.connect(address)
        spec = {"run_id": run_id, "task": {"goal": "x"}}
        handle = await client.start_workflow(
            "execgraph.run", args=[spec, 0.0], id=run_id, task_queue=queue
        )
        await handle.result()  # the worker refuses the id: FAILED

    asyncio.run(go())


def test_every_command_prints_a_hostile_run_inert_on_temporal(
    temporal_address: str, tmp_path: Path, openai_server: OpenAIServer, pay_worker: str
) -> None:
    _script(openai_server)
    env = {"EXECGRAPH_APPROVAL_SECRET": KEY}
    flags = ["--engine", "temporal", "--address", temporal_address, "--task-queue", pay_worker]
    code, started = raw_cli(
        "run", str(_task(tmp_path)), "--model", MODEL, "--tools", "pay",
        "--run-id", "tpay-1", "--no-input", *flags, **env,
    )  # fmt: skip
    assert code == 3, started
    _start_raw(temporal_address, pay_worker, "evil\x1b]0;pwned\x07-\u202eid")
    outputs = {"run": started, **_reads("tpay-1", flags, env)}
    call = re.search(r"--call (\S+) --args-hash", outputs["status"])
    assert call is not None, outputs["status"]
    outputs["status --call"] = raw_cli("status", "tpay-1", "--call", call[1], *flags, **env)[1]
    _shown_inert(outputs)
    assert "ATTACKER-ACCT-666" in outputs["status"] and "alice-acct-001" in outputs["status"]
    assert "ATTACKER-ACCT-666" in outputs["status --call"]  # read whole by a worker
    assert "evil" in outputs["runs"]  # the hostile workflow is listed, escaped

    code, outputs["approve"] = raw_cli("approve", "tpay-1", *flags, **env)
    assert code == 0, outputs["approve"]
    outputs.update({f"{k} (ended)": v for k, v in _reads("tpay-1", flags, env).items()})
    _shown_inert(outputs)
    assert [p["to"] for p in paid(tmp_path / "worker" / "workspaces" / "tpay-1")] == [HOSTILE_TO]
