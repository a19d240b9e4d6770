"""ExecutorMiddleware: a ``create_agent`` agent's tool calls through execgraph's executor.

``langchain.agents.create_agent`` runs each tool call of the model in its tool node;
this middleware's ``wrap_tool_call`` takes the call there and runs it through the one
executor pipeline every execgraph run uses (:mod:`execgraph.nodes.executor.pipeline`):
resolve the declared tool, normalize, validate, the policy, a person's approval
(``interrupt()``, bound to the tool version, the normalized-arguments hash and the
target's state), the execution record before the effect, locks, the tool under its
deadline and cancel signal, the outcome (``unknown`` included), evidence, commit. The
tool itself is run by the executor, never by the tool node's handler, so no other path
to it is left.

What stays ``create_agent``'s: the model, the prompt, the loop, the checkpointer, the
other middleware, streaming. What changes for the agent: a call's answer is the
executor's observation (status, data or a typed error, marked as untrusted tool output);
an undeclared tool is ``irreversible`` and asks a person before each call
(:mod:`execgraph.tools.langchain` says how a tool declares its effect); a resume, a re-run
from an earlier checkpoint and a restart after a crash replay a call's recorded result
instead of running it again (:mod:`.requests` says how the record is keyed); a write of a
target the run has read carries what the run saw of it, so a stale write is refused
(compare-and-swap, as in the graphs: the calls' evidence is kept in the agent's state).
The run's budgets and its end state are :mod:`.budgets`'.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping
from contextvars import copy_context
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated, Any, NotRequired

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    OmitFromInput,
    ToolCallRequest,
)
from langchain_core.messages import ToolMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.runtime import Runtime
from langgraph.types import Command

from execgraph.middleware.budgets import REFUSED, Budgets, add_usage
from execgraph.middleware.decisions import decision_schema
from execgraph.middleware.offered import offered_tools
from execgraph.middleware.requests import thread_of, tool_request, turn_of
from execgraph.nodes.executor import ExecutorDeps, run_calls, tool_message
from execgraph.nodes.expected_state import guard_writes
from execgraph.nodes.toolset import DeclaredRegistry
from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ExecGraphError
from execgraph.state.home import Home
from execgraph.state.reducers import evidence_batch
from execgraph.state.schema import SNAPSHOT_EVERY
from execgraph.state.store import open_store
from execgraph.state.store.base import ExecutionStore
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.tools.policy import PolicyEngine, PolicyRule
from execgraph.tools.registry import ToolLike

__all__ = ["ExecutorAgentState", "ExecutorMiddleware"]


class ExecutorAgentState(AgentState[Any]):
    """The agent's state, with what the middleware keeps of a run's budgets."""

    execgraph_usage: NotRequired[Annotated[dict[str, float], OmitFromInput, add_usage]]
    """Usage per kind in this run (tool_calls, model_calls, tokens_in, tokens_out)."""
    execgraph_started_at: NotRequired[Annotated[float, OmitFromInput]]
    """When this run started (epoch seconds), for the wall-time budget."""
    execgraph_status: NotRequired[Annotated[dict[str, Any] | None, OmitFromInput]]
    """How the run ended: ``completed``, or ``budget_exhausted`` naming the kinds."""
    execgraph_evidence: NotRequired[
        Annotated[
            dict[str, dict[str, Any]],
            OmitFromInput,
            DeltaChannel(evidence_batch, snapshot_frequency=SNAPSHOT_EVERY),
        ]
    ]
    """What the run's calls observed, by source id (a bounded window, as a graph run's
    ``evidence``): a write of a target the run read carries what it saw."""


ToolHandler = Callable[[ToolCallRequest], ToolMessage | Command[Any]]
AsyncToolHandler = Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
ModelHandler = Callable[[ModelRequest[Any]], ModelResponse[Any]]
AsyncModelHandler = Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]]


class ExecutorMiddleware(AgentMiddleware[ExecutorAgentState, Any, Any]):
    """Every tool call of a ``create_agent`` agent, through execgraph's executor.

    Args:
        tools: execgraph tools to offer the agent (``tool_spec`` functions, adapters:
            :mod:`.offered`), and declarations that take precedence over what the
            agent's own tools declare themselves (``from_langchain(tool, effect=...)``).
            The agent's own tools need not be listed: each is read (its metadata or
            tags, an MCP tool's annotations) the first time the model calls it.
        policy: A PolicyEngine, or rules for one (default: by effect, a read runs, a
            write inside the workspace runs, an irreversible call asks a person).
        store: The execution store: an ExecutionStore, a ``postgresql://`` DSN, or a
            SQLite path (default: SQLite under ``home``).
        home: Directory for the embedded defaults (default: ``$EXECGRAPH_HOME`` or
            ``./.execgraph``).
        workspace: Directory file paths are confined to (default: ``home/workspace``).
        approval_secret: HMAC key for approval tokens (default: made once under home).
        budgets: Limits for one run of the agent: ``tool_calls``, ``model_calls``,
            ``tokens_in``, ``tokens_out``, ``wall_time_s``, ``cost_usd`` (:mod:`.budgets`).
        prices: USD per million tokens by the model name a reply reports, for the
            ``cost_usd`` budget: ``{"gpt-4o-mini": {"input_per_mtok": 0.15,
            "output_per_mtok": 0.60}}`` (:mod:`execgraph.nodes.model.prices`).
        observation_chars: Bound on the text of one tool answer, as the model sees it.

    Raises:
        UsageError: an unknown budget kind, a limit that is not positive, a malformed
            price table, or a ``cost_usd`` budget without one.
        ToolDeclarationError: two declarations under one name and version.
        StoreError: the store cannot be opened.
    """

    state_schema = ExecutorAgentState

    def __init__(
        self,
        *,
        tools: Iterable[ToolLike] = (),
        policy: PolicyEngine | Iterable[PolicyRule | Mapping[str, Any]] | None = None,
        store: ExecutionStore | str | Path | None = None,
        home: str | Path | None = None,
        workspace: str | Path | None = None,
        approval_secret: bytes | None = None,
        budgets: Mapping[str, float] | None = None,
        prices: Mapping[str, Mapping[str, float]] | None = None,
        observation_chars: int = 2000,
    ) -> None:
        super().__init__()
        self.budgets = Budgets.of(budgets, prices)
        base = Home.at(home)
        root = Path(workspace) if workspace is not None else base.workspace
        if workspace is None or store is None or approval_secret is None:
            base.make()
        root.mkdir(parents=True, exist_ok=True)
        self.workspace = str(root.resolve())
        if store is None:
            opened: ExecutionStore = SqliteExecutionStore(base.exec_db)
        elif isinstance(store, str | Path):
            opened = open_store(store)
        else:
            opened = store
        self._registry = DeclaredRegistry(tools, reserved=())  # no run-control names here
        self._registering = threading.Lock()
        self.tools = offered_tools(self._registry)  # the agent offers them to its model
        self.deps = ExecutorDeps(
            registry=self._registry,
            policy=policy if isinstance(policy, PolicyEngine) else PolicyEngine(policy or ()),
            store=opened,
            approval_secret=approval_secret or base.secret(workspace=root),
            observation_chars=observation_chars,
        )

    @property
    def store(self) -> ExecutionStore:
        """The execution store the agent's calls are recorded in."""
        return self.deps.store

    # -- budgets ------------------------------------------------------------------------

    def before_agent(self, state: ExecutorAgentState, runtime: Runtime[Any]) -> dict[str, Any]:
        """A run starts: its budgets start from nothing."""
        return self.budgets.start()

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: ModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """Call the model unless the run's budgets no longer allow it, and count the call
        and its tokens. Both happen inside the agent's model node (no node of their own:
        each node of the loop is one more checkpoint per step)."""
        stopped = self.budgets.stop(request.state)
        if stopped is not None:
            return stopped
        return self.budgets.counted(handler(request))

    async def awrap_model_call(
        self, request: ModelRequest[Any], handler: AsyncModelHandler
    ) -> ModelResponse[Any] | ExtendedModelResponse[Any]:
        """The same under ``ainvoke``."""
        stopped = self.budgets.stop(request.state)
        if stopped is not None:
            return stopped
        return self.budgets.counted(await handler(request))

    def after_agent(
        self, state: ExecutorAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """A run that ended on its own says so (one ended by its budget already did)."""
        if state.get("execgraph_status"):
            return None
        return {"execgraph_status": self.budgets.status(state, [])}

    # -- tool calls -----------------------------------------------------------------------

    def wrap_tool_call(self, request: ToolCallRequest, handler: ToolHandler) -> Command[Any]:
        """Run the model's call through the executor (the handler is never called: the
        executor runs the tool); answer the model with the executor's observation."""
        return self._call(request)

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: AsyncToolHandler
    ) -> Command[Any]:
        """The same under ``ainvoke``, on the executor's call pool (the context is copied so
        ``interrupt()`` and the stream writer still find the run)."""
        loop = asyncio.get_running_loop()
        call = partial(copy_context().run, self._call, request)
        return await loop.run_in_executor(self.deps.calls, call)

    def _call(self, request: ToolCallRequest) -> Command[Any]:
        tool_call = request.tool_call
        state = request.state if isinstance(request.state, Mapping) else {}
        self._declare(request)
        refused = self.budgets.refuses_call(state, tool_call.get("id"), self._cost_of)
        if refused is not None:
            return _answer(_refused(tool_call, refused), {refused + REFUSED: 1})
        asked = tool_request(
            tool_call,
            thread=thread_of(request.runtime.config),
            turn=turn_of(state.get("messages") or [], tool_call.get("id")),
            workspace=self.workspace,
            deadline=self.budgets.deadline(state),
        )
        # a write of a target this run has read carries what it saw (compare-and-swap)
        [asked] = guard_writes([asked], self._registry, state.get("execgraph_evidence"))
        message, dumped, cost = self._execute(asked)
        usage = {"tool_calls": 1, **({"cost_usd": cost} if cost else {})}
        observed = {e["source_id"]: e for e in dumped.get("evidence") or () if "source_id" in e}
        return _answer(message, usage, observed)

    def _declare(self, request: ToolCallRequest) -> None:
        """Register the agent's tool the first time the model calls it (a declaration
        given to the middleware under that name stands)."""
        tool = request.tool
        if tool is None or tool.name in self._registry:
            return
        with self._registering:
            if tool.name not in self._registry:
                self._registry.register(tool)

    def _cost_of(self, name: str) -> float:
        """What one call of the tool ``name`` declares it costs (unknown: 0, the executor
        refuses it)."""
        try:
            return self._registry.resolve(name).cost_usd
        except ExecGraphError:
            return 0.0

    def _execute(self, asked: ToolExecutionRequest) -> tuple[ToolMessage, dict[str, Any], float]:
        """One call through the executor, or the result its record holds: the model's
        answer, the result, and what it cost (the tool's declared cost per attempt that
        ran)."""
        store = self.deps.store
        assert asked.idempotency_key is not None
        record = store.get(asked.idempotency_key)
        if record is not None and record.state == "committed" and record.result is not None:
            dumped: dict[str, Any] = dict(record.result)  # done before: not asked again
        else:
            deps = replace(self.deps, decision_schema=decision_schema(asked.tool.name))
            [finished] = run_calls([asked.model_dump(mode="json")], deps)
            dumped = finished.dumped or finished.result.model_dump(mode="json")
        message = tool_message(dumped, self.deps.observation_chars)
        assert message is not None  # every call of the model has its id
        # create_agent keeps the whole conversation in every checkpoint: the message holds
        # where the result is (its record in the execution store), not the result again
        message.artifact = {k: dumped.get(k) for k in _POINTER}
        if dumped.get("artifact") is not None:  # the tool's own, for the application
            message.artifact["artifact"] = dumped["artifact"]
        ran = int(dumped.get("attempts") or 0) if dumped.get("attempt_id") else 0
        return message, dumped, self._cost_of(asked.tool.name) * ran


_POINTER = ("call_id", "tool_name", "outcome", "status", "idempotency_key")
"""What a tool message's ``artifact`` keeps of the call's result: its record's key."""


def _refused(tool_call: Mapping[str, Any], kind: str) -> ToolMessage:
    return ToolMessage(
        content=f"BudgetExhausted: this call does not fit the run's {kind} budget; it did not run.",
        tool_call_id=str(tool_call.get("id") or ""),
        name=str(tool_call.get("name") or "") or None,
        status="error",
    )


def _answer(
    message: ToolMessage, usage: dict[str, float], observed: dict[str, Any] | None = None
) -> Command[Any]:
    update: dict[str, Any] = {"messages": [message], "execgraph_usage": usage}
    if observed:  # an empty update would still be a checkpoint write
        update["execgraph_evidence"] = observed
    return Command(update=update)
