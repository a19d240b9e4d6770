"""FakeAdapter: every scripted behaviour, exact execution counts and reconcile probes."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from execgraph.state.errors import (
    PermanentError,
    ResponseLostError,
    ToolCancelled,
    ToolRaised,
    TransientError,
    VerificationError,
)
from execgraph.tools.adapters import Adapter, FakeAdapter
from execgraph.tools.adapters.fake import SECRET, Step
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import ToolSpec


def ctx(call_id: str = "c1", key: str = "", **kw: object) -> InvokeContext:
    return InvokeContext(
        run_id="r1",
        call_id=call_id,
        attempt_id=f"{call_id}-a",
        workspace_root=Path("."),
        idempotency_key=key,
        **kw,  # type: ignore[arg-type]
    )


def run(spec: ToolSpec, context: InvokeContext | None = None, **args: object) -> AdapterOutput:
    return spec.run(spec.input_model.model_validate(args), context or ctx())


def test_succeed_write_records_one_call_and_one_effect() -> None:
    fake = FakeAdapter()
    publish = fake.tool("publish", effect="irreversible", behaviour="succeed")
    out = run(publish, item="post-1")
    assert out.committed is True and out.data == {"tool": "publish", "item": "post-1"}
    assert out.evidence[0].source_id == "fake:publish:post-1"
    assert fake.call_count("publish") == 1 and fake.effect_count("publish") == 1
    (effect,) = fake.effects
    assert (effect.tool, effect.item, effect.call_id) == ("publish", "post-1", "c1")
    (call,) = fake.calls
    assert (call.behaviour, call.attempt_id, call.args["item"]) == ("succeed", "c1-a", "post-1")


def test_read_tool_counts_calls_but_performs_no_effect() -> None:
    fake = FakeAdapter()
    lookup = fake.tool("lookup", effect="read", behaviour=Step("succeed", data=[1, 2]))
    out = run(lookup)
    assert out.committed is False and out.data == [1, 2]
    assert fake.call_count() == 1 and fake.effects == []


def test_fail_permanent_and_transient_carry_typed_errors() -> None:
    fake = FakeAdapter()
    broken = fake.tool("broken", behaviour="fail")
    busy = fake.tool("busy", behaviour=Step("fail_transient", retry_after_s=2.5, message="429"))
    with pytest.raises(PermanentError):
        run(broken)
    with pytest.raises(TransientError) as info:
        run(busy)
    assert info.value.retry_after_s == 2.5 and info.value.message == "429"
    assert info.value.retryable is True
    assert fake.call_count() == 2 and fake.effect_count() == 0


def test_script_advances_per_call_and_repeats_its_last_step() -> None:
    fake = FakeAdapter()
    flaky = fake.tool("flaky", behaviour=["fail_transient", "fail_transient", "succeed"])
    outcomes = []
    for i in range(5):
        try:
            run(flaky, ctx(f"c{i}"))
            outcomes.append("ok")
        except TransientError:
            outcomes.append("retry")
    assert outcomes == ["retry", "retry", "ok", "ok", "ok"]
    assert [c.behaviour for c in fake.calls] == [
        "fail_transient",
        "fail_transient",
        "succeed",
        "succeed",
        "succeed",
    ]
    assert fake.effect_count("flaky") == 3


def test_empty_script_and_bad_effect_are_refused_without_registering() -> None:
    fake = FakeAdapter()
    with pytest.raises(ValueError):
        fake.tool("nothing", behaviour=[])
    with pytest.raises(ValueError):
        fake.tool("weird", effect="explode")  # type: ignore[arg-type]
    assert fake.tools() == []


def _run_in_thread(spec: ToolSpec, context: InvokeContext) -> tuple[threading.Thread, list]:
    caught: list[BaseException] = []

    def target() -> None:
        try:
            run(spec, context)
        except BaseException as exc:  # recorded for the assertion in the main thread
            caught.append(exc)

    thread = threading.Thread(target=target)
    thread.start()
    return thread, caught


def test_hang_blocks_until_cancelled() -> None:
    fake = FakeAdapter()
    slow = fake.tool("slow", behaviour="hang")
    context = ctx()
    thread, caught = _run_in_thread(slow, context)
    assert fake.wait_started("slow", timeout=10)
    assert thread.is_alive()
    context.cancel.set()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert len(caught) == 1 and isinstance(caught[0], ToolCancelled)
    assert fake.effect_count() == 0


def test_hang_ends_at_the_deadline_as_cancelled() -> None:
    fake = FakeAdapter()
    slow = fake.tool("slow", behaviour="hang")
    with pytest.raises(ToolCancelled) as info:
        run(slow, ctx(deadline=time.time() + 0.05))
    assert "deadline" in info.value.message


def test_hang_with_effect_first_proves_timeout_is_not_nothing() -> None:
    fake = FakeAdapter()
    slow = fake.tool("slow", behaviour=Step("hang", effect_first=True))
    with pytest.raises(ToolCancelled):
        run(slow, ctx("t1", deadline=time.time()))
    assert fake.effect_count("slow") == 1
    assert slow.reconcile is not None
    probe = slow.reconcile(slow.input_model(), ctx("t1"))
    assert probe is not None and probe.committed is True


def test_close_releases_hanging_calls() -> None:
    fake = FakeAdapter()
    slow = fake.tool("slow", behaviour="hang")
    thread, caught = _run_in_thread(slow, ctx())
    assert fake.wait_started("slow", timeout=10)
    fake.close()
    thread.join(timeout=10)
    assert not thread.is_alive() and isinstance(caught[0], ToolCancelled)


def test_lose_response_performs_effect_then_reconciles_as_committed() -> None:
    fake = FakeAdapter()
    send = fake.tool("send", behaviour="lose_response")
    with pytest.raises(ResponseLostError):
        run(send, ctx("lost", key="idem-1"), item="mail")
    assert fake.effect_count("send") == 1
    assert send.reconcile is not None
    args = send.input_model(item="mail")
    same_key = send.reconcile(args, ctx("retry-call", key="idem-1"))
    assert same_key is not None and same_key.committed is True
    same_call = send.reconcile(args, ctx("lost"))
    assert same_call is not None and same_call.committed is True
    other = send.reconcile(args, ctx("other-call", key="idem-2"))
    assert other is not None and other.committed is False


def test_partial_commits_some_items_and_reconcile_reports_pending() -> None:
    fake = FakeAdapter()
    batch = fake.tool("batch", behaviour=Step("partial", commit=2))
    out = run(batch, ctx("b1"), items=["a", "b", "c"])
    assert out.partial is not None
    assert (out.partial.committed, out.partial.pending) == (["a", "b"], ["c"])
    assert out.committed is True
    assert [e.item for e in fake.effects] == ["a", "b"]
    assert batch.reconcile is not None
    probe = batch.reconcile(batch.input_model(items=["a", "b", "c"]), ctx("b1"))
    assert probe is not None and probe.partial is not None
    assert probe.partial.pending == ["c"]


def test_partial_with_nothing_committed_is_not_committed() -> None:
    fake = FakeAdapter()
    batch = fake.tool("batch", behaviour=Step("partial", commit=0))
    out = run(batch, items=["a"])
    assert out.committed is False and out.partial is not None and out.partial.pending == ["a"]


def test_raise_secret_raises_foreign_exception_that_toolraised_withholds() -> None:
    fake = FakeAdapter()
    leaky = fake.tool("leaky", behaviour="raise_secret")
    with pytest.raises(RuntimeError) as info:
        run(leaky)
    assert SECRET in str(info.value)
    wrapped = ToolRaised.from_exception(info.value)
    assert SECRET not in wrapped.message and "RuntimeError" in wrapped.message
    assert fake.call_count("leaky") == 1 and fake.effect_count() == 0


def test_reconcile_modes() -> None:
    fake = FakeAdapter()
    unknown = fake.tool("unknown", reconcile="unknown")
    absent = fake.tool("absent", reconcile="none")
    assert unknown.reconcile is not None
    assert unknown.reconcile(unknown.input_model(), ctx()) is None
    assert absent.reconcile is None


def test_verify_modes() -> None:
    fake = FakeAdapter()
    good = fake.tool("good", verify="pass")
    bad = fake.tool("bad", verify="fail")
    assert fake.tool("plain").verify is None
    out = run(good, ctx("v1"))
    assert good.verify is not None and bad.verify is not None
    (ev,) = good.verify(good.input_model(), out, ctx("v1"))
    assert ev.verified is True and ev.call_id == "v1"
    with pytest.raises(VerificationError):
        good.verify(good.input_model(), out, ctx("never-ran"))
    with pytest.raises(VerificationError):
        bad.verify(bad.input_model(), run(bad), ctx())


def test_counts_are_exact_under_concurrency() -> None:
    fake = FakeAdapter()
    work = fake.tool("work")
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        barrier.wait()
        for i in range(50):
            run(work, ctx(f"w{n}-{i}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fake.call_count("work") == 400 and fake.effect_count("work") == 400
    assert len({c.call_id for c in fake.calls}) == 400


def test_tools_lists_every_tool_and_rescripting_replaces() -> None:
    fake = FakeAdapter()
    fake.tool("a")
    fake.tool("b", version="2.0.0", effect="read")
    fake.tool("a", behaviour="fail")
    assert [s.key for s in fake.tools()] == ["b@2.0.0", "a@1.0.0"]
    assert isinstance(fake, Adapter)
    registry = ToolRegistry([fake])
    assert registry.names() == ["a", "b"]
    with pytest.raises(PermanentError):
        run(registry.resolve("a"))


def test_read_state_answers_effect_count_and_set_values() -> None:
    fake = FakeAdapter()
    spec = fake.tool("w")
    assert spec.read_state is not None
    args = spec.input_model()
    assert spec.read_state("effects", args, Path(".")) == "0"
    run(spec)
    assert spec.read_state("effects", args, Path(".")) == "1"
    assert spec.read_state("etag", args, Path(".")) is None
    fake.set_state("etag", "v7")
    assert spec.read_state("etag", args, Path(".")) == "v7"


def test_input_models_are_strict_and_replaceable() -> None:
    class Publish(BaseModel):
        model_config = ConfigDict(extra="forbid")
        channel: str

    fake = FakeAdapter()
    default = fake.tool("d", locks=["file:{path}"], path_args=["path"])
    with pytest.raises(ValidationError):
        default.input_model.model_validate({"surprise": 1})
    assert default.locks == ("file:{path}",) and default.path_args == ("path",)
    custom = fake.tool("p", input_model=Publish, effect="irreversible")
    out = run(custom, channel="news")
    assert out.committed is True
    assert fake.calls[-1].args == {"channel": "news"} and fake.effects[-1].item == "item"
