"""The command line starts without LangChain or LangGraph: help costs no model stack, no
event loop and no rich help formatter (with its Markdown parser): most of what it would cost.

A fresh interpreter (a separate process is the point: this one has imported everything)
runs the app's help and then lists what it imported.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.cli_helpers import REPO, cli_env

PROBE = """
import json, sys
from execgraph.cli.commands import app
try:
    app(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules
                if m.split(".")[0] in ("langchain", "langchain_core", "langgraph", "temporalio")}
               | {m for m in ("asyncio", "typer.rich_utils", "markdown_it") if m in sys.modules})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["worker", "--help"]])
def test_help_imports_neither_langchain_nor_langgraph(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        cwd=REPO,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = json.loads(done.stderr.strip().splitlines()[-1])
    assert found == {"code": 0, "heavy": []}, done.stderr
    assert "Exit codes" in " ".join(done.stdout.split())
