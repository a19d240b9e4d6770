"""Property-based tests: hostile arguments never crash the pipeline or leak exception text.

Arbitrary argument objects (nested JSON values, huge strings, NUL bytes, unicode, wrong
types) go through ``normalize`` + ``validate`` and through the whole executor subgraph;
secrets planted in argument values and in a tool's own exception must never come back in
an error. ``normalize_relpath`` never returns a path that escapes the root.

The reducers' properties (associativity and commutativity where the design merges,
idempotent replay, no input mutation) live in ``tests/state/test_reducers.py``
(``TestEvidenceProperties``, ``TestBudgetProperties``, ``TestResultsProperties``,
``TestEventsProperties``, ``TestStatusAndPlanProperties``) and are not repeated here.
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
import unicodedata
from pathlib import Path, PurePosixPath
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage

from execgraph.graph import build_graph
from execgraph.nodes.executor.stages.normalize import normalize
from execgraph.nodes.executor.stages.validate import validate
from execgraph.state.contracts import ToolExecutionRequest, ToolResult
from execgraph.state.errors import ExecGraphError, PathEscapeError
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools import tool_spec
from execgraph.tools.adapters.fake import SECRET as TOOL_SECRET
from execgraph.tools.adapters.fake import FakeAdapter
from execgraph.tools.paths import confine_path, normalize_relpath
from tests.support.executor import config, make_deps, make_executor, request

PLANTED = "planted-SECRET-7f3a"  # put in argument values; no error may echo it
PROPS = settings(max_examples=150, deadline=None)
EXECUTOR = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# --------------------------------------------------------------------------- strategies

huge = st.builds(lambda ch, n: ch * n, st.characters(), st.integers(10_000, 100_000))


def _values(integers: st.SearchStrategy[int]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        integers,
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(),
        st.text().map(lambda s: s + PLANTED + "\x00" + s),
        huge,
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )


def _arguments(values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.dictionaries(st.text(max_size=12), values, max_size=5),
        st.fixed_dictionaries(
            {"item": values}, optional={"items": values, "path": values, "extra": values}
        ),
        st.fixed_dictionaries({"text": values}, optional={"path": values}),
    )


json_values = _values(st.integers())
argument_dicts = _arguments(json_values)
# Checkpoints (msgpack) hold 64-bit integers; larger ones are repaired (tested below).
checkpointable = _arguments(_values(st.integers(-(2**63), 2**63 - 1)))
path_chars = st.sampled_from(
    [".", "/", "\\", "a", "b", "\x00", "\uff0e", "\uff0f", "\u2025", ":", "C", " ", "\u0301"]
)
path_like = st.one_of(
    st.text(),
    st.text(alphabet=path_chars, max_size=16),
    st.text(alphabet=path_chars).map(lambda s: s + PLANTED),
)


# --------------------------------------------------------------------------- tools


def _tools() -> tuple[FakeAdapter, list[Any]]:
    fake = FakeAdapter()
    fake.tool("note", effect="write", path_args=["path"], reconcile="none")
    fake.tool("leaky", effect="read", behaviour="raise_secret")

    @tool_spec(effect="read", path_args=["path"], aliases={"body": "text"})
    def echo_raise(text: str, path: str = "notes/a.txt") -> str:
        """A tool whose exception carries its own argument (a foreign library would)."""
        raise ValueError(f"cannot handle {text!r} at {path!r}")

    return fake, [*fake.tools(), echo_raise]


def _leaks(text: str) -> bool:
    """A secret planted in an argument value or in a tool's exception shows up in ``text``."""
    return PLANTED in text or TOOL_SECRET in text


def _request(arguments: Any, root: Path, tool: str = "note") -> ToolExecutionRequest:
    # model_construct: a caller bypassing the contract must still be refused, not crash
    fields = {**ToolExecutionRequest.model_validate(request(tool, {}, root=root)).__dict__}
    return ToolExecutionRequest.model_construct(**{**fields, "arguments": arguments})


# --------------------------------------------------------------------------- normalize + validate


@PROPS
@given(
    arguments=st.one_of(argument_dicts, json_values), tool=st.sampled_from(["note", "echo_raise"])
)
def test_normalize_and_validate_refuse_with_typed_errors_only(arguments: Any, tool: str) -> None:
    _, tools = _tools()
    spec = next(t for t in tools if t.name == tool)
    with tempfile.TemporaryDirectory() as root:
        req = _request(arguments, Path(root), tool)
        try:
            validated = validate(req, spec, normalize(req, spec))
        except ExecGraphError as exc:
            assert not _leaks(exc.message), exc.message
            assert len(exc.message) < 2_000
            return
    assert (
        isinstance(validated.normalized.args_hash, str)
        and len(validated.normalized.args_hash) == 64
    )
    for rel in validated.normalized.paths:
        assert not PurePosixPath(rel).is_absolute() and ".." not in PurePosixPath(rel).parts


