"""notebooks/compare.py measured directly: the same function the notebook calls."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from notebooks.compare import (
    ARCHITECTURES,
    COLUMNS,
    VARIANTS,
    compare,
    interpret,
    markdown_notes,
    markdown_table,
    measure,
    plot,
)


@pytest.fixture(scope="module")
def default_rows() -> dict[str, dict[str, Any]]:
    return {row["arch"]: row for row in compare(ARCHITECTURES, ["default"])}


def test_default_statuses_per_architecture(default_rows: dict[str, dict[str, Any]]) -> None:
    assert set(default_rows) == set(ARCHITECTURES)
    for arch in ("react", "plan_execute", "hybrid"):
        row = default_rows[arch]
        assert row["status"] == "COMPLETED", row["reason"]
        assert row["published"] is True and row["approvals"] == 1
        assert row["rejections"] >= 1  # the seed case: the first finish is rejected
        assert row["reason"] == ""
    workflow = default_rows["workflow"]
    assert workflow["status"] == "PARTIAL" and not workflow["published"]
    assert workflow["rejections"] == 1 and workflow["approvals"] == 0


def test_rows_carry_every_column_with_sane_counts(default_rows: dict[str, dict[str, Any]]) -> None:
    for row in default_rows.values():
        assert set(COLUMNS) <= set(row)
        assert row["model_calls"] > 0 and row["tool_calls"] > 0
        assert row["tokens_in"] > 0 and row["tokens_out"] > 0
        assert 0 <= row["tools_ok"] <= row["tool_calls"]
        assert isinstance(row["wall_ms"], float)  # reported, never compared


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_rejected_approval_never_publishes(arch: str) -> None:
    row = measure(arch, "reject")
    assert row["published"] is False
    assert row["status"] != "COMPLETED"


def test_tight_budget_exhausts_react_without_overspending() -> None:
    row = measure("react", "tight_budget")
    assert row["status"] == "BUDGET_EXHAUSTED"
    assert "tool_calls" in row["reason"]
    assert row["tool_calls"] <= VARIANTS["tight_budget"].budgets["tool_calls"]
    assert row["published"] is False


def test_denied_publish_is_never_asked_nor_executed() -> None:
    row = measure("react", "deny_publish")
    assert row["published"] is False and row["approvals"] == 0
    assert row["denied"] >= 1 and row["status"] != "COMPLETED"


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        measure("react", "no-such-variant")


def test_table_notes_and_plot(default_rows: dict[str, dict[str, Any]], tmp_path: Path) -> None:
    rows = list(default_rows.values())
    table = markdown_table(rows).splitlines()
    assert len(table) == 2 + len(rows) and all(c in table[0] for c in COLUMNS)
    notes = interpret(rows)
    text = markdown_notes(notes)
    assert "3 of 4 architectures reached COMPLETED" in text
    assert "could not loop back" in text and "ends PARTIAL" in text
    png = tmp_path / "c.png"
    plot(rows, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
