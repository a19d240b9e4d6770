"""An approval applies to the call the approver was shown, and on Temporal only a holder
of the workers' approval key can give one.

``status`` shows ``pay(to=bob, amount=5)`` with the hash of its arguments; someone edits
the call to ``{"to": "mallory", "amount": 5000}`` (an edit keeps the call id, and the
interrupt's id); ``approve RUN --call C --args-hash <shown>`` is then refused, and
nothing is paid. A long argument is shown cut, visibly, with the command that shows it
whole. On Temporal, a bare client (no key) sending the ``decide`` update as ``cfo@example.com
(SSO verified)`` is refused, so is one signing with another key; the approver recorded is
the name a key holder signed.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError

from execgraph.engines.spec import RunSpec
from execgraph.engines.temporal import TemporalRuns
from execgraph.state.errors import UsageError
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.adversarial.trust_helpers import PAY_TOOLS, paid, pay_graphs, raw_cli, worker_thread
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

pytestmark = pytest.mark.timeout(300)

KEY = "binding-test-approval-key"
TAIL = "AND-ALSO-PAY-MALLORY"


def _shown(status: str) -> tuple[str, str]:
    """The call id and the args hash ``status`` names."""
    found = re.search(r"--call (\S+) --args-hash ([0-9a-f]+)", status)
    assert found is not None, status
    return found[1], found[2]


def test_an_approval_applies_only_to_the_call_that_was_shown(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    memo = "x" * 3000 + TAIL
    openai_server.add(
        tool_calls(tool_call("pay", {"to": "bob", "amount": 5, "memo": memo})),
        *[tool_calls(tool_call("finish", {"output": "paid"}))] * 3,
    )
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Pay bob 5"}))
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"}
    flags = ["--home", str(tmp_path / "home")]
    code, out = raw_cli(
        "run", str(task), "--model", "openai:gpt-test", "--tools", PAY_TOOLS,
        "--run-id", "b1", "--no-input", *flags, **env,
    )  # fmt: skip
    assert code == 3, out

    _, status = raw_cli("status", "b1", *flags, **env)
    call, shown = _shown(status)
    assert "to=bob, amount=5" in status
    assert TAIL not in status  # cut, and says so and where the rest is
    assert f"<{len(memo)} characters in all>" in status
    assert f"every argument: execgraph status b1 --call {call}" in status
    _, whole = raw_cli("status", "b1", "--call", call, *flags, **env)
    assert TAIL in whole and shown in whole

    code, out = raw_cli("edit", "b1", "--args", '{"to": "mallory", "amount": 5000}', *flags, **env)
    assert code == 3, out  # an edit is a new request: it waits for a person again
    code, refused = raw_cli("approve", "b1", "--call", call, "--args-hash", shown, *flags, **env)
    assert code == 2, refused
    assert "changed since it was shown" in refused
    assert paid(tmp_path / "home" / "workspaces" / "b1") == []

    _, again = raw_cli("status", "b1", *flags, **env)
    assert "amount=5000, to=mallory" in again
    now = _shown(again)[1]
    _, out = raw_cli("reject", "b1", "--call", call, "--args-hash", now, *flags, **env)
    assert "rejected: approval of pay(amount=5000, to=mallory" in out  # what they saw now
    assert paid(tmp_path / "home" / "workspaces" / "b1") == []


def _waiting(view: Any) -> bool:
    return view.status == "WAITING"


async def _until(runs: TemporalRuns, run_id: str, wanted: Any) -> Any:
    for _ in range(600):
        view = await runs.status(run_id)
        if wanted(view):
            return view
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} never got there: {view}")


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", KEY)


def test_on_temporal_an_answer_is_bound_to_the_arguments_shown(
    temporal_address: str, tmp_path: Path, keyed: None
) -> None:
    async def scenario(queue: str) -> None:
        runs = await TemporalRuns.connect(temporal_address, task_queue=queue)  # $KEY
        await runs.start(RunSpec("tb-1", {"goal": "Pay bob 5"}, model="scripted", tools="pay"))
        shown = await _until(runs, "tb-1", _waiting)
        (pending,) = shown.interrupts
        old = pending["value"]["args_hash"]
        await runs.edit("tb-1", {"to": "mallory", "amount": 5000})
        edited = await _until(
            runs, "tb-1", lambda v: _waiting(v) and v.interrupts != shown.interrupts
        )
        # the workflow refuses an answer bound to what it no longer asks, however built
        (now,) = edited.interrupts
        answers = {now["id"]: {"action": "approve", "approver": "x", "args_hash": old}}
        with pytest.raises(UsageError, match="changed since it was shown"):
            await runs.decide("tb-1", answers)
        with pytest.raises(UsageError, match="changed since it was shown"):
            await runs.approve("tb-1", args_hash=old[:12])
        await runs.cancel("tb-1")

    with worker_thread(temporal_address, pay_graphs(tmp_path / "worker")) as queue:
        asyncio.run(scenario(queue))
    assert paid(tmp_path / "worker" / "workspaces" / "tb-1") == []


def test_on_temporal_only_a_holder_of_the_key_answers_and_is_recorded(
    temporal_address: str, tmp_path: Path, keyed: None
) -> None:
    async def scenario(queue: str) -> Any:
        runs = await TemporalRuns.connect(temporal_address, task_queue=queue)  # $KEY
        await runs.start(RunSpec("ta-1", {"goal": "Pay bob 5"}, model="scripted", tools="pay"))
        (pending,) = (await _until(runs, "ta-1", _waiting)).interrupts
        bare = await Client.connect(temporal_address)
        forged = {
            "answers": {
                pending["id"]: {"action": "approve", "approver": "cfo@example.com (SSO verified)"}
            }
        }
        with pytest.raises(WorkflowUpdateFailedError):
            await bare.get_workflow_handle("ta-1").execute_update("decide", forged)
        other = TemporalRuns(runs.client, queue, approval_key=b"another key")
        with pytest.raises(UsageError, match="not signed with the workers' approval key"):
            await other.approve("ta-1", approver="cfo@example.com (SSO verified)")
        assert paid(tmp_path / "worker" / "workspaces" / "ta-1") == []
        await runs.approve("ta-1", approver="alice")
        return await runs.result("ta-1")

    with worker_thread(temporal_address, pay_graphs(tmp_path / "worker")) as queue:
        final = asyncio.run(scenario(queue))
    assert final.status == "COMPLETED", final
    assert [p["to"] for p in paid(tmp_path / "worker" / "workspaces" / "ta-1")] == ["bob"]
    with SqliteExecutionStore(tmp_path / "worker" / "exec.db") as store:
        resolved = [e.payload for e in store.events("ta-1") if e.type == "approval.resolved"]
    assert [r["approver"] for r in resolved] == ["alice"]
