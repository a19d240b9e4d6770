"""``make demo`` installs execgraph alone: the demo needs none of the extras."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_demo_installs_no_extra(tmp_path: Path) -> None:
    planned = subprocess.run(
        ["make", "-n", "-B", "demo", f"VENV={tmp_path / 'venv'}"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    installs = [line for line in planned.stdout.splitlines() if " pip install " in line]
    assert installs, planned.stdout
    assert all(line.rstrip().endswith(" -e .") for line in installs), installs
    assert "execgraph demo" in planned.stdout
