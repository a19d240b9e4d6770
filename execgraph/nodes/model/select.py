"""Turn the ``model=`` argument into a chat model, or a clear configuration error.

A user's first contact with execgraph is often a typo in a model string or a missing
provider package; both must end in one typed error that says what to type next, never in a
stack trace from deep inside an integration package.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langgraph.errors import GraphBubbleUp
from pydantic import ValidationError

from execgraph.state.errors import ModelConfigError

__all__ = ["ModelConfigError", "install_hint", "resolve_model"]

# Integration packages that an execgraph extra installs; everything else is a plain pip name.
_EXTRAS = {"langchain_openai": "openai"}
_PROVIDER_RE = re.compile(r"^[a-z][a-z0-9_]*$")
_MAX_DETAIL = 400


def _registry() -> dict[str, str]:
    """Provider name -> module holding its chat model, as ``init_chat_model`` knows them."""
    from langchain.chat_models import base

    providers = getattr(base, "_BUILTIN_PROVIDERS", None)
    if not isinstance(providers, dict):  # langchain moved it: trust init_chat_model instead
        return {}
    return {name: str(entry[0]) for name, entry in providers.items()}


def install_hint(provider: str) -> str:
    """The exact command that installs the integration package for ``provider``."""
    module = _registry().get(provider, f"langchain_{provider}")
    root = module.split(".", 1)[0]
    if root in _EXTRAS:
        return f'pip install "execgraph[{_EXTRAS[root]}]"'
    return f"pip install {root.replace('_', '-')}"


def _split(spec: str, model_provider: str | None) -> tuple[str, str]:
    """``"provider:model"`` -> (provider, model), normalized, or a helpful error."""
    text = spec.strip()
    provider, sep, name = text.partition(":")
    if model_provider is not None:
        provider, name = model_provider, text
    elif not sep:
        guess = _guess_provider(text)
        hint = f"; did you mean {guess + ':' + text!r}?" if guess else ""
        raise ModelConfigError(
            f"model string {spec!r} must look like 'provider:model', "
            f"e.g. 'openai:gpt-4o-mini'{hint}"
        )
    provider = provider.strip().lower().replace("-", "_")
    name = name.strip()
    if not provider or not name:
        raise ModelConfigError(
            f"model string {spec!r} needs both a provider and a model name, "
            "e.g. 'openai:gpt-4o-mini'"
        )
    if not _PROVIDER_RE.match(provider):
        raise ModelConfigError(f"{provider!r} in {spec!r} is not a provider name")
    return provider, name


def _guess_provider(name: str) -> str | None:
    """The provider langchain would infer for a bare model name, if any."""
    from langchain.chat_models import base

    infer = getattr(base, "_attempt_infer_model_provider", None)
    if infer is None or not name:
        return None
    try:
        guess = infer(name)
    except GraphBubbleUp:
        raise  # LangGraph's own signal (an interrupt) is never a failed guess
    except Exception:  # a guess only decorates an error message
        return None
    return guess if isinstance(guess, str) else None


def _check_provider(provider: str) -> None:
    """Fail before importing anything when the provider is unknown or not installed."""
    registry = _registry()
    if not registry:
        return
    if provider not in registry:
        close = difflib.get_close_matches(provider, registry, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ModelConfigError(
            f"unknown model provider {provider!r}.{hint} "
            f"Known providers: {', '.join(sorted(registry))}"
        )
    root = registry[provider].split(".", 1)[0]
    if importlib.util.find_spec(root) is None:
        raise ModelConfigError(
            f"provider {provider!r} needs the {root.replace('_', '-')} package, which is not "
            f"installed; run: {install_hint(provider)}"
        )


def _describe(error: Exception) -> str:
    """A short, input-free account of why a provider refused its configuration."""
    if isinstance(error, ValidationError):
        parts = [
            f"{'.'.join(str(p) for p in item['loc']) or 'value'}: {item['msg']}"
            for item in error.errors(include_input=False, include_url=False)
        ]
        detail = "; ".join(parts)
    else:
        detail = str(error).splitlines()[0] if str(error) else ""
    detail = f"{type(error).__name__}: {detail}" if detail else type(error).__name__
    return detail[:_MAX_DETAIL]


def resolve_model(model: BaseChatModel | str | None, **kwargs: Any) -> BaseChatModel:
    """Turn ``build_graph``'s ``model=`` into a chat model that can bind tools.

    Args:
        model: a ``BaseChatModel`` (used as is), ``"provider:model"`` (built with
            ``init_chat_model``). ``"offline"`` names the demo's policy, which only
            the demo builds (``execgraph.demo.build_demo_graph``).
        **kwargs: forwarded to ``init_chat_model`` (``base_url``, ``api_key``,
            ``temperature``, ``model_provider`` for a bare model name, ...); only valid
            with a string. ``disable_streaming`` defaults to ``"tool_calling"`` so that
            tool-call arguments are never parsed from a partial stream.

    Returns:
        The chat model; the decide node binds tools to it each turn.

    Raises:
        ModelConfigError: for a missing, malformed or unknown model, a missing provider
            package (the message holds the install command) or a configuration the
            provider rejects.
    """
    if isinstance(model, BaseChatModel):
        if kwargs:
            raise ModelConfigError(
                f"keyword arguments ({', '.join(sorted(kwargs))}) apply only to a model "
                "string; configure the model instance directly"
            )
        if type(model).bind_tools is BaseChatModel.bind_tools:
            raise ModelConfigError(
                f"{type(model).__name__} does not support bind_tools; execgraph needs a "
                "tool-calling chat model"
            )
        return model
    if model is None:
        raise ModelConfigError(
            "no model given: pass a chat model instance, a 'provider:model' string "
            "(e.g. 'openai:gpt-4o-mini')"
        )
    if not isinstance(model, str):
        raise ModelConfigError(
            f"model must be a BaseChatModel or a 'provider:model' string, got "
            f"{type(model).__name__}; pass the unbound chat model (execgraph binds tools)"
        )
    keyword = model.strip().lower()
    if keyword == "scripted":
        raise ModelConfigError(
            "'scripted' needs its script: pass ScriptedChatModel([...replies]) "
            "(from execgraph.testing) as the model instead of the string"
        )
    if keyword == "offline":
        raise ModelConfigError(
            "'offline' is the research demo's scripted policy, not a model: build the demo "
            "with execgraph.demo.build_demo_graph(), or pass a chat model instance or a "
            "'provider:model' string"
        )
    provider, name = _split(model, kwargs.pop("model_provider", None))
    _check_provider(provider)
    # Streamed tool calls are parsed with a forgiving partial-JSON parser that turns a
    # truncated '{"text": "hello wor' into a valid-looking call; without streaming, bad
    # arguments land in invalid_tool_calls, which the decide node repairs.
    kwargs.setdefault("disable_streaming", "tool_calling")
    try:
        built = init_chat_model(name, model_provider=provider, **kwargs)
    except ImportError as error:
        raise ModelConfigError(
            f"provider {provider!r} could not be imported ({_describe(error)}); "
            f"run: {install_hint(provider)}"
        ) from error
    except GraphBubbleUp:
        raise  # LangGraph's own signal (an interrupt) is no configuration error
    except Exception as error:
        raise ModelConfigError(
            f"could not configure {provider}:{name}: {_describe(error)}"
        ) from error
    if not isinstance(built, BaseChatModel):
        raise ModelConfigError(f"{provider}:{name} did not produce a chat model")
    return built
