"""Execute notebooks/compare_architectures.ipynb end to end in a real kernel.

The notebook reads an eval report written here first (``$EXECGRAPH_EVAL_JSON``), so the
test checks what it shows of that report, not a run of its own. The kernel is pinned to
the interpreter running the tests (the venv's python, which has ipykernel): a kernel-spec
manager with no kernel directories only knows ipykernel's native ``python3`` spec, which
launches ``sys.executable``. A ``python3`` spec installed elsewhere (user or system Jupyter
dirs) therefore cannot redirect the run to another interpreter.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from execgraph.eval import suite
from execgraph.eval.ablations import BASELINE
from execgraph.eval.report import PLOT_NAMES, write_report
from execgraph.eval.runner import EvalConfig, evaluate
from execgraph.graph.build import ARCHITECTURES
from notebooks.compare import ENV

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "compare_architectures.ipynb"


def _outputs_text(nb: nbformat.NotebookNode) -> str:
    parts: list[str] = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            parts.append(str(data.get("text/markdown", "")) + str(out.get("text", "")))
    return "\n".join(parts)


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> tuple[nbformat.NotebookNode, Path]:
    config = EvalConfig(
        tasks=tuple(t.id for t in suite.SUITE[:2]), ablations=(BASELINE,), seeds=2, workers=1
    )
    out = tmp_path_factory.mktemp("eval")
    written: dict[str, Any] = write_report(evaluate(config), out)
    for png in written["plots"]:
        png.unlink()  # the notebook must draw them itself
    mp = pytest.MonkeyPatch()
    mp.setenv(ENV, str(written["json"]))  # the kernel inherits the environment
    specs = KernelSpecManager(kernel_dirs=[])
    assert Path(specs.get_kernel_spec(NATIVE_KERNEL_NAME).argv[0]) == Path(sys.executable)
    km = KernelManager(kernel_name=NATIVE_KERNEL_NAME, kernel_spec_manager=specs)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    try:
        client = NotebookClient(
            nb, km=km, timeout=240, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
        )
        client.execute()  # raises CellExecutionError on the first failing cell
    finally:
        mp.undo()
    return nb, out


def test_no_cell_errored(executed: tuple[nbformat.NotebookNode, Path]) -> None:
    nb, _ = executed
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []


def test_it_shows_the_reports_table_one_row_per_architecture(
    executed: tuple[nbformat.NotebookNode, Path],
) -> None:
    nb, out = executed
    text = _outputs_text(nb)
    assert f"{out / 'eval.json'}: " in text  # it read the report it was given
    assert (out / "eval.md").read_text().strip() in text  # the CLI's very table
    rows = [line for line in text.splitlines() if line.startswith("| ") and " [" in line]
    assert {line.split("|")[1].strip() for line in rows} >= set(ARCHITECTURES)


def test_it_draws_the_plots_and_computes_notes(
    executed: tuple[nbformat.NotebookNode, Path],
) -> None:
    nb, out = executed
    for name in PLOT_NAMES:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == len(PLOT_NAMES)
    assert "Acceptance under the baseline, highest first:" in _outputs_text(nb)
