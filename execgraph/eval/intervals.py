"""A metric across seeds: the mean with its 95% Student-t interval.

The evaluation repeats each cell over a few seeds; a difference between two
configurations is real only when its interval excludes zero, so the interval is computed
here once, by the same rule for every metric (NaN left out, infinities kept as such).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Estimate", "estimate", "t_quantile"]


@dataclass(frozen=True)
class Estimate:
    """A metric across seeds: the mean and its 95% interval over ``n`` values."""

    mean: float
    low: float
    high: float
    n: int


# Two-sided 95% Student-t quantiles t(0.975, df) for df = 1..30.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_quantile(df: int) -> float:
    """t(0.975, df): the table up to 30, then the Cornish-Fisher expansion (3 terms)."""
    if df <= len(_T975):
        return _T975[df - 1]
    z = statistics.NormalDist().inv_cdf(0.975)
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95% Student-t interval of per-seed ``values`` (mean ± t·s/√n).

    NaN values (a rate with nothing to divide) are left out and ``n`` counts the rest;
    with one value the interval is the value itself. An infinite value is reported as
    such: a seed with no success costs ``inf`` per success, and a paired difference
    against it is ``-inf`` or ``inf``; the mean and the interval are then that infinity,
    and NaN (no mean) when infinities of both signs meet. No values: all NaN, ``n`` 0.
    """
    kept = [float(v) for v in values if not math.isnan(v)]
    n = len(kept)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0)
    infinite = {v for v in kept if math.isinf(v)}
    if infinite:  # no spread to estimate: the sum is that infinity, or undefined
        mean = infinite.pop() if len(infinite) == 1 else math.nan
        return Estimate(mean, mean, mean, n)
    mean = math.fsum(kept) / n
    if n == 1:
        return Estimate(mean, mean, mean, n)
    half = t_quantile(n - 1) * statistics.stdev(kept) / math.sqrt(n)
    return Estimate(mean, mean - half, mean + half, n)
