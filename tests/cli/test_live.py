"""A running tool's output reaches the user while the tool still runs.

End to end: the real ``execgraph`` console script in a subprocess, a provider model scripted
by a real local OpenAI-compatible server, and the real process adapter running a child
that prints and then blocks until the test has *seen* its first line in the CLI's output.
Were output only shown after the tool ended, the child would give up waiting and say so.

``process_tools`` below is what ``--tools tests.cli.test_live:process_tools`` loads
in the CLI process.
"""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from execgraph.cli.live import MAX_LINE, LiveOutput
from execgraph.tools.adapters import ProcessAdapter
from tests.support.cli_helpers import GUARD_S, REPO, clean, cli_env, executable
from tests.support.openai_server import OpenAIServer, tool_call, tool_calls

TOOLS = "tests.cli.test_live:process_tools"

# Prints, then waits (bounded) for a file the test creates once it saw that line.
CHILD = """
import os, sys, time
print("first line from the tool", flush=True)
print("a warning on stderr", file=sys.stderr, flush=True)
deadline = time.monotonic() + 60
while not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.05)
print("flag seen" if os.path.exists("go") else "gave up waiting", flush=True)
"""


def process_tools(workspace: Path) -> list[Any]:
    """Only ``run_process``, allowed to run this interpreter (a read: no approval)."""
    return [ProcessAdapter({"python": sys.executable}, effect="read")]


class Reader(threading.Thread):
    """Collects a pipe's lines as they arrive, so the test can look while the CLI runs."""

    def __init__(self, pipe: Any) -> None:
        super().__init__(daemon=True)
        self._pipe, self._lock, self._lines = pipe, threading.Lock(), list[str]()

    def run(self) -> None:
        for line in self._pipe:
            with self._lock:
                self._lines.append(clean(line))

    def text(self) -> str:
        with self._lock:
            return "".join(self._lines)


