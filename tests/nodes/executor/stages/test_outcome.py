"""Stage 8 alone: what the adapter did, as a typed settlement ("executed" is not "succeeded")."""

from __future__ import annotations

from typing import Any

from execgraph.nodes.executor.stages.invoke import Invoked
from execgraph.nodes.executor.stages.outcome import settle
from execgraph.state.contracts import PartialProgress
from execgraph.state.errors import ResponseLostError, TransientError
from execgraph.tools import AdapterOutput
from tests.nodes.executor.stages.stage_helpers import no_artifacts, read_tool, save


def test_settle_rules() -> None:
    def out(**kw: Any) -> Invoked:
        return Invoked(AdapterOutput(**kw), None, 1)

    assert settle(save, out(data=1, committed=True), 100, no_artifacts).outcome == "succeeded"
    assert settle(save, out(data=1, committed=None), 100, no_artifacts).outcome == "unknown"
    partial = settle(
        save, out(partial=PartialProgress(committed=["a"], pending=["b"])), 100, no_artifacts
    )
    assert partial.outcome == "partial" and partial.status == "PARTIAL"
    lost = settle(save, Invoked(None, ResponseLostError("lost"), 1), 100, no_artifacts)
    assert lost.outcome == "unknown" and lost.side_effect.committed is None
    busy = settle(
        save, Invoked(None, TransientError("busy", retry_after_s=2), 1), 100, no_artifacts
    )
    assert busy.status == "RETRYABLE_ERROR" and busy.error and busy.error.retry_after_s == 2
    read_timeout = settle(read_tool(), Invoked(None, None, 1, timed_out=True), 100, no_artifacts)
    assert read_timeout.outcome == "failed" and read_timeout.status == "RETRYABLE_ERROR"
    write_timeout = settle(save, Invoked(None, None, 1, timed_out=True), 100, no_artifacts)
    assert write_timeout.outcome == "unknown"  # a timeout is not proof nothing happened
    stored: dict[str, bytes] = {}

    def art(data: bytes, kind: str) -> str:
        stored["ref"] = data
        return "sha256:x"

    big = settle(save, out(data="x" * 5000, committed=True), 100, art)
    assert big.truncated and big.data["artifact"] == "sha256:x" and len(stored["ref"]) > 5000
