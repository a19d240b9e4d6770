"""ToolRegistry: exact / compatible / incompatible / unknown / disabled resolution, wrapping."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import tool
from pydantic import ValidationError

from execgraph.state.errors import (
    IncompatibleVersionError,
    ResolutionError,
    ToolDisabledError,
    UnknownToolError,
)
from execgraph.tools.adapters.fake import FakeAdapter
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.registry import ToolRegistry, from_langchain
from execgraph.tools.spec import ToolSpec, tool_spec


def ctx() -> InvokeContext:
    return InvokeContext(run_id="r1", call_id="c1", attempt_id="a1", workspace_root=Path("."))


def versions(*vs: str) -> list[ToolSpec]:
    @tool_spec
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    return [echo.with_(version=v) for v in vs]


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry(versions("1.0.0", "1.2.0", "1.10.0", "2.0.0"))


def test_exact_version_resolves_to_itself(registry: ToolRegistry) -> None:
    assert registry.resolve("echo", "1.2.0").version == "1.2.0"
    assert registry.resolve("echo", "2.0.0").key == "echo@2.0.0"


def test_no_version_resolves_to_the_newest(registry: ToolRegistry) -> None:
    assert registry.resolve("echo").version == "2.0.0"


def test_compatible_version_is_newest_of_same_major_at_least_requested(
    registry: ToolRegistry,
) -> None:
    assert registry.resolve("echo", "1.1.0").version == "1.10.0"  # numeric, not lexical
    assert registry.resolve("echo", "1.3").version == "1.10.0"


@pytest.mark.parametrize("wanted", ["1.11.0", "3.0.0", "0.9.0", "2.0.1"])
def test_incompatible_versions_are_refused(registry: ToolRegistry, wanted: str) -> None:
    with pytest.raises(IncompatibleVersionError) as info:
        registry.resolve("echo", wanted)
    assert info.value.phase == "resolve" and wanted in info.value.message


def test_unknown_tool_is_a_not_found_resolution_error(registry: ToolRegistry) -> None:
    with pytest.raises(UnknownToolError) as info:
        registry.resolve("nope")
    assert isinstance(info.value, ResolutionError) and info.value.status == "NOT_FOUND"
    assert "nope" not in registry and "echo" in registry


def test_disabled_version_is_refused_and_hidden(registry: ToolRegistry) -> None:
    registry.disable("echo", "1.2.0")
    with pytest.raises(ToolDisabledError) as info:
        registry.resolve("echo", "1.2.0")
    assert info.value.status == "DENIED"
    assert registry.resolve("echo", "1.0.0").version == "1.0.0"
    assert [s.key for s in registry.latest()] == ["echo@2.0.0"]


def test_disabling_every_version_removes_the_tool_from_offers(registry: ToolRegistry) -> None:
    registry.disable("echo")
    for v in ("1.0.0", "1.2.0", "1.10.0", "2.0.0"):
        with pytest.raises(ToolDisabledError):
            registry.resolve("echo", v)
    assert registry.names() == [] and registry.latest() == []
    assert "echo" in registry  # still known, so callers get DENIED rather than NOT_FOUND


def test_latest_offers_newest_enabled_version_per_tool(registry: ToolRegistry) -> None:
    registry.disable("echo", "2.0.0")
    assert [s.key for s in registry.latest()] == ["echo@1.10.0"]


def test_no_version_skips_a_disabled_newest(registry: ToolRegistry) -> None:
    registry.disable("echo", "2.0.0")
    assert registry.resolve("echo").version == "1.10.0"


def test_registering_the_same_version_again_replaces_it() -> None:
    first, second = versions("1.0.0", "1.0.0")
    second = second.with_(description="second")
    registry = ToolRegistry([first, second])
    assert registry.resolve("echo", "1.0.0").description == "second"


def test_langchain_tool_is_wrapped_and_runs() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    add.metadata = {"effect": "read"}  # declared: an undeclared tool is irreversible
    registry = ToolRegistry([add])
    spec = registry.resolve("add")
    assert (spec.key, spec.effect, spec.description) == ("add@1.0.0", "read", "Add two integers.")
    out = spec.run(spec.input_model.model_validate({"a": 2, "b": 3}), ctx())
    assert out.data == 5 and out.committed is False
    with pytest.raises(ValidationError):
        spec.input_model.model_validate({"a": "not a number", "b": 1})


def test_from_langchain_sets_effect_version_and_extras() -> None:
    @tool
    def publish(text: str) -> str:
        """Publish text."""
        return f"published {text}"

    spec = from_langchain(publish, effect="irreversible", version="3.1.0", locks=("feed",))
    assert (spec.key, spec.effect, spec.locks) == ("publish@3.1.0", "irreversible", ("feed",))
    out = spec.run(spec.input_model.model_validate({"text": "hi"}), ctx())
    assert out.data == "published hi" and out.committed is True


def test_wrapped_langchain_tool_refuses_unknown_arguments() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    spec = from_langchain(add, effect="read")
    with pytest.raises(ValidationError):
        spec.input_model.model_validate({"a": 1, "b": 2, "rm_rf": True})


def test_adapter_registers_every_tool() -> None:
    fake = FakeAdapter()
    fake.tool("publish", effect="irreversible")
    fake.tool("lookup", effect="read", version="0.3.0")
    registry = ToolRegistry()
    registry.register(fake)
    assert registry.names() == ["lookup", "publish"]
    assert registry.resolve("lookup").version == "0.3.0"


def test_registering_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        ToolRegistry([object()])  # type: ignore[list-item]