def run_until_seen(
    tmp_path: Path, server: OpenAIServer, child: str, run_id: str, seen: str
) -> tuple[str, str, int]:
    """Run the CLI on a run whose one call runs ``child``; once its output shows ``seen``,
    let the child end (the ``go`` file). Returns (what was shown while the child still
    ran, everything shown, the exit code)."""
    server.add(
        tool_calls(tool_call("run_process", {"program": "python", "args": ["-c", child]})),
        tool_calls(tool_call("finish", {"output": "The script ran."})),
    )
    task = tmp_path / "task.json"
    task.write_text('{"goal": "Run the script and say that it ran."}')
    env = cli_env(tmp_path, OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="test-key")
    args = [str(task), "--model", "openai:gpt-test", "--tools", TOOLS, "--run-id", run_id]
    with (tmp_path / "stderr.txt").open("w") as err:
        proc = subprocess.Popen(
            [*executable(), "run", *args, "--home", str(tmp_path)],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        reader = Reader(proc.stdout)
        reader.start()
        try:
            deadline = time.monotonic() + GUARD_S
            while seen not in reader.text():
                assert proc.poll() is None, reader.text()
                assert time.monotonic() < deadline, reader.text()
                time.sleep(0.05)
            seen_while_running = reader.text()
            (tmp_path / "workspaces" / run_id / "go").touch()
            code = proc.wait(timeout=GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=GUARD_S)
    return seen_while_running, reader.text(), code


def test_process_output_is_shown_while_the_tool_runs(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    seen_while_running, out, code = run_until_seen(
        tmp_path, openai_server, CHILD, "live1", "t1.c0 │ first line from the tool"
    )
    assert "gave up waiting" not in out, f"the output was not shown while the tool ran:\n{out}"
    assert "t1.c0 │ flag seen" in out, out
    assert "run_process OK" not in seen_while_running  # the tool had not finished
    assert code == 0, (out, (tmp_path / "stderr.txt").read_text())
    assert "t1.c0 stderr │ a warning on stderr" in out
    assert out.index("t1.c0 │ flag seen") < out.index("✓ t1.c0 run_process OK/succeeded")
    assert "status: COMPLETED" in out
    assert not openai_server.unexpected


# Says nothing, and waits (bounded) for a file the test creates once the CLI showed it
# running for a while.
QUIET_CHILD = """
import os, time
deadline = time.monotonic() + 60
while not os.path.exists("go") and time.monotonic() < deadline:
    time.sleep(0.05)
print("flag seen" if os.path.exists("go") else "gave up waiting", flush=True)
"""


def test_a_quiet_tool_is_shown_running_with_its_elapsed_time(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    seen_while_running, out, code = run_until_seen(
        tmp_path, openai_server, QUIET_CHILD, "quiet1", "t1.c0 │ run_process still running (2 s)"
    )
    assert "t1.c0 │ running run_process …" in seen_while_running
    assert "run_process OK" not in seen_while_running  # shown before the tool ended
    assert code == 0, (out, (tmp_path / "stderr.txt").read_text())
    assert "t1.c0 │ flag seen" in out and "status: COMPLETED" in out


def render(*chunks: Any, finish: bool = True) -> list[str]:
    """What :class:`LiveOutput` prints for these chunks, line by line, without styles."""
    buffer = io.StringIO()
    live = LiveOutput(Console(file=buffer, width=300, no_color=True, highlight=False))
    for chunk in chunks:
        live.add(chunk)
    if finish:
        live.finish()
    return [line.strip() for line in buffer.getvalue().splitlines()]


def out_chunk(text: str, stream: str = "stdout", **extra: Any) -> dict[str, Any]:
    return {"call_id": "c1", "kind": "tool.output", "stream": stream, "chunk": text, **extra}


def test_a_line_split_across_reads_prints_once_and_a_partial_line_waits() -> None:
    chunks = (out_chunk("one\ntw"), out_chunk("o\nthr"), out_chunk("x", stream="stderr"))
    assert render(*chunks, finish=False) == ["c1 │ one", "c1 │ two"]
    assert render(*chunks) == ["c1 │ one", "c1 │ two", "c1 │ thr", "c1 stderr │ x"]


def test_output_is_plain_text_without_terminal_control() -> None:
    lines = render(
        out_chunk("\x1b[31m[bold]red[/bold]\x1b[0m\r\n"),
        out_chunk("10%\r50%\r100%\n"),
        out_chunk("bell\x07\n"),
        out_chunk("x" * (MAX_LINE + 50) + "\n"),
    )
    assert lines[:3] == ["c1 │ [bold]red[/bold]", "c1 │ 100%", "c1 │ bell\\x07"]
    assert lines[3] == "c1 │ " + "x" * (MAX_LINE - 1) + "…"


def test_truncation_and_other_chunks_are_one_line_each() -> None:
    lines = render(
        out_chunk("cut her", truncated=True),
        {"call_id": "c2", "kind": "progress", "message": "slow search started"},
        {"call_id": "c3", "kind": "metric", "rows": 3},
    )
    assert lines == [
        "c1 │ cut her",
        "c1 │ … (output budget reached; not shown)",
        "c2 │ progress: slow search started",
        'c3 │ metric: {"rows": 3}',
    ]


def running(elapsed: float, call_id: str = "c1") -> dict[str, Any]:
    return {"kind": "tool.running", "call_id": call_id, "tool": "crunch", "elapsed_s": elapsed}


def test_a_running_call_is_shown_at_its_start_then_at_doubling_intervals() -> None:
    ticks = [running(float(s)) for s in range(0, 10)]
    assert render(*ticks, running(0.0, "c2")) == [
        "c1 │ running crunch …",
        "c1 │ crunch still running (2 s)",
        "c1 │ crunch still running (4 s)",
        "c1 │ crunch still running (8 s)",
        "c2 │ running crunch …",
    ]


def test_logged_events_are_left_to_the_node_lines() -> None:
    event = {"kind": "tool.started", "event_id": "r/c1:tool.started:a", "call_id": "c1"}
    assert render(event) == []
