"""The ``execgraph`` CLI end to end: real SQLite under ``tmp_path``, each command a call
of its own (in this process, or a real process where another process is the point).

A run paused for approval by one command is approved, rejected, edited or cancelled by
another; exit codes follow the documented table and always match the printed status.
"""

from __future__ import annotations

import json
import os
import re
import signal
from pathlib import Path

import pytest

from execgraph.cli.options import EXIT_CODES
from execgraph.state.store.sqlite import SqliteExecutionStore
from tests.support.cli_helpers import (
    CORPUS,
    cli,
    cli_process,
    finish,
    run_in_pty,
    start,
    wait_for,
)
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

SLOW_TOOLS = "tests.support.cli_slow_tools:slow_demo"


def _slow_task(tmp_path: Path) -> str:
    """A task of the user's own for the slow toolkit (a --tools run names its task)."""
    task = tmp_path / "slow-task.json"
    goal = "Compare RAG and long context; write report.md citing sources"
    checks = [{"kind": "tool_succeeded", "target": "search_corpus"}]
    task.write_text(json.dumps({"goal": goal, "success_checks": checks}))
    return str(task)


def workspace(home: Path, run_id: str) -> Path:
    return home / "workspaces" / run_id


def assert_code_matches_status(result: object) -> None:
    status = result.status  # type: ignore[attr-defined]
    assert status is not None, result
    assert result.code == EXIT_CODES[status], (status, result)  # type: ignore[attr-defined]


def started_waiting(home: Path, run_id: str, *extra: str) -> None:
    result = cli("run", "--run-id", run_id, "--home", str(home), *extra)
    assert result.code == 3, result
    assert result.status == "WAITING"
    assert f"execgraph approve {run_id}" in result.out
    assert f"execgraph reject {run_id}" in result.out


def test_demo_waits_without_tty_then_approve_from_new_process_completes(tmp_path: Path) -> None:
    """The real console script: its exit codes are the documented ones."""
    waiting = cli_process("run", "--run-id", "d1", "--home", str(tmp_path))
    assert waiting.code == 3, waiting
    assert waiting.status == "WAITING"
    assert "execgraph approve d1" in waiting.out
    pending = cli("status", "d1", "--home", str(tmp_path))
    assert pending.code == 0
    assert "status: WAITING" in pending.out
    assert "publish_report" in pending.out

    done = cli_process("approve", "d1", "--home", str(tmp_path))
    assert done.code == 0, done
    assert done.status == "COMPLETED"
    assert "approved: approval of publish_report" in done.out
    assert "Evidence" in done.out and "Budget" in done.out
    published = workspace(tmp_path, "d1") / "published" / "report.md"
    assert f"report file: {published}" in done.out
    cited = set(re.findall(r"\[([a-z0-9-]+)\]", published.read_text()))
    assert len(cited) >= 3
    for doc_id in cited:
        assert (CORPUS / f"{doc_id}.md").is_file(), doc_id

    status = cli("status", "d1", "--home", str(tmp_path))
    assert "status: COMPLETED" in status.out
    runs = cli("runs", "--home", str(tmp_path))
    assert runs.code == 0
    assert re.search(r"d1\s.*react.*offline.*COMPLETED", runs.out), runs.out
    trace = cli("trace", "d1", "--home", str(tmp_path))
    assert trace.code == 0
    for event in (
        "run.admitted",
        "model.called",
        "decision.recorded",
        "tool.requested",
        "approval.requested",
        "approval.resolved",
        "tool.side_effect_observed",
        "tool.completed",
        "run.finished",
    ):
        assert event in trace.out, event
    assert "approve by cli" in trace.out


def test_reject_never_publishes(tmp_path: Path) -> None:
    started_waiting(tmp_path, "r1")
    result = cli("reject", "r1", "--reason", "not today", "--home", str(tmp_path))
    assert "rejected: approval of publish_report" in result.out
    assert "publish_report was rejected: not today" in result.out
    for _ in range(10):  # the policy may ask again; keep saying no
        if result.code != 3:
            break
        result = cli("reject", "r1", "--home", str(tmp_path))
    assert result.code != 3, result
    assert result.status != "COMPLETED"
    assert_code_matches_status(result)
    assert (workspace(tmp_path, "r1") / "report.md").is_file()
    assert not (workspace(tmp_path, "r1") / "published").exists()


def test_auto_approve_completes_with_home_from_environment(tmp_path: Path) -> None:
    result = cli("run", "--auto-approve", "--run-id", "a1", home=tmp_path)
    assert result.code == 0, result
    assert "--auto-approve: every approval request will be approved" in result.out
    assert "auto-approved: approval of publish_report" in result.out
    assert result.status == "COMPLETED"
    assert (workspace(tmp_path, "a1") / "published" / "report.md").is_file()


