"""The documentation's pages and their fenced code blocks, as the tests read them.

A block is a fence at the start of a line (```python, ```bash, ...) up to its closing
fence. A ``<!-- docs: not-run REASON -->`` line right before a python fence marks a block
that cannot run offline (a real Temporal cluster, a PostgreSQL server, a provider key);
everything else runs. A ``<!-- docs: continues PAGE -->`` line says a page's code runs
after PAGE's (an architecture's page uses the tools its index page defines).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DOCS", "HOOKS", "ROOT", "Block", "blocks", "continues", "pages"]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
HOOKS = DOCS / "hooks"

_FENCE = re.compile(
    r"^(?P<marker><!-- docs: not-run (?P<reason>[^\n]*?) -->\n)?"
    r"```(?P<lang>[\w-]*)[^\n]*\n(?P<code>.*?)^```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)

_CONTINUES = re.compile(r"^<!-- docs: continues (?P<page>\S+) -->$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page."""

    page: str
    line: int
    lang: str
    code: str
    not_run: str | None  # the reason given, for a block marked not-run

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """Every markdown page of the site, and the README."""
    return [ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if HOOKS not in p.parents)]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in _FENCE.finditer(text):
        found.append(
            Block(
                page=path.relative_to(ROOT).as_posix(),
                line=text.count("\n", 0, match.start("code")),
                lang=match.group("lang"),
                code=match.group("code"),
                not_run=match.group("reason") if match.group("marker") else None,
            )
        )
    return found


def continues(path: Path) -> Path | None:
    """The page whose code ``path``'s code runs after, if it names one."""
    found = _CONTINUES.search(path.read_text(encoding="utf-8"))
    return DOCS / found.group("page") if found else None
