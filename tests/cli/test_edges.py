"""The CLI's edges, driven as a user drives them: a cancel reads as a cancel, Ctrl-C names
the run and a command that continues it, ``--tools`` naming something that is no tool is
bad input, the offline policy says it only plays the demo, and every printed follow-up
runs as printed (with ``--home``, quoted, when the home is not the default)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.cli_helpers import (
    GUARD_S,
    REPO,
    Result,
    clean,
    cli,
    cli_env,
    executable,
    run_in_pty,
)


def _started_waiting(home: Path, run_id: str, *extra: str) -> None:
    result = cli("run", "--run-id", run_id, "--home", str(home), *extra)
    assert result.code == 3 and result.status == "WAITING", result


@pytest.mark.parametrize("arch", ["react", "hybrid"])
def test_a_cancel_of_a_waiting_run_reads_as_a_cancel(tmp_path: Path, arch: str) -> None:
    _started_waiting(tmp_path, "c1", "--arch", arch)
    result = cli("cancel", "c1", "--home", str(tmp_path))
    assert result.code == 5, result
    assert result.status == "CANCELLED"
    assert "cancelled, not run: approval of publish_report" in result.out
    assert "publish_report not run — the run was cancelled" in result.out
    assert "why: cancelled on request" in result.out
    for failure in ("rejected", "PARTIAL", "FAILED", "error:", "timed out"):
        assert failure not in result.out, (failure, result.out)
    trace = cli("trace", "c1", "--home", str(tmp_path)).out
    assert "CANCELLED (cancelled on request)" in trace
    if arch == "react":  # the executor logs the cancel's answer; hybrid's gate asks no more
        assert "reject by execgraph cancel (the run was cancelled)" in trace
    assert not (tmp_path / "workspaces" / "c1" / "published").exists()


def _interrupt_at_the_prompt(args: list[str]) -> Result:
    """Run on a terminal, wait for the approval prompt, then press Ctrl-C (SIGINT)."""
    sent: list[int] = []

    def ctrl_c(proc: subprocess.Popen[bytes]) -> None:
        os.kill(proc.pid, signal.SIGINT)
        sent.append(proc.pid)

    result = run_in_pty(args, [(b"[a/r/e]", ctrl_c)], None)  # --home given in args
    assert sent, result.out
    return result


def _run_as_printed(line: str) -> Result:
    """A printed ``execgraph ...`` command, split as a shell would and run as is."""
    words = shlex.split(line)
    assert words[0] == "execgraph", line
    proc = subprocess.run(
        [*executable(), *words[1:]],
        cwd=REPO,
        env=cli_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    return Result(proc.returncode, clean(proc.stdout), clean(proc.stderr))


def test_ctrl_c_names_the_run_and_a_command_that_continues_it(tmp_path: Path) -> None:
    home = tmp_path / "my home"  # a space: the printed --home must be quoted
    result = _interrupt_at_the_prompt(["run", "--run-id", "i1", "--home", str(home)])
    assert result.code == 130, result
    assert "RUN_ID" not in result.out
    [line] = [ln for ln in result.out.splitlines() if "interrupted" in ln]
    command = line.split("continue with: ", 1)[1].strip()
    assert command == f"execgraph resume i1 --home {shlex.quote(str(home))}"
    resumed = _run_as_printed(command)
    assert resumed.code == 3, resumed  # waiting for the approval it was asked about
    assert "approval of publish_report" in resumed.out


def test_printed_follow_ups_run_as_printed_under_another_home(tmp_path: Path) -> None:
    home = tmp_path / "another home"
    _started_waiting(home, "f1")
    again = cli("run", "--run-id", "f1", "--home", str(home))
    assert again.code == 2
    command = again.err.split("continue it with: ", 1)[1].strip()
    assert _run_as_printed(command).code == 3
    status = cli("status", "f1", "--home", str(home))
    hints = [ln.strip() for ln in status.out.splitlines() if ln.strip().startswith("execgraph ")]
    assert f"execgraph approve f1 --home {shlex.quote(str(home))}" in hints
    unknown = cli("status", "ghost", "--home", str(home))
    listing = unknown.err.split("list runs with: ", 1)[1].rstrip(")\n ")
    listed = _run_as_printed(listing)
    assert listed.code == 0 and "f1" in listed.out


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ("execgraph.graph:__all__", "item 0 is a str ('ARCHITECTURES'), not a tool"),
        ("tests.support.cli_helpers:executable", "a factory must take one argument"),
    ],
)
def test_tools_that_are_not_tools_are_bad_input(tmp_path: Path, tools: str, message: str) -> None:
    task = tmp_path / "task.json"
    task.write_text(json.dumps({"goal": "Search the corpus"}))
    result = cli("run", str(task), "--tools", tools, "--home", str(tmp_path))
    assert result.code == 2, result
    assert "internal error" not in result.err
    assert message in result.err
    assert not (tmp_path / "runs").exists()


def test_the_offline_model_says_it_can_only_run_the_demo(tmp_path: Path) -> None:
    task = tmp_path / "own.json"
    task.write_text(json.dumps({"goal": "Summarise the quarterly numbers"}))
    own = cli("run", str(task), "--home", str(tmp_path), "--no-input")
    assert "--model offline is the demo's scripted policy: it can only run the demo" in own.out
    demo = cli("run", "--home", str(tmp_path), "--no-input")
    assert "can only run the demo" not in demo.out
