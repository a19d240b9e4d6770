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
    "call_key",
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


def call_key(tool_call_id: str | None, step_id: str | None) -> str:
    """Which call a secret belongs to: the model's call id, or a planned step's id (a
    step written into a plan is the planner's, and has no call id of its own)."""
    return str(tool_call_id) if tool_call_id is not None else f"plan-step:{step_id}"


def _kept(tool: str, args: Any, secrets: Secrets, run_id: str, key: str) -> Any:
    """``args`` of a call of ``tool`` with its secrets kept in :data:`VAULT` under
    ``key`` and replaced by :data:`REDACTED`."""
    names = secrets.get(tool, frozenset())
    if not names or not isinstance(args, dict):
        return args
    for name in names & args.keys():
        if args[name] != REDACTED:  # a replayed reply is redacted already
            VAULT.keep((run_id, key, tool, name), args[name])
    return redact_arguments(args, names)


def _redact_call(
    call: Mapping[str, Any], secrets: Secrets, run_id: str, plan_tool: str | None
) -> dict[str, Any]:
    name, args = str(call.get("name")), call.get("args")
    if name == plan_tool and isinstance(args, dict) and isinstance(args.get("steps"), list):
        steps = [
            {
                **step,
                "arguments": _kept(
                    str(step.get("tool")),
                    step.get("arguments"),
                    secrets,
                    run_id,
                    call_key(None, str(step.get("id"))),
                ),
            }
            if isinstance(step, dict)
            else step
            for step in args["steps"]
        ]
        return {**call, "args": {**args, "steps": steps}}
    return {**call, "args": _kept(name, args, secrets, run_id, call_key(call.get("id"), None))}


def _redact_raw(raw: Any, secrets: Secrets, run_id: str, plan_tool: str | None) -> Any:
    """A provider's own record of a call (OpenAI's ``function.arguments`` JSON text)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("function"), dict):
        return raw
    function = raw["function"]
    name = str(function.get("name"))
    if name not in secrets and name != plan_tool:
        return raw
    try:
        args = json.loads(function.get("arguments") or "{}")
    except ValueError:
        args = None
    if isinstance(args, dict):
        call = {"name": name, "args": args, "id": raw.get("id")}
        text = json.dumps(_redact_call(call, secrets, run_id, plan_tool)["args"])
    else:
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


def redact_reply(
    ai: AIMessage, secrets: Secrets, run_id: str, plan_tool: str | None = None
) -> AIMessage:
    """``ai`` with each secret argument of its tool calls kept in :data:`VAULT` and
    replaced by :data:`REDACTED`, in every place a reply holds a call (the parsed
    calls, the provider's raw calls, content blocks, invalid calls). A call of
    ``plan_tool`` (a planner's ``submit_plan``) is a plan: its steps' secrets are kept by
    step id."""
    if not secrets or not (ai.tool_calls or ai.invalid_tool_calls):
        return ai
    calls = [_redact_call(c, secrets, run_id, plan_tool) for c in ai.tool_calls]
    invalid = [
        {**c, "args": REDACTED} if secrets.get(str(c.get("name"))) else c
        for c in ai.invalid_tool_calls
    ]
    kwargs = dict(ai.additional_kwargs)
    if isinstance(kwargs.get("tool_calls"), list):
        raw = kwargs["tool_calls"]
        kwargs["tool_calls"] = [_redact_raw(r, secrets, run_id, plan_tool) for r in raw]
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
    arguments: Any,
    names: frozenset[str],
    *,
    run_id: str,
    call_id: str,
    tool: str,
) -> Any:
    """``arguments`` with each redacted secret put back from :data:`VAULT`.

    Raises:
        SecretUnavailable: a secret argument is redacted and its value is not here.
    """
    if not names or not isinstance(arguments, Mapping) or REDACTED not in arguments.values():
        return arguments  # nothing to put back (what is not a mapping, validation refuses)
    out = dict(arguments)
    for name in sorted(names & out.keys()):
        if out[name] != REDACTED:
            continue
        value = VAULT.get((run_id, call_id, tool, name))
        if value == REDACTED:
            raise SecretUnavailable(
                f"the secret argument {name!r} of {tool} is not kept at rest, and this "
                "process does not hold it (the run was resumed after a crash or elsewhere); "
                "the call did not run: send the value again"
            )
        out[name] = value
    return out
