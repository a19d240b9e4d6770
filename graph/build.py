"""build_graph: one entry point for the four architectures, with embedded defaults.

With no store and no checkpointer, a run persists under a local directory (``.execgraph``
in the working directory, or ``$EXECGRAPH_HOME``): SQLite checkpoints (LangGraph's
``SqliteSaver``, serving ``invoke`` and ``ainvoke`` alike, see
:mod:`execgraph.graph.saver`) and the SQLite execution store side by side, plus the
approval secret that signs out-of-band approval tokens.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel

from execgraph.graph.compiled import RunGraph
from execgraph.graph.entry import thread_bound
from execgraph.graph.hybrid import build_hybrid
from execgraph.graph.plan_execute import build_plan_execute
from execgraph.graph.react import build_react
from execgraph.graph.saver import EmbeddedSqliteSaver, open_embedded_saver
from execgraph.graph.workflow import Stage, build_workflow
from execgraph.nodes.deps import CheckFn, RunDeps
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.models.select import resolve_model
from execgraph.nodes.prices import PRICES_KEY, price_table
from execgraph.nodes.toolset import DeclaredRegistry
from execgraph.state.errors import StoreError, UsageError
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.policy import PolicyEngine, PolicyRule
from execgraph.tools.registry import ToolLike

_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")

__all__ = [
    "ARCHITECTURES",
    "DEFAULT_DURABILITY",
    "Architecture",
    "build_graph",
    "default_home",
    "home_secret",
]

Architecture = Literal["workflow", "react", "plan_execute", "hybrid"]
ARCHITECTURES: tuple[str, ...] = ("workflow", "react", "plan_execute", "hybrid")
#: What ``invoke`` uses unless told otherwise (see the end of :func:`build_graph`).
DEFAULT_DURABILITY: Literal["async"] = "async"


def default_home() -> Path:
    """Where the embedded default keeps its files."""
    return Path(os.environ.get("EXECGRAPH_HOME") or Path.cwd() / ".execgraph")


def home_secret(home: Path, *, workspace: Path | None = None) -> bytes:
    """The key that signs approval tokens: ``$EXECGRAPH_APPROVAL_SECRET``, or one made once
    under ``home`` and read back by every later process.

    The key file is mode 0600 (a looser mode found on disk is tightened), made atomically
    (written aside, then hard-linked into place, so two first processes agree on one key),
    in a home created 0700. It must not lie inside ``workspace``: tool processes may read
    their workspace, never the key.

    Raises:
        UsageError: the key would lie inside ``workspace``.
        StoreError: the key cannot be made or read (a full disk, a read-only home, ...).
    """
    env = os.environ.get("EXECGRAPH_APPROVAL_SECRET")
    if env:
        return env.encode()
    path = home / "approval.key"
    if workspace is not None and path.resolve().is_relative_to(workspace.resolve()):
        raise UsageError(
            f"the approval key {path} would lie inside the workspace {workspace}: "
            "choose a workspace outside the home, or pass approval_secret"
        )
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not path.exists():
            _make_key(path)
        if stat.S_IMODE(os.stat(path).st_mode) & 0o077:
            os.chmod(path, 0o600)
        key = path.read_text().strip()
    except OSError as exc:
        raise StoreError(
            f"the approval key at {path} is not usable: {exc.strerror or exc}"
        ) from exc
    if not key:
        raise StoreError(f"the approval key at {path} is empty")
    return key.encode()


def _make_key(path: Path) -> None:
    aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
            fh.flush()
            os.fsync(fh.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first: use that
            os.link(aside, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(aside)


def _checkpointer(home: Path) -> EmbeddedSqliteSaver:
    return open_embedded_saver(home / "checkpoints.db")


def _shared_state(database: str, store: Any, checkpointer: Any) -> tuple[ExecutionStore, Any]:
    """The store and the checkpointer on ``database`` (see :mod:`execgraph.graph.postgres`)."""
    if store is not None or checkpointer is not None:
        raise UsageError(
            "database= names the execution store and the checkpointer both: pass it "
            "without store= or checkpointer="
        )
    if not database.startswith(_POSTGRES_SCHEMES):
        raise UsageError("database= takes a postgresql:// DSN (the embedded default needs none)")
    from execgraph.graph.postgres import open_database  # psycopg: the postgres extra

    return open_database(database)


def build_graph(
    arch: Architecture | str,
    *,
    model: BaseChatModel | str,
    tools: Iterable[ToolLike],
    policy: PolicyEngine | Iterable[PolicyRule | Mapping[str, Any]] | None = None,
    store: ExecutionStore | None = None,
    checkpointer: Any = None,
    workspace: str | Path | None = None,
    home: str | Path | None = None,
    checks: Mapping[str, CheckFn] | None = None,
    stages: Iterable[Stage] | None = None,
    approval_secret: bytes | None = None,
    name: str | None = None,
    model_kwargs: Mapping[str, Any] | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    database: str | None = None,
    **settings: Any,
) -> RunGraph:
    """Compile one of the four architectures over the same executor and state.

    Args:
        arch: ``"workflow"``, ``"react"``, ``"plan_execute"`` or ``"hybrid"``.
        model: A chat model with ``bind_tools``, or a ``"provider:model"`` string.
        tools: ToolSpecs, LangChain tools, or adapters (all their tools). A LangChain
            tool declares its effect in its metadata or tags (``metadata={"effect":
            "read"}``, :mod:`execgraph.tools.langchain`); one that declares none is
            ``irreversible``, so every call of it waits for a person.
        policy: A PolicyEngine, or rules for one (default: effect-based defaults).
        store: Execution store (default: SQLite under ``home``).
        checkpointer: LangGraph checkpointer (default: LangGraph's SqliteSaver under
            ``home``, for sync and async runs alike; ``False`` compiles without one, as
            LangGraph Studio wants).
        workspace: Directory file paths are confined to (default: ``home/workspace``).
        home: Directory for the embedded defaults (default: :func:`default_home`).
        checks: Extra success-check kinds.
        stages: The fixed stages of the ``workflow`` architecture.
        approval_secret: HMAC key for approval tokens (default: generated once under home).
        name: Graph name (default: ``arch``).
        model_kwargs: Passed to ``init_chat_model`` when ``model`` is a string
            (``base_url``, ``api_key``, ``temperature``, ...).
        prices: USD per million tokens by the model name a reply reports, for the
            ``cost_usd`` budget: ``{"gpt-4o-mini": {"input_per_mtok": 0.15,
            "output_per_mtok": 0.60}}`` (see :mod:`execgraph.nodes.prices`). A reply of a
            model without a price costs 0 and is counted in
            ``budget["used"]["unpriced_model_calls"]``. Tools declare their own cost
            (``tool_spec(cost_usd=...)``).
        **settings: RunDeps settings (max_repairs, loop_threshold, history_turns, ...), and
            the ablations (seed 002 §15.1), each turning one mechanism off so a run can
            measure what it buys on the same task (:class:`~execgraph.nodes.deps.RunDeps`):

            - ``tools_enabled=False``: only the control tools are offered (finish, ask_user,
              abort; plan-and-execute's submit_plan, taking only an empty plan, and
              revise_plan); a tool the model calls anyway is refused as not offered
              (``tool.denied``), never run.
            - ``verifier_gate=False``: a finish ends the run COMPLETED without running the
              success checks; its ``verifier.verdict`` event says ``"gated": false``.
            - ``loop_guard=False``: turns without progress never stop the run; budgets and
              the deadline still do.
            - ``context="full"``: the model input carries every turn, whole observations
              and every evidence item, read from the run's record (default
              ``"projected"``: the bounded state projection).

            ``build_graph("react", ..., verifier_gate=False, context="full")``.

    Raises:
        UsageError: unknown architecture, a malformed price table (also a ValueError),
            an ablation setting that is not a bool (``context``: not ``"projected"`` or
            ``"full"``), or ``database=`` with ``store=`` or ``checkpointer=``.
        StoreError: ``database=`` names a database that cannot be reached or set up.
    """
    if arch not in ARCHITECTURES:
        raise UsageError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    table = price_table(prices or {})
    if database is not None:
        store, checkpointer = _shared_state(database, store, checkpointer)
    base = Path(home) if home is not None else default_home()
    root = Path(workspace) if workspace is not None else base / "workspace"
    root.mkdir(parents=True, exist_ok=True)
    engine = policy if isinstance(policy, PolicyEngine) else PolicyEngine(policy or ())
    executor = ExecutorDeps(
        registry=DeclaredRegistry(tools),  # refuses reserved and colliding names
        policy=engine,
        store=store if store is not None else SqliteExecutionStore(base / "exec.db"),
        approval_secret=approval_secret or home_secret(base, workspace=root),
    )
    deps = RunDeps(
        model=resolve_model(model, **dict(model_kwargs or {})),
        executor=executor,
        workspace_root=str(root.resolve()),
        checks=dict(checks or {}),
        **settings,
    )
    saver = None if checkpointer is False else checkpointer or _checkpointer(base)
    builders: dict[str, Callable[..., RunGraph]] = {
        "react": build_react,
        "workflow": partial_workflow(stages),
        "plan_execute": build_plan_execute,
        "hybrid": build_hybrid,
    }
    # Durability: LangGraph's own default, "async" (``DEFAULT_DURABILITY``; pinned by a
    # test), because a checkpoint is a snapshot here, not the record. What a crash must not
    # lose is in the execution store before it acts: a turn's model reply is logged before
    # its calls run (and replayed, never asked again, when a lost checkpoint makes the turn
    # re-run), and a write's record is on disk before its tool starts. So the checkpoint
    # is written beside the next step, not before it; ``invoke`` still returns only once it
    # is on disk. ``invoke(..., durability="sync")`` waits at every step instead.
    graph = builders[arch](deps, checkpointer=saver, name=name or arch)
    # The nodes that call a model read the prices from the run's config.
    graph = graph.with_config(configurable={PRICES_KEY: table}) if table else graph
    return thread_bound(graph, executor.store)


def partial_workflow(stages: Iterable[Stage] | None) -> Callable[..., RunGraph]:
    """The workflow builder with its stages bound."""

    def build(deps: RunDeps, *, checkpointer: Any, name: str) -> RunGraph:
        return build_workflow(deps, stages=stages, checkpointer=checkpointer, name=name)

    return build
