"""PolicyEngine: effect defaults, data scope, rule matching and most-restrictive-wins."""

from __future__ import annotations

from typing import Any

import pytest

from execgraph.state.contracts import Actor, ToolExecutionRequest, ToolRef, Workspace
from execgraph.tools.policy import PolicyEngine, PolicyRule
from execgraph.tools.spec import Effect, ToolSpec, tool_spec


def make_tool(name: str, effect: Effect, path_args: tuple[str, ...] = ()) -> ToolSpec:
    @tool_spec(name=name, effect=effect, path_args=path_args)
    def _impl(path: str = "") -> str:
        """Test tool."""
        return path

    return _impl


def req(
    tool: ToolSpec, *, scope: list[str] | None = None, user: str = "local-user"
) -> ToolExecutionRequest:
    return ToolExecutionRequest(
        run_id="r1",
        turn_id="t1",
        call_id="c1",
        tool=ToolRef(name=tool.name),
        workspace=Workspace(root="/ws"),
        data_scope=scope or [],
        actor=Actor(user_id=user),
    )


def decide(engine: PolicyEngine, tool: ToolSpec, args: dict[str, Any], **kw: Any) -> str:
    return engine.decide(tool, args, req(tool, **kw)).verdict


READ = make_tool("read_file", "read", ("path",))
WRITE = make_tool("write_file", "write", ("path",))
PUBLISH = make_tool("publish", "irreversible")


def test_defaults_by_effect() -> None:
    engine = PolicyEngine()
    assert decide(engine, READ, {"path": "anything.txt"}, scope=["data"]) == "allow"
    assert decide(engine, PUBLISH, {}) == "require_approval"
    decision = engine.decide(PUBLISH, {}, req(PUBLISH))
    assert decision.rule is None and decision.reason


@pytest.mark.parametrize(
    ("path", "scope", "verdict"),
    [
        ("data/out.csv", ["data"], "allow"),
        ("data/deep/out.csv", ["data/"], "allow"),
        ("reports/q1.md", ["data", "reports/*.md"], "allow"),
        ("secrets/key.pem", ["data"], "deny"),
        ("database.db", ["data"], "deny"),
        ("anything.txt", [], "allow"),  # no data scope means the whole workspace
    ],
)
def test_write_default_follows_data_scope(path: str, scope: list[str], verdict: str) -> None:
    assert decide(PolicyEngine(), WRITE, {"path": path}, scope=scope) == verdict


def test_write_default_checks_every_path_argument() -> None:
    copy = make_tool("copy", "write", ("path", "dest"))
    engine = PolicyEngine()
    inside = {"path": "data/a", "dest": "data/b"}
    assert decide(engine, copy, inside, scope=["data"]) == "allow"
    assert decide(engine, copy, {"path": "data/a", "dest": "etc/b"}, scope=["data"]) == "deny"


def test_dict_rules_are_parsed() -> None:
    engine = PolicyEngine([{"tool": "publish", "decision": "deny", "reason": "frozen"}])
    assert engine.rules == (PolicyRule(decision="deny", tool="publish", reason="frozen"),)
    decision = engine.decide(PUBLISH, {}, req(PUBLISH))
    assert (decision.verdict, decision.reason, decision.rule) == ("deny", "frozen", "publish:deny")


def test_invalid_rule_is_refused() -> None:
    with pytest.raises(ValueError):
        PolicyEngine([{"tool": "publish", "decision": "maybe"}])
    with pytest.raises(ValueError):
        PolicyRule.parse({"tool": "publish"})


def test_most_restrictive_matching_rule_wins_in_any_order() -> None:
    rules: list[dict[str, Any]] = [
        {"tool": "*", "decision": "allow"},
        {"tool": "write_*", "decision": "require_approval"},
        {"tool": "write_file", "path": "secrets/*", "decision": "deny"},
    ]
    for ordered in (rules, list(reversed(rules))):
        engine = PolicyEngine(ordered)
        assert decide(engine, WRITE, {"path": "secrets/k"}) == "deny"
        assert decide(engine, WRITE, {"path": "notes/k"}) == "require_approval"
        assert decide(engine, READ, {"path": "secrets/k"}) == "allow"


