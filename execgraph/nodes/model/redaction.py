"""The redaction of a model's reply: secret tool arguments never reach the run's records.

Built per turn from the tools the run may call (their ``ToolSpec.secrets``) and handed
to :func:`~execgraph.nodes.model.call.call_model`, which applies it to each reply before
anything parses, logs or keeps it (:mod:`execgraph.state.secret_args`). Calls get their
distinct ids first (:mod:`.call_ids`), since a secret is kept under its call's id.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage

from execgraph.nodes.model.call_ids import distinct_call_ids
from execgraph.state.secret_args import redact_reply
from execgraph.tools.registry import ToolRegistry

__all__ = ["reply_redaction"]


def reply_redaction(
    registry: ToolRegistry, run_id: str, turn_id: str, plan_tool: str | None = None
) -> Callable[[AIMessage], AIMessage] | None:
    """The redaction of this turn's replies, or None when no tool has a secret argument.
    ``plan_tool`` names the call that submits a plan (whose steps are calls too)."""
    secrets = {s.name: s.secrets for s in registry.latest() if s.secrets}
    if not secrets:
        return None
    return lambda ai: redact_reply(distinct_call_ids(ai, turn_id), secrets, run_id, plan_tool)
