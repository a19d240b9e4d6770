"""Graph state: one TypedDict per graph, one named reducer per shared field.

Everything in state is JSON-like (dicts of ``model_dump(mode="json")``) so a checkpoint
written by one process is readable by any other; the one exception is ``messages``, which
holds LangChain message objects as ``create_agent``'s state does (LangGraph's serializer
writes and reads them). Bulky outputs live in the execution store as artifacts; state
keeps refs, so a step costs the same at step 1,000 as at 10.

Every channel is bounded (windows of recent results, turns, event and charge ids), and the
ones written every step are LangGraph ``DeltaChannel``s: a checkpoint stores only the
step's update (plus a full snapshot every ``SNAPSHOT_EVERY`` updates), not the whole
window again, so checkpoints stay small and their size does not grow with the run.
``DeltaChannel`` is beta in LangGraph 1.2; the version is pinned in requirements.lock.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Required

from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from typing_extensions import TypedDict

from execgraph.state.reducers import (
    append_window,
    budget_batch,
    events_batch,
    evidence_batch,
    history_batch,
    latest_batch,
    messages_batch,
    progress_batch,
    replace_plan_if_newer,
    results_batch,
    sticky_status,
)

#: Updates of a delta channel between two full snapshots of it: bounds how many writes a
#: reader replays to rebuild the channel (a resume from another process, ``get_state``).
SNAPSHOT_EVERY = 64

__all__ = [
    "SNAPSHOT_EVERY",
    "ActorInput",
    "BudgetsInput",
    "ExecutorInput",
    "ExecutorOutput",
    "ExecutorState",
    "RunInput",
    "RunState",
    "SharedFields",
    "StopConditionInput",
    "SuccessCheckInput",
    "TaskInput",
]


class SharedFields(TypedDict, total=False):
    """The fields every graph shares and the executor writes back (reducers merge them).

    ``messages`` is the conversation as LangChain messages, the channel ``create_agent``
    and LangGraph Studio read: the human request, each model reply (``AIMessage`` with its
    ``tool_calls``) and one ``ToolMessage`` per call (``artifact``: the ToolResult). It is
    a bounded window merged by message id (:func:`~execgraph.state.reducers.add_messages_window`);
    the model's input is still projected from the run's state, never from this channel.
    """

    results: Annotated[
        dict[str, dict[str, Any]], DeltaChannel(results_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    evidence: Annotated[
        dict[str, dict[str, Any]], DeltaChannel(evidence_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    budget: Annotated[dict[str, Any], DeltaChannel(budget_batch, snapshot_frequency=SNAPSHOT_EVERY)]
    events: Annotated[dict[str, Any], DeltaChannel(events_batch, snapshot_frequency=SNAPSHOT_EVERY)]
    messages: Annotated[
        list[AnyMessage], DeltaChannel(messages_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]


class RunState(SharedFields, total=False):
    """State of a run under any of the four architectures.

    ``task`` is the user's input (or, with ``messages`` alone, the request admission read
    from the last human message); ``contract`` what admission made of it, ``admitted``
    which request that was (so a new one on a finished thread starts the thread's next
    run: :mod:`execgraph.nodes.admission`). ``decisions``
    holds the current turn's parsed model proposals and ``pending`` the requests
    dispatched for it; ``history`` is a bounded window of recent turns (the transcript the
    model sees), ``feedback`` the runtime's notes to the model (a rejected finish, a
    repaired output). ``progress`` is the loop guard's memory, ``phase``/``cursor`` the
    position inside a fixed workflow or hybrid phase list. ``output_sources`` marks the
    parts of a completed run's ``output`` copied from tool output (the answer channel:
    :mod:`execgraph.nodes.answer_channel`). ``structured_response`` is a completed run's
    answer in the structure the graph asks for (``response_format``), as JSON data.
    """

    task: dict[str, Any]
    contract: dict[str, Any] | None
    admitted: dict[str, Any] | None
    status: Annotated[str | None, sticky_status]
    plan: Annotated[dict[str, Any] | None, replace_plan_if_newer]
    output: str | None
    output_sources: list[dict[str, Any]] | None
    structured_response: Any
    error: dict[str, Any] | None
    started_at: float
    turn: int
    decisions: Annotated[
        list[dict[str, Any]], DeltaChannel(latest_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    pending: Annotated[
        list[dict[str, Any]], DeltaChannel(latest_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    history: Annotated[
        list[dict[str, Any]], DeltaChannel(history_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    feedback: Annotated[list[dict[str, Any]], append_window]
    progress: Annotated[
        dict[str, Any], DeltaChannel(progress_batch, snapshot_frequency=SNAPSHOT_EVERY)
    ]
    phase: str
    cursor: int
    verification: dict[str, Any] | None
    open_items: list[str]
    trigger: str | None
    offered: list[str] | None


class ExecutorInput(TypedDict, total=False):
    """What a caller sends the executor: one ToolExecutionRequest as a dict, or a batch.

    A batch holds calls no rule could send to a person (see ``execgraph.nodes.batching``): one task
    runs them side by side, so a turn's reads cost one checkpoint write, not one each.
    """

    request: dict[str, Any]
    batch: list[dict[str, Any]]


class ExecutorOutput(SharedFields, total=False):
    """What the executor returns: reducer fields only, so parallel calls never collide."""


class ExecutorState(ExecutorInput, ExecutorOutput, total=False):
    """The executor graph's state when it is compiled alone: a request and what it returns."""


