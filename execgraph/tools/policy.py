"""PolicyEngine: allow, require approval, or deny a normalized call — before any effect.

Rules are declarative (dicts or :class:`PolicyRule`). Every rule that matches a call is
considered together with the effect default — ``read`` → allow; ``write`` → allow inside
the contract's data scope, deny outside; ``irreversible`` → require approval — and the
most restrictive wins (deny > require_approval > allow), so adding a rule can only tighten.
Loosening a default is explicit: a matching rule with ``override=True`` replaces it.

Argument rules (:mod:`execgraph.tools.argument_rules`) constrain what a call says: allowed
values, patterns, ranges, trusted sets, and where a value came from (its provenance,
:mod:`execgraph.tools.provenance`). Each unmet rule adds its fallback — deny, ask a
person, or refuse with a reason for the model — to the candidates, so they too can only
tighten; so do the checks every tool gets from the provenance settings below
(:mod:`execgraph.tools.provenance_checks`). A tool's ``sensitive_args`` get a provenance
rule by default (a value read from the text of a tool's output needs a person:
``sensitive_fallback``). The effect that the
defaults and ``effect=`` rules see is the call's (``ToolSpec.effect_of``): a calendar event
with participants can be irreversible where one without is a write.

An open-world tool (``ToolSpec.open_world``: it reaches outside systems, as an MCP
server's ``openWorldHint`` says) is egress: what its arguments say leaves. Its write asks
a person by default (a write inside the data scope is otherwise allowed), and its read's
arguments are checked as an irreversible call's are: the user's declared secrets, and
(with ``copied_text``) text and links copied from a tool's output. A rule may name such
tools with ``open_world=True``.

Paths are matched where they *land*: a symlink inside the workspace (``public/assets ->
../private``) is resolved (:func:`execgraph.tools.paths.landing`) and a rule sees both
the path as written and the resolved one. A tightening rule applies if either matches,
a loosening (``override``) rule only if both do, and a write is inside the data scope
only if both are; so a link can neither dodge a deny nor borrow an allow.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ExecGraphError, PolicyRuleError
from execgraph.tools.argument_rules import ArgumentRule, Fallback, Violation
from execgraph.tools.paths import in_scope, landing
from execgraph.tools.provenance import ArgumentProvenance
from execgraph.tools.provenance_checks import ProvenanceChecks
from execgraph.tools.spec import ToolSpec

__all__ = [
    "AnyRule",
    "PolicyDecision",
    "PolicyEngine",
    "PolicyRule",
    "Verdict",
    "parse_rule",
]

Verdict = Literal["allow", "require_approval", "deny"]
_RANK: dict[str, int] = {"allow": 0, "require_approval": 1, "deny": 2}
_FALLBACK_VERDICT: dict[str, Verdict] = {
    "deny": "deny",
    "refuse": "deny",
    "ask": "require_approval",
}


@dataclass(frozen=True)
class PolicyRule:
    """One declarative rule; ``*`` globs match names, actors and paths."""

    decision: Verdict
    tool: str = "*"
    effect: str | None = None
    actor: str = "*"
    path: str | None = None
    reason: str = ""
    override: bool = False
    open_world: bool | None = None

    @classmethod
    def parse(cls, raw: PolicyRule | Mapping[str, Any]) -> PolicyRule:
        """Accept a rule or its dict form (``{"tool": "publish", "decision": "deny"}``)."""
        if isinstance(raw, PolicyRule):
            return raw
        if raw.get("decision") not in _RANK:
            raise PolicyRuleError(f"policy rule needs decision in {sorted(_RANK)}: {dict(raw)!r}")
        unknown = set(raw) - set(cls.__dataclass_fields__)
        if unknown:
            raise PolicyRuleError(f"policy rule has unknown keys {sorted(unknown)}")
        return cls(**dict(raw))

    def matches(
        self,
        spec: ToolSpec,
        paths: list[str],
        actor: str,
        landed: Sequence[str] | None = None,
        effect: str | None = None,
    ) -> bool:
        """True when tool, effect, open world, actor and (if given) every path match.

        ``landed`` are the same paths resolved where they land (symlinks inside the
        workspace followed): a tightening rule matches a path if either form does, an
        ``override`` rule only if both do. ``effect`` is the call's effect (default: the
        tool's).
        """
        if not fnmatch.fnmatchcase(spec.name, self.tool):
            return False
        if self.effect is not None and self.effect != (effect or spec.effect):
            return False
        if self.open_world is not None and self.open_world != spec.open_world:
            return False
        if not fnmatch.fnmatchcase(actor, self.actor):
            return False
        if self.path is None:
            return True
        pattern, either = self.path, any if not self.override else all
        return bool(paths) and all(
            either(fnmatch.fnmatchcase(form, pattern) for form in pair)
            for pair in zip(paths, landed if landed is not None else paths, strict=True)
        )


AnyRule = PolicyRule | ArgumentRule | Mapping[str, Any]
"""A tool rule, an argument rule, or the dict form of either (an ``argument`` key makes
an argument rule)."""


def parse_rule(raw: AnyRule) -> PolicyRule | ArgumentRule:
    """A :class:`PolicyRule` or an :class:`ArgumentRule` from either or its dict form."""
    if isinstance(raw, PolicyRule | ArgumentRule):
        return raw
    if "argument" in raw:
        return ArgumentRule.parse(raw)
    return PolicyRule.parse(raw)


@dataclass(frozen=True)
class PolicyDecision:
    """The verdict for one call and why.

    ``refusal`` marks a deny whose reason is written for the model (an argument rule's
    ``refuse`` fallback): it says what would be accepted.
    """

    verdict: Verdict
    reason: str
    rule: str | None = None
    refusal: bool = False


class PolicyEngine:
    """Decides allow / require_approval / deny from rules and the effect defaults.

    Args:
        rules: Tool rules and argument rules (objects or dicts).
        trusted_sets: Named sets of values argument rules may require membership in
            (``{"contacts": ["alice@example.com"]}``).
        sensitive_fallback: What happens when a tool's sensitive argument was read from
            the text of a tool's output, or made up — or when an irreversible call
            carries one of the user's declared secrets (``OutputProvenance.
            secret_fields``) the request does not say: ``"ask"`` a person (the
            default), ``"refuse"`` with a reason for the model, or ``"deny"``.
        copied_text: When set, what happens when a call that writes or acts has an
            argument copied word for word from the text of a tool's output (a phrase of
            at least ``COPIED_MIN_CHARS`` characters, :mod:`execgraph.tools.
            provenance_checks`, that the request does not say),
            or an irreversible call's content carries a link, address or account number
            read from such text: content dictated by data, the way an injection writes an
            event of its own or sends its link to the user's friend. Off by default
            (copying from a document is often the task).
        made_up: What happens instead of ``sensitive_fallback`` when a sensitive
            argument's value appears neither in the request nor in any tool output (the
            model made it up). Defaults to ``sensitive_fallback``. ``"refuse"`` spares a
            person a question they cannot answer from what they are shown: a made-up
            value has no provenance to judge, and the model is told to ask the user.
        copied_egress: What happens instead of ``copied_text`` when the call is egress
            (irreversible or open-world): the copied words would leave, and no one can
            take them back. Defaults to ``copied_text``; set alone, it checks only egress
            calls. With a person at hand, a setting
            asks them about a document copied into the user's own file
            (``copied_text="ask"``) and still refuses, with a reason for the model, the
            same copy sent out (``copied_egress="refuse"``) — what an injection asks for
            when it wants its text posted or mailed.
    """

    def __init__(
        self,
        rules: Iterable[AnyRule] = (),
        *,
        trusted_sets: Mapping[str, Sequence[Any]] | None = None,
        sensitive_fallback: Fallback = "ask",
        copied_text: Fallback | None = None,
        copied_egress: Fallback | None = None,
        made_up: Fallback | None = None,
    ) -> None:
        parsed = [parse_rule(r) for r in rules]
        self.rules = tuple(r for r in parsed if isinstance(r, PolicyRule))
        self.argument_rules = tuple(r for r in parsed if isinstance(r, ArgumentRule))
        self.trusted_sets = {k: tuple(v) for k, v in (trusted_sets or {}).items()}
        self.checks = ProvenanceChecks(sensitive_fallback, copied_text, copied_egress, made_up)

    def with_rules(self, rules: Iterable[AnyRule]) -> PolicyEngine:
        """A new engine with extra rules (a contract's approval rules, say)."""
        engine = PolicyEngine((*self.rules, *self.argument_rules, *rules))
        engine.trusted_sets, engine.checks = self.trusted_sets, self.checks
        return engine

    def needs_provenance(self, spec: ToolSpec) -> bool:
        """Whether a decision on ``spec`` reads provenance (so the caller computes it)."""
        acts = spec.effect != "read" or spec.call_effect is not None or spec.open_world
        may_leave = spec.effect == "irreversible" or spec.call_effect is not None
        if self.checks.copied_text is not None and acts:
            return True
        if self.checks.copied_egress is not None and (may_leave or spec.open_world):
            return True
        if spec.open_world:  # egress: the user's secrets are looked for in what leaves
            return True
        return bool(spec.sensitive_args) or any(
            r.needs_provenance and fnmatch.fnmatchcase(spec.name, r.tool)
            for r in self.argument_rules
        )

    def may_ask(self, spec: ToolSpec) -> bool:
        """Whether any call of ``spec`` could need a person (a static, safe over-estimate).

        True for an irreversible tool and for any ``require_approval`` rule whose tool and
        effect match; actors and paths are ignored, so a False is certain. A caller can
        then skip the dry run that would only tell it "no". A tool whose effect depends on
        the call, or that has sensitive arguments or an argument rule that may ask, may.
        """
        if spec.effect == "irreversible" or spec.call_effect is not None:
            return True
        if spec.open_world and (spec.effect != "read" or self.checks.sensitive_fallback == "ask"):
            return True
        if spec.sensitive_args and "ask" in (self.checks.sensitive_fallback, self.checks.made_up):
            return True
        if "ask" in (self.checks.copied_text, self.checks.copied_egress) and (
            spec.effect != "read" or spec.open_world
        ):
            return True
        if any(
            r.fallback == "ask" and fnmatch.fnmatchcase(spec.name, r.tool)
            for r in self.argument_rules
        ):
            return True
        return any(
            r.decision == "require_approval"
            and fnmatch.fnmatchcase(spec.name, r.tool)
            and r.effect in (None, spec.effect)
            and r.open_world in (None, spec.open_world)
            for r in self.rules
        )

    def decide(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        request: ToolExecutionRequest,
        provenance: Mapping[str, ArgumentProvenance] | None = None,
    ) -> PolicyDecision:
        """Verdict for ``spec`` called with normalized ``arguments``.

        ``provenance`` labels the arguments (:func:`execgraph.tools.provenance.
        label_arguments`); without it, every provenance condition fails (closed).
        """
        paths = [str(arguments[a]) for a in spec.path_args if arguments.get(a) is not None]
        try:
            landed = self._landed(spec, arguments, paths, request)
        except ExecGraphError:
            return PolicyDecision("deny", "a path does not resolve inside the workspace")
        actor = request.actor.user_id
        effect = spec.effect_of(arguments)
        matched = [r for r in self.rules if r.matches(spec, paths, actor, landed, effect)]
        overriding = [r for r in matched if r.override]
        candidates = [
            PolicyDecision(
                r.decision, r.reason or f"rule {r.tool}:{r.decision}", f"{r.tool}:{r.decision}"
            )
            for r in (overriding or matched)
        ]
        if not overriding:
            candidates.append(self._default(spec, effect, [*paths, *landed], request))
        candidates += [
            PolicyDecision(
                _FALLBACK_VERDICT[v.fallback],
                v.reason,
                f"{v.rule.tool}.{v.rule.argument}:{v.fallback}",
                refusal=v.fallback == "refuse",
            )
            for v in self.violations(spec, arguments, provenance)
        ]
        return max(candidates, key=lambda d: _RANK[d.verdict])

    def violations(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        provenance: Mapping[str, ArgumentProvenance] | None = None,
    ) -> list[Violation]:
        """The argument rules (and sensitive-argument defaults) this call does not meet."""
        rules = [r for r in self.argument_rules if r.applies(spec.name, arguments)]
        replaced = {r.argument for r in rules if r.override}
        rules += [
            ArgumentRule(
                name,
                spec.name,
                provenance="structured",
                fallback=self.checks.sensitive_fallback,
                reason=f"{name} is a sensitive argument of {spec.name}",
            )
            for name in spec.sensitive_args
            if name not in replaced and arguments.get(name) is not None
        ]
        found = [
            Violation(
                ArgumentRule(name, spec.name),
                "deny",
                f"a person refused {', '.join(map(repr, given.refused))} earlier in this run",
            )
            for name, given in (provenance or {}).items()
            if given.refused
        ]
        for rule in rules:
            given = provenance.get(rule.argument) if provenance is not None else None
            violation = rule.check(arguments[rule.argument], given, self.trusted_sets)
            if violation is not None:
                found.append(violation)
        return found + self.checks.violations(spec, arguments, provenance, replaced)

    def _landed(
        self,
        spec: ToolSpec,
        arguments: Mapping[str, Any],
        paths: list[str],
        request: ToolExecutionRequest,
    ) -> list[str]:
        """Where ``paths`` land, resolved only when a path rule or the data scope could ask.

        Resolution opens the workspace (a few ``openat`` calls per path), so a call no
        path rule and no scope can see is decided on the paths as written, for free.
        """
        needed = (spec.effect_of(arguments) == "write" and bool(request.data_scope)) or any(
            r.path is not None and fnmatch.fnmatchcase(spec.name, r.tool) for r in self.rules
        )
        if not paths or not needed:
            return paths
        return [landing(request.workspace.root, p) for p in paths]

    @staticmethod
    def _default(
        spec: ToolSpec, effect: str, paths: list[str], request: ToolExecutionRequest
    ) -> PolicyDecision:
        if effect == "read":
            return PolicyDecision("allow", "read-only tool")
        if effect == "irreversible":
            return PolicyDecision("require_approval", "irreversible effect needs a person")
        if not all(in_scope(p, request.data_scope) for p in paths):
            return PolicyDecision("deny", "write outside the contract's data scope")
        if spec.open_world:
            return PolicyDecision(
                "require_approval", "an open-world write reaches outside systems: a person decides"
            )
        return PolicyDecision("allow", "write inside the data scope")
