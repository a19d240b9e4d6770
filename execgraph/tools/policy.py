"""PolicyEngine: allow, require approval, or deny a normalized call — before any effect.

Rules are declarative (dicts or :class:`PolicyRule`). Every rule that matches a call is
considered together with the effect default — ``read`` → allow; ``write`` → allow inside
the contract's data scope, deny outside; ``irreversible`` → require approval — and the
most restrictive wins (deny > require_approval > allow), so adding a rule can only tighten.
Loosening a default is explicit: a matching rule with ``override=True`` replaces it.

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
from execgraph.tools.paths import in_scope, landing
from execgraph.tools.spec import ToolSpec

__all__ = ["PolicyDecision", "PolicyEngine", "PolicyRule", "Verdict"]

Verdict = Literal["allow", "require_approval", "deny"]
_RANK: dict[str, int] = {"allow": 0, "require_approval": 1, "deny": 2}


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
        self, spec: ToolSpec, paths: list[str], actor: str, landed: Sequence[str] | None = None
    ) -> bool:
        """True when tool, effect, actor and (if given) every path match.

        ``landed`` are the same paths resolved where they land (symlinks inside the
        workspace followed): a tightening rule matches a path if either form does, an
        ``override`` rule only if both do.
        """
        if not fnmatch.fnmatchcase(spec.name, self.tool):
            return False
        if self.effect is not None and self.effect != spec.effect:
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


@dataclass(frozen=True)
class PolicyDecision:
    """The verdict for one call and why."""

    verdict: Verdict
    reason: str
    rule: str | None = None


class PolicyEngine:
    """Decides allow / require_approval / deny from rules and the effect defaults."""

    def __init__(self, rules: Iterable[PolicyRule | Mapping[str, Any]] = ()) -> None:
        self.rules = tuple(PolicyRule.parse(r) for r in rules)

    def with_rules(self, rules: Iterable[PolicyRule | Mapping[str, Any]]) -> PolicyEngine:
        """A new engine with extra rules (a contract's approval rules, say)."""
        return PolicyEngine((*self.rules, *(PolicyRule.parse(r) for r in rules)))

    def may_ask(self, spec: ToolSpec) -> bool:
        """Whether any call of ``spec`` could need a person (a static, safe over-estimate).

        True for an irreversible tool and for any ``require_approval`` rule whose tool and
        effect match; actors and paths are ignored, so a False is certain. A caller can
        then skip the dry run that would only tell it "no".
        """
        if spec.effect == "irreversible":
            return True
        return any(
            r.decision == "require_approval"
            and fnmatch.fnmatchcase(spec.name, r.tool)
            and r.effect in (None, spec.effect)
            for r in self.rules
        )

    def decide(
        self, spec: ToolSpec, arguments: Mapping[str, Any], request: ToolExecutionRequest
    ) -> PolicyDecision:
        """Verdict for ``spec`` called with normalized ``arguments``."""
        paths = [str(arguments[a]) for a in spec.path_args if arguments.get(a) is not None]
        try:
            landed = self._landed(spec, paths, request)
        except ExecGraphError:
            return PolicyDecision("deny", "a path does not resolve inside the workspace")
        actor = request.actor.user_id
        matched = [r for r in self.rules if r.matches(spec, paths, actor, landed)]
        overriding = [r for r in matched if r.override]
        candidates = [
            PolicyDecision(
                r.decision, r.reason or f"rule {r.tool}:{r.decision}", f"{r.tool}:{r.decision}"
            )
            for r in (overriding or matched)
        ]
        if not overriding:
            candidates.append(self._default(spec, [*paths, *landed], request))
        return max(candidates, key=lambda d: _RANK[d.verdict])

    def _landed(self, spec: ToolSpec, paths: list[str], request: ToolExecutionRequest) -> list[str]:
        """Where ``paths`` land, resolved only when a path rule or the data scope could ask.

        Resolution opens the workspace (a few ``openat`` calls per path), so a call no
        path rule and no scope can see is decided on the paths as written, for free.
        """
        needed = (spec.effect == "write" and bool(request.data_scope)) or any(
            r.path is not None and fnmatch.fnmatchcase(spec.name, r.tool) for r in self.rules
        )
        if not paths or not needed:
            return paths
        return [landing(request.workspace.root, p) for p in paths]

    @staticmethod
    def _default(spec: ToolSpec, paths: list[str], request: ToolExecutionRequest) -> PolicyDecision:
        if spec.effect == "read":
            return PolicyDecision("allow", "read-only tool")
        if spec.effect == "irreversible":
            return PolicyDecision("require_approval", "irreversible effect needs a person")
        if all(in_scope(p, request.data_scope) for p in paths):
            return PolicyDecision("allow", "write inside the data scope")
        return PolicyDecision("deny", "write outside the contract's data scope")
