"""build_graph: one entry point for the four architectures, with embedded defaults.

With no execution store and no checkpointer, a run persists under a local directory
(``.execgraph`` in the working directory, or ``$EXECGRAPH_HOME``): SQLite checkpoints (LangGraph's
``SqliteSaver``, serving ``invoke`` and ``ainvoke`` alike, see
:mod:`execgraph.persistence.saver`) and the SQLite execution store side by side, plus the
approval secret that signs out-of-band approval tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, Unpack

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore

from execgraph.graph.compiling import CompileOptions
from execgraph.graph.hybrid import build_hybrid
from execgraph.graph.plan_execute import build_plan_execute
from execgraph.graph.react import build_react
from execgraph.graph.workflow import Stage, build_workflow
from execgraph.nodes.answer_format import answer_format
from execgraph.nodes.deps import CheckFn, RunDeps
from execgraph.nodes.executor import ExecutorDeps
from execgraph.nodes.model.prices import PRICES_KEY, price_table
from execgraph.nodes.model.select import resolve_model
from execgraph.nodes.toolset import DeclaredRegistry
from execgraph.persistence.saver import open_embedded_saver
from execgraph.persistence.thread_bound import thread_bound
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import UsageError
from execgraph.state.home import Home
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.policy import PolicyEngine, PolicyRule
from execgraph.tools.registry import ToolLike

_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")

__all__ = [
    "ARCHITECTURES",
    "DEFAULT_DURABILITY",
    "RECURSION_LIMIT",
    "Architecture",
    "build_graph",
]

Architecture = Literal["workflow", "react", "plan_execute", "hybrid"]
ARCHITECTURES: tuple[str, ...] = ("workflow", "react", "plan_execute", "hybrid")
#: The supersteps a run may take (LangGraph's ``recursion_limit``; its default is 25). A
#: run's budgets bound it long before: a config's own ``recursion_limit`` still wins.
RECURSION_LIMIT = 10_000
#: What ``invoke`` uses unless told otherwise (see the end of :func:`build_graph`).
DEFAULT_DURABILITY: Literal["async"] = "async"


def _shared_state(database: str, store: Any, checkpointer: Any) -> tuple[ExecutionStore, Any]:
    """The store and the checkpointer on ``database`` (:mod:`execgraph.persistence.postgres`)."""
    if store is not None or checkpointer is not None:
        raise UsageError(
            "database= names the execution store and the checkpointer both: pass it "
            "without store= or checkpointer="
        )
    if not database.startswith(_POSTGRES_SCHEMES):
        raise UsageError("database= takes a postgresql:// DSN (the embedded default needs none)")
    from execgraph.persistence.postgres import open_database  # psycopg: the postgres extra

    return open_database(database)


def _stores(
    store: ExecutionStore | BaseStore | None, execution_store: ExecutionStore | None
) -> tuple[ExecutionStore | None, BaseStore | None]:
    """The execution store and LangGraph's store, told apart by their type.

    ``store=`` is LangGraph's name for the long-term memory tools read and write, which
    is what a ``create_agent`` user passes; execgraph's record of runs and calls is an
    ``ExecutionStore``. Either may come as ``store=``; both at once, the record as
    ``execution_store=``.
    """
    if store is None or isinstance(store, BaseStore):
        return execution_store, store
    if not isinstance(store, ExecutionStore):
        raise UsageError(
            "store= takes LangGraph's store (a BaseStore, as create_agent's store=) or "
            f"execgraph's ExecutionStore, got {type(store).__name__}"
        )
    if execution_store is not None:
        raise UsageError("two execution stores: pass one, as store= or execution_store=")
    return store, None


def build_graph(
    arch: Architecture | str,
    *,
    model: BaseChatModel | str,
    tools: Iterable[ToolLike],
    policy: PolicyEngine | Iterable[PolicyRule | Mapping[str, Any]] | None = None,
    store: ExecutionStore | BaseStore | None = None,
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
    system_prompt: str = "",
    response_format: Any = None,
    execution_store: ExecutionStore | None = None,
    context_schema: type[Any] | None = None,
    **settings: Any,
) -> RunGraph:
    """Compile one of the four architectures over the same executor and state.

    The compiled graph takes ``{"messages": [...]}`` as ``create_agent`` does (the last
    human message is the request; a ``SystemMessage`` among them is the developer's
    instructions), or ``{"task": {...}}`` (a goal, success checks, budgets, ...).

    When a run ends, and with what status:

    - A task with ``success_checks`` is ``COMPLETED`` only when the verifier finds every
      check holding on the run's record; a rejected answer goes back to the model.
    - A bare goal (a task without checks, such as a ``{"messages": [...]}`` request) ends
      with the model's first answer — a reply without tool calls, or ``finish`` — so a
      chat turn costs one model call. It is ``COMPLETED`` when every action the model
      asked for (a call of a tool that is not a declared read) succeeded at least once in
      the run; if one never did (refused by a policy, rejected by a person, failed), the
      run is ``PARTIAL`` when another call succeeded and ``FAILED`` when none did, each
      unmet action named in ``verification["failed"]`` and ``open_items``. A read that
      failed is no unmet action (the answer says what was not found); a task that needs
      it declares ``{"kind": "tool_succeeded", "target": ...}``.
    - A tool that raises an exception nobody declared for the model (a bug: not a
      ``ToolException`` or ``ModelRetry``) ends the run ``FAILED`` at once, and
      ``invoke``/``stream`` raise that exception, as ``create_agent`` does
      (``tool_errors="model"`` tells the model instead, and the run goes on).
    - ``FAILED`` also ends an abort, a task refused at admission, a stop condition, and a
      run without progress (the loop guard: ``loop_threshold`` turns repeating the same
      calls with the same observations, or the same rejected answer). ``BUDGET_EXHAUSTED``
      ends a run past a budget, ``CANCELLED`` a cancelled one; ``WAITING`` is a pause for
      a person, not an end.

    Default budgets: a task that sets none gets 50 model calls and 100 tool calls
    (``TaskSpec.budgets`` overrides them per kind: ``tokens_in``, ``tokens_out``,
    ``wall_time_s`` and ``cost_usd`` have no default cap).

    A thread holds one run at a time; once it has finished, every ``invoke`` with an input
    starts the thread's next run, as ``create_agent`` runs again: a new human message is
    the conversation's next turn, the same input again is asked again (a fresh budget; the
    model is called anew). ``get_state`` reads a finished run without running it.

    Args:
        arch: ``"workflow"``, ``"react"``, ``"plan_execute"`` or ``"hybrid"``.
        model: A chat model with ``bind_tools``, or a ``"provider:model"`` string.
        tools: ToolSpecs, LangChain tools, or adapters (all their tools). A LangChain
            tool declares its effect in its metadata or tags (``metadata={"effect":
            "read"}``, :mod:`execgraph.tools.langchain`); one that declares none is
            ``irreversible``, so every call of it waits for a person.
        policy: A PolicyEngine, or rules for one (default: effect-based defaults).
        store: LangGraph's store (a ``BaseStore``, as ``create_agent``'s ``store=``): the
            long-term memory tools reach with ``InjectedStore`` or ``ToolRuntime.store``.
            An ``ExecutionStore`` given here is taken as ``execution_store``.
        checkpointer: LangGraph checkpointer (default: LangGraph's SqliteSaver under
            ``home``, for sync and async runs alike; ``False`` compiles without one, as
            LangGraph Studio wants).
        workspace: Directory file paths are confined to (default: ``home/workspace``).
        home: Directory for the embedded defaults (default: ``$EXECGRAPH_HOME`` or
            ``./.execgraph``; its layout: :class:`~execgraph.state.home.Home`).
        checks: Extra success-check kinds.
        stages: The fixed stages of the ``workflow`` architecture.
        approval_secret: HMAC key for approval tokens (default: generated once under home).
        name: Graph name (default: ``arch``).
        model_kwargs: Passed to ``init_chat_model`` when ``model`` is a string
            (``base_url``, ``api_key``, ``temperature``, ...).
        prices: USD per million tokens by the model name a reply reports, for the
            ``cost_usd`` budget: ``{"gpt-4o-mini": {"input_per_mtok": 0.15,
            "output_per_mtok": 0.60}}`` (see :mod:`execgraph.nodes.model.prices`). A task
            with a ``cost_usd`` budget needs it (a free model: an entry of zeros); a reply
            of a model without a price is counted in
            ``budget["used"]["unpriced_model_calls"]`` and ends a ``cost_usd`` budget.
            Tools declare their own cost (``tool_spec(cost_usd=...)``).
        database: A ``postgresql://`` DSN for the execution store and the checkpointer
            both (instead of the embedded SQLite under ``home``).
        system_prompt: The developer's instructions to the model, trusted: they go into
            the system message in a section of their own, beside the runtime's rules
            (which they never replace), with any ``SystemMessage`` of the conversation.
        execution_store: Where runs and calls are recorded (default: SQLite under
            ``home``; ``database=`` puts it in PostgreSQL).
        response_format: The structure of the final answer, as ``create_agent``'s: a
            Pydantic model, a dataclass or a ``TypedDict`` (or a ``ToolStrategy`` of
            one). The model answers by calling ``finish`` with its fields; a finish that
            does not match goes back to the model to repair. ``invoke`` returns the
            answer as ``result["structured_response"]``, an instance of that type (the
            state and the stream hold it as JSON data).
        context_schema: The type of the run's context, as ``create_agent``'s: what
            ``invoke(..., context=...)`` passes (a dict given for it, as LangGraph Studio
            and the SDK send one, becomes an instance) and tools read as
            ``ToolRuntime.context``.
        **settings: RunDeps settings (max_repairs, loop_threshold, history_turns, ...), and
            the ablations, each turning one mechanism off so a run can measure what it
            buys on the same task (:class:`~execgraph.nodes.deps.RunDeps`):

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
            ``"full"``), a ``system_prompt`` that is not text, a ``response_format``
            that is not an object type, a ``store`` that is neither store,
            two execution stores, or ``database=`` with an execution store or
            ``checkpointer=``.
        StoreError: ``database=`` names a database that cannot be reached or set up.
    """
    if arch not in ARCHITECTURES:
        raise UsageError(f"unknown architecture {arch!r}; choose one of {', '.join(ARCHITECTURES)}")
    if not isinstance(system_prompt, str):
        raise UsageError(f"system_prompt takes text, got {type(system_prompt).__name__}")
    table = price_table(prices or {})
    store, memory = _stores(store, execution_store)
    if database is not None:
        store, checkpointer = _shared_state(database, store, checkpointer)
    base = Home.at(home)
    root = Path(workspace) if workspace is not None else base.workspace
    if workspace is None or store is None or checkpointer is None:
        base.make()  # private (0700), whichever of its files comes first
    root.mkdir(parents=True, exist_ok=True)
    engine = policy if isinstance(policy, PolicyEngine) else PolicyEngine(policy or ())
    executor = ExecutorDeps(
        registry=DeclaredRegistry(tools),  # refuses reserved and colliding names
        policy=engine,
        store=store if store is not None else SqliteExecutionStore(base.exec_db),
        approval_secret=approval_secret or base.secret(workspace=root),
    )
    deps = RunDeps(
        model=resolve_model(model, **dict(model_kwargs or {})),
        executor=executor,
        workspace_root=str(root.resolve()),
        checks=dict(checks or {}),
        system_prompt=system_prompt,
        answer_format=answer_format(response_format),
        **settings,
    )
    if checkpointer is None:
        checkpointer = open_embedded_saver(base.checkpoints_db)
    saver = None if checkpointer is False else checkpointer
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
    graph = builders[arch](
        deps, checkpointer=saver, store=memory, name=name or arch, context_schema=context_schema
    )
    # A run ends by its budgets, its loop guard or its deadline, never by LangGraph's
    # default of 25 supersteps (a plan wave, an approval, a verify are steps of their own);
    # ``invoke``, ``stream`` and ``astream_events`` all read the graph's own limit.
    graph = graph.with_config(recursion_limit=RECURSION_LIMIT)
    # The nodes that call a model read the prices from the run's config.
    graph = graph.with_config(configurable={PRICES_KEY: table}) if table else graph
    return thread_bound(graph, executor.store, deps.release_ref, deps.answer_format)


def partial_workflow(stages: Iterable[Stage] | None) -> Callable[..., RunGraph]:
    """The workflow builder with its stages bound."""

    def build(deps: RunDeps, **options: Unpack[CompileOptions]) -> RunGraph:
        return build_workflow(deps, stages=stages, **options)

    return build
