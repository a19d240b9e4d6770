"""from_langchain: what a LangChain tool declares, what the model is offered, what it gets.

An undeclared tool is never a read; a tool declares itself in its metadata or tags; the
model is offered ``tool_call_schema``; injected arguments are filled when it runs; what
its ``handle_tool_error`` makes of an error stays an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from langchain_core.tools import InjectedToolCallId, StructuredTool, ToolException, tool
from langgraph.types import Command
from pydantic import ValidationError

from execgraph.nodes.executor.recovery.probe import in_doubt
from execgraph.state.contracts import Outcome
from execgraph.state.errors import ModelRetry, ToolDeclarationError, ToolTypeError
from execgraph.tools import ToolRegistry, from_langchain
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.langchain import UNDECLARED_EFFECT, declaration


def ctx(root: Path = Path(".")) -> InvokeContext:
    return InvokeContext(run_id="r1", call_id="call-7", attempt_id="a1", workspace_root=root)


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


def test_an_undeclared_tool_is_irreversible_never_a_read() -> None:
    spec = from_langchain(send_email)
    assert UNDECLARED_EFFECT == "irreversible"
    assert spec.effect == "irreversible" and spec.retry is None  # never retried
    assert ToolRegistry([send_email]).resolve("send_email").effect == "irreversible"
    out = spec.run(spec.input_model(to="a@b.c", body="hi"), ctx())
    assert out.committed is True
    # A record a crash left in doubt is not run again as if it were safe to redo.
    settled = in_doubt(spec, spec.input_model(to="a@b.c", body="hi"), ctx())
    assert settled is not None and settled.outcome is Outcome.UNKNOWN


def test_a_tool_declares_its_effect_in_metadata_or_tags() -> None:
    @tool
    def search(query: str) -> str:
        """Search."""
        return query

    search.metadata = {"effect": "read"}
    assert from_langchain(search).effect == "read"
    tagged = StructuredTool.from_function(
        lambda name: name, name="put", description="Put.", tags=["effect:write", "idempotent"]
    )
    spec = from_langchain(tagged)
    assert (spec.effect, spec.idempotent, spec.retry is not None) == ("write", True, True)
    declared = StructuredTool.from_function(
        lambda name: name,
        name="post",
        description="Post.",
        metadata={"effect": "write", "version": "2.1.0", "timeout_s": 5, "cost_usd": 0.01},
    )
    spec = from_langchain(declared)
    assert (spec.key, spec.timeout_s, spec.cost_usd) == ("post@2.1.0", 5, 0.01)
    # The wrapper's keyword arguments override what the tool says.
    assert from_langchain(declared, effect="irreversible", version="3.0.0").key == "post@3.0.0"


def test_conflicting_or_malformed_declarations_are_refused() -> None:
    both = StructuredTool.from_function(
        lambda q: q, name="q", description="Q.", metadata={"effect": "read"}, tags=["effect:write"]
    )
    with pytest.raises(ToolDeclarationError, match="more than one effect"):
        declaration(both)
    odd = StructuredTool.from_function(
        lambda q: q, name="q", description="Q.", metadata={"effect": "harmless"}
    )
    with pytest.raises(ToolDeclarationError, match="effect must be one of"):
        from_langchain(odd)
    locks = StructuredTool.from_function(
        lambda q: q, name="q", description="Q.", metadata={"effect": "write", "locks": "file:{q}"}
    )
    with pytest.raises(ToolDeclarationError, match="list of strings"):
        from_langchain(locks)


def test_mcp_annotations_in_metadata_declare_the_effect() -> None:
    def hinted(**hints: Any) -> StructuredTool:
        return StructuredTool.from_function(lambda q: q, name="q", description="Q.", metadata=hints)

    assert from_langchain(hinted(readOnlyHint=True)).effect == "read"
    spec = from_langchain(hinted(readOnlyHint=False, destructiveHint=False, idempotentHint=True))
    assert (spec.effect, spec.idempotent) == ("write", True)
    assert from_langchain(hinted(readOnlyHint=False)).effect == "irreversible"  # MCP default
    assert from_langchain(hinted(destructiveHint=True)).effect == "irreversible"
    unannotated = hinted(title="Q", readOnlyHint=None, destructiveHint=None)
    assert from_langchain(unannotated).effect == "irreversible"
    explicit = hinted(readOnlyHint=True, effect="write")
    assert from_langchain(explicit).effect == "write"  # an explicit effect wins over hints


def test_file_lock_keys_make_path_arguments() -> None:
    lc = StructuredTool.from_function(
        lambda path, text: "saved",
        name="save",
        description="Save.",
        metadata={"effect": "write", "locks": ["file:{path}", "db", "file:{missing}"]},
    )
    spec = from_langchain(lc)
    assert (spec.locks, spec.path_args) == (("file:{path}", "db", "file:{missing}"), ("path",))
    assert from_langchain(lc, path_args=()).path_args == ()  # an explicit one wins


def test_the_path_a_langchain_tool_gets_is_inside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    seen: list[str] = []

    def save(path: str, text: str) -> str:
        seen.append(path)
        Path(path).write_text(text)
        return "saved"

    lc = StructuredTool.from_function(
        save, description="Save.", metadata={"effect": "write", "locks": ["file:{path}"]}
    )
    spec = from_langchain(lc)
    spec.run(spec.input_model(path="notes/a.txt", text="hi"), ctx(tmp_path))
    assert seen == [str(tmp_path / "notes" / "a.txt")]
    assert (tmp_path / "notes" / "a.txt").read_text() == "hi"


def test_the_model_is_offered_the_tool_call_schema_and_the_call_id_is_injected() -> None:
    @tool
    def reply(text: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Reply, naming the call."""
        return f"{text} ({tool_call_id})"

    reply.metadata = {"effect": "read"}
    spec = from_langchain(reply)
    offered = spec.json_schema()["function"]["parameters"]
    assert offered["required"] == ["text"] and set(offered["properties"]) == {"text"}
    with pytest.raises(ValidationError):  # the model cannot forge the injected argument
        spec.input_model.model_validate({"text": "hi", "tool_call_id": "forged"})
    out = spec.run(spec.input_model(text="hi"), ctx())
    assert out.data == "hi (call-7)"


