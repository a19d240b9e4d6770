"""Stage 9 alone: every successful call leaves evidence; only a runtime check verifies it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.nodes.executor.stages.evidence import OBSERVATION, gather_evidence
from execgraph.nodes.executor.stages.invoke import Invoked
from execgraph.nodes.executor.stages.outcome import Settled, settle
from execgraph.state.contracts import Evidence
from execgraph.state.errors import TargetNotFound, VerificationError
from execgraph.tools import AdapterOutput, InvokeContext, ToolSpec, tool_spec
from tests.nodes.executor.stages import stage_helpers


@tool_spec(effect="read")
def lookup(city: str, units: str = "metric") -> str:
    """Look a city up."""
    return f"{city}: sunny"


@tool_spec(effect="write")
def save(path: str) -> str:
    """Save something."""
    return "saved"


def _ctx(tmp_path: Path, call_id: str = "c1") -> InvokeContext:
    return InvokeContext(run_id="r", call_id=call_id, attempt_id="a", workspace_root=tmp_path)


def _gather(
    spec: ToolSpec,
    args: dict[str, Any],
    output: AdapterOutput | None = None,
    error: Exception | None = None,
    *,
    ctx: InvokeContext,
    budget: int = 10_000,
) -> Settled:
    model = spec.input_model(**args)
    if output is None and error is None:
        output = spec.run(model, ctx)
    stored: dict[str, bytes] = {}

    def put(data: bytes, kind: str) -> str:
        stored[kind] = data
        return "sha256:stored"

    settled = settle(spec, Invoked(output, error, 1), budget, put)
    return gather_evidence(spec, model, settled, output, ctx)


def test_a_plain_tools_success_is_one_unverified_observation(tmp_path: Path) -> None:
    settled = _gather(lookup, {"city": "Paris"}, ctx=_ctx(tmp_path))
    [item] = settled.evidence
    assert item.kind == OBSERVATION and item.verified is False
    assert item.value == "Paris: sunny" and item.call_id == "c1"
    assert item.source_id.startswith("lookup:") and len(item.source_id) == len("lookup:") + 16


def test_the_key_is_the_normalized_arguments_so_a_repeat_is_the_same_source(
    tmp_path: Path,
) -> None:
    first = _gather(lookup, {"city": "Paris"}, ctx=_ctx(tmp_path, "c1")).evidence[0]
    spelled = _gather(lookup, {"city": "Paris", "units": "metric"}, ctx=_ctx(tmp_path, "c2"))
    other = _gather(lookup, {"city": "Rome"}, ctx=_ctx(tmp_path, "c3")).evidence[0]
    again = spelled.evidence[0]
    assert again.source_id == first.source_id and again.value == first.value
    assert again.version > first.version  # the newer observation replaces the older one
    assert other.source_id != first.source_id


def test_a_source_the_tool_returns_keys_the_observation(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def read(key: str) -> dict[str, str]:
        """Read one paper."""
        return {"source_id": key, "text": "RAG grounds answers."}

    [item] = _gather(read, {"key": "paper-a"}, ctx=_ctx(tmp_path)).evidence
    assert item.source_id == "read:paper-a" and "RAG grounds answers." in item.value


def test_a_spilled_output_keeps_its_artifact_ref_and_a_bounded_value(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def dump() -> str:
        """Return a lot."""
        return "x" * 5_000

    settled = _gather(dump, {}, ctx=_ctx(tmp_path), budget=200)
    [item] = settled.evidence
    assert settled.truncated and item.ref == "sha256:stored"
    assert len(item.value) <= 500


def test_a_write_without_read_back_is_observed_but_not_verified(tmp_path: Path) -> None:
    [item] = _gather(save, {"path": "a.txt"}, ctx=_ctx(tmp_path)).evidence
    assert item.kind == OBSERVATION and item.verified is False and item.value == "saved"


def test_named_evidence_is_kept_as_is_and_no_observation_is_added(tmp_path: Path) -> None:
    named = Evidence(source_id="doc:a", kind="document", value="Title", verified=True)
    out = AdapterOutput(data={"text": "t"}, committed=False, evidence=(named,))
    assert _gather(lookup, {"city": "Paris"}, out, ctx=_ctx(tmp_path)).evidence == (named,)

    checked = Evidence(source_id="file:a", kind="sha256", value="h", verified=True)
    verified = save.with_(verify=lambda args, output, ctx: [checked])
    assert _gather(verified, {"path": "a"}, ctx=_ctx(tmp_path)).evidence == (checked,)


def test_a_failed_call_leaves_no_evidence(tmp_path: Path) -> None:
    failed = _gather(lookup, {"city": "Atlantis"}, error=TargetNotFound("no such city"),
                     ctx=_ctx(tmp_path))  # fmt: skip
    assert failed.outcome == "failed" and failed.evidence == ()


def test_gather_evidence_verifies_writes(tmp_path: Path) -> None:
    save = stage_helpers.save
    ev = Evidence(source_id="file:a", kind="sha256", value="h", verified=True)

    def verify_ok(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        return [ev]

    def verify_bad(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        raise VerificationError("content differs after write")

    output = AdapterOutput(data="ok", committed=True)
    settled = settle(save, Invoked(output, None, 1), 100, stage_helpers.no_artifacts)
    args = save.input_model(path="a")
    context = stage_helpers.ctx(tmp_path)
    good = gather_evidence(save.with_(verify=verify_ok), args, settled, output, context)
    assert good.evidence == (ev,)
    bad = gather_evidence(save.with_(verify=verify_bad), args, settled, output, context)
    assert bad.outcome == "failed" and bad.error is not None and bad.error.phase == "verify"
