"""The process adapter against real child processes (no mocks, no shell)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import (
    DeadlineExceeded,
    PathEscapeError,
    PolicyDenied,
    ResponseLostError,
    TargetNotFound,
    ToolCancelled,
    ToolDeclarationError,
    TransientError,
)
from execgraph.tools.adapters.process import (
    DEFAULT_PATH,
    ProcessAdapter,
    ProcessExitError,
    ProcessLeftoverError,
    output_of,
)
from execgraph.tools.invocation import AdapterOutput, InvokeContext

# A child that starts a grandchild (which ignores SIGTERM), reports both pids, then hangs.
HANG = r"""
import os, signal, subprocess, sys, time
if sys.argv[1:] == ["ignore-term"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
print("PIDS", os.getpid(), grandchild.pid, flush=True)
time.sleep(120)
"""

FIFTY_MB = 50 * 1024 * 1024
BIG = r"""
import sys
block = b"x" * (1024 * 1024)
sys.stderr.buffer.write(b"e" * (1024 * 1024))
for _ in range(50):
    sys.stdout.buffer.write(block)
"""


class Recorder:
    """Collects tool.output events; can cancel the call once the child reported its pids."""

    def __init__(self, cancel: threading.Event | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.pids: list[int] = []
        self._cancel = cancel
        self._text = ""

    def __call__(self, kind: str, payload: dict[str, Any]) -> None:
        assert kind == "tool.output"
        self.events.append(payload)
        if payload["stream"] == "stdout":
            self._text += payload["chunk"]
            for line in self._text.splitlines():
                if line.startswith("PIDS ") and not self.pids:
                    self.pids = [int(p) for p in line.split()[1:]]
                    if self._cancel is not None:
                        self._cancel.set()


def _gone(pid: int) -> bool:
    """Dead or a zombie (reaping orphans is init's job, not ours)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def _all_gone(pids: list[int]) -> bool:
    # SIGKILL delivery is asynchronous: allow a bounded number of short looks.
    for _ in range(200):
        if all(_gone(pid) for pid in pids):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def spawned() -> Iterator[list[int]]:
    """Pids a test saw; any survivor is killed afterwards so a failure never leaks one."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if not _gone(pid):
            os.kill(pid, signal.SIGKILL)


def _adapter(**kwargs: Any) -> ProcessAdapter:
    kwargs.setdefault("grace_s", 0.3)
    return ProcessAdapter({"python": sys.executable, "echo": "/bin/echo"}, **kwargs)


def _ctx(root: Path, **kwargs: Any) -> InvokeContext:
    return InvokeContext(
        run_id="run-1", call_id="call-1", attempt_id="att-1", workspace_root=root, **kwargs
    )


def _call(adapter: ProcessAdapter, ctx: InvokeContext, **args: Any) -> AdapterOutput:
    (spec,) = adapter.tools()
    assert spec.name == "run_process"
    return spec.run(spec.input_model(**args), ctx)


def _observed(error: BaseException) -> AdapterOutput:
    out = output_of(error)
    assert out is not None
    return out


def _evidence(out: AdapterOutput) -> dict[str, str]:
    return {e.kind: e.value for e in out.evidence}


def test_success_streams_output_and_records_evidence(tmp_path: Path) -> None:
    rec = Recorder()
    out = _call(_adapter(), _ctx(tmp_path, emit=rec), program="python", args=["-c", "print('hi')"])
    assert out.data["exit_code"] == 0 and out.data["stdout"] == "hi\n"
    assert out.committed is True and not out.truncated
    ev = _evidence(out)
    assert ev["exit_code"] == "0"
    assert ev["stdout_sha256"] == hashlib.sha256(b"hi\n").hexdigest()
    assert ev["stderr_sha256"] == hashlib.sha256(b"").hexdigest()
    assert "".join(e["chunk"] for e in rec.events if e["stream"] == "stdout") == "hi\n"
    seqs = [e["seq"] for e in rec.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


@pytest.mark.parametrize("ignore_term", [False, True])
def test_cancel_kills_the_whole_group(
    tmp_path: Path, spawned: list[int], ignore_term: bool
) -> None:
    cancel = threading.Event()
    rec = Recorder(cancel)
    args = ["-c", HANG, *(["ignore-term"] if ignore_term else [])]
    with pytest.raises(ToolCancelled) as info:
        _call(_adapter(), _ctx(tmp_path, cancel=cancel, emit=rec), program="python", args=args)
    spawned.extend(rec.pids)
    assert len(rec.pids) == 2
    assert _all_gone(rec.pids)
    assert _observed(info.value).data["stopped"] == "cancelled"
    assert _observed(info.value).committed is None  # a write killed mid-way: nobody can tell


def test_deadline_kills_the_whole_group_and_write_outcome_is_unknown(
    tmp_path: Path, spawned: list[int]
) -> None:
    rec = Recorder()
    with pytest.raises(ResponseLostError) as info:
        _call(
            _adapter(), _ctx(tmp_path, emit=rec), program="python", args=["-c", HANG], timeout_s=3
        )
    spawned.extend(rec.pids)
    assert len(rec.pids) == 2
    assert _all_gone(rec.pids)
    assert _observed(info.value).data["stopped"] == "deadline"


def test_context_deadline_on_a_read_tool_is_transient(tmp_path: Path, spawned: list[int]) -> None:
    rec = Recorder()
    ctx = _ctx(tmp_path, emit=rec, deadline=time.time() + 3)
    with pytest.raises(TransientError):
        _call(_adapter(effect="read"), ctx, program="python", args=["-c", HANG, "ignore-term"])
    spawned.extend(rec.pids)
    assert len(rec.pids) == 2
    assert _all_gone(rec.pids)


@pytest.mark.parametrize("own_session", [False, True])
def test_a_leftover_background_process_is_killed_and_the_call_is_not_a_success(
    tmp_path: Path, spawned: list[int], own_session: bool
) -> None:
    script = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], "
        f"start_new_session={own_session}); print('PIDS', p.pid, flush=True)"
    )
    rec = Recorder()
    with pytest.raises(ProcessLeftoverError) as info:
        _call(_adapter(), _ctx(tmp_path, emit=rec), program="python", args=["-c", script])
    spawned.extend(rec.pids)
    assert _all_gone(rec.pids)
    out = _observed(info.value)
    assert out.data["exit_code"] == 0 and out.data["leftover_processes"] == 1
    assert out.data["stdout"].startswith("PIDS")  # the leftover held the pipe: still read
    assert out.committed is None  # what the killed process was doing is unknown
    assert not any(e.verified for e in out.evidence)
    data = _call(
        _adapter(on_nonzero="data"),
        _ctx(tmp_path, emit=Recorder()),
        program="python",
        args=["-c", script],
    ).data
    assert data["leftover_processes"] == 1


def test_fifty_megabytes_stay_within_the_budget(tmp_path: Path) -> None:
    budget = 64 * 1024
    rec = Recorder()
    tracemalloc.start()
    try:
        ctx = _ctx(tmp_path, emit=rec, output_budget=budget)
        out = _call(_adapter(), ctx, program="python", args=["-c", BIG], timeout_s=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024  # far below the 51 MB the child wrote
    expected = hashlib.sha256()
    for _ in range(50):
        expected.update(b"x" * (1024 * 1024))
    assert out.data["stdout_bytes"] == FIFTY_MB
    assert out.data["stderr_bytes"] == 1024 * 1024
    assert len(out.data["stdout"].encode()) <= budget
    assert len(out.data["stderr"].encode()) <= budget
    assert out.truncated and out.data["stdout_truncated"] and out.data["stderr_truncated"]
    assert _evidence(out)["stdout_sha256"] == expected.hexdigest()
    assert _evidence(out)["stderr_sha256"] == hashlib.sha256(b"e" * 1024 * 1024).hexdigest()
    streamed = sum(len(e["chunk"].encode()) for e in rec.events if e["stream"] == "stdout")
    assert streamed <= budget
    assert any(e.get("truncated") for e in rec.events)


HOSTILE = [
    "; rm -rf ./*",
    "$(touch pwned1)",
    "`touch pwned2`",
    "| touch pwned3",
    "&& touch pwned4",
    "> pwned5",
    "'\"*",
]


def test_shell_metacharacters_are_inert(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("still here")
    before = sorted(os.listdir(tmp_path))
    out = _call(_adapter(), _ctx(tmp_path), program="echo", args=HOSTILE)
    assert out.data["stdout"] == " ".join(HOSTILE) + "\n"
    argv = "import json, sys; print(json.dumps(sys.argv[1:]))"
    out = _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", argv, *HOSTILE])
    assert json.loads(out.data["stdout"]) == HOSTILE
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("program", ["sh", "/bin/sh", "bash", "rm", "../bin/echo", "/bin/echo "])
def test_program_not_on_allow_list_is_denied(tmp_path: Path, program: str) -> None:
    with pytest.raises(PolicyDenied):
        _call(_adapter(), _ctx(tmp_path), program=program, args=["-c", "touch x"])
    assert not (tmp_path / "x").exists()


def test_program_by_exact_resolved_path_is_accepted(tmp_path: Path) -> None:
    out = _call(_adapter(), _ctx(tmp_path), program="/bin/echo", args=["ok"])
    assert out.data["stdout"] == "ok\n"


def test_environment_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXECGRAPH_TEST_SECRET", "hunter2-do-not-leak")
    script = "import json, os; print(json.dumps(dict(os.environ)))"
    out = _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script])
    env = json.loads(out.data["stdout"])
    assert "EXECGRAPH_TEST_SECRET" not in env
    assert "hunter2-do-not-leak" not in out.data["stdout"]
    assert env["PATH"] == DEFAULT_PATH
    assert {k for k in env if not k.startswith("LC_")} <= {
        "PATH",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
    }
    assert env["TMPDIR"] != os.environ.get("TMPDIR") and not os.path.exists(env["TMPDIR"])
    fixed = _adapter(env_set={"GIT_TERMINAL_PROMPT": "0"})
    out = _call(fixed, _ctx(tmp_path), program="python", args=["-c", script])
    assert json.loads(out.data["stdout"])["GIT_TERMINAL_PROMPT"] == "0"


@pytest.mark.parametrize("cwd", ["..", "../", "/etc", "sub/../../x", "link", "link/inner"])
def test_cwd_escape_is_refused(
    tmp_path: Path, cwd: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    outside = tmp_path_factory.mktemp("outside")
    (outside / "inner").mkdir()
    (root / "link").symlink_to(outside)
    with pytest.raises(PathEscapeError):
        _call(_adapter(), _ctx(root), program="python", args=["-c", "open('x', 'w')"], cwd=cwd)
    assert list(outside.iterdir()) == [outside / "inner"]


def test_cwd_inside_workspace(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    script = "import os; print(os.getcwd())"
    out = _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script], cwd="sub")
    assert out.data["stdout"].strip() == os.path.realpath(tmp_path / "sub")
    with pytest.raises(TargetNotFound):
        _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script], cwd="missing")


def test_nonzero_exit_is_a_permanent_error_with_the_code(tmp_path: Path) -> None:
    script = "import sys; sys.stderr.write('boom'); sys.exit(3)"
    with pytest.raises(ProcessExitError) as info:
        _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script])
    assert info.value.exit_code == 3 and "status 3" in info.value.message
    assert _observed(info.value).data["stderr"] == "boom"
    out = _call(_adapter(on_nonzero="data"), _ctx(tmp_path), program="python", args=["-c", script])
    assert out.data["exit_code"] == 3 and _evidence(out)["exit_code"] == "3"


def test_killed_by_a_signal_says_so(tmp_path: Path) -> None:
    script = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    with pytest.raises(ProcessExitError) as info:
        _call(_adapter(), _ctx(tmp_path), program="python", args=["-c", script])
    assert info.value.exit_code == -9 and "signal 9" in info.value.message


def test_nothing_starts_when_cancelled_or_out_of_time(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    script = "open('ran', 'w')"
    with pytest.raises(ToolCancelled):
        _call(_adapter(), _ctx(tmp_path, cancel=cancel), program="python", args=["-c", script])
    with pytest.raises(DeadlineExceeded):
        ctx = _ctx(tmp_path, deadline=time.time() - 1)
        _call(_adapter(), ctx, program="python", args=["-c", script])
    assert not (tmp_path / "ran").exists()


def test_arguments_are_validated() -> None:
    (spec,) = _adapter().tools()
    with pytest.raises(ValueError):
        spec.input_model(program="echo", args=["a\x00b"])
    with pytest.raises(ValueError):
        spec.input_model(program="echo", command="rm -rf /")


def test_unknown_allowed_program_fails_at_construction() -> None:
    with pytest.raises(ValueError):
        ProcessAdapter(["definitely-not-a-real-program-xyz"])


def test_confinement_can_be_required_or_turned_off(tmp_path: Path) -> None:
    from execgraph.tools.sandbox import landlock_abi

    outside = tmp_path / "outside.txt"
    outside.write_text("outside")
    ws = tmp_path / "ws"
    ws.mkdir()
    read = ["-c", f"print(open({str(outside)!r}).read())"]
    if landlock_abi() < 1:
        with pytest.raises(ToolDeclarationError):
            _adapter(confine="require")
        return
    with pytest.raises(ProcessExitError) as info:
        _call(_adapter(confine="require"), _ctx(ws), program="python", args=read)
    assert "PermissionError" in info.value.output.data["stderr"]
    # Off (the fallback where the kernel has no Landlock): only the environment is scrubbed.
    out = _call(_adapter(confine="off"), _ctx(ws), program="python", args=read)
    assert out.data["stdout"] == "outside\n"
    # An operator may let children read one more tree.
    out = _call(_adapter(read_paths=[str(tmp_path)]), _ctx(ws), program="python", args=read)
    assert out.data["stdout"] == "outside\n"


def test_path_args_must_name_allowed_programs() -> None:
    with pytest.raises(ToolDeclarationError):
        _adapter(path_args=["rm"])


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_confined_git_still_works_in_its_workspace(tmp_path: Path) -> None:
    adapter = ProcessAdapter(["git"], grace_s=0.3)
    ident = ["-c", "user.email=a@example.com", "-c", "user.name=a"]
    for argv in (["init", "-q"], [*ident, "commit", "-q", "--allow-empty", "-m", "first"]):
        _call(adapter, _ctx(tmp_path), program="git", args=argv)
    out = _call(adapter, _ctx(tmp_path), program="git", args=["log", "--format=%s"])
    assert out.data["stdout"] == "first\n"
