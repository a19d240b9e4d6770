"""The follow-up commands the CLI prints, runnable as printed.

A printed ``execgraph ...`` line is meant to be pasted: it names the real run id and,
when the run lives under a home other than the default, ``--home`` with the path quoted
for a shell (a home with a space in it stays one argument).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from execgraph.state.home import default_home

__all__ = ["home_flag", "resume_line"]


def home_flag(home: Path) -> str:
    """Nothing for the default home, else `` --home PATH`` quoted for a shell."""
    default = default_home().expanduser().resolve()
    return "" if home == default else f" --home {shlex.quote(str(home))}"


def resume_line(run_id: str, home: Path) -> str:
    """The command that continues ``run_id`` in a new process."""
    return f"execgraph resume {run_id}{home_flag(home)}"