@PROPS
@given(arguments=argument_dicts)
def test_normalize_is_idempotent(arguments: dict[str, Any]) -> None:
    _, tools = _tools()
    spec = tools[-1]  # echo_raise: an alias, a path argument and a default
    with tempfile.TemporaryDirectory() as root:
        try:
            once = normalize(_request(arguments, Path(root), spec.name), spec)
        except ExecGraphError:
            return
        twice = normalize(_request(once.arguments, Path(root), spec.name), spec)
    assert twice.arguments == once.arguments and twice.args_hash == once.args_hash


# --------------------------------------------------------------------------- whole executor


def test_executor_never_crashes_and_never_leaks(tmp_path: Path) -> None:
    fake, tools = _tools()
    deps = make_deps(tmp_path, tools)
    app = make_executor(deps)
    runs = itertools.count()

    @EXECUTOR
    @given(arguments=checkpointable, tool=st.sampled_from(["note", "leaky", "echo_raise", "nope"]))
    @example(arguments={"item": PLANTED}, tool="leaky")  # the tool's exception holds a secret
    @example(arguments={"body": PLANTED + "\x00"}, tool="echo_raise")  # echoed by an alias
    @example(arguments={"text": "x", "path": "../" + PLANTED}, tool="echo_raise")
    def check(arguments: dict[str, Any], tool: str) -> None:
        n, before = next(runs), len(fake.calls)
        req = request(tool, arguments, root=tmp_path, call_id=f"c{n}", run_id=f"r{n}")
        out = app.invoke({"request": req}, config(f"t{n}"))
        result = ToolResult.model_validate(out["results"][f"c{n}"])
        if result.outcome != "succeeded":
            assert result.error is not None
            dumped = json.dumps(result.model_dump(mode="json"), default=str)
            assert not _leaks(dumped), result.error.message
        events = deps.store.events(f"r{n}")
        logged = json.dumps([e.payload for e in events if e.type != "tool.requested"])
        assert TOOL_SECRET not in logged  # tool.raised included: credentials are scrubbed
        # tool.requested holds the arguments, tool.raised what the tool raised (for the
        # developer: echo_raise repeats its argument); no other event may echo them.
        echoed = [e.payload for e in events if e.type not in ("tool.requested", "tool.raised")]
        assert result.outcome == "succeeded" or PLANTED not in json.dumps(echoed)
        assert [e.type for e in events].count("tool.completed") == 1
        assert len(fake.calls) - before <= 1  # at most one real execution per request

    try:
        check()
    finally:
        fake.close()
        deps.store.close()


# --------------------------------------------------------------------------- paths


@settings(max_examples=200, deadline=None)
@given(raw=path_like)
def test_normalize_relpath_never_escapes_the_root(raw: str) -> None:
    try:
        rel = normalize_relpath(raw)
    except PathEscapeError as exc:
        assert PLANTED not in exc.message  # the hostile path is never echoed
        return
    parts = PurePosixPath(rel).parts
    assert rel and not rel.startswith("/") and "\x00" not in rel and "\\" not in rel
    assert ".." not in parts and "." not in parts and not (len(rel) > 1 and rel[1] == ":")
    assert ".." not in PurePosixPath(unicodedata.normalize("NFKC", rel)).parts
    root = "/srv/ws"
    assert os.path.normpath(os.path.join(root, rel)).startswith(root + "/")
    assert normalize_relpath(rel) == rel


@settings(max_examples=100, deadline=None)
@given(raw=path_like)
def test_confine_path_stays_under_the_real_root(raw: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        try:
            target = confine_path(root, raw)
        except PathEscapeError:
            return
        real = Path(os.path.realpath(root))
        assert real in target.parents


def test_a_model_argument_beyond_64_bits_does_not_crash_the_run(tmp_path: Path) -> None:
    fake = FakeAdapter()
    fake.tool("note", effect="write")
    replies = [
        AIMessage(content="", tool_calls=[{"name": "note", "args": {"item": 2**64}, "id": "n1"}]),
        AIMessage(content="", tool_calls=[{"name": "note", "args": {"item": "ok"}, "id": "n2"}]),
        AIMessage(content="", tool_calls=[{"name": "finish", "args": {"output": "ok"}, "id": "f"}]),
    ]
    app = build_graph(
        "react",
        model=ScriptedChatModel(replies),
        tools=fake.tools(),
        store=SqliteExecutionStore(tmp_path / "exec.db"),
        home=tmp_path,
    )
    out = app.invoke({"task": {"goal": "note the number"}}, config("bigint"))
    assert out["status"] == "COMPLETED" and fake.call_count("note") == 1
