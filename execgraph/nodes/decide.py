"""Decide: one model call -> a list of typed Decisions (candidates, never acts).

Malformed output (tool-call arguments that are not JSON, an empty reply, ``finish`` mixed
with actions) gets a bounded number of repair calls, each counted against the model-call
budget; after that the run fails with a typed ModelOutputError instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig

from execgraph.nodes.admission import run_id_of
from execgraph.nodes.answer_format import AnswerFormat
from execgraph.nodes.asked_approval import (
    REQUEST_APPROVAL,
    approval_decision,
    request_approval_schema,
)
from execgraph.nodes.budget import remaining
from execgraph.nodes.context.projection import project
from execgraph.nodes.conversation import ai_message, closing, unanswered
from execgraph.nodes.deps import RunDeps
from execgraph.nodes.executor import argument_bytes, oversized
from execgraph.nodes.model.call import (
    ModelTurn,
    call_model,
    compact_message,
    recorded_replies,
    unstorable,
)
from execgraph.nodes.model.call_ids import distinct_call_ids
from execgraph.nodes.model.redaction import reply_redaction
from execgraph.nodes.model.streamed import StreamedReplies, streaming_model, wants_tokens
from execgraph.state.contracts import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    BudgetKind,
    Decision,
    DecisionKind,
    RunStatus,
    TaskContract,
)
from execgraph.state.events import Event, EventType, make_event
from execgraph.state.schema import RunState
from execgraph.state.surrogates import has_surrogate
from execgraph.state.updates import merge

__all__ = [
    "CONTROL_SCHEMAS",
    "decide",
    "model_failure",
    "parse_reply",
    "unusable_reply",
    "wait_for_schema",
]

_CONTROL_KIND = {
    "finish": DecisionKind.FINISH,
    "ask_user": DecisionKind.ASK_USER,
    "abort": DecisionKind.ABORT,
    "revise_plan": DecisionKind.REVISE_PLAN,
    "wait_for": DecisionKind.WAIT,
}
_CONTROL_ARG = {
    "finish": "output",
    "ask_user": "question",
    "abort": "reason",
    "revise_plan": "reason",
    "wait_for": "event",
}


_ACTIONS = (DecisionKind.TOOL_CALL, DecisionKind.REQUEST_APPROVAL)


def _control_schema(name: str, arg: str, doc: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": doc,
            "parameters": {
                "type": "object",
                "properties": {arg: {"type": "string"}},
                "required": [arg],
            },
        },
    }


CONTROL_SCHEMAS = {
    "finish": _control_schema("finish", "output", "Declare the goal met; give the final output."),
    "ask_user": _control_schema("ask_user", "question", "Ask the user a question and wait."),
    "abort": _control_schema("abort", "reason", "Give up: the goal cannot be reached."),
    "revise_plan": _control_schema("revise_plan", "reason", "Ask for a new plan, saying why."),
}


def wait_for_schema(events: Sequence[str]) -> dict[str, Any]:
    """The ``wait_for`` control tool: pause until one of ``events`` is delivered."""
    schema = _control_schema(
        "wait_for", "event", "Pause the run until the named event arrives (or its deadline)."
    )
    schema["function"]["parameters"]["properties"]["event"]["enum"] = list(events)
    return schema


def model_failure(
    result: ModelTurn[Any],
    left: float | None,
    run_id: str,
    turn_id: str,
    deps: RunDeps,
    state: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Stop the run after a turn whose output could not be used (or no call was allowed);
    the calls ``state``'s last reply left open are answered with how the run ended."""
    out_of_budget = left is not None and result.calls >= left
    status = RunStatus.BUDGET_EXHAUSTED if out_of_budget else RunStatus.FAILED
    reason = f"after {result.calls} model call(s): {result.problem}"
    finished = make_event(
        EventType.RUN_FINISHED,
        run_id,
        turn_id=turn_id,
        payload={"status": status.value, "reason": reason},
    )
    deps.executor.store.append_events([*result.events, finished])
    update: dict[str, Any] = {
        "status": status.value,
        "error": {"type": "ModelOutputError", "message": reason},
        "events": {"recent": [e.event_id for e in [*result.events, finished]]},
    }
    answers = closing(state or {}, deps.observation_chars, status, reason)
    return {**update, "messages": answers} if answers else update


