"""``--engine temporal`` from the command line, against a real Temporal dev server and a
real ``execgraph worker`` process: every command is a process of its own (the real
console script), so a run started by one is approved, rejected, cancelled or read by
another, and the effects happen in the worker's home, not the caller's."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from execgraph.engines.temporal.dev_server import free_port
from tests.support.cli_helpers import Result
from tests.support.cli_helpers import cli_process as cli
from tests.support.temporal_cli import CliWorker, cli_worker, temporal_flags

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def worker(temporal_address: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[CliWorker]:
    """One worker process for the module, on a task queue of its own."""
    home = tmp_path_factory.mktemp("temporal-cli") / "worker-home"
    with cli_worker(temporal_address, f"cli-{uuid.uuid4().hex[:8]}", home) as running:
        yield running


def _rid() -> str:
    return f"t-{uuid.uuid4().hex[:10]}"


def _published(worker: CliWorker, run_id: str) -> Path:
    return worker.home / "workspaces" / run_id / "published" / "report.md"


def _tcli(address: str, worker: CliWorker, *args: str) -> Result:
    # the worker's home holds the approval key the answers are signed with
    return cli(*args, *temporal_flags(address, worker.task_queue), home=worker.home)


def _waiting(address: str, worker: CliWorker, run_id: str) -> Result:
    result = _tcli(address, worker, "demo", "--run-id", run_id)
    assert result.code == 3, result
    assert result.status == "WAITING"
    return result


def test_demo_with_auto_approve_completes_and_publishes_in_the_workers_home(
    temporal_address: str, worker: CliWorker
) -> None:
    assert worker.ready == (
        f"worker ready: task queue {worker.task_queue} on {temporal_address} "
        f"(state: home {worker.home}); tool sets: demo"
    )
    rid = _rid()
    result = _tcli(temporal_address, worker, "demo", "--run-id", rid, "--auto-approve")
    assert result.code == 0, result
    assert result.status == "COMPLETED"
    assert "auto-approved: approval of publish_report(path=report.md)" in result.out
    assert result.out.count("auto-approved:") == 1  # the answered pause is not answered twice
    assert "Report written to report.md" in result.out
    assert _published(worker, rid).is_file()


def test_a_waiting_run_is_shown_and_approved_from_another_process(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = _rid()
    waiting = _waiting(temporal_address, worker, rid)
    flags = f"--engine temporal --address {temporal_address} --task-queue {worker.task_queue}"
    assert f"execgraph approve {rid} {flags}" in waiting.out
    assert f"execgraph cancel {rid} {flags}" in waiting.out
    assert not _published(worker, rid).exists()

    # status reads the same settings from the environment
    env = {
        "EXECGRAPH_ENGINE": "temporal",
        "EXECGRAPH_TEMPORAL_ADDRESS": temporal_address,
        "EXECGRAPH_TASK_QUEUE": worker.task_queue,
    }
    status = cli("status", rid, **env)
    assert status.code == 0, status
    assert status.status == "WAITING"
    assert "waiting for approval of publish_report(path=report.md) [call " in status.out

    approved = _tcli(temporal_address, worker, "approve", rid)
    assert approved.code == 0, approved
    assert "approved: approval of publish_report(path=report.md)" in approved.out
    assert approved.status == "COMPLETED"
    assert _published(worker, rid).is_file()


def test_reject_ends_the_run_without_publishing(temporal_address: str, worker: CliWorker) -> None:
    rid = _rid()
    _waiting(temporal_address, worker, rid)
    result = _tcli(temporal_address, worker, "reject", rid, "--reason", "not today")
    assert "rejected: approval of publish_report" in result.out
    for _ in range(10):  # the demo's policy asks again after a no; keep saying no
        if result.code != 3:
            break
        result = _tcli(temporal_address, worker, "reject", rid)
    assert result.code not in (0, 3), result
    assert result.status in ("FAILED", "PARTIAL", "BUDGET_EXHAUSTED")
    assert (worker.home / "workspaces" / rid / "report.md").is_file()
    assert not _published(worker, rid).exists()


def test_edit_is_a_new_request_that_needs_approval_again(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = _rid()
    _waiting(temporal_address, worker, rid)
    edited = _tcli(temporal_address, worker, "edit", rid, "--args", '{"path": "report.md"}')
    assert edited.code == 3, edited  # the edited call is authorized again: it waits again
    assert "edited: approval of publish_report" in edited.out
    call = re.search(r"\[call (\S+)\]", edited.out)
    assert call is not None, edited.out
    done = _tcli(temporal_address, worker, "approve", rid, "--call", call.group(1))
    assert done.code == 0, done
    assert _published(worker, rid).is_file()


def test_resume_on_temporal_answers_questions_only(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = _rid()
    waiting = _waiting(temporal_address, worker, rid)
    assert f"execgraph edit {rid} --args" in waiting.out
    bare = _tcli(temporal_address, worker, "resume", rid)
    assert bare.code == 2 and "continued by its workers: give --answer" in bare.err, bare
    wrong = _tcli(temporal_address, worker, "resume", rid, "--answer", "yes")
    assert wrong.code == 2 and "no pending question" in wrong.err, wrong
    assert "Traceback" not in bare.err + wrong.err
    _tcli(temporal_address, worker, "cancel", rid)


def test_cancel_of_a_waiting_run_ends_it_cancelled(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = _rid()
    _waiting(temporal_address, worker, rid)
    result = _tcli(temporal_address, worker, "cancel", rid)
    assert result.code == 5, result
    assert "cancelled, not run: approval of publish_report" in result.out
    assert result.status == "CANCELLED"
    assert not _published(worker, rid).exists()
    again = _tcli(temporal_address, worker, "cancel", rid)
    assert again.code == 5, again
    assert f"run {rid} already ended: CANCELLED" in again.out


def test_a_run_id_is_used_once_and_an_unknown_one_is_named(
    temporal_address: str, worker: CliWorker
) -> None:
    rid = _rid()
    assert _tcli(temporal_address, worker, "demo", "--run-id", rid, "--auto-approve").code == 0
    twice = _tcli(temporal_address, worker, "demo", "--run-id", rid)
    assert twice.code == 2, twice
    assert f"error: run {rid!r} already exists on Temporal" in twice.err
    for command in ("status", "approve", "cancel"):
        unknown = _tcli(temporal_address, worker, command, "ghost-run")
        assert unknown.code == 2, unknown
        assert "Temporal knows no such run" in unknown.err
        assert "Traceback" not in unknown.err


def test_an_unreachable_server_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    nowhere = f"127.0.0.1:{free_port()}"
    for args in (
        ["status", "r1", "--engine", "temporal", "--address", nowhere],
        ["demo", "--engine", "temporal", "--address", nowhere],
        ["worker", "--address", nowhere, "--home", str(tmp_path)],
    ):
        result = cli(*args)
        assert result.code == 2, result
        assert result.err.strip() == f"error: cannot reach the Temporal server at {nowhere}: " + (
            "Connection refused"
        )
    bad = cli("status", "r1", "--engine", "warp")
    assert bad.code == 2
    assert "unknown engine 'warp'" in bad.err
    assert cli("worker", "--max-concurrent", "0", "--home", str(tmp_path)).code == 2


def test_an_unknown_namespace_is_named(temporal_address: str, tmp_path: Path) -> None:
    flags = ["--engine", "temporal", "--address", temporal_address, "--namespace", "nowhere"]
    status = cli("status", "r1", *flags)
    assert status.code == 2, status
    assert "refused namespace 'nowhere'" in status.err
    served = cli("worker", "--address", temporal_address, "--namespace", "nowhere",
                 "--home", str(tmp_path))  # fmt: skip
    assert served.code == 2, served
    assert "Temporal has no namespace 'nowhere'" in served.err
    assert "worker ready" not in served.out  # refused before it claims to serve
    assert "Traceback" not in served.err


def test_a_worker_on_postgresql_never_prints_the_password_and_stops_on_sigterm(
    temporal_address: str, postgres_database: str, tmp_path: Path
) -> None:
    dsn = postgres_database.replace("postgres@", "postgres:s3cret-pw@", 1)
    home, queue = tmp_path / "pg-home", f"pg-{uuid.uuid4().hex[:8]}"
    with cli_worker(temporal_address, queue, home, "--database", dsn) as running:
        assert "s3cret-pw" not in running.ready
        dbname = postgres_database.rsplit("/", 1)[1]
        assert f"(state: postgresql {dbname} on 127.0.0.1:" in running.ready
        rid = _rid()
        done = cli(
            "demo", "--run-id", rid, "--auto-approve", *temporal_flags(temporal_address, queue),
            home=home,  # the worker's approval key
        )  # fmt: skip
        assert done.code == 0, done
        assert _published(running, rid).is_file()
        assert not (home / "exec.db").exists()  # the run's records went to PostgreSQL
    assert running.code == 0
    assert running.rest == [f"worker stopped: task queue {queue}"]
