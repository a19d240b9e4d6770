"""Where a call's argument values came from, checked beyond the argument rules.

An argument rule constrains one argument of one tool. These checks apply to every tool,
by its declaration and the policy's settings, and read each argument's provenance
(:mod:`execgraph.tools.provenance`): a sensitive argument the model made up
(``made_up``), the user's declared secrets leaving in an egress call
(``sensitive_fallback``), and text, links or accounts copied from the text of a tool's
output into a call that acts (``copied_text``) or sends them out (``copied_egress``).
Each finding is a :class:`~execgraph.tools.argument_rules.Violation` with its fallback,
which the :class:`~execgraph.tools.policy.PolicyEngine` weighs with its other candidates.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from execgraph.tools.argument_rules import ArgumentRule, Fallback, Violation
from execgraph.tools.provenance import ArgumentProvenance
from execgraph.tools.spec import ToolSpec

__all__ = ["COPIED_MIN_CHARS", "ProvenanceChecks", "egress"]

#: The shortest argument the ``copied_text`` check looks at: a sentence's worth, not a
#: name, a place or a subject line.
COPIED_MIN_CHARS = 24


def egress(spec: ToolSpec, arguments: Mapping[str, Any]) -> bool:
    """Whether what this call's arguments say leaves: an irreversible or open-world call."""
    return spec.open_world or spec.effect_of(arguments) == "irreversible"


@dataclass(frozen=True)
class ProvenanceChecks:
    """The policy's provenance settings (see :class:`~execgraph.tools.policy.PolicyEngine`
    for what each means) and the checks they turn on."""

    sensitive_fallback: Fallback = "ask"
    copied_text: Fallback | None = None
    copied_egress: Fallback | None = None
    made_up: Fallback | None = None

    def __post_init__(self) -> None:
        fallbacks = (self.sensitive_fallback, self.copied_text, self.copied_egress, self.made_up)
        for fallback in fallbacks:
            if fallback is not None:
                ArgumentRule("-", fallback=fallback)  # each fallback is checked here

    def violations(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        provenance: Mapping[str, ArgumentProvenance] | None,
        replaced: set[str],
    ) -> list[Violation]:
        """What this call does not meet; ``replaced``: the arguments a rule of their own
        (``override``) constrains instead."""
        found: list[Violation] = []
        if self.made_up is not None and provenance is not None:
            found += self._made_up(spec, arguments, provenance, replaced)
        if egress(spec, arguments) and provenance is not None:
            found += self._secrets_out(spec, provenance)
        if self.copied_fallback(spec, arguments) is not None and (
            spec.effect_of(arguments) != "read" or spec.open_world
        ):
            constrained = replaced | set(spec.sensitive_args)
            found += self._copied(spec, arguments, provenance, constrained)
        return found

    def _made_up(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        provenance: Mapping[str, ArgumentProvenance],
        replaced: set[str],
    ) -> list[Violation]:
        """Sensitive arguments (with no rule of their own) whose value nobody said."""
        found = []
        for name in spec.sensitive_args:
            given = provenance.get(name)
            if name in replaced or arguments.get(name) is None or given is None:
                continue
            for atom in given.atoms:
                if atom.label != "new":
                    continue
                rule = ArgumentRule(
                    name,
                    spec.name,
                    provenance="structured",
                    fallback=self.made_up or "deny",
                    reason=f"{name} is a sensitive argument of {spec.name}",
                )
                violation = rule.check(atom.value, replace(given, atoms=(atom,)), {})
                if violation is not None:
                    found.append(violation)
                break
        return found

    def _secrets_out(
        self, spec: ToolSpec, provenance: Mapping[str, ArgumentProvenance]
    ) -> list[Violation]:
        """The user's declared secrets leaving in an irreversible or open-world call the
        request did not ask for by value."""
        found = []
        for name, given in provenance.items():
            if not given.secrets:
                continue
            where = "; ".join(
                dict.fromkeys(f"{s.tool} #{s.call_id} ({s.path})" for s in given.secrets)
            )
            rule = ArgumentRule(name, spec.name, fallback=self.sensitive_fallback)
            reason = f"{name} carries the user's secrets, read from {where}"
            if rule.fallback == "refuse":
                reason += ": send them only when the user asks to"
            found.append(Violation(rule, rule.fallback, reason))
        return found

    def _copied(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        provenance: Mapping[str, ArgumentProvenance] | None,
        constrained: set[str],
    ) -> list[Violation]:
        """Arguments copied word for word from the text of a tool's output."""
        found = []
        fallback = self.copied_fallback(spec, arguments) or "deny"
        if egress(spec, arguments) and provenance is not None:
            for name, labelled in provenance.items():
                read = [e for e in labelled.embedded if e.in_text]
                if name in constrained or not read:
                    continue
                links = ", ".join(repr(e.value) for e in read)
                reason = (
                    f"{name} carries {links}, read from the text of a tool's output: "
                    f"{'; '.join(dict.fromkeys(s.describe() for e in read for s in e.sources))}"
                )
                found.append(
                    Violation(ArgumentRule(name, spec.name, fallback=fallback), fallback, reason)
                )
        for name, value in arguments.items():
            if name in constrained or not isinstance(value, str):
                continue
            if len(value.strip()) < COPIED_MIN_CHARS:
                continue
            given = provenance.get(name) if provenance is not None else None
            if given is not None and not given.in_text:
                continue
            rule = ArgumentRule(name, spec.name, fallback=fallback)
            where = given.describe() if given is not None else f"where {name} came from is unknown"
            reason = f"{name} is copied from the text of a tool's output ({where})"
            if rule.fallback == "refuse":
                reason += f". Write {name} from the user's request, in your own words"
            found.append(Violation(rule, rule.fallback, reason))
        return found

    def copied_fallback(self, spec: ToolSpec, arguments: Mapping[str, Any]) -> Fallback | None:
        """What copied content meets in this call: ``copied_egress`` when it would leave
        (if set), else ``copied_text``; None when neither checks it."""
        if egress(spec, arguments) and self.copied_egress is not None:
            return self.copied_egress
        return self.copied_text
