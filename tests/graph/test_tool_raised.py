"""What tool code raises reaches the developer (a ``tool.raised`` event, the ``execgraph``
logger), bounded and scrubbed, and never the model's ToolResult; a ``ToolException`` or a
``ModelRetry`` is the tool's message *for* the model and passes, bounded."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException, tool

from execgraph.nodes.executor.recovery.probe import in_doubt
from execgraph.state.contracts import ToolResult
from execgraph.state.errors import MODEL_RETRY_CHARS, ModelRetry, ResponseLostError
from execgraph.state.events import Event
from execgraph.tools import AdapterOutput, InvokeContext, from_langchain, tool_spec
from execgraph.tools.retry import DEFAULT_READ_RETRY
from tests.support.executor import config, make_deps, make_executor, request

pytestmark = pytest.mark.timeout(60)

MARKER = "disk quota exceeded on /srv/vol-7c1e"  # a foreign message, no credential in it
KEY = "sk-live-0a1b2c3d4e5f6a7b"


class VendorError(Exception):
    """Stands in for an SDK's exception."""


def _run(tmp_path: Path, tools: list[Any], name: str) -> tuple[ToolResult, list[Event]]:
    deps = make_deps(tmp_path, tools)
    out = make_executor(deps).invoke(
        {"request": request(name, {}, root=tmp_path, call_id="c1")}, config()
    )
    return ToolResult.model_validate(out["results"]["c1"]), deps.store.events("run-1")


def _raised(events: list[Event]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.type == "tool.raised"]


def test_a_tool_that_raises_is_withheld_from_the_model_and_logged_for_the_developer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    @tool_spec(effect="write")
    def store_blob() -> str:
        """Store a blob; the disk is full."""
        raise VendorError(MARKER)

    with caplog.at_level(logging.WARNING, logger="execgraph"):
        result, events = _run(tmp_path, [store_blob], "store_blob")
    assert result.error is not None and result.error.type == "ToolRaised"
    assert MARKER not in result.model_dump_json()  # the model's view: type only
    [raised] = _raised(events)
    assert raised["stage"] == "invoke" and raised["tool"] == "store_blob@1.0.0"
    assert raised["type"] == f"{__name__}.VendorError"
    assert raised["message"] == MARKER
    assert "in store_blob" in raised["traceback"]  # the frame that raised
    assert raised["traceback"].rstrip().endswith(f"VendorError: {MARKER}")
    [record] = [r for r in caplog.records if r.name.startswith("execgraph")]
    assert record.name == "execgraph.executor" and record.levelno == logging.WARNING
    assert MARKER in record.getMessage() and "in store_blob" in record.getMessage()
    assert "c1" in record.getMessage() and "run-1" in record.getMessage()


