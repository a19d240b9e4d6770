"""resolve_model: pass-through, provider strings against a local server, typed errors."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from execgraph.nodes.model import ModelConfigError, install_hint, resolve_model
from execgraph.testing import ScriptedChatModel
from tests.support.openai_server import (
    OpenAIServer,
    isolate_from_network,
    text,
    tool_call,
    tool_calls,
)


@tool
def write_note(path: str, text: str) -> str:
    """Write a note."""
    return path


def test_a_chat_model_passes_through_unchanged() -> None:
    model = ScriptedChatModel(["hi"])
    assert resolve_model(model) is model


def test_kwargs_with_an_instance_are_refused() -> None:
    with pytest.raises(ModelConfigError, match="temperature"):
        resolve_model(ScriptedChatModel([]), temperature=0)


def test_a_model_without_tool_calling_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="bind_tools"):
        resolve_model(FakeListChatModel(responses=["x"]))


def test_provider_string_builds_a_model_that_talks_to_the_given_base_url(
    openai_server: OpenAIServer,
) -> None:
    openai_server.add(text("hello from the local server"))

    model = resolve_model(
        "openai:gpt-4o-mini", base_url=openai_server.base_url, api_key="test", max_retries=0
    )
    reply = model.invoke("hi")

    assert isinstance(model, BaseChatModel)
    assert isinstance(reply, AIMessage) and reply.content == "hello from the local server"
    (request,) = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "gpt-4o-mini"
    assert request.headers["authorization"] == "Bearer test"


def test_tool_turns_are_not_streamed_so_truncated_arguments_stay_invalid(
    openai_server: OpenAIServer,
) -> None:
    """Even when a caller streams (LangGraph's "messages" mode does), tool turns use invoke."""
    truncated = '{"path": "a.txt", "text": "hello wor'
    openai_server.add(tool_calls(tool_call("write_note", truncated, id="c1")))
    model = resolve_model("openai:gpt-4o-mini", base_url=openai_server.base_url, api_key="t")
    bound = model.bind_tools([write_note])

    chunks = list(bound.stream("write it"))

    assert len(chunks) == 1  # one whole message, not token deltas
    assert not openai_server.requests[0].body.get("stream")
    (message,) = chunks
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    assert message.invalid_tool_calls[0]["args"] == truncated


def test_disable_streaming_can_be_overridden(openai_server: OpenAIServer) -> None:
    model = resolve_model(
        "openai:gpt-4o-mini",
        base_url=openai_server.base_url,
        api_key="t",
        disable_streaming=False,
    )
    assert model.disable_streaming is False


def test_model_provider_kwarg_allows_a_bare_model_name(openai_server: OpenAIServer) -> None:
    model = resolve_model(
        "gpt-4o-mini", model_provider="openai", base_url=openai_server.base_url, api_key="t"
    )
    assert getattr(model, "model_name", None) == "gpt-4o-mini"


@pytest.mark.integration
def test_provider_names_are_normalized() -> None:
    model = resolve_model(" OpenAI:gpt-4o-mini ", api_key="t", base_url="http://127.0.0.1:9/v1")
    assert getattr(model, "model_name", None) == "gpt-4o-mini"


def test_unknown_provider_names_the_known_ones_and_a_close_match() -> None:
    with pytest.raises(ModelConfigError) as caught:
        resolve_model("opnai:gpt-4o-mini")
    message = str(caught.value)
    assert "unknown model provider 'opnai'" in message
    assert "Did you mean 'openai'?" in message
    assert "anthropic" in message


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("", "must look like 'provider:model'"),
        ("   ", "must look like 'provider:model'"),
        ("gpt-4o-mini", "did you mean 'openai:gpt-4o-mini'"),
        ("openai:", "needs both a provider and a model name"),
        (":gpt-4o-mini", "needs both a provider and a model name"),
        ("open ai:gpt", "is not a provider name"),
        ("9x:model", "is not a provider name"),
    ],
)
def test_malformed_strings_are_config_errors(spec: str, expected: str) -> None:
    with pytest.raises(ModelConfigError, match=expected):
        resolve_model(spec)


@pytest.mark.parametrize("value", [None, 42, ["openai:gpt-4o-mini"]])
def test_non_model_values_are_config_errors(value: Any) -> None:
    with pytest.raises(ModelConfigError, match="model"):
        resolve_model(value)


def test_a_bound_model_is_refused_with_a_hint() -> None:
    bound = ScriptedChatModel([]).bind_tools([])
    with pytest.raises(ModelConfigError, match="unbound chat model"):
        resolve_model(bound)  # type: ignore[arg-type]


def test_scripted_string_asks_for_an_instance() -> None:
    with pytest.raises(ModelConfigError, match=r"ScriptedChatModel\(\["):
        resolve_model("scripted")


def test_offline_is_reserved_for_the_demo_policy() -> None:
    """The core never imports the demo: only the demo turns "offline" into its policy."""
    with pytest.raises(ModelConfigError, match="build_demo_graph"):
        resolve_model("offline")


def test_a_missing_provider_package_names_the_install_command() -> None:
    from langchain.chat_models import base

    providers: dict[str, Any] = base._BUILTIN_PROVIDERS
    missing = sorted(
        name
        for name, (module, *_rest) in providers.items()
        if importlib.util.find_spec(module.split(".")[0]) is None
    )
    assert missing, "every provider package is installed; this test needs one that is not"
    provider = missing[0]

    with pytest.raises(ModelConfigError) as caught:
        resolve_model(f"{provider}:some-model")

    assert "not installed" in str(caught.value)
    assert install_hint(provider) in str(caught.value)
    assert install_hint(provider).startswith("pip install langchain-")


def test_install_hints() -> None:
    assert install_hint("openai") == 'pip install "execgraph[openai]"'
    assert install_hint("azure_openai") == 'pip install "execgraph[openai]"'
    assert install_hint("anthropic") == "pip install langchain-anthropic"
    assert install_hint("google_genai") == "pip install langchain-google-genai"
    assert install_hint("somethingnew") == "pip install langchain-somethingnew"


@pytest.mark.integration
def test_a_configuration_the_provider_rejects_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolate_from_network(monkeypatch)  # also removes OPENAI_API_KEY
    with pytest.raises(ModelConfigError, match="could not configure openai:gpt-4o-mini"):
        resolve_model("openai:gpt-4o-mini")
    with pytest.raises(ModelConfigError, match="temperature") as caught:
        resolve_model("openai:gpt-4o-mini", api_key="sk-secret-value", temperature="hot")
    assert "sk-secret-value" not in str(caught.value)
    assert "hot" not in str(caught.value)  # inputs are not echoed back