def unusable_reply(ai: AIMessage, max_argument_bytes: int) -> str | None:
    """Why the calls of ``ai`` cannot become decisions as they are, if they cannot.

    An integration that skips LangChain's validation may hand over arguments that are
    not an object; text with a lone surrogate can be neither stored nor sent back; an
    argument of megabytes would be copied into every checkpoint. Each is the model's to
    repair, like arguments that are not JSON.
    """
    calls = ai.tool_calls
    if ai.invalid_tool_calls:
        names = ", ".join(str(c.get("name")) for c in ai.invalid_tool_calls)
        return f"the arguments of your call(s) to {names} were not valid JSON objects"
    if any(has_surrogate(c.get("name")) or has_surrogate(c.get("id")) for c in calls):
        return "a tool name or call id held a lone surrogate (text that is not Unicode)"
    shapeless = [str(c.get("name")) for c in calls if not isinstance(c.get("args", {}), dict)]
    if shapeless:
        return f"the arguments of your call(s) to {', '.join(shapeless)} were not JSON objects"
    if any(has_surrogate(c.get("args")) for c in calls):
        return "the arguments held a lone surrogate (text that is not Unicode)"
    if any(unstorable(c.get("args")) for c in calls):
        return "argument numbers must fit in 64 bits"
    for c in calls:
        refusal = oversized(argument_bytes(c.get("args") or {}), max_argument_bytes)
        if refusal is not None:
            return f"your call to {c.get('name')!r}: {refusal.message}; pass less at once"
    return None


def parse_reply(
    ai: AIMessage,
    turn_id: str,
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES,
    answer: AnswerFormat | None = None,
) -> tuple[list[Decision], str | None]:
    """Decisions in ``ai``, or a problem the model must repair.

    Calls sharing an id are told apart (:func:`execgraph.nodes.model.call_ids.distinct_call_ids`),
    so each is run and answered once. With an ``answer`` format, a finish carries the
    answer's fields (its content: the answer as JSON text) and a plain-text answer is a
    problem (:mod:`execgraph.nodes.answer_format`).
    """
    problem = unusable_reply(ai, max_argument_bytes)
    if problem is not None:
        return [], problem
    decisions: list[Decision] = []
    for index, call in enumerate(distinct_call_ids(ai, turn_id).tool_calls):
        name, args = call["name"], dict(call.get("args") or {})
        tool_call_id = str(call["id"])
        decision_id = f"{turn_id}.d{index}"
        if name == REQUEST_APPROVAL:  # an action, asked about first: a call like any other
            asked = approval_decision(args, decision_id, f"{turn_id}.c{index}", tool_call_id)
            if isinstance(asked, str):
                return [], asked
            decisions.append(asked)
        elif name in _CONTROL_KIND:
            content = str(args.get(_CONTROL_ARG[name], ""))
            if name == "finish" and answer is not None:
                content, wrong = answer.parse(args)
                if wrong is not None:
                    return [], wrong
            decisions.append(
                Decision(
                    decision_id=decision_id,
                    kind=_CONTROL_KIND[name],
                    content=content,
                    tool_call_id=tool_call_id,
                )
            )
        else:
            decisions.append(
                Decision(
                    decision_id=decision_id,
                    kind=DecisionKind.TOOL_CALL,
                    tool_name=name,
                    arguments=args,
                    call_id=f"{turn_id}.c{index}",
                    tool_call_id=tool_call_id,
                )
            )
    controls = [d for d in decisions if d.kind not in _ACTIONS]
    if controls and len(decisions) > 1:
        return [], "call finish, ask_user, abort or revise_plan alone, not with other calls"
    if not decisions:
        text = ai.content if isinstance(ai.content, str) else ""
        if not text.strip():
            return [], "your reply was empty; call a tool or finish"
        if answer is not None:
            return [], "give your final answer by calling finish with its fields, not as text"
        decisions.append(
            Decision(decision_id=f"{turn_id}.d0", kind=DecisionKind.ANSWER, content=text)
        )
    return decisions, None


def _control(name: str, answer: AnswerFormat | None) -> dict[str, Any]:
    """A control tool's schema; ``finish`` takes the fields of ``answer``, if given."""
    if name == "finish" and answer is not None:
        return answer.finish_tool()
    return CONTROL_SCHEMAS[name]


def _offered(
    contract: TaskContract, deps: RunDeps, tools: Sequence[str] | None
) -> list[dict[str, Any]]:
    """The schemas of the tools this turn offers: none with tools off (``offered`` is then
    empty, so dispatch refuses any tool the model names anyway)."""
    if not deps.tools_enabled:
        return []
    specs = [
        s
        for s in deps.executor.registry.latest()
        if s.name in contract.allowed_actions and (tools is None or s.name in tools)
    ]
    return [s.json_schema() for s in specs]


