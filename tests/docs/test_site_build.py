"""The site builds strictly, and strictly means a broken link stops it.

``mkdocs build --strict`` aborts on any warning — but only warnings it logs: ``--quiet``
hides them and the build passes, which is why ``make docs`` never passes it. These tests
build the real configuration, hooks and generators included, into a temporary directory.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from mkdocs.commands.build import build
from mkdocs.config import load_config
from mkdocs.exceptions import Abort

from tests.docs.pages import DOCS, ROOT


def _build(docs: Path, site: Path) -> None:
    config = load_config(
        str(ROOT / "mkdocs.yml"), docs_dir=str(docs), site_dir=str(site), strict=True
    )
    build(config)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    _build(DOCS, tmp_path / "site")
    cli = (tmp_path / "site" / "reference" / "cli.html").read_text(encoding="utf-8")
    assert "<!-- generated:" not in cli and "--task-queue" in cli


def test_a_broken_link_stops_the_build(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("hooks"))
    page = docs / "guides" / "studio.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](no-such-page.md)\n")
    with caplog.at_level(logging.WARNING), pytest.raises(Abort, match="strict"):
        _build(docs, tmp_path / "site")
    assert "no-such-page.md" in caplog.text
