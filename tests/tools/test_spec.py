"""ToolSpec and the tool_spec decorator: strict input models, hidden ctx, hooks, identity,
and the per-thread event loop async tools run on."""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from execgraph.state.contracts import Evidence
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.runners import resolve_awaitable
from execgraph.tools.spec import ToolSpec, tool_spec


def ctx(call_id: str = "c1") -> InvokeContext:
    return InvokeContext(run_id="r1", call_id=call_id, attempt_id="a1", workspace_root=Path("."))


def test_bare_decorator_builds_a_read_tool_from_the_signature() -> None:
    @tool_spec
    def lookup(query: str, limit: int = 5) -> list[str]:
        """Find things."""
        return [query] * limit

    assert isinstance(lookup, ToolSpec)
    assert (lookup.name, lookup.version, lookup.effect, lookup.key) == (
        "lookup",
        "1.0.0",
        "read",
        "lookup@1.0.0",
    )
    assert lookup.description == "Find things."
    schema = lookup.input_model.model_json_schema()
    assert schema["required"] == ["query"]
    assert schema["properties"]["limit"]["default"] == 5
    out = lookup.run(lookup.input_model(query="q", limit=2), ctx())
    assert out == AdapterOutput(data=["q", "q"], committed=False)


def test_input_model_is_strict_typed_and_frozen() -> None:
    @tool_spec(effect="write", version="1.0.0", locks=["file:{path}"])
    def write_note(path: str, text: str) -> str:
        "Write a note."
        return "ok"

    model = write_note.input_model
    assert model.model_json_schema()["additionalProperties"] is False
    with pytest.raises(ValidationError):
        model.model_validate({"path": "a", "text": "b", "extra": 1})
    with pytest.raises(ValidationError):
        model.model_validate({"path": "a"})
    with pytest.raises(ValidationError):
        model.model_validate({"path": ["not", "a", "str"], "text": "b"})
    args = model.model_validate({"path": "a", "text": "b"})
    with pytest.raises(ValidationError):
        args.path = "other"  # type: ignore[misc]
    assert write_note.locks == ("file:{path}",)


def test_ctx_parameter_is_hidden_from_the_model_and_injected() -> None:
    @tool_spec(effect="write")
    def stamp(item: str, ctx: InvokeContext) -> str:
        """Stamp an item with the call id."""
        return f"{item}:{ctx.call_id}"

    schema = stamp.input_model.model_json_schema()
    assert list(schema["properties"]) == ["item"]
    assert "ctx" not in stamp.json_schema()["function"]["parameters"]["properties"]
    out = stamp.run(stamp.input_model(item="x"), ctx("call-9"))
    assert out.data == "x:call-9" and out.committed is True


def test_a_parameter_typed_invoke_context_is_hidden_whatever_its_name() -> None:
    @tool_spec
    def who(context: InvokeContext) -> str:
        """Report the run."""
        return context.run_id

    assert who.input_model.model_json_schema()["properties"] == {}


def test_a_context_parameter_with_another_name_receives_the_context() -> None:
    @tool_spec
    def who(context: InvokeContext) -> str:
        """Report the run."""
        return context.run_id

    assert who.run(who.input_model(), ctx()).data == "r1"


def test_returned_adapter_output_passes_through_untouched() -> None:
    produced = AdapterOutput(data=1, committed=None, summary="cannot tell")

    @tool_spec(effect="irreversible")
    def maybe() -> AdapterOutput:
        """Might have happened."""
        return produced

    assert maybe.run(maybe.input_model(), ctx()) is produced


