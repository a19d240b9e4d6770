"""Secret arguments: a tool receives them, and nothing at rest keeps them.

A tool marks an argument secret (``ToolSpec.secret_args``, or a ``SecretStr`` field): an
API key, a password a model passes on. The model's reply is redacted the moment it
arrives (:func:`redact_reply`): every copy of the call the runtime keeps — the
``model.called`` and ``decision.recorded`` events, the run's messages, its decisions and
pending requests in the checkpoints, an approval request — holds :data:`REDACTED` where
the value was. The value itself waits in this process's memory (:data:`VAULT`), bound to
the run, the model's call id, the tool and the argument, and the executor puts it back
just before it normalizes the call (:func:`restore`), so the tool gets the real value and
the approval hash binds it.

A call resumed where the value is not — after a crash, or in another process (a worker
taking the run over, an approval answered from another process) — is never run blind:
it is refused with :class:`SecretUnavailable`, which tells the model to send the value
again. A placeholder is restored only into the call it was taken from, so a model
copying ``"[redacted]"`` into another tool's argument gets no secret.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage

from execgraph.state.errors import SchemaViolation

__all__ = [
    "REDACTED",
    "VAULT",
    "SecretUnavailable",
    "SecretVault",
    "redact_arguments",
    "redact_reply",
    "restore",
]

REDACTED = "[redacted]"
"""What the runtime keeps in place of a secret argument's value."""

Secrets = Mapping[str, frozenset[str]]
"""Tool name -> the names of its secret arguments."""


class SecretUnavailable(SchemaViolation):
    """A call's secret argument is not in this process's memory: the call is not run
    blind; the model must send the value again."""


class SecretVault:
    """Secret values in memory, by (run, model call id, tool, argument); bounded (the
    oldest go first), never written anywhere."""

    def __init__(self, limit: int = 10_000) -> None:
        self._values: OrderedDict[tuple[str, str, str, str], Any] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def keep(self, key: tuple[str, str, str, str], value: Any) -> None:
        with self._lock:
            self._values[key] = value
            self._values.move_to_end(key)
            while len(self._values) > self._limit:
                self._values.popitem(last=False)

    def get(self, key: tuple[str, str, str, str]) -> Any:
        with self._lock:
            return self._values.get(key, REDACTED)


VAULT = SecretVault()


def redact_arguments(arguments: Mapping[str, Any], names: frozenset[str]) -> dict[str, Any]:
    """``arguments`` with each secret one (present) replaced by :data:`REDACTED`."""
    return {k: (REDACTED if k in names else v) for k, v in arguments.items()}


def _redact_call(call: Mapping[str, Any], secrets: Secrets, run_id: str) -> dict[str, Any]:
    names = secrets.get(str(call.get("name")), frozenset())
    args = call.get("args")
    if not names or not isinstance(args, dict):
        return dict(call)
    for name in names & args.keys():
        if args[name] != REDACTED:  # a replayed reply is redacted already
            VAULT.keep((run_id, str(call.get("id")), str(call["name"]), name), args[name])
    return {**call, "args": redact_arguments(args, names)}


def _redact_raw(raw: Any, secrets: Secrets) -> Any:
    """A provider's own record of a call (OpenAI's ``function.arguments`` JSON text)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        return raw
    function = raw["function"]
    names = secrets.get(str(function.get("name")), frozenset())
    if not names:
        return raw
    try:
        args = json.loads(function.get("arguments") or "{}")
        text = json.dumps(redact_arguments(args, names)) if isinstance(args, dict) else REDACTED
    except ValueError:
        text = REDACTED
    return {**raw, "function": {**function, "arguments": text}}


def _redact_block(block: Any, secrets: Secrets) -> Any:
    """A content block that carries a call (Anthropic's ``tool_use``)."""
    if not isinstance(block, dict) or block.get("type") not in ("tool_use", "tool_call"):
        return block
    names = secrets.get(str(block.get("name")), frozenset())
    key = "input" if "input" in block else "args"
    if not names or not isinstance(block.get(key), dict):
        return block
    return {**block, key: redact_arguments(block[key], names)}


def redact_reply(ai: AIMessage, secrets: Secrets, run_id: str) -> AIMessage:
    """``ai`` with each secret argument of its tool calls kept in :data:`VAULT` and
    replaced by :data:`REDACTED`, in every place a reply holds a call (the parsed
    calls, the provider's raw calls, content blocks, invalid calls)."""
    if not secrets or not (ai.tool_calls or ai.invalid_tool_calls):
        return ai
    calls = [_redact_call(c, secrets, run_id) for c in ai.tool_calls]
    invalid = [
        {**c, "args": REDACTED} if secrets.get(str(c.get("name"))) else c
        for c in ai.invalid_tool_calls
    ]
    kwargs = dict(ai.additional_kwargs)
    if isinstance(kwargs.get("tool_calls"), list):
        kwargs["tool_calls"] = [_redact_raw(r, secrets) for r in kwargs["tool_calls"]]
    content = ai.content
    if isinstance(content, list):
        content = [_redact_block(b, secrets) for b in content]
    update = {
        "tool_calls": calls,
        "invalid_tool_calls": invalid,
        "additional_kwargs": kwargs,
        "content": content,
    }
    return ai.model_copy(update=update)


def restore(
    arguments: Mapping[str, Any],
    names: frozenset[str],
    *,
    run_id: str,
    call_id: str | None,
    tool: str,
) -> dict[str, Any]:
    """``arguments`` with each redacted secret put back from :data:`VAULT`.

    Raises:
        SecretUnavailable: a secret argument is redacted and its value is not here.
    """
    if not names or REDACTED not in arguments.values():
        return dict(arguments)
    out = dict(arguments)
    for name in sorted(names & out.keys()):
        if out[name] != REDACTED:
            continue
        value = VAULT.get((run_id, str(call_id), tool, name))
        if value == REDACTED:
            raise SecretUnavailable(
                f"the secret argument {name!r} of {tool} is not kept at rest, and this "
                "process does not hold it (the run was resumed after a crash or elsewhere); "
                "the call did not run: send the value again"
            )
        out[name] = value
    return out
