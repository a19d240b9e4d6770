"""``make temporal-demo`` as a user runs it: a local Temporal server, two workers, the demo.

The script the make target runs (``scripts/temporal-demo.sh``) is run as is, with this
venv's commands. The demo must complete through Temporal, its report must be published
in the workers' home, and nothing it started may outlive it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _alive_under(directory: str) -> list[str]:
    """Command lines of live processes that name ``directory``."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if directory in argv:
            found.append(argv)
    return found


@pytest.mark.timeout(240)
def test_the_temporal_demo_completes_and_leaves_nothing_running() -> None:
    bin_dir = str(Path(sys.executable).parent)
    done = subprocess.run(
        ["bash", "scripts/temporal-demo.sh", bin_dir],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=200,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert done.stdout.count("worker ready: task queue demo") == 2, done.stdout
    assert "engine temporal" in done.stdout
    assert "auto-approved: approval of publish_report" in done.stdout
    assert "status: COMPLETED" in done.stdout
    found = re.search(r"published report is under workspaces/\): (\S+)", done.stdout)
    assert found is not None, done.stdout
    home = Path(found[1])
    assert list(home.glob("workspaces/*/published/report.md")), list(home.rglob("*"))
    assert _alive_under(str(home.parent)) == []
    shutil.rmtree(home.parent)  # the script keeps it for the user to look at