def test_decorator_options_reach_the_spec() -> None:
    def verify(args: BaseModel, out: AdapterOutput, c: InvokeContext) -> list[Evidence]:
        return []

    def reconcile(args: BaseModel, c: InvokeContext) -> AdapterOutput | None:
        return None

    def read_state(key: str, args: BaseModel, root: Path) -> str | None:
        return None

    @tool_spec(
        name="renamed",
        version="2.1.0",
        effect="write",
        description="  Custom words.  ",
        path_args=["path"],
        aliases={"file": "path"},
        verify=verify,
        reconcile=reconcile,
        read_state=read_state,
        timeout_s=3.0,
    )
    def original(path: str) -> None:
        """Ignored docstring."""

    assert (original.name, original.version, original.description) == (
        "renamed",
        "2.1.0",
        "Custom words.",
    )
    assert original.path_args == ("path",) and dict(original.aliases) == {"file": "path"}
    assert original.verify is verify and original.reconcile is reconcile
    assert original.read_state is read_state and original.timeout_s == 3.0
    assert original.input_model.__name__ == "renamed_input"


def test_missing_docstring_falls_back_to_the_name() -> None:
    @tool_spec
    def nameless() -> None:
        return None

    assert nameless.description == "nameless"


def test_invalid_effect_and_name_are_refused() -> None:
    with pytest.raises(ValueError):

        @tool_spec(effect="destroy")  # type: ignore[arg-type]
        def bad() -> None:
            """Bad."""

    with pytest.raises(ValueError):
        tool_spec(lambda: None, name="not a name")
    # MCP and the model providers accept '-': so does a ToolSpec
    assert tool_spec(lambda: None, name="get-sum").name == "get-sum"


def test_spec_is_immutable_and_with_makes_new_versions() -> None:
    @tool_spec(version="1.0.0")
    def t() -> None:
        """T."""

    with pytest.raises(dataclasses.FrozenInstanceError):
        t.version = "9.9.9"  # type: ignore[misc]
    newer = t.with_(version="1.1.0")
    disabled = t.with_(disabled=True)
    assert (t.version, newer.version, newer.key) == ("1.0.0", "1.1.0", "t@1.1.0")
    assert disabled.disabled is True and t.disabled is False
    with pytest.raises(ValueError):
        t.with_(effect="explode")


def test_json_schema_is_openai_function_shape() -> None:
    @tool_spec
    def search(query: str) -> str:
        """Search the corpus."""
        return query

    schema = search.json_schema()
    assert schema["type"] == "function"
    assert schema["function"]["name"] == "search"
    assert schema["function"]["description"] == "Search the corpus."
    assert schema["function"]["parameters"]["properties"]["query"]["type"] == "string"


def test_async_tools_are_awaited_not_reported_as_coroutines() -> None:
    import asyncio as _asyncio

    from langchain_core.tools import StructuredTool

    from execgraph.tools.registry import from_langchain

    @tool_spec
    async def fetch(n: int) -> int:
        """Fetch asynchronously."""
        await _asyncio.sleep(0)
        return n * 2

    out = fetch.run(fetch.input_model(n=21), InvokeContext("r", "c", "a", Path(".")))
    assert out.data == 42

    async def shout(text: str) -> str:
        await _asyncio.sleep(0)
        return text.upper()

    lc = StructuredTool.from_function(
        coroutine=shout, name="shout", description="Shout.", metadata={"effect": "read"}
    )
    spec = from_langchain(lc)
    assert (
        spec.run(spec.input_model(text="hi"), InvokeContext("r", "c", "a", Path("."))).data == "HI"
    )


def test_worker_threads_reuse_their_event_loop_and_close_it_when_they_end() -> None:
    async def which_loop() -> int:
        await asyncio.sleep(0)
        return id(asyncio.get_running_loop())

    loops: dict[int, set[int]] = {}

    def call(_: int) -> None:
        loops.setdefault(threading.get_ident(), set()).add(resolve_awaitable(which_loop()))

    gc.collect()  # another test's garbage (a loop it left open) is not this test's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pool = ThreadPoolExecutor(max_workers=2)
        list(pool.map(call, range(20)))
        pool.shutdown(wait=True)  # the workers exit: their loops must be closed, not leaked
        del pool
        gc.collect()
    assert loops and all(len(ids) == 1 for ids in loops.values())  # one loop per thread
    unclosed = [w for w in caught if "unclosed event loop" in str(w.message)]
    assert unclosed == []
    assert resolve_awaitable(41) == 41  # a plain value passes through