def test_a_tool_that_raises_timeout_error_is_recorded(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def fetch() -> str:
        """Fetch from a gateway that times out."""
        raise TimeoutError("gateway 10.0.0.7 did not answer in 30 s")

    result, events = _run(tmp_path, [fetch], "fetch")
    assert result.error is not None and result.error.type == "TransientError"
    # a read that timed out is retried (the default policy): every attempt is recorded
    raised = _raised(events)
    assert len(raised) == result.attempts == DEFAULT_READ_RETRY.max_attempts
    assert {(r["stage"], r["type"]) for r in raised} == {("invoke", "TimeoutError")}
    assert raised[0]["message"] == "gateway 10.0.0.7 did not answer in 30 s"


def test_a_verify_check_that_raises_is_recorded(tmp_path: Path) -> None:
    def verify(args: Any, output: AdapterOutput, ctx: InvokeContext) -> list[Any]:
        raise VendorError(MARKER)

    @tool_spec(effect="write", verify=verify)
    def write_x() -> str:
        """A write whose read-back check crashes."""
        return "ok"

    result, events = _run(tmp_path, [write_x], "write_x")
    assert result.error is not None and result.error.phase == "verify"
    assert MARKER not in result.model_dump_json()
    [raised] = _raised(events)
    assert raised["stage"] == "verify" and raised["message"] == MARKER
    assert "in verify" in raised["traceback"]


def test_a_reconcile_probe_that_raises_is_recorded(tmp_path: Path) -> None:
    def probe(args: Any, ctx: InvokeContext) -> AdapterOutput:
        raise VendorError(MARKER)

    @tool_spec(effect="write", reconcile=probe)
    def send() -> str:
        """A send whose response is lost and whose probe crashes."""
        raise ResponseLostError("the connection dropped after the request was sent")

    result, events = _run(tmp_path, [send], "send")
    assert result.outcome == "unknown"  # a crashing probe proves nothing
    assert MARKER not in result.model_dump_json()
    [raised] = _raised(events)
    assert raised["stage"] == "reconcile" and raised["message"] == MARKER
    assert "in probe" in raised["traceback"]


def test_the_crash_recovery_probe_reports_what_it_raised(tmp_path: Path) -> None:
    def probe(args: Any, ctx: InvokeContext) -> AdapterOutput:
        raise VendorError(MARKER)

    @tool_spec(effect="write", reconcile=probe)
    def send() -> str:
        """A send interrupted by a crash."""
        return "sent"

    reports: list[tuple[str, BaseException]] = []
    ctx = InvokeContext(run_id="r", call_id="c", attempt_id="a", workspace_root=tmp_path)
    settled = in_doubt(
        send, send.input_model(), ctx, lambda stage, exc: reports.append((stage, exc))
    )
    assert settled is not None and settled.outcome == "unknown"
    [(stage, exc)] = reports
    assert stage == "reconcile" and str(exc) == MARKER


def test_the_record_is_bounded_and_keeps_the_innermost_frames(tmp_path: Path) -> None:
    def ping(n: int) -> None:
        if n == 0:
            raise VendorError("x" * 100_000)
        pong(n - 1)

    def pong(n: int) -> None:  # two functions in turn: Python cannot fold the frames
        ping(n - 1)

    @tool_spec(effect="read")
    def deep() -> str:
        """Recurse deeply, then raise a huge message."""
        ping(300)
        return "never"

    _, events = _run(tmp_path, [deep], "deep")
    [raised] = _raised(events)
    assert 2_000 <= len(raised["message"]) < 2_100 and raised["message"].startswith("xxx")
    trace = raised["traceback"]
    assert len(trace) < 6_200 and "outer frames cut" in trace
    assert "in deep" not in trace  # the outermost frames went first
    assert "in ping" in "\n".join(trace.splitlines()[-5:])  # the frame that raised stayed
    assert trace.splitlines()[-1].startswith(f"{__name__}.VendorError: xxx")


def test_a_credential_in_the_exception_is_scrubbed_from_the_record(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def call_api() -> str:
        """Call an API whose client puts its credentials in the error."""
        raise VendorError(
            f"401 for https://bot:pw-9@api.test/v1?api_key={KEY}: Authorization: Bearer {KEY}"
        )

    _, events = _run(tmp_path, [call_api], "call_api")
    [raised] = _raised(events)
    assert KEY not in str(raised) and "pw-9" not in str(raised)
    assert "https://api.test/v1?api_key=[redacted]" in raised["message"]
    assert "Bearer [redacted]" in raised["message"]


def test_a_langchain_tool_exception_is_the_tools_message_for_the_model(tmp_path: Path) -> None:
    @tool
    def search(query: str = "") -> str:
        """Search a catalogue."""
        raise ToolException("page_size must be at most 100; ask for fewer results")

    result, events = _run(tmp_path, [from_langchain(search, effect="read")], "search")
    assert result.error is not None and result.error.type == "ModelRetry"
    assert result.error.message == "page_size must be at most 100; ask for fewer results"
    assert result.status == "RETRYABLE_ERROR" and result.error.retryable is True
    assert result.side_effect.committed is False
    [raised] = _raised(events)  # the developer still gets the record, traceback included
    assert raised["type"] == "langchain_core.tools.base.ToolException"
    assert "in search" in raised["traceback"]


def test_model_retry_passes_its_message_bounded(tmp_path: Path) -> None:
    @tool_spec(effect="read")
    def lookup() -> str:
        """Look something up; tell the model how to ask instead."""
        raise ModelRetry("use an ISO date such as 2024-05-01 " + "y" * 5_000)

    result, events = _run(tmp_path, [lookup], "lookup")
    assert result.error is not None and result.error.type == "ModelRetry"
    assert result.error.message.startswith("use an ISO date such as 2024-05-01 yyy")
    assert len(result.error.message) == MODEL_RETRY_CHARS
    assert [r["type"] for r in _raised(events)] == ["execgraph.state.errors.ModelRetry"]


def test_a_typed_error_is_no_raised_record(tmp_path: Path) -> None:
    # A typed error's message is already the tool's report in the result: no duplicate.
    @tool_spec(effect="read")
    def gone() -> str:
        """A read whose target is missing."""
        raise ResponseLostError("the response was lost")

    _, events = _run(tmp_path, [gone], "gone")
    assert _raised(events) == []
