"""The docs' shell examples name commands and options the CLI has, and `make` targets the
Makefile has.

Every ``bash`` block line that runs ``execgraph`` (or ``.venv/bin/execgraph``) is read as
the command path it names and the ``--options`` it passes; each must exist in the command
tree the CLI reference is generated from (read in-process, no subprocess).
"""

from __future__ import annotations

import re
import shlex

import gen_cli
import pytest

from tests.docs.pages import ROOT, blocks, pages

TREE = gen_cli.option_names()


def _commands() -> list[tuple[str, list[str]]]:
    found = []
    for page in pages():
        for block in blocks(page):
            if block.lang not in ("bash", "sh", "shell"):
                continue
            for line in block.code.replace("\\\n", " ").splitlines():
                line = line.split("  #", 1)[0].split(" # ", 1)[0].strip()
                words = shlex.split(line, comments=True) if line else []
                if words and words[0].rsplit("/", 1)[-1] in ("execgraph", "make"):
                    found.append((block.where, words))
    return found


COMMANDS = _commands()


def test_the_docs_show_cli_commands() -> None:
    assert sum(w[0].endswith("execgraph") for _, w in COMMANDS) >= 15


@pytest.mark.parametrize(
    ("where", "words"),
    [c for c in COMMANDS if c[1][0].endswith("execgraph")],
    ids=lambda v: v if isinstance(v, str) else " ".join(v[:3]),
)
def test_an_execgraph_line_names_a_command_and_its_options(where: str, words: list[str]) -> None:
    path: tuple[str, ...] = ("execgraph",)
    for word in words[1:]:
        if (*path, word) in TREE:
            path = (*path, word)
        else:
            break
    options = [w.split("=", 1)[0] for w in words[1:] if w.startswith("--")]
    unknown = [o for o in options if o not in TREE[path]]
    assert not unknown, f"{where}: {' '.join(path)} has no {unknown}"
    if path == ("execgraph",):
        assert words[1:] in ([], ["--help"]), f"{where}: no command {words[1]!r}"


def test_make_lines_name_makefile_targets() -> None:
    targets = set(re.findall(r"^([\w.-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE))
    for where, words in COMMANDS:
        if words[0] == "make":
            named = [w for w in words[1:] if "=" not in w]
            assert set(named) <= targets, f"{where}: unknown make target in {words}"
