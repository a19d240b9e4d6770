"""Hostile child processes: secrets, the execution home, escaping trees, output floods.

Everything runs real programs (``/bin/cat``, the test's Python) through the public
``ProcessAdapter`` tool; the properties are checked from the child's side (what it could
read, which of its descendants still run), not by inspecting the mechanism.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import (
    PathEscapeError,
    ResponseLostError,
    ToolCancelled,
    ToolDeclarationError,
    UsageError,
)
from execgraph.state.home import Home
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.adapters.process import ProcessAdapter, ProcessExitError, output_of
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from tests.support.hostile_procs import (
    DRIP,
    ESCAPE,
    ESCAPES,
    OutputEvents,
    all_gone,
    gone,
    landlock_abi,
    pids_in,
)

pytestmark = pytest.mark.timeout(120)

SECRET = "s3cret-approval-key-do-not-leak"
needs_landlock = pytest.mark.skipif(
    landlock_abi() < 1, reason="the kernel has no Landlock: children are not confined"
)


def _adapter(**kwargs: Any) -> ProcessAdapter:
    kwargs.setdefault("grace_s", 0.3)
    return ProcessAdapter({"python": sys.executable, "cat": "/bin/cat"}, **kwargs)


def _ctx(root: Path, **kwargs: Any) -> InvokeContext:
    return InvokeContext(
        run_id="run-1", call_id="call-1", attempt_id="att-1", workspace_root=root, **kwargs
    )


def _call(adapter: ProcessAdapter, ctx: InvokeContext, **args: Any) -> AdapterOutput:
    (spec,) = adapter.tools()
    return spec.run(spec.input_model(**args), ctx)


def _attempt(adapter: ProcessAdapter, ctx: InvokeContext, **args: Any) -> str:
    """Everything the child printed, whether or not it failed."""
    try:
        out = _call(adapter, ctx, **args)
    except ProcessExitError as exc:
        out = exc.output
    return str(out.data["stdout"]) + str(out.data["stderr"])


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An execution home as build_graph makes it: key, store, a run's workspace inside."""
    monkeypatch.delenv("EXECGRAPH_APPROVAL_SECRET", raising=False)
    base = tmp_path / "home"
    (base / "workspaces" / "r1").mkdir(parents=True)
    Home(base).secret()
    SqliteExecutionStore(Home(base).exec_db).close()
    return base


