"""Drive the ``execgraph`` command line as a user's shell would: in this process, or as
the real console script in a process of its own.

:func:`cli` calls the Typer app in this process (``typer.testing.CliRunner``) with the
environment a shell would give it: what one command leaves is only what it wrote to the
home (its SQLite files, its records), so a run started by one call is approved, resumed
or cancelled by the next exactly as by a new process, without paying a process start.
:func:`cli_process`, :func:`start` and :func:`run_in_pty` run the real binary where a
separate process is the point: exit codes of the binary, a second process driving or
cancelling a run, a terminal, a signal. Output is read without colour (``NO_COLOR``) and
ANSI codes are stripped.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "execgraph" / "demo" / "documents"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_STATUS = re.compile(r"^status: ([A-Z_]+)", re.MULTILINE)
GUARD_S = 240.0  # a hung CLI fails the test instead of hanging the suite (not a timing claim)


def executable() -> list[str]:
    """The installed console script (next to this interpreter), else ``python -m graph.cli``."""
    script = Path(sys.executable).with_name("execgraph")
    if script.exists():
        return [str(script)]
    found = shutil.which("execgraph")
    return [found] if found else [sys.executable, "-m", "execgraph.cli.commands"]


def cli_env(home: Path | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXECGRAPH_")}
    env.update({"NO_COLOR": "1", "COLUMNS": "200", "PYTHONUNBUFFERED": "1"})
    if home is not None:
        env["EXECGRAPH_HOME"] = str(home)
    env.update(extra)
    return env


def clean(text: str) -> str:
    return _ANSI.sub("", text).replace("\r\n", "\n")


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def status(self) -> str | None:
        """The last ``status: X`` line printed."""
        found = _STATUS.findall(self.out)
        return found[-1] if found else None


def cli(*args: str, home: Path | None = None, **env: str) -> Result:
    """Run one command in this process, stdin empty (not a TTY); its exit code and output."""
    from typer.testing import CliRunner

    from execgraph.cli.commands import app
    from execgraph.cli.drive import out
    from execgraph.cli.options import err

    shell: dict[str, str | None] = {k: None for k in os.environ if k.startswith("EXECGRAPH_")}
    shell.update(cli_env(home, **env))
    # The CLI's consoles read their width once, when first imported, from whatever
    # environment the process had then; a command run here gets the width it is given,
    # as a process of its own would, whichever test imported them first.
    widths = [(console, console.width) for console in (out, err)]
    for console, _ in widths:
        console.width = int(shell["COLUMNS"] or 80)
    try:
        result = CliRunner().invoke(app, list(args), env=shell, catch_exceptions=False)
    finally:
        for console, width in widths:
            console.width = width
    return Result(result.exit_code, clean(result.stdout), clean(result.stderr))


def cli_process(*args: str, home: Path | None = None, **env: str) -> Result:
    """Run one command as the real console script, in a process of its own."""
    proc = subprocess.run(
        [*executable(), *args],
        cwd=REPO,
        env=cli_env(home, **env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
    )
    return Result(proc.returncode, clean(proc.stdout), clean(proc.stderr))


def start(*args: str, home: Path) -> subprocess.Popen[str]:
    """Start a command in the background (stdin closed); read it with ``finish``."""
    return subprocess.Popen(
        [*executable(), *args],
        cwd=REPO,
        env=cli_env(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> Result:
    out, err = proc.communicate(timeout=GUARD_S)
    return Result(proc.returncode, clean(out), clean(err))


def wait_for(predicate: object, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    """Poll ``predicate()`` until true; fail (never hang) after the guard, or at once with
    the process's output if ``proc`` ended first."""
    assert callable(predicate)
    deadline = time.monotonic() + GUARD_S
    while not predicate():
        if proc is not None and proc.poll() is not None:
            ended = finish(proc)
            raise AssertionError(f"the process ended ({ended.code}) before {what}: {ended}")
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.1)


Answer = bytes | Callable[[subprocess.Popen[bytes]], None]


def run_in_pty(args: list[str], script: list[tuple[bytes, Answer]], home: Path | None) -> Result:
    """Run a command on a pseudo-terminal, typing each answer when its prompt appears.

    ``script`` is answered in order; a prompt is looked for only in the output that came
    after the previous answer, so the same prompt can be answered twice. An answer that is
    a function is called with the process instead (to signal it, say). ``home`` is
    ``$EXECGRAPH_HOME`` (None: left unset, so only an explicit ``--home`` names one).
    """
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [*executable(), *args],
        cwd=REPO,
        env=cli_env(home),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    buf, pending, seen = b"", list(script), 0
    deadline = time.monotonic() + GUARD_S
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            buf += data
            while pending and pending[0][0] in buf[seen:]:
                prompt, answer = pending.pop(0)
                seen = buf.index(prompt, seen) + len(prompt)
                if callable(answer):
                    answer(proc)
                else:
                    os.write(master, answer)
    finally:
        os.close(master)
    code = proc.wait(timeout=GUARD_S)
    return Result(code, clean(buf.decode(errors="replace")), "")
