"""A Temporal client chooses no code and no directory on a worker.

Everything in a workflow's input is data. Against a real ``execgraph worker`` process, a
client that sends its own start request (not through execgraph's client, so nothing on
its side checks it) names an import path as the tool set and a directory as the
workspace, or a run id that climbs out of the worker's home. The worker runs only the
tool sets its operator registered and derives a run's workspace from its validated id:
the function is never imported or called, the directory is never touched, nothing is
written outside the home; the run ends FAILED saying why.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from execgraph.demo.build import demo_task
from tests.support.temporal_cli import CliWorker, cli_worker

pytestmark = pytest.mark.timeout(300)

OWN_TOOLS = "tests.support.cli_slow_tools:TOOLS"


@pytest.fixture(scope="module")
def worker(temporal_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliWorker]:
    """A worker serving the demo and one tool set its operator registered by name."""
    home = tmp_path_factory.mktemp("hostile-client") / "worker-home"
    queue = f"hostile-{uuid.uuid4().hex[:8]}"
    with cli_worker(temporal_address, queue, home, "--tools", f"slow={OWN_TOOLS}") as running:
        yield running


def _start_raw(address: str, queue: str, run_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    """Start ``execgraph.run`` with ``spec`` as a bare Temporal client would; its result
    (a run still going after a minute, e.g. paused for a person, is ended and reported
    as ``NOT ENDED``)."""

    async def go() -> dict[str, Any]:
        client = await Client.connect(address)
        handle = await client.start_workflow(
            "execgraph.run", args=[spec, 0.0], id=run_id, task_queue=queue
        )
        try:
            result: dict[str, Any] = await asyncio.wait_for(handle.result(), 60)
        except TimeoutError:
            await handle.terminate()
            return {"status": "NOT ENDED", "error": ""}
        return result

    return asyncio.run(go())


def test_a_client_naming_an_import_path_runs_nothing_of_it(
    temporal_address: str, worker: CliWorker, tmp_path: Path
) -> None:
    victim = tmp_path / "precious"
    victim.mkdir()
    (victim / "data.txt").write_text("keep me")
    rid = f"hostile-{uuid.uuid4().hex[:8]}"
    spec = {"run_id": rid, "task": {"goal": "x"}, "tools": "shutil:rmtree",
            "workspace": str(victim)}  # fmt: skip
    reached = _start_raw(temporal_address, worker.task_queue, rid, spec)
    assert (victim / "data.txt").read_text() == "keep me"  # never imported, never called
    assert reached["status"] == "FAILED", reached
    assert "no tool set named 'shutil:rmtree'" in reached["error"]
    assert not (worker.home / "workspaces" / rid).exists()  # refused before a graph is built


def test_a_registered_module_path_is_still_only_a_name(
    temporal_address: str, worker: CliWorker
) -> None:
    """The operator registered the tools as ``slow``: their import path names nothing."""
    rid = f"byref-{uuid.uuid4().hex[:8]}"
    spec = {"run_id": rid, "task": {"goal": "x"}, "tools": OWN_TOOLS}
    reached = _start_raw(temporal_address, worker.task_queue, rid, spec)
    assert reached["status"] == "FAILED", reached
    assert "registered: demo, slow" in reached["error"]


def test_a_run_id_that_climbs_out_of_the_home_writes_nothing(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = f"../../escaped-{uuid.uuid4().hex[:8]}"
    outside = (worker.home / "workspaces" / rid).resolve()
    spec = {"run_id": rid, "task": demo_task()}
    reached = _start_raw(temporal_address, worker.task_queue, rid, spec)
    assert not outside.exists(), outside
    assert reached["status"] == "FAILED", reached
    assert "is not valid" in reached["error"]


def test_a_spec_whose_run_id_is_not_the_workflows_is_refused(
    temporal_address: str, worker: CliWorker
) -> None:
    """The run id is the workflow id: a spec naming another run's id is not run."""
    rid = f"cover-{uuid.uuid4().hex[:8]}"
    spec = {"run_id": f"victim-{uuid.uuid4().hex[:8]}", "task": demo_task()}
    reached = _start_raw(temporal_address, worker.task_queue, rid, spec)
    assert reached["status"] == "FAILED", reached
    assert "run id is not the workflow's id" in reached["error"]