@pytest.mark.parametrize("arch", ["react", "workflow", "plan_execute", "hybrid"])
def test_each_architecture_ends_with_its_documented_code(tmp_path: Path, arch: str) -> None:
    result = cli("run", "--arch", arch, "--auto-approve", "--home", str(tmp_path))
    assert "Traceback" not in result.out + result.err
    assert result.code in (0, 4), result
    assert_code_matches_status(result)
    if result.code == 0:
        published = next(tmp_path.glob("workspaces/*/published/report.md"))
        assert published.is_file()


def test_demo_alias_runs_the_demo_task(tmp_path: Path) -> None:
    result = cli("demo", "--run-id", "m1", "--home", str(tmp_path))
    assert result.code == 3, result
    assert "admitted: 3 checks" in result.out
    assert "search_corpus" in result.out


def test_hybrid_fixed_approval_node_from_new_process(tmp_path: Path) -> None:
    started_waiting(tmp_path, "h1", "--arch", "hybrid")
    wrong = cli("approve", "h1", "--call", "nope", "--home", str(tmp_path))
    assert wrong.code == 2
    assert "no pending approval for call 'nope'" in wrong.err
    done = cli("approve", "h1", "--home", str(tmp_path))
    assert "approved: approval of publish_report" in done.out
    assert done.code == 0, done
    assert done.status == "COMPLETED"
    assert (workspace(tmp_path, "h1") / "published" / "report.md").is_file()


def test_edit_is_a_new_request_that_needs_approval_again(tmp_path: Path) -> None:
    started_waiting(tmp_path, "e1")
    edited = cli("edit", "e1", "--args", '{"path": "report.md"}', "--home", str(tmp_path))
    assert edited.code == 3, edited
    assert "edited: approval of publish_report" in edited.out
    call = re.search(r"\[call (\S+)\]", edited.out)
    assert call is not None
    done = cli("approve", "e1", "--call", call.group(1), "--home", str(tmp_path))
    assert done.code == 0, done
    trace = cli("trace", "e1", "--home", str(tmp_path)).out
    assert "edit by cli" in trace and "approve by cli" in trace


def test_cancel_of_a_waiting_run_ends_it_now(tmp_path: Path) -> None:
    started_waiting(tmp_path, "c1")
    result = cli("cancel", "c1", "--home", str(tmp_path))
    assert result.code == 5, result
    assert result.status == "CANCELLED"
    assert not (workspace(tmp_path, "c1") / "published").exists()
    again = cli("cancel", "c1", "--home", str(tmp_path))
    assert again.code == 5
    assert "already ended: CANCELLED" in again.out
    assert "CANCELLED" in cli("runs", "--home", str(tmp_path)).out


def tool_running(home: Path, run_id: str) -> bool:
    """An execution record is written before the call starts and committed when it ends."""
    if not (home / "exec.db").exists():
        return False
    with SqliteExecutionStore(home / "exec.db") as store:
        return bool(store.pending(run_id))


def test_cancel_of_a_running_run_from_another_process(tmp_path: Path) -> None:
    proc = start(
        "run",
        _slow_task(tmp_path),
        "--tools",
        SLOW_TOOLS,
        "--run-id",
        "s1",
        "--home",
        str(tmp_path),
        home=tmp_path,
    )
    wait_for(lambda: tool_running(tmp_path, "s1"), "the slow tool to start", proc)
    status = cli("status", "s1", "--home", str(tmp_path))
    assert f"status: RUNNING (process {proc.pid})" in status.out
    cancel = cli("cancel", "s1", "--home", str(tmp_path))
    assert cancel.code == 0, cancel
    assert f"process {proc.pid} stops run s1" in cancel.out
    result = finish(proc)
    assert result.code == 5, result
    assert result.status == "CANCELLED"
    assert "search_corpus CANCELLED/cancelled" in result.out


def test_a_crashed_run_resumes_in_a_new_process(tmp_path: Path) -> None:
    proc = start(
        "run",
        _slow_task(tmp_path),
        "--tools",
        SLOW_TOOLS,
        "--run-id",
        "k1",
        "--home",
        str(tmp_path),
        home=tmp_path,
    )
    wait_for(lambda: tool_running(tmp_path, "k1"), "the slow tool to start", proc)
    os.kill(proc.pid, signal.SIGKILL)
    finish(proc)
    status = cli("status", "k1", "--home", str(tmp_path))
    assert "status: RUNNING (no process" in status.out
    resumed = start("resume", "k1", "--home", str(tmp_path), home=tmp_path)
    wait_for(
        lambda: f"process {resumed.pid}" in cli("status", "k1", "--home", str(tmp_path)).out,
        "the resumed run to be driven",
    )
    assert cli("cancel", "k1", "--home", str(tmp_path)).code == 0
    result = finish(resumed)
    assert "resuming run k1" in result.out
    assert result.code == 5, result
    assert result.status == "CANCELLED"


