"""Capabilities: what a run may do, planned from the trusted request before any data is read.

Under the least-privilege contract a planner sees only the user's request and the tools'
declarations, and submits the run's capabilities: the tools the task needs and, per
argument, what its value may be — one of the values the request names, or a value read
from a named source (``recipient`` from ``read_file(file_path="bill.txt")``). They become
the run's contract — its ``allowed_actions`` and argument rules
(:mod:`execgraph.tools.argument_rules`) — and are frozen: nothing the run reads later can
widen them, because they live in the contract the executor enforces, not in anything the
model says.

:func:`freeze` turns a submission into the contract's fields and can only narrow: a tool
the contract does not allow stays out, a constraint on a tool the plan does not name is
dropped, and a tool's sensitive arguments without a planned constraint keep the default
provenance rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CAPABILITIES_TOOL",
    "ArgumentCapability",
    "Capabilities",
    "capabilities_schema",
    "freeze",
]

CAPABILITIES_TOOL = "submit_capabilities"


class ArgumentCapability(BaseModel):
    """What one argument of one tool may be."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(description="The tool.")
    argument: str = Field(description="The argument of that tool.")
    values: list[Any] | None = Field(
        default=None,
        description="The values the request names for it (the only ones allowed).",
    )
    from_tool: str | None = Field(
        default=None,
        description="Or: the tool whose output the value is read from.",
    )
    from_arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="That source call's arguments, as the request names them.",
    )
    read_from: Literal["field", "text"] = Field(
        default="field",
        description="'field': a structured value of the source's output (an id, an "
        "address in a list); 'text': prose inside it (a link in a message).",
    )


class Capabilities(BaseModel):
    """A planner's submission: the tools the task needs and what their arguments may be."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tools: list[str] = Field(description="Every tool the task needs, and no other.")
    arguments: list[ArgumentCapability] = Field(
        default_factory=list,
        description="Constraints on the arguments that say where an effect goes "
        "(recipients, accounts, URLs, ids of things changed or deleted).",
    )


def capabilities_schema() -> dict[str, Any]:
    """The planner's one tool, in OpenAI's function format."""
    return {
        "type": "function",
        "function": {
            "name": CAPABILITIES_TOOL,
            "description": "Submit the capabilities the task needs: the tools, and what "
            "their sensitive arguments may be, from the request alone.",
            "parameters": Capabilities.model_json_schema(),
        },
    }


def freeze(
    capabilities: Capabilities,
    allowed: Iterable[str],
    *,
    fallback: str = "refuse",
    arguments_of: Mapping[str, Iterable[str]] | None = None,
    effects: Mapping[str, str] | None = None,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The contract's ``allowed_actions`` and argument rules for ``capabilities``.

    ``allowed`` is what the contract allows already (the result is inside it);
    ``arguments_of`` names each tool's arguments (a constraint on an argument a tool does
    not have is dropped); ``fallback`` is what an unmet constraint does. A value planned
    to be read from *text* for an irreversible tool (``effects``) always needs a person:
    an injection in that very text could name its own (the payee's IBAN in a bill, or the
    one an injection wrote into it).
    """
    permitted = set(allowed)
    tools = sorted({t for t in capabilities.tools if t in permitted})
    rules: list[dict[str, Any]] = []
    for cap in capabilities.arguments:
        if cap.tool not in tools:
            continue
        if arguments_of is not None and cap.argument not in set(arguments_of.get(cap.tool, ())):
            continue
        rule: dict[str, Any] = {
            "tool": cap.tool,
            "argument": cap.argument,
            "fallback": fallback,
            "override": True,
            "reason": "the run's planned capabilities",
        }
        if cap.values is not None:
            rule["one_of"] = list(cap.values)
        elif cap.from_tool is not None and cap.from_tool in tools:
            source: dict[str, Any] = {"tool": cap.from_tool, "where": cap.read_from}
            if cap.from_arguments:
                source["arguments"] = dict(cap.from_arguments)
            rule["source"] = source
            if cap.read_from == "field":  # and never named in any text (an injection's)
                rule["provenance"] = "structured"
            elif (effects or {}).get(cap.tool) == "irreversible":
                # matching the source is not enough: a person reads the excerpt
                rule.update(provenance="structured", fallback="ask")
        else:
            rule["provenance"] = "trusted"
        rules.append(rule)
    return tools, rules
