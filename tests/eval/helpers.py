"""What the evaluation's tests share: the suite's first task, a small config, strict JSON."""

from __future__ import annotations

import json
from typing import Any

from execgraph.eval import suite
from execgraph.eval.ablations import BASELINE
from execgraph.eval.runner import EvalConfig

__all__ = ["FAULTS", "FIRST", "SUITE", "no_nan", "small"]

SUITE, FAULTS = suite.SUITE, suite.FAULTS
FIRST = SUITE[0]


def no_nan(text: str) -> Any:
    def refuse(const: str) -> Any:
        raise AssertionError(f"non-JSON number {const} in the report")

    return json.loads(text, parse_constant=refuse)


def small(**overrides: Any) -> EvalConfig:
    settings: dict[str, Any] = {
        "tasks": (FIRST.id,),
        "architectures": ("react", "workflow"),
        "ablations": (BASELINE,),
        "seeds": 2,
        "workers": 1,
    }
    return EvalConfig(**{**settings, **overrides})
