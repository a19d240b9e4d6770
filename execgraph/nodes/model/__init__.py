"""What the nodes need of a chat model: the model chosen, its replies streamed and parsed,
one id per tool call, and what a reply costs.

Any LangChain ``BaseChatModel`` with ``bind_tools`` works; :func:`resolve_model` turns the
``model=`` argument of ``build_graph`` (an instance or a ``"provider:model"`` string) into one.
"""

from execgraph.nodes.model.select import ModelConfigError, install_hint, resolve_model

__all__ = ["ModelConfigError", "install_hint", "resolve_model"]