def test_what_handle_tool_error_makes_of_an_error_stays_an_error() -> None:
    def lookup(q: str) -> str:
        raise ToolException("page_size must be at most 100")

    handled = StructuredTool.from_function(
        lookup, description="Look up.", metadata={"effect": "read"}, handle_tool_error=True
    )
    spec = from_langchain(handled)
    with pytest.raises(ModelRetry, match="page_size must be at most 100"):
        spec.run(spec.input_model(q="x"), ctx())
    custom = StructuredTool.from_function(
        lookup, description="Look up.", handle_tool_error=lambda e: f"try again: {e}"
    )
    spec = from_langchain(custom, effect="read")
    with pytest.raises(ModelRetry, match="try again: page_size"):
        spec.run(spec.input_model(q="x"), ctx())
    assert custom.handle_tool_error  # the user's tool is left as it was


def test_a_tool_returning_a_command_is_refused() -> None:
    @tool
    def jump(to: str) -> Command[Any]:
        """Jump somewhere."""
        return Command(goto=to)

    spec = from_langchain(jump, effect="read")
    with pytest.raises(ToolTypeError, match="returned a LangGraph Command"):
        spec.run(spec.input_model(to="x"), ctx())


def test_a_json_schema_tool_is_offered_its_schema_and_validated_by_it() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "mark": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["name"],
    }
    got: list[dict[str, Any]] = []

    def touch(**kwargs: Any) -> str:
        got.append(kwargs)
        return "ok"

    lc = StructuredTool(name="touch", description="Touch.", args_schema=schema, func=touch)
    spec = from_langchain(lc, effect="write")
    assert spec.json_schema()["function"]["parameters"] == schema
    with pytest.raises(ValidationError):
        spec.input_model.model_validate({"name": "a", "extra": 1})
    with pytest.raises(ValidationError):
        spec.input_model.model_validate({"mark": "m"})
    spec.run(spec.input_model.model_validate({"name": "a"}), ctx())
    assert got == [{"name": "a"}]  # an omitted optional argument stays omitted
