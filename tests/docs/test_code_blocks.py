"""Every python block of the documentation runs as printed, offline.

The blocks of one page run in order in one namespace (a later block may use what an
earlier one defined), in a fresh working directory with a fresh ``$EXECGRAPH_HOME``, with
no OpenAI endpoint or key in the environment: the pages' models are ``ScriptedChatModel``s.
The README's quickstart is the one block that talks to a model server; it runs in
``tests/journeys/test_readme.py``, against a scripted OpenAI-compatible server.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, Block, blocks, continues, pages
from tests.support.openai_server import isolate_from_network

README = ROOT / "README.md"
MAX_NOT_RUN = 6
"""Blocks that need what no test machine has offline (a real cluster, a provider key)."""

RUNNABLE = [p for p in pages() if p != README and any(b.lang == "python" for b in blocks(p))]


def _python(path: Path) -> list[Block]:
    return [b for b in blocks(path) if b.lang == "python"]


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_python_blocks_of_a_page_run_as_printed(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_from_network(monkeypatch)
    monkeypatch.setenv("EXECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    before = continues(page)
    for block in [*(_python(before) if before else []), *_python(page)]:
        # Parsed as a notebook would (top-level await allowed); a not-run block must parse.
        code = compile(block.code, block.where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        if block.not_run is None:
            with contextlib.redirect_stdout(io.StringIO()):
                if code.co_flags & inspect.CO_COROUTINE:
                    asyncio.run(eval(code, namespace))
                else:
                    exec(code, namespace)


def test_few_blocks_are_left_unrun_and_each_says_why() -> None:
    not_run = [b for p in pages() for b in _python(p) if b.not_run is not None]
    assert len(not_run) <= MAX_NOT_RUN, [b.where for b in not_run]
    assert all(b.not_run.strip() for b in not_run), [b.where for b in not_run if not b.not_run]


def test_the_readme_has_one_python_block_the_quickstart_its_test_runs() -> None:
    python = _python(README)
    assert len(python) == 1 and "build_graph" in python[0].code
    section = README.read_text(encoding="utf-8").split("\n## Quickstart", 1)[1]
    assert python[0].code in section


def test_the_runner_sees_every_page_with_python() -> None:
    assert len(RUNNABLE) >= 10  # the guides and the architectures; a regex gone wrong finds 0
