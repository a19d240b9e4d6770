"""The generated parts of the site: tables that say what their JSON says, pages that ask
for them instead of carrying hand-typed figures, and generators that fail loudly.

Each table is rendered by the generator the site's build uses (``docs/hooks``), then read
back as a markdown table and compared with the data it came from, figure by figure.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import gen_evidence
import gen_tests
import generated
import pytest
from mkdocs.exceptions import PluginError

from tests.docs.pages import DOCS, ROOT

DATA = DOCS / "data"
EVIDENCE = sorted((DOCS / "evidence").glob("*.md"))


def _data(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def _rows(markdown: str) -> list[list[str]]:
    """The body rows of every markdown table in ``markdown``, as cell texts (a table's
    header, the line above its ``|---|`` line, is not a body row)."""
    separator = re.compile(r"\|(?:-+\|)+")
    lines = markdown.splitlines()
    rows = []
    for line, after in zip(lines, [*lines[1:], ""], strict=True):
        if (
            line.startswith("|")
            and not separator.fullmatch(line)
            and not separator.fullmatch(after)
        ):
            rows.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def _figure(cell: str) -> float:
    """The first number in a cell (``1,234 ms`` -> 1234.0)."""
    found = re.search(r"-?[\d,]*\.?\d+", cell)
    assert found is not None, f"no number in {cell!r}"
    return float(found.group().replace(",", ""))


def _close(shown: float, value: float) -> bool:
    """``shown`` is ``value`` as the tables round it (three significant digits)."""
    return math.isclose(shown, value, rel_tol=0.01, abs_tol=0.00051)


def test_the_bench_table_shows_every_row_of_its_json() -> None:
    data = _data("bench.json")
    rows = _rows(gen_evidence.bench_table(data))
    assert len(rows) == len(data["rows"])
    for row, shown in zip(data["rows"], rows, strict=True):  # in the JSON's order
        assert shown[1] == row["metric"] and row["section"].endswith(shown[0])
        if row["execgraph"] is not None:
            assert _close(_figure(shown[2]), row["execgraph"]), (row, shown)
        if row["baseline"] is not None:
            assert shown[3].startswith(row["baseline_name"]), (row, shown)
            assert _close(_figure(shown[3].rsplit(":", 1)[-1]), row["baseline"]), (row, shown)
        if row["ratio"] is not None:
            assert _close(_figure(shown[4]), round(row["ratio"], 2)), (row, shown)
        assert shown[6] == row["verdict"]


def test_the_bench_sections_split_between_the_two_pages() -> None:
    data = _data("bench.json")
    temporal = gen_evidence.bench_table(data, only=("9 temporal",))
    others = gen_evidence.bench_table(data, exclude=("9 temporal",))
    assert len(_rows(temporal)) + len(_rows(others)) == len(data["rows"])


def test_the_fault_matrix_shows_each_cells_verdict() -> None:
    data = _data("fault-matrix.json")
    rows = _rows(gen_evidence.fault_matrix(data))
    header = ["workflow", "react", "plan_execute", "hybrid"]
    grid = {
        (row[0].strip("`"), arch): cell
        for row in rows
        for arch, cell in zip(header, row[1:], strict=True)
    }
    for cell in data["cells"]:
        expected = f"PASS {cell['status']}" if cell["passed"] else f"FAIL {cell['problems'][0]}"
        assert grid[(cell["fault"], cell["arch"])] == expected


def test_the_torture_table_shows_each_workloads_counts() -> None:
    data = _data("torture.json")
    rows = {row[0].split()[0]: row for row in _rows(gen_evidence.torture_table(data))}
    for run in data["runs"]:
        shown = rows[run["workload"]]
        assert [int(c) for c in shown[1:9]] == [
            run[k] for k in ("trials", "kills", "attempts", "duplicates", "lost_commits",
                             "orphans", "unknown_left", "leaked_locks")
        ]  # fmt: skip


def test_the_evaluation_tables_show_the_baseline_means_of_its_json() -> None:
    data = _data("eval.json")
    rows = _rows(gen_evidence.eval_tables(data))
    by_arch: dict[str, list[str]] = {}
    for row in rows:  # the first table is the baseline's; later ones have rows per arch too
        if len(row) > 2:
            by_arch.setdefault(row[0], row)
    for summary in data["summary"]:
        if summary["ablation"] != "baseline":
            continue
        mean = summary["metrics"]["acceptance_rate"]["mean"]
        assert _close(_figure(by_arch[summary["arch"]][1]), round(mean, 2)), summary["arch"]


def test_the_injection_targets_are_judged_from_the_json() -> None:
    data = _data("agentdojo.json")
    lines = gen_evidence.agentdojo_reached(data).splitlines()
    assert len(lines) == 3
    person = data["configs"]["provenance_person"]
    f = person["all"]
    met = (
        max(s["asr"] for s in person["suites"].values()) == 0.0
        and f["utility_under_attack"] >= 95.0
        and f["approvals_per_task_attacked"] <= 1.0
    )
    shown = next(line for line in lines if person["title"] in line)
    assert shown.endswith("**met**.") == met
    # one suite letting one attack through is a miss, whatever the utility
    leaky = json.loads(json.dumps(data))
    for conf in leaky["configs"].values():
        conf["all"]["utility_under_attack"] = 100.0
        conf["all"]["approvals_per_task_attacked"] = 0.0
        next(iter(conf["suites"].values()))["asr"] = 0.7
    assert all(
        line.endswith("**not met**.") for line in gen_evidence.agentdojo_reached(leaky).splitlines()
    )


def test_every_data_file_says_when_and_how_it_was_measured() -> None:
    for path in sorted(DATA.glob("*.json")):
        line = gen_evidence.measured_line(json.loads(path.read_text(encoding="utf-8")))
        assert line.startswith("Measured on ") and "`" in line, path.name


@pytest.mark.parametrize("page", EVIDENCE, ids=lambda p: p.name)
def test_evidence_pages_carry_no_hand_typed_table(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not [line for line in text.splitlines() if line.startswith("|")]
    filled = generated.render(text, page.name)
    assert "<!-- generated:" not in filled


def test_the_negative_tests_list_names_every_test_of_its_folder() -> None:
    listed = gen_tests.negative_tests(ROOT, "adversarial")
    files = sorted((ROOT / "tests").rglob("adversarial/test_*.py"))
    assert files
    for path in files:
        for name in re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.MULTILINE):
            assert f"(`{name}`)" in listed, name


def test_an_unknown_generator_or_missing_data_stops_the_build() -> None:
    with pytest.raises(PluginError, match="no generator named"):
        generated.render("<!-- generated: nothing-such -->\n")
    with pytest.raises(PluginError, match="does not exist"):
        generated.render("<!-- generated: bench-table data=missing.json -->\n")


@pytest.mark.parametrize("folder", ["adversarial", "reliability", "temporal"])
def test_the_negative_tests_lists_carry_no_project_history(folder: str) -> None:
    from tests.docs.test_user_text import HISTORY

    listed = re.sub(r"\(`test_\w+`\)", "", gen_tests.negative_tests(ROOT, folder))
    assert not HISTORY.findall(listed)
