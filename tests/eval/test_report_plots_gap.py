"""An error bar is never negative, whatever interval the estimate reports."""

from __future__ import annotations

import math

from execgraph.eval.report_plots import _gap


def test_an_error_bar_is_never_negative() -> None:
    assert _gap(0.1, 0.1 + 1e-12) == 0.0  # an end that rounds past the mean
    assert _gap(0.5, 0.7) == 0.0  # an interval that does not contain the mean
    assert _gap(0.7, 0.5) == 0.7 - 0.5
    assert _gap(math.inf, 0.0) == 0.0 and _gap(math.nan, 0.0) == 0.0