# --------------------------------------------------------------------------- run input
# What a person fills in (LangGraph Studio draws its input form from these; ``typing_
# extensions.TypedDict``, as pydantic requires on Python 3.11 to describe them). They
# mirror the contracts of ``execgraph.state.contracts`` field for field, which a test pins;
# admission still validates the task against ``TaskSpec`` itself.


class SuccessCheckInput(TypedDict, total=False):
    """A :class:`~execgraph.state.contracts.SuccessCheck` as input."""

    kind: Required[str]
    target: str | None
    value: str | None
    description: str
    count: int | None


class StopConditionInput(TypedDict, total=False):
    """A :class:`~execgraph.state.contracts.StopCondition` as input."""

    kind: Required[Literal["tool_failed", "unknown_outcome", "denied"]]
    target: str | None
    count: int


class ActorInput(TypedDict, total=False):
    """An :class:`~execgraph.state.contracts.Actor` as input."""

    user_id: str
    agent_id: str


class BudgetsInput(TypedDict, total=False):
    """Budgets by :class:`~execgraph.state.contracts.BudgetKind`; a kind left out keeps its
    default cap."""

    model_calls: float
    tool_calls: float
    tokens_in: float
    tokens_out: float
    wall_time_s: float
    cost_usd: float


class TaskInput(TypedDict, total=False):
    """A :class:`~execgraph.state.contracts.TaskSpec` as input: a goal, optional checks,
    stop conditions and budgets."""

    goal: Required[str]
    deliverables: list[str]
    allowed_actions: list[str] | None
    success_checks: list[SuccessCheckInput]
    stop_conditions: list[StopConditionInput]
    budgets: BudgetsInput
    deadline_s: float | None
    approval_rules: list[dict[str, Any]]
    data_scope: list[str]
    actor: ActorInput
    idempotency_key: str | None
    max_argument_bytes: int
    release_ref: str | None
    required_slots: dict[str, str]
    slots: dict[str, str]
    waits: dict[str, Any]


class RunInput(TypedDict, total=False):
    """What a run of any of the four architectures takes: a task, or chat messages.

    The graphs' ``input_schema``: only these keys are read from ``invoke``'s input, and
    LangGraph Studio draws its form (and its chat, for ``messages``) from them.
    """

    task: TaskInput
    messages: list[AnyMessage]