def test_resume_of_waiting_and_finished_runs(tmp_path: Path) -> None:
    started_waiting(tmp_path, "w1")
    waiting = cli("resume", "w1", "--home", str(tmp_path))
    assert waiting.code == 3
    assert "execgraph approve w1" in waiting.out
    no_question = cli("resume", "w1", "--answer", "yes", "--home", str(tmp_path))
    assert no_question.code == 2
    assert "no pending question" in no_question.err
    assert cli("approve", "w1", "--home", str(tmp_path)).code == 0
    finished = cli("resume", "w1", "--home", str(tmp_path))
    assert finished.code == 0
    assert finished.status == "COMPLETED"
    nothing = cli("approve", "w1", "--home", str(tmp_path))
    assert nothing.code == 2
    assert "no pending approval" in nothing.err


def test_tty_prompt_approves(tmp_path: Path) -> None:
    result = run_in_pty(
        ["run", "--run-id", "t1", "--home", str(tmp_path)], [(b"[a/r/e]", b"a\n")], tmp_path
    )
    assert "approval needed" in result.out
    assert "publish_report 1.0.0 (irreversible)" in result.out
    assert '{"path": "report.md"}' in result.out
    assert result.code == 0, result.out[-2000:]
    assert result.status == "COMPLETED"
    assert (workspace(tmp_path, "t1") / "published" / "report.md").is_file()


def test_tty_prompt_edit_then_approve(tmp_path: Path) -> None:
    script = [
        (b"[a/r/e]", b"x\n"),  # not a choice: asked again
        (b"[a/r/e]", b"e\n"),
        (b"JSON object", b"[1]\n"),  # not an object: asked again
        (b"JSON object", b'{"path": "report.md"}\n'),
        (b"[a/r/e]", b"a\n"),  # the edit is a new request, approved again
    ]
    result = run_in_pty(["run", "--run-id", "t2", "--home", str(tmp_path)], script, tmp_path)
    assert "please answer one of" in result.out
    assert "the arguments must be a JSON object" in result.out
    assert result.code == 0, result.out[-2000:]
    assert result.status == "COMPLETED"
    trace = cli("trace", "t2", "--home", str(tmp_path)).out
    assert "edit by cli" in trace


def test_a_question_waits_and_resume_answer_continues(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """A provider model (a real local OpenAI-compatible server) asks; a new process answers."""
    openai_server.add(
        tool_calls(tool_call("ask_user", {"question": "Which colour should the answer be?"})),
        tool_calls(tool_call("finish", {"output": "The answer is blue."})),
    )
    task = tmp_path / "task.json"
    task.write_text(
        '{"goal": "Answer with the colour the user picks.", '
        '"success_checks": [{"kind": "output_contains", "value": "blue"}]}'
    )
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "test-key"}
    home = ["--home", str(tmp_path)]
    asked = cli("run", str(task), "--model", "openai:gpt-test", "--run-id", "q1", *home, **env)
    assert asked.code == 3, asked
    assert "an answer to: Which colour should the answer be?" in asked.out
    assert "execgraph resume q1 --answer" in asked.out
    assert "status: WAITING" in cli("status", "q1", *home).out
    done = cli("resume", "q1", "--answer", "blue", *home, **env)
    assert done.code == 0, done
    assert done.status == "COMPLETED"
    assert "The answer is blue." in done.out
    assert "The user answered: blue" in json.dumps(openai_server.requests[-1].body)
    assert not openai_server.unexpected


def test_reconcile_settles_an_unknown_write_from_the_command_line(tmp_path: Path) -> None:
    task = tmp_path / "task.json"
    checks = [{"kind": "tool_succeeded", "target": "write_file"}]
    task.write_text(json.dumps({"goal": "Write report.md", "success_checks": checks}))
    tools = "tests.support.cli_slow_tools:lossy_demo"
    done = cli("run", str(task), "--tools", tools, "--run-id", "u1", "--no-input", home=tmp_path)
    assert done.code in (3, 4), done.out + done.err
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        unknown = [r for r in store.committed("u1") if (r.result or {}).get("outcome") == "unknown"]
        [count] = [c.count for c in store.outcomes("u1") if c.outcome == "unknown"]
    [lost] = unknown  # one unknown call, counted once (its retry marker is not a call)
    assert count == 1
    bad = cli("reconcile", "u1", lost.call_id, "--home", str(tmp_path))
    assert bad.code == 2 and "--happened or --did-not-happen" in bad.err
    args = ("reconcile", "u1", lost.call_id, "--happened", "--by", "alice", "--note", "seen")
    settled = cli(*args, "--home", str(tmp_path))
    assert settled.code == 0, settled.err
    assert f"{lost.call_id} of run u1 took effect: committed" in settled.out
    with SqliteExecutionStore(tmp_path / "exec.db") as store:
        record = store.get(lost.idempotency_key)
        [verdict] = [e for e in store.events("u1") if e.type == "tool.settled"]
    assert record is not None and (record.result or {})["outcome"] == "succeeded"
    assert verdict.payload == {"happened": True, "decided_by": "alice", "note": "seen"}
    twice = cli(*args, "--home", str(tmp_path))
    assert twice.code == 2 and "not unknown" in twice.err
