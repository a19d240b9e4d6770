"""`execgraph replay RUN_ID` from a new process: same status, no model call, no side effect."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_helpers import cli


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_replay_of_a_recorded_demo_run_reproduces_it(tmp_path: Path) -> None:
    done = cli("run", "--run-id", "rec", "--auto-approve", "--home", str(tmp_path))
    assert done.code == 0 and done.status == "COMPLETED", done.out + done.err
    workspace = tmp_path / "workspaces" / "rec"
    before = _snapshot(workspace)
    replayed = cli("replay", "rec", "--home", str(tmp_path))
    assert replayed.code == 0, replayed.out + replayed.err
    assert "same trajectory" in replayed.out
    assert "replayed status" in replayed.out and "COMPLETED" in replayed.out
    assert _snapshot(workspace) == before  # the replay touched nothing in the world


def test_replay_of_an_unknown_run_is_a_clear_error(tmp_path: Path) -> None:
    result = cli("replay", "nope", "--home", str(tmp_path))
    assert result.code == 2 and "Traceback" not in result.err + result.out
