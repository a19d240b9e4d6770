"""One ReAct turn as one superstep: observe the last turn, decide, and run the calls.

A LangGraph superstep ends in a checkpoint, so every node between two model calls costs a
durable write. Observing the last turn's results (loop-guard memory), the stop conditions,
the model call, queueing its calls against the budget and running the calls no rule could
send to a person all happen in this node: a ReAct step is one superstep and one
checkpoint. A call that may pause for approval goes to the executor node instead (its
own superstep), so a person's answer resumes only that call.

Running effects in the node that decided them is safe because a re-run never decides
anew: the node re-runs from its start after a crash, its model reply is replayed from the
event log (``call_model``'s ``recorded``), so the same calls reach the executor stages,
whose durable records return a committed result or reconcile an interrupted one. The
reply is logged in the transaction that reserves the calls' records, so it is on disk
before any effect starts (a write's record is flushed before its tool runs), and it
costs no store transaction of its own. The verifier stays its own node, entered only
when there is something to judge (a finish, an abort) or a stop condition holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, Send

from execgraph.nodes.admission import run_id_of
from execgraph.nodes.batching import executor_sends, split_pausable
from execgraph.nodes.conversation import NOT_EXECUTED, answer
from execgraph.nodes.decide import decide
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.direct_answer import direct_answer
from execgraph.nodes.dispatch import queue_calls, tool_calls
from execgraph.nodes.executor import calls_update, run_calls
from execgraph.nodes.turn_progress import observe
from execgraph.nodes.verify import stop_condition
from execgraph.state.contracts import DecisionKind, RunStatus, TaskContract
from execgraph.state.events import Event
from execgraph.state.schema import RunState
from execgraph.state.updates import fold, merge

__all__ = ["TURN_DESTINATIONS", "react_turn", "route_turn"]

#: Where a turn may send the run next (drawn as its edges; see :func:`react_turn`).
TURN_DESTINATIONS = ("decide", "executor", "ask_user", "verify")

_PLAIN = ("status", "offered", "decisions", "pending", "phase")


def _changed(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` without plain fields that would write the value they already hold.

    Every key a node returns is a write row and a new channel version in the checkpoint,
    even when nothing changed; most turns leave the status and the offered tools alone.
    """
    return {k: v for k, v in update.items() if not (k in _PLAIN and k in state and state[k] == v)}


def react_turn(state: RunState, config: RunnableConfig, *, deps: RunDeps) -> Command[Any]:
    """Observe the last turn; unless the run must stop, call the model and run its calls.

    A last turn whose calls were all of tools whose output is the answer
    (``return_direct``) and all succeeded ends the run with that output, without a model
    call (:mod:`execgraph.nodes.direct_answer`).

    Calls no rule could pause run here, side by side; calls that may pause are queued for
    the executor, which asks the person. Each step reads the state as it will be after
    the steps before it (:func:`execgraph.state.updates.fold`), and the node returns their
    updates as one (:func:`execgraph.state.updates.merge`). It also says where the run
    goes next (:func:`route_turn` on the state as it will read): a LangGraph branch after
    the node would read a fresh copy of every channel of the state to decide the same thing.
    """
    direct = direct_answer(state, deps)
    observed = observe(state)
    if direct is not None:  # the last turn's tools gave the answer: no model call
        return _next(state, merge([observed, {"decisions": [direct]}]), deps)
    view = fold(state, observed)
    contract = TaskContract.model_validate(state["contract"])
    if stop_condition(view, contract, deps) is not None:  # the verifier stops the run
        return _next(state, merge([observed, {"decisions": []}]), deps)
    log: list[Event] = []  # the reply and decisions: logged with the calls' reservation
    decided = decide(view, config, deps=deps, deferred=log)  # type: ignore[arg-type]
    update = merge([observed, decided])
    calls = tool_calls(decided)  # type: ignore[arg-type]
    here: list[dict[str, Any]] = []
    if calls and decided.get("status") not in _TERMINAL:
        turn_id = f"t{decided['turn']}"
        queued = queue_calls(
            fold(view, decided),  # type: ignore[arg-type]
            deps,
            calls,
            turn_id,
            f"{run_id_of(config)}:{turn_id}:dispatch",
            allowed=decided.get("offered"),
        )
        update = merge([update, queued])
        if update.get("status") not in _TERMINAL:
            here, _ = split_pausable(queued.get("pending") or [], deps.executor)
        else:  # the batch did not fit the budget: none of it runs, and each call says so
            unrun = [
                answer(str(d.tool_call_id), NOT_EXECUTED, d.tool_name or "")
                for d in calls
                if d.tool_call_id
            ]
            update = merge([update, {"messages": unrun}])
    if here:
        # ``pending`` keeps every queued call: the next turn's loop guard observes them all.
        update = merge([update, calls_update(run_calls(here, deps.executor, log), deps.executor)])
    else:
        deps.executor.store.append_events(log, durable=False)
    return _next(state, update, deps)


def _next(state: Mapping[str, Any], update: dict[str, Any], deps: RunDeps) -> Command[Any]:
    goto = route_turn(fold(state, update), deps=deps)
    return Command(update=_changed(state, update), goto=goto)


_TERMINAL = {s.value for s in RunStatus if s.terminal}


def route_turn(state: Mapping[str, Any], *, deps: RunDeps) -> list[Send] | str:
    """Calls that may pause go to the executor (the turn ran the others), or on to the
    next turn; a question goes to the user; else the verifier."""
    pending = state.get("pending") or []
    if pending and state.get("status") not in _TERMINAL:
        _, later = split_pausable(pending, deps.executor)  # the others ran in the turn
        return executor_sends(later, deps.executor) if later else "decide"
    kinds = {d["kind"] for d in state.get("decisions") or []}
    waits = {DecisionKind.ASK_USER.value, DecisionKind.WAIT.value}
    if kinds & waits and state.get("status") == RunStatus.WAITING.value:
        return "ask_user"
    return "verify"