def _bound(
    deps: RunDeps, schemas: list[dict[str, Any]], config: RunnableConfig
) -> Runnable[Any, Any]:
    """The model with this turn's tools; streaming its reply when the caller streams tokens
    (``stream_mode="messages"``), its tool calls still parsed strictly.

    A turn offered nothing (a workflow stage with tools off) calls the model unbound: some
    providers refuse an empty tool list.
    """
    streams = wants_tokens(config)
    model = streaming_model(deps.model) if streams else deps.model
    bound: Runnable[Any, Any] = model.bind_tools(schemas) if schemas else model
    return StreamedReplies(bound) if streams else bound


def decide(
    state: RunState,
    config: RunnableConfig,
    *,
    deps: RunDeps,
    tools: Sequence[str] | None = None,
    controls: Sequence[str] = ("finish", "ask_user", "abort", REQUEST_APPROVAL),
    instruction: str | Callable[[Mapping[str, Any], RunDeps], str] = "",
    phase: str | None = None,
    deferred: list[Event] | None = None,
    final: bool = True,
) -> dict[str, Any]:
    """Call the model once (plus bounded repairs) and record its decisions.

    Args:
        tools: Restrict the offered tools (a workflow stage, a hybrid phase).
        controls: Control tools offered (finish, ask_user, abort, revise_plan,
            request_approval — offered only with tools to ask about).
        instruction: The current step (text, or a function of state and deps).
        phase: The hybrid phase this call belongs to (recorded in state).
        deferred: Where to put the turn's events instead of logging them here: the
            caller logs them with its next store write, before any call it runs.
        final: Whether a ``finish`` here is the run's answer, which takes the fields of
            the graph's answer format if it has one (a hybrid phase's finish that opens
            the next phase is not).
    """
    contract = TaskContract.model_validate(state["contract"])
    run_id = run_id_of(config)
    turn = int(state.get("turn", 0)) + 1
    turn_id = f"t{turn}"
    offered = _offered(contract, deps, tools)
    answer = deps.answer_format if final else None
    schemas = offered + [_control(c, answer) for c in controls if c in CONTROL_SCHEMAS]
    if offered and REQUEST_APPROVAL in controls:  # an offered tool, asked about first
        schemas.append(request_approval_schema([o["function"]["name"] for o in offered]))
    if contract.waits.events and "ask_user" in controls:  # the events the task names
        schemas.append(wait_for_schema(contract.waits.events))
    left = remaining(contract, state, BudgetKind.MODEL_CALLS)
    result = call_model(
        _bound(deps, schemas, config),
        project(
            state,
            contract,
            deps,
            instruction if isinstance(instruction, str) else instruction(state, deps),
        ),
        lambda ai: parse_reply(ai, turn_id, contract.max_argument_bytes, answer),
        max_repairs=deps.max_repairs,
        left=left,
        run_id=run_id,
        turn_id=turn_id,
        config=config,
        recorded=recorded_replies(deps.executor.store, run_id, turn_id),
        redact=reply_redaction(deps.executor.registry, run_id, turn_id),
    )
    events = result.events
    update: dict[str, Any] = {
        "turn": turn,
        "budget": result.charge(f"{turn_id}:model"),
        "decisions": [],
        # What this turn may act with: dispatch refuses any other tool the model names.
        "offered": [o["function"]["name"] for o in offered],
        **({"phase": phase} if phase else {}),
    }
    if result.problem is not None or result.parsed is None:
        return merge([update, model_failure(result, left, run_id, turn_id, deps, state)])
    decisions, ai = result.parsed, distinct_call_ids(result.ai, turn_id)
    for index, d in enumerate(decisions):
        events.append(
            make_event(
                EventType.DECISION_RECORDED,
                run_id,
                turn_id=turn_id,
                decision_id=d.decision_id,
                seq=index or None,  # one id per decision of a turn (the first keeps its old id)
                payload=d.model_dump(mode="json"),
            )
        )
    # No fsync of its own: the log survives the process at once, and reaches the disk
    # with the next durable store write (logs flush in order) -- a write's reservation,
    # before its tool starts. A decision a power loss takes is one no effect came from.
    if deferred is not None:
        deferred.extend(events)
    else:
        deps.executor.store.append_events(events, durable=False)
    record = {
        "id": turn_id,
        "turn": turn,
        "ai": compact_message(ai),
        "calls": {d.tool_call_id: d.call_id for d in decisions if d.call_id},
    }
    waiting = any(d.kind in (DecisionKind.ASK_USER, DecisionKind.WAIT) for d in decisions)
    # The conversation: what answered the last reply's open calls, then this reply.
    limit = deps.observation_chars
    conversation = [*unanswered(state, limit), ai_message(ai, run_id, turn_id)]
    return {
        **update,
        "decisions": [d.model_dump(mode="json") for d in decisions],
        "history": [record],
        "messages": conversation,
        "events": {"recent": [e.event_id for e in events]},
        **({"status": RunStatus.WAITING.value} if waiting else {}),
    }
