"""Rules on argument values: what a call may say, not only which tool it calls.

An :class:`ArgumentRule` constrains one argument of the tools it names (``*`` globs):

- ``one_of``: the value (each item of a list) is one of these (case and the usual
  spelling differences ignored, as provenance matches them);
- ``pattern``: a regular expression each string must match whole;
- ``minimum`` / ``maximum``: a range for numbers;
- ``in_set``: each value is in a named trusted set the engine was given (the user's
  contacts, the domains the user named: ``PolicyEngine(trusted_sets={...})``);
- ``provenance``: where the value may come from (:mod:`execgraph.tools.provenance`):
  ``"trusted"`` — the user's request or the contract said it; ``"structured"`` — trusted,
  or read from a structured field of a tool's output (an id, an address in a list), never
  from free text and never made up by the model; ``"not_only_untrusted"`` — not read only
  from tool output (the model may compose it);
- ``source``: every value read from tool output was read from a call that matches
  (``{"tool": "read_channel_messages", "arguments": {"channel": "general"}}``, and
  optionally ``"where": "field"`` and a ``"path"`` glob such as ``"$[*].participants*"``),
  and no other tool output's text mentions it (text elsewhere is where an injection
  would name a value of its own).

When a condition does not hold, the rule's ``fallback`` decides: ``"deny"``; ``"ask"``
(a person decides, shown the provenance); or ``"refuse"`` (denied with a reason the model
can act on: where the value came from, and what would be accepted). Provenance
conditions fail closed: a call whose provenance is unknown does not meet them.

Tools that declare ``sensitive_args`` get a default rule for each: ``provenance=
"structured"``, so a recipient, an account or a URL read from the text of a tool's output
(an email body, a web page) is not used unless a person says so. An argument rule with
``override=True`` replaces that default for its argument (a least-privilege plan that
names where a value comes from).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from execgraph.state.errors import PolicyRuleError
from execgraph.tools.provenance import ArgumentProvenance, Source
from execgraph.tools.value_match import atoms_of, same_value

__all__ = [
    "FALLBACKS",
    "PROVENANCE_LEVELS",
    "ArgumentRule",
    "Fallback",
    "ProvenanceLevel",
    "Violation",
]

Fallback = Literal["deny", "ask", "refuse"]
ProvenanceLevel = Literal["trusted", "structured", "not_only_untrusted"]
FALLBACKS: tuple[str, ...] = ("deny", "ask", "refuse")
PROVENANCE_LEVELS: tuple[str, ...] = ("trusted", "structured", "not_only_untrusted")


@dataclass(frozen=True)
class Violation:
    """A rule an argument does not meet, and what the rule says to do about it."""

    rule: ArgumentRule
    fallback: Fallback
    reason: str


@dataclass(frozen=True)
class ArgumentRule:
    """A constraint on one argument's value (see the module docstring)."""

    argument: str
    tool: str = "*"
    one_of: tuple[Any, ...] | None = None
    pattern: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    in_set: str | None = None
    provenance: ProvenanceLevel | None = None
    source: Mapping[str, Any] | None = field(default=None, hash=False)
    fallback: Fallback = "deny"
    reason: str = ""
    override: bool = False

    def __post_init__(self) -> None:
        if self.fallback not in FALLBACKS:
            raise PolicyRuleError(f"fallback must be one of {FALLBACKS}, got {self.fallback!r}")
        if self.provenance is not None and self.provenance not in PROVENANCE_LEVELS:
            raise PolicyRuleError(
                f"provenance must be one of {PROVENANCE_LEVELS}, got {self.provenance!r}"
            )
        if self.pattern is not None:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise PolicyRuleError(f"pattern {self.pattern!r} is not valid: {exc}") from None
        if self.source is not None and not isinstance(self.source.get("tool", "*"), str):
            raise PolicyRuleError(f"source needs a tool name or glob: {dict(self.source)!r}")
        if self.one_of is not None and not isinstance(self.one_of, tuple):
            object.__setattr__(self, "one_of", tuple(self.one_of))

    @classmethod
    def parse(cls, raw: ArgumentRule | Mapping[str, Any]) -> ArgumentRule:
        """Accept a rule or its dict form (``{"tool": "send_money", "argument":
        "recipient", "provenance": "trusted", "fallback": "ask"}``)."""
        if isinstance(raw, ArgumentRule):
            return raw
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise PolicyRuleError(f"argument rule has unknown keys {sorted(unknown)}")
        if not raw.get("argument"):
            raise PolicyRuleError(f"argument rule needs an argument: {dict(raw)!r}")
        return cls(**dict(raw))

    def applies(self, tool: str, arguments: Mapping[str, Any]) -> bool:
        """The rule names this tool and the call has the argument."""
        return fnmatch.fnmatchcase(tool, self.tool) and arguments.get(self.argument) is not None

    @property
    def needs_provenance(self) -> bool:
        return self.provenance is not None or self.source is not None

    def check(
        self,
        value: Any,
        provenance: ArgumentProvenance | None,
        trusted_sets: Mapping[str, Sequence[Any]],
    ) -> Violation | None:
        """None when ``value`` meets every condition, else why not."""
        for atom in atoms_of(value):
            problem = self._value_problem(atom, trusted_sets)
            if problem:
                return self._violation(problem)
        if self.needs_provenance:
            problem = self._provenance_problem(provenance)
            if problem:
                return self._violation(problem)
        return None

    # ------------------------------------------------------------------ conditions

    def _value_problem(self, atom: Any, trusted_sets: Mapping[str, Sequence[Any]]) -> str:
        name = self.argument
        if self.one_of is not None and not any(same_value(atom, v) for v in self.one_of):
            return f"{name} {atom!r} is not one of the allowed values"
        if self.pattern is not None and not (
            isinstance(atom, str) and re.fullmatch(self.pattern, atom)
        ):
            return f"{name} {atom!r} does not match the allowed pattern"
        if self.minimum is not None or self.maximum is not None:
            if not isinstance(atom, int | float) or isinstance(atom, bool):
                return f"{name} {atom!r} is not a number"
            if self.minimum is not None and atom < self.minimum:
                return f"{name} {atom!r} is below {self.minimum}"
            if self.maximum is not None and atom > self.maximum:
                return f"{name} {atom!r} is above {self.maximum}"
        if self.in_set is not None:
            members = trusted_sets.get(self.in_set)
            if members is None:
                return f"the trusted set {self.in_set!r} is not known"
            if not any(same_value(atom, m) for m in members):
                return f"{name} {atom!r} is not in the trusted set {self.in_set!r}"
        return ""

    def _provenance_problem(self, provenance: ArgumentProvenance | None) -> str:
        name = self.argument
        if provenance is None:
            return f"where {name} came from is not known"
        for atom in provenance.atoms:
            if atom.label == "trusted":
                continue
            if self.provenance == "trusted":
                return f"{name} {atom.value!r} is not from the user's request: {_origin(atom)}"
            if atom.label == "new" and self.provenance == "structured":
                return (
                    f"{name} {atom.value!r} appears neither in the user's request nor in "
                    "any tool output"
                )
            if atom.label == "untrusted" and self.provenance == "not_only_untrusted":
                return f"{name} {atom.value!r} came only from tool output: {_origin(atom)}"
            if self.provenance == "structured" and atom.in_text:
                return f"{name} {atom.value!r} was read from text in tool output: {_origin(atom)}"
            if self.source is not None:
                if not any(self._source_matches(s) for s in atom.sources):
                    return f"{name} {atom.value!r} was not read from the planned source"
                elsewhere = [
                    s for s in atom.sources if s.where == "text" and not self._source_matches(s)
                ]
                if elsewhere:
                    return (
                        f"{name} {atom.value!r} is also written in other text: "
                        f"{'; '.join(dict.fromkeys(s.describe() for s in elsewhere))}"
                    )
        return ""

    def _source_matches(self, source: Source) -> bool:
        spec = self.source or {}
        if not fnmatch.fnmatchcase(source.tool, str(spec.get("tool", "*"))):
            return False
        if spec.get("where") not in (None, source.where):
            return False
        if not fnmatch.fnmatchcase(source.path, str(spec.get("path", "*"))):
            return False
        wanted = spec.get("arguments") or {}
        return all(
            k in source.arguments and same_value(source.arguments[k], v) for k, v in wanted.items()
        )

    def _violation(self, problem: str) -> Violation:
        reason = f"{problem}{f' ({self.reason})' if self.reason else ''}"
        if self.fallback == "refuse":
            reason += (
                f". Use a value for {self.argument} that the user gave, or ask the user; "
                "do not take it from tool output"
            )
        return Violation(self, self.fallback, reason)


def _origin(atom: Any) -> str:
    sources = atom.sources
    if not sources:
        return "it appears nowhere else"
    return "; ".join(dict.fromkeys(s.describe() for s in sources))
