"""The configurations the benchmark compares, each a setting a user of execgraph has.

Every policy here is the generic mechanism a user gets, derived from the task's own
request and the tools' declarations; nothing names a suite, a task or an attack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from execgraph.state.errors import UsageError

__all__ = ["CONFIGURATIONS", "Configuration", "configurations"]

Runner = Literal["create_agent", "execgraph"]
PersonKind = Literal["none", "approves_all", "reads_provenance"]


@dataclass(frozen=True)
class Configuration:
    """One way of running the agent.

    Attributes:
        name: Short name (``--config``).
        title: The row's title in the report.
        runner: LangChain's ``create_agent`` (every call runs, whole outputs shown), or an
            execgraph ``react`` graph.
        person: Who answers approval requests: nobody (a request is left unanswered and
            counts as refused), a person who approves everything, or one who approves only
            what the shown provenance supports.
        allowlist: The task's ``allowed_actions`` are exactly the tools its request needs.
        provenance: Argument policies with provenance conditions take the place of the
            blanket "irreversible needs a person": an irreversible call runs unless a
            sensitive argument (the tools' ``sensitive_args``) was read from the text of
            a tool's output or made up, which is refused (no person) or asked; and the
            application shows the final answer with the text it copied from tool output
            text withheld (the answer channel).
        contract: ``"least_privilege"``: the run's capabilities are planned from the
            request alone, before any tool output is read, and frozen.
    """

    name: str
    title: str
    runner: Runner = "execgraph"
    person: PersonKind = "approves_all"
    allowlist: bool = False
    provenance: bool = False
    contract: str | None = None


CONFIGURATIONS: tuple[Configuration, ...] = (
    Configuration("none", "`create_agent` (no runtime)", runner="create_agent", person="none"),
    Configuration("approve_all", "execgraph react, a person approves every request"),
    Configuration(
        "allowlist", "execgraph, `allowed_actions` = the request's tools", allowlist=True
    ),
    Configuration(
        "provenance", "execgraph, provenance policy, no person", person="none", provenance=True
    ),
    Configuration(
        "provenance_person",
        "execgraph, provenance policy + a person who reads the provenance",
        person="reads_provenance",
        provenance=True,
    ),
    Configuration(
        "least_privilege",
        "execgraph, least-privilege contract, no person",
        person="none",
        provenance=True,
        contract="least_privilege",
    ),
)
"""Every configuration, in report order."""

_BY_NAME = {c.name: c for c in CONFIGURATIONS}


def configurations(names: tuple[str, ...] = ()) -> tuple[Configuration, ...]:
    """The named configurations (all when none are named), in report order.

    Raises:
        UsageError: an unknown name.
    """
    unknown = [n for n in names if n not in _BY_NAME]
    if unknown:
        raise UsageError(
            f"unknown configuration {', '.join(unknown)}; choose from {', '.join(_BY_NAME)}"
        )
    return tuple(c for c in CONFIGURATIONS if not names or c.name in names)