def test_rules_match_on_effect_actor_and_path() -> None:
    engine = PolicyEngine(
        [
            {"effect": "write", "actor": "intern-*", "decision": "require_approval"},
            {"tool": "*", "path": "*.lock", "decision": "deny"},
        ]
    )
    assert decide(engine, WRITE, {"path": "a.txt"}, user="intern-7") == "require_approval"
    assert decide(engine, WRITE, {"path": "a.txt"}, user="lead") == "allow"
    assert decide(engine, READ, {"path": "a.txt"}, user="intern-7") == "allow"
    assert decide(engine, READ, {"path": "poetry.lock"}) == "deny"
    # A path rule never matches a call without paths: publish falls to its default.
    assert decide(engine, PUBLISH, {}) == "require_approval"


def test_path_rule_needs_every_path_to_match() -> None:
    copy = make_tool("copy", "write", ("path", "dest"))
    engine = PolicyEngine([{"tool": "copy", "path": "tmp/*", "decision": "deny"}])
    assert decide(engine, copy, {"path": "tmp/a", "dest": "tmp/b"}) == "deny"
    assert decide(engine, copy, {"path": "tmp/a", "dest": "keep/b"}) == "allow"


def test_with_rules_tightens_without_mutating_the_original() -> None:
    base = PolicyEngine([{"tool": "*", "decision": "allow"}])
    stricter = base.with_rules([{"tool": "write_file", "decision": "deny"}])
    assert decide(base, WRITE, {"path": "a"}) == "allow"
    assert decide(stricter, WRITE, {"path": "a"}) == "deny"
    assert len(base.rules) == 1 and len(stricter.rules) == 2


def test_an_allow_rule_cannot_loosen_the_defaults_without_override() -> None:
    """Adding a rule only tightens: approval and data scope survive a plain allow rule."""
    engine = PolicyEngine([{"tool": "publish", "decision": "allow"}])
    assert decide(engine, PUBLISH, {}) == "require_approval"
    outside = PolicyEngine([{"tool": "write_file", "decision": "allow"}])
    assert decide(outside, WRITE, {"path": "etc/x"}, scope=["data"]) == "deny"
    loosened = PolicyEngine([{"tool": "publish", "decision": "allow", "override": True}])
    assert decide(loosened, PUBLISH, {}) == "allow"


def test_unknown_rule_keys_are_refused() -> None:
    with pytest.raises(ValueError):
        PolicyEngine([{"tool": "publish", "decision": "deny", "colour": "red"}])


def test_may_ask_never_says_no_when_a_call_could_need_a_person() -> None:
    # The static answer must over-estimate: whenever some call of the tool would get
    # require_approval, may_ask is True (checked against real decisions below).
    engines = [
        PolicyEngine(),
        PolicyEngine([{"tool": "read_*", "decision": "require_approval"}]),
        PolicyEngine([{"effect": "write", "decision": "require_approval", "actor": "bob"}]),
        PolicyEngine([{"tool": "write_file", "path": "secret/*", "decision": "require_approval"}]),
        PolicyEngine([{"tool": "publish", "decision": "allow", "override": True}]),
    ]
    for engine in engines:
        for tool in (READ, WRITE, PUBLISH):
            for user in ("local-user", "bob"):
                for path in ("notes.txt", "secret/key.txt"):
                    verdict = decide(engine, tool, {"path": path}, scope=["*"], user=user)
                    if verdict == "require_approval":
                        assert engine.may_ask(tool), (engine.rules, tool.name, user, path)


def test_may_ask_is_false_for_reads_under_the_defaults() -> None:
    assert PolicyEngine().may_ask(READ) is False
    assert PolicyEngine().may_ask(WRITE) is False
    assert PolicyEngine().may_ask(PUBLISH) is True
    assert PolicyEngine([{"tool": "read_*", "decision": "deny"}]).may_ask(READ) is False
