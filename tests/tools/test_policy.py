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


def test_an_open_world_tool_is_egress_its_write_asks_a_person() -> None:
    """``open_world`` (an MCP ``openWorldHint``): a write to an outside system asks first,
    even inside the data scope; a read is still allowed; a rule can name such tools, and
    may_ask still over-estimates."""
    post = tool_spec(name="post", effect="write", open_world=True)(lambda path="": path)
    fetch = tool_spec(name="fetch", effect="read", open_world=True)(lambda path="": path)
    engine = PolicyEngine()
    assert decide(engine, WRITE, {"path": "notes.txt"}) == "allow"
    assert decide(engine, post, {"path": "notes.txt"}) == "require_approval"
    assert "open-world" in engine.decide(post, {}, req(post)).reason
    assert decide(engine, fetch, {"path": "x"}) == "allow"
    assert engine.may_ask(post) and engine.needs_provenance(fetch)
    closed = PolicyEngine([{"open_world": True, "decision": "deny"}])
    assert [decide(closed, t, {"path": "x"}) for t in (fetch, post, READ, WRITE)] == [
        "deny",
        "deny",
        "allow",
        "allow",
    ]
    allowed = PolicyEngine([{"tool": "post", "decision": "allow", "override": True}])
    assert decide(allowed, post, {"path": "x"}) == "allow"


# ------------------------------------------------------------------ where a path lands


@pytest.fixture
def linked_ws(tmp_path: Any) -> str:
    """A real workspace with ``public/assets -> ../private`` (a link that stays inside)."""
    (tmp_path / "public").mkdir()
    (tmp_path / "private").mkdir()
    (tmp_path / "public" / "assets").symlink_to("../private")
    return str(tmp_path)


def on_disk(tool: ToolSpec, root: str, scope: list[str] | None = None) -> ToolExecutionRequest:
    return req(tool, scope=scope).model_copy(update={"workspace": Workspace(root=root)})


def test_a_deny_rule_matches_where_a_symlinked_path_lands(linked_ws: str) -> None:
    engine = PolicyEngine([{"tool": "*", "path": "private/*", "decision": "deny"}])
    via_link = {"path": "public/assets/keys.txt"}
    assert engine.decide(WRITE, via_link, on_disk(WRITE, linked_ws)).verdict == "deny"
    assert engine.decide(READ, via_link, on_disk(READ, linked_ws)).verdict == "deny"
    assert engine.decide(WRITE, {"path": "public/a.txt"}, on_disk(WRITE, linked_ws)).verdict == (
        "allow"
    )
    # A rule written against the link's own name still holds too (either form matches).
    by_name = PolicyEngine([{"tool": "*", "path": "public/assets/*", "decision": "deny"}])
    assert by_name.decide(WRITE, via_link, on_disk(WRITE, linked_ws)).verdict == "deny"


def test_the_data_scope_holds_where_a_symlinked_write_lands(linked_ws: str) -> None:
    engine, scope = PolicyEngine(), ["public/*"]
    via_link = {"path": "public/assets/keys.txt"}
    assert engine.decide(WRITE, via_link, on_disk(WRITE, linked_ws, scope)).verdict == "deny"
    plain = {"path": "public/notes.txt"}
    assert engine.decide(WRITE, plain, on_disk(WRITE, linked_ws, scope)).verdict == "allow"


def test_an_override_rule_cannot_be_borrowed_through_a_link(linked_ws: str) -> None:
    """A loosening rule must match the path as written *and* where it lands."""
    engine = PolicyEngine(
        [{"tool": "write_file", "path": "public/*", "decision": "allow", "override": True}]
    )
    scope = ["nowhere"]
    plain = {"path": "public/notes.txt"}
    assert engine.decide(WRITE, plain, on_disk(WRITE, linked_ws, scope)).verdict == "allow"
    via_link = {"path": "public/assets/keys.txt"}
    assert engine.decide(WRITE, via_link, on_disk(WRITE, linked_ws, scope)).verdict == "deny"


def test_a_link_leaving_the_workspace_is_denied_by_policy(linked_ws: str, tmp_path: Any) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "out").symlink_to(outside)
    engine = PolicyEngine([{"tool": "*", "path": "private/*", "decision": "deny"}])
    decision = engine.decide(WRITE, {"path": "out/x"}, on_disk(WRITE, linked_ws))
    assert decision.verdict == "deny" and "workspace" in decision.reason
