"""User text says the thing itself: no project history, no citations of documents that do
not ship. Checked on the README and every page as written (generated parts come from the
code and the tests, whose own text is checked where it lives)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, pages

HISTORY = re.compile(
    r"\bbefore:|\bissues? \d+|\bseed(?:'s)? (?:\d|§|section)|§|\bsession\b|\bPR #?\d+",
    re.IGNORECASE,
)


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_page_carries_no_project_history(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    found = [m.group() for m in HISTORY.finditer(text)]
    assert not found, f"{page.name}: {found}"


def test_the_history_pattern_finds_what_it_is_for() -> None:
    for sample in ("Before: 4.0x", "issues 17 and 20", "seed 002 §15.1", "the seed's section 16"):
        assert HISTORY.search(sample), sample


def test_the_readme_stays_short_and_opens_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250
    fence = lines.index("```bash")
    assert lines[fence + 1].startswith("make demo") and lines[fence + 2].startswith("make test")
    assert fence <= 3  # the first thing a reader sees
