"""Stage 1 alone: the exact compatible version, or a resolution error."""

from __future__ import annotations

import pytest

from execgraph.nodes.executor.stages.resolve import resolve
from execgraph.state.errors import IncompatibleVersionError, UnknownToolError
from execgraph.tools import ToolRegistry
from tests.nodes.executor.stages.stage_helpers import req, save


def test_resolve_exact_compatible_and_refusals() -> None:
    registry = ToolRegistry([save, save.with_(version="1.2.0")])
    assert resolve(req(), registry).version == "1.2.0"
    assert resolve(req(version="1.0.0"), registry).version == "1.0.0"
    assert resolve(req(version="1.1.0"), registry).version == "1.2.0"
    with pytest.raises(IncompatibleVersionError):
        resolve(req(version="2.0.0"), registry)
    with pytest.raises(UnknownToolError):
        resolve(req("nope"), registry)
