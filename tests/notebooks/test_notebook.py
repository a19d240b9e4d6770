"""Execute notebooks/compare_architectures.ipynb end to end in a real kernel.

The kernel is pinned to the interpreter running the tests (the venv's python, which has
ipykernel): a kernel-spec manager with no kernel directories only knows ipykernel's native
``python3`` spec, which launches ``sys.executable``. A ``python3`` spec installed elsewhere
(user or system Jupyter dirs) therefore cannot redirect the run to another interpreter.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from execgraph.graph.build import ARCHITECTURES
from notebooks.compare import COLUMNS, VARIANTS

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
    png = tmp_path_factory.mktemp("nb") / "compare_architectures.png"
    mp = pytest.MonkeyPatch()
    mp.setenv("EXECGRAPH_COMPARE_PNG", str(png))  # the kernel inherits the environment
    specs = KernelSpecManager(kernel_dirs=[])
    assert Path(specs.get_kernel_spec(NATIVE_KERNEL_NAME).argv[0]) == Path(sys.executable)
    km = KernelManager(kernel_name=NATIVE_KERNEL_NAME, kernel_spec_manager=specs)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    try:
        client = NotebookClient(
            nb,
            km=km,
            timeout=240,
            resources={"metadata": {"path": str(NOTEBOOK.parent)}},
        )
        client.execute()  # raises CellExecutionError on the first failing cell
    finally:
        mp.undo()
    return nb, png


def test_no_cell_errored(executed: tuple[nbformat.NotebookNode, Path]) -> None:
    nb, _ = executed
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code)
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []


def test_one_row_per_arch_and_variant(executed: tuple[nbformat.NotebookNode, Path]) -> None:
    text = _outputs_text(executed[0])
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in text.splitlines()]
    rows = [row for row in cells if len(row) == len(COLUMNS) and row[0] in ARCHITECTURES]
    keyed = {(arch, variant, status) for arch, variant, status, *_ in rows}
    pairs = {(arch, variant) for arch, variant, _ in keyed}
    assert len(rows) == len(pairs)  # exactly one row each
    assert pairs >= {(a, v) for a in ARCHITECTURES for v in VARIANTS}
    for arch in ("react", "plan_execute", "hybrid"):
        assert (arch, "default", "COMPLETED") in keyed


def test_png_written_and_notes_computed(executed: tuple[nbformat.NotebookNode, Path]) -> None:
    nb, png = executed
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))
    text = _outputs_text(nb)
    assert "architectures reached COMPLETED" in text
    assert "Tool-call budget of 4" in text
