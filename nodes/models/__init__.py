"""Chat models for the decide node: a scripted replay model and model selection.

Any LangChain ``BaseChatModel`` with ``bind_tools`` works; :func:`resolve_model` turns the
``model=`` argument of ``build_graph`` (an instance or a ``"provider:model"`` string) into one.
"""

from execgraph.nodes.models.scripted import (
    Reply,
    ScriptedChatModel,
    ScriptExhausted,
    ScriptNotConsumed,
    estimate_tokens,
)
from execgraph.nodes.models.select import ModelConfigError, install_hint, resolve_model

__all__ = [
    "ModelConfigError",
    "Reply",
    "ScriptExhausted",
    "ScriptNotConsumed",
    "ScriptedChatModel",
    "estimate_tokens",
    "install_hint",
    "resolve_model",
]
