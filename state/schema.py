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

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel

from execgraph.state.reducers import (
    append_window,
    budget_batch,
    events_batch,
    history_batch,
    latest_batch,
    merge_evidence,
    messages_batch,
    progress_batch,
    replace_plan_if_newer,
    results_batch,
    sticky_status,
)

#: Updates of a delta channel between two full snapshots of it: bounds how many writes a
#: reader replays to rebuild the channel (a resume from another process, ``get_state``).
SNAPSHOT_EVERY = 32

__all__ = [
    "SNAPSHOT_EVERY",
    "ExecutorInput",
    "ExecutorOutput",
    "ExecutorState",
    "RunState",
    "SharedFields",
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
    evidence: Annotated[dict[str, dict[str, Any]], merge_evidence]
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
    position inside a fixed workflow or hybrid phase list.
    """

    task: dict[str, Any]
    contract: dict[str, Any] | None
    admitted: dict[str, Any] | None
    status: Annotated[str | None, sticky_status]
    plan: Annotated[dict[str, Any] | None, replace_plan_if_newer]
    output: str | None
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
