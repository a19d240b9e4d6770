"""A misconfigured Studio (EXECGRAPH_TOOLS / EXECGRAPH_MODEL) fails at import with a
UsageError that says what to fix."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.studio.user_project import USER_TOOLS
from tests.support.studio import REPO


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"EXECGRAPH_TOOLS": "my_tools"}, "must look like 'package.module:attribute'"),
        ({"EXECGRAPH_TOOLS": "my_tools:tools"}, "set EXECGRAPH_MODEL too"),
        ({"EXECGRAPH_TOOLS": "no_such_module:tools", "EXECGRAPH_MODEL": "openai:m"}, "import"),
        ({"EXECGRAPH_TOOLS": "my_tools:refund", "EXECGRAPH_MODEL": "openai:m"}, "has no"),
        (
            {"EXECGRAPH_TOOLS": "my_tools:Path", "EXECGRAPH_MODEL": "openai:m"},
            "must name a non-empty list of tools (or one tool), not a type",
        ),
    ],
)
def test_a_misconfigured_studio_says_what_to_fix(
    tmp_path: Path, env: dict[str, str], says: str
) -> None:
    (tmp_path / "my_tools.py").write_text(USER_TOOLS)
    child = {k: v for k, v in os.environ.items() if not k.startswith("EXECGRAPH_")}
    child.update(env, EXECGRAPH_HOME=str(tmp_path / "home"))
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(tmp_path)]))
    done = subprocess.run(
        [sys.executable, "-c", "import execgraph.studio"],
        cwd=tmp_path,
        env=child,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("execgraph.state.errors.UsageError:"), last
    assert says in last, last