@pytest.fixture
def spawned() -> Iterator[list[int]]:
    """Pids a test saw; any survivor is killed afterwards so a failure never leaks one."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not gone(pid):
            os.kill(pid, 9)


# --------------------------------------------------------------------------- secrets


@needs_landlock
def test_a_child_cannot_read_the_parents_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXECGRAPH_APPROVAL_SECRET", SECRET)
    ctx = _ctx(tmp_path)
    printed = _attempt(_adapter(), ctx, program="cat", args=[f"/proc/{os.getpid()}/environ"])
    assert SECRET not in printed
    script = "import os; print(open(f'/proc/{os.getppid()}/environ').read())"
    printed = _attempt(_adapter(), ctx, program="python", args=["-c", script])
    assert SECRET not in printed and "PermissionError" in printed


@needs_landlock
def test_a_child_cannot_read_the_execution_home(home: Path) -> None:
    key = (home / "approval.key").read_text()
    ws = home / "workspaces" / "r1"
    (ws / "mine.txt").write_text("workspace data")
    for target in ["../../approval.key", str(home / "approval.key"), "../../exec.db"]:
        with pytest.raises(ProcessExitError) as info:
            _call(_adapter(), _ctx(ws), program="cat", args=[target])
        assert key not in info.value.output.data["stdout"]
        assert "Permission denied" in info.value.output.data["stderr"]
    listing = "import os; print(os.listdir('../..'))"
    assert "approval.key" not in _attempt(
        _adapter(), _ctx(ws), program="python", args=["-c", listing]
    )
    # The workspace itself, the program's own files and a private temp dir stay usable.
    assert _call(_adapter(), _ctx(ws), program="cat", args=["mine.txt"]).data["stdout"] == (
        "workspace data"
    )
    script = (
        "import os, tempfile; open('made.txt', 'w').write('ok'); "
        "tempfile.NamedTemporaryFile().write(b'x'); print(os.environ['TMPDIR'])"
    )
    out = _call(_adapter(), _ctx(ws), program="python", args=["-c", script])
    assert (ws / "made.txt").read_text() == "ok"
    assert not out.data["stdout"].startswith(str(home))


def test_the_childs_environment_holds_no_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "EXECGRAPH_APPROVAL_SECRET": SECRET,
        "OPENAI_API_KEY": "sk-leak",
        "GITHUB_TOKEN": "ghp-leak",
        "AWS_SECRET_ACCESS_KEY": "aws-leak",
        "PGPASSWORD": "pg-leak",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    for name, value in {
        "HOME": "/root",
        "LANG": "C.UTF-8",
        "LC_MESSAGES": "C",
        "TZ": "UTC",
    }.items():
        monkeypatch.setenv(name, value)
    script = "import json, os; print(json.dumps(dict(os.environ)))"
    out = _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script])
    env = json.loads(out.data["stdout"])
    assert not set(secrets) & set(env)
    assert not any(value in out.data["stdout"] for value in secrets.values())
    assert {"PATH", "HOME", "LANG", "LC_MESSAGES", "TZ", "TMPDIR"} <= set(env)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GH_TOKEN", "MY_SECRET", "PGPASSWORD"])
def test_a_secret_cannot_be_allow_listed_into_the_child(name: str) -> None:
    with pytest.raises(ToolDeclarationError, match=name):
        _adapter(env_allow=["LANG", name])


def test_declared_path_arguments_are_confined_before_anything_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (tmp_path / "outside.txt").write_text("outside")
    adapter = _adapter(path_args=["cat"])
    for target in ["../outside.txt", str(tmp_path / "outside.txt"), "--", "-n"]:
        if target.startswith("-"):
            continue
        with pytest.raises(PathEscapeError):
            _call(adapter, _ctx(ws), program="cat", args=["-n", target])
    assert _call(adapter, _ctx(ws), program="cat", args=["-n", "a.txt"]).data["stdout"].strip() == (
        "1\ta"
    )


def test_the_approval_key_is_private_and_outside_any_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EXECGRAPH_APPROVAL_SECRET", raising=False)
    fresh = tmp_path / "fresh"
    Home(fresh).secret()
    assert stat.S_IMODE((fresh / "approval.key").stat().st_mode) == 0o600
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "approval.key").write_text("k" * 64)
    (loose / "approval.key").chmod(0o644)
    assert Home(loose).secret() == b"k" * 64
    assert stat.S_IMODE((loose / "approval.key").stat().st_mode) == 0o600
    with pytest.raises(UsageError, match="inside the workspace"):
        Home(tmp_path / "h").secret(workspace=tmp_path)


# --------------------------------------------------------------------------- process trees


def _escape(
    tmp_path: Path, mode: str, stop: str, spawned: list[int], **adapter_kwargs: Any
) -> None:
    cancel = threading.Event()
    events = OutputEvents(cancel if stop == "cancel" else None)
    ctx = _ctx(tmp_path, cancel=cancel, emit=events)
    expected = ToolCancelled if stop == "cancel" else ResponseLostError
    with pytest.raises(expected) as info:
        _call(
            _adapter(**adapter_kwargs),
            ctx,
            program="python",
            args=["-c", ESCAPE, mode, "hang", "pids.txt"],
            timeout_s=None if stop == "cancel" else 5,
        )
    pids = pids_in(tmp_path / "pids.txt")
    spawned.extend(pids)
    assert len(pids) == 1, events.text("stderr")
    assert all_gone(pids), f"{mode} grandchild survived the {stop}"
    out = output_of(info.value)
    assert out is not None and out.data["stopped"] == (
        "cancelled" if stop == "cancel" else "deadline"
    )


@pytest.mark.parametrize("stop", ["cancel", "deadline"])
@pytest.mark.parametrize("mode", ESCAPES)
def test_escaping_grandchildren_are_killed_with_the_call(
    tmp_path: Path, spawned: list[int], mode: str, stop: str
) -> None:
    _escape(tmp_path, mode, stop, spawned)


@pytest.mark.parametrize("mode", ESCAPES)
def test_without_a_cgroup_the_sweep_still_kills_escaping_grandchildren(
    tmp_path: Path, spawned: list[int], mode: str
) -> None:
    _escape(tmp_path, mode, "cancel", spawned, tree="sweep")


@pytest.mark.parametrize("tree", ["auto", "sweep"])
@pytest.mark.parametrize("mode", ESCAPES)
def test_a_daemon_left_behind_is_never_reported_as_success(
    tmp_path: Path, spawned: list[int], mode: str, tree: str
) -> None:
    with pytest.raises(ProcessExitError) as info:
        _call(
            _adapter(tree=tree),
            _ctx(tmp_path),
            program="python",
            args=["-c", ESCAPE, mode, "exit", "pids.txt"],
        )
    pids = pids_in(tmp_path / "pids.txt")
    spawned.extend(pids)
    assert len(pids) == 1
    assert all_gone(pids)
    assert info.value.exit_code == 0 and "left" in info.value.message
    assert info.value.output.data["leftover_processes"] >= 1


# --------------------------------------------------------------------------- output floods


def test_byte_at_a_time_output_is_coalesced_into_few_events(tmp_path: Path) -> None:
    from execgraph.tools.adapters import _streams

    n = 40_000
    events = OutputEvents()
    started = time.monotonic()
    out = _call(
        _adapter(), _ctx(tmp_path, emit=events), program="python", args=["-c", DRIP, str(n)]
    )
    elapsed = time.monotonic() - started
    assert out.data["stdout"] == "x" * (n // 2) and out.data["stderr"] == "x" * (n // 2)
    assert events.text("stdout") == "x" * (n // 2) and events.text("stderr") == "x" * (n // 2)
    # Per stream: at most one flush per interval, one per full buffer, and the final one.
    interval = getattr(_streams, "FLUSH_S", 0.1)
    bound = 2 * (2 + elapsed / interval + n / (64 * 1024))
    assert len(events.events) <= bound, (len(events.events), elapsed)
