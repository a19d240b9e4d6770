"""Reconcile by probe alone: a record a crash left in doubt is settled from the world."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.nodes.executor.recovery.probe import in_doubt
from execgraph.tools import AdapterOutput
from tests.nodes.executor.stages.stage_helpers import ctx, read_tool, save


def test_in_doubt_reconciles_or_stays_unknown(tmp_path: Path) -> None:
    args = save.input_model(path="a")
    context = ctx(tmp_path)
    assert in_doubt(read_tool(), read_tool().input_model(), context) is None  # reads rerun
    unknown = in_doubt(save, args, context)
    assert unknown is not None and unknown.outcome == "unknown"

    def said(value: bool | None) -> Any:
        return lambda a, c: AdapterOutput(committed=value)

    done = in_doubt(save.with_(reconcile=said(True)), args, context)
    assert done is not None and done.outcome == "succeeded" and done.reconciled
    absent = save.with_(reconcile=said(False))
    assert in_doubt(absent, args, context) is None  # proven absent: rerun
    assert in_doubt(save.with_(reconcile=said(None)), args, context).outcome == "unknown"  # type: ignore[union-attr]
