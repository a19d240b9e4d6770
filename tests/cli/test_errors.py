"""CLI failures: one clear red line, no traceback, and the documented exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_helpers import Result, cli

TASK_FILES = {
    "bad.json": "{bad",
    "list.json": "[1, 2]",
    "empty_goal.json": '{"goal": ""}',
    "extra.json": '{"goal": "x", "colour": "red"}',
    "unknown_check.json": '{"goal": "x", "success_checks": [{"kind": "nope"}]}',
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    for name, text in TASK_FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def one_error_line(result: Result) -> str:
    assert "Traceback" not in result.out + result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1, result.err
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--arch", "nope"], "unknown architecture 'nope'; choose one of"),
        (["run", "--model", "gpt"], "must look like 'provider:model'"),
        (["run", "--model", "nosuchprovider:x"], "unknown model provider 'nosuchprovider'"),
        (["run", "--model", "anthropic:claude"], "pip install langchain-anthropic"),
        (["run", "{home}/missing.json"], "missing.json' does not exist"),
        (["run", "{home}/bad.json"], "is not valid JSON: Expecting property name"),
        (["run", "{home}/list.json"], "must hold a JSON object (a TaskSpec)"),
        (["run", "{home}/empty_goal.json"], "not a valid TaskSpec: goal: String should have"),
        (["run", "{home}/extra.json"], "not a valid TaskSpec: colour: Extra inputs"),
        (["run", "--run-id", "../escape"], "run id '../escape' is not valid"),
        (["run", "--tools", "no_such_module:TOOLS"], "--tools: cannot import 'no_such_module'"),
        (["run", "--tools", "tests.support.cli_slow_tools"], "must look like 'package.module"),
        (["run", "--tools", "tests.support.cli_slow_tools:NOPE"], "has no attribute 'NOPE'"),
        (["run", "--tools", "os:sep"], "must name a non-empty list of tools"),
        (["run", "--tools", "tests.support.cli_slow_tools:TOOLS"], "needs a TASK file"),
        (["run", "--home", "{home}/bad.json"], "is not a directory"),
        (["status", "ghost"], "unknown run id 'ghost'"),
        (["approve", "ghost"], "unknown run id 'ghost'"),
        (["reject", "ghost"], "unknown run id 'ghost'"),
        (["edit", "ghost", "--args", "{}"], "unknown run id 'ghost'"),
        (["edit", "ghost", "--args", "{"], "--args is not valid JSON"),
        (["edit", "ghost", "--args", "[1]"], "--args must be a JSON object"),
        (["resume", "ghost"], "unknown run id 'ghost'"),
        (["cancel", "ghost"], "unknown run id 'ghost'"),
        (["trace", "ghost"], "unknown run id 'ghost'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(home: Path, args: list[str], message: str) -> None:
    args = [a.replace("{home}", str(home)) for a in args]
    if "--home" not in args:
        args += ["--home", str(home)]
    result = cli(*args)
    assert result.code == 2, result
    line = one_error_line(result)
    assert line.startswith("error: ")
    assert message in line


def test_nothing_is_recorded_for_a_refused_start(home: Path) -> None:
    cli("run", "--model", "gpt", "--run-id", "x1", "--home", str(home))
    assert not (home / "runs" / "x1.json").exists()
    assert "no runs under" in cli("runs", "--home", str(home)).out


def test_duplicate_run_id_is_refused(home: Path) -> None:
    first = cli("run", "--run-id", "dup", "--home", str(home))
    assert first.code == 3
    again = cli("run", "--run-id", "dup", "--home", str(home))
    assert again.code == 2
    assert "run 'dup' already exists; continue it with: execgraph resume dup" in one_error_line(
        again
    )


def test_admission_rejection_is_a_failed_run_with_its_reason(home: Path) -> None:
    result = cli("run", str(home / "unknown_check.json"), "--home", str(home))
    assert result.code == 4
    assert result.status == "FAILED"
    assert "success checks of unknown kind: ['nope']" in result.out


def test_a_run_with_the_users_tools_gets_none_of_the_demos_checks(home: Path) -> None:
    """The demo's citation check belongs to the demo: a task of the user's that names it,
    with the user's own tools, is refused at admission like any unknown kind."""
    task = home / "cites.json"
    checks = [{"kind": "citations_resolve", "target": "report.md"}]
    task.write_text(json.dumps({"goal": "Search the corpus", "success_checks": checks}))
    tools = "tests.support.cli_slow_tools:TOOLS"
    result = cli("run", str(task), "--tools", tools, "--home", str(home))
    assert result.code == 4, result
    assert "success checks of unknown kind: ['citations_resolve']" in result.out
    demo = cli("run", str(task), "--home", str(home), "--no-input")  # the demo knows it
    assert "unknown kind" not in demo.out


def test_internal_error_is_one_line_exit_1_and_traceback_only_in_debug(home: Path) -> None:
    task = home / "own_task.json"
    task.write_text(json.dumps({"goal": "Search the corpus"}))
    args = ("run", str(task), "--tools", "tests.support.cli_slow_tools:broken", "--home", str(home))
    quiet = cli(*args)
    assert quiet.code == 1
    line = one_error_line(quiet)
    assert "internal error: RuntimeError: the tool factory is broken" in line
    assert "EXECGRAPH_DEBUG=1" in line
    loud = cli(*args, EXECGRAPH_DEBUG="1")
    assert loud.code == 1
    assert "Traceback" in loud.err


def test_help_documents_exit_codes() -> None:
    for args in (["--help"], ["run", "--help"], ["approve", "--help"]):
        text = " ".join(cli(*args).out.split())
        for code in ("0 COMPLETED", "3 WAITING", "4 FAILED", "5 CANCELLED", "2 bad input"):
            assert code in text, (args, code)
        assert "1 internal error" in text


def test_usage_errors_exit_2_without_traceback(home: Path) -> None:
    result = cli("run", "--no-such-option", "--home", str(home))
    assert result.code == 2
    assert "Traceback" not in result.err
    assert cli("approve").code == 2  # missing RUN_ID
