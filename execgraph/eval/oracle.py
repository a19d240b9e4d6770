"""OraclePolicy: the deterministic offline policy that solves every task of the suite.

Like the demo's :class:`~execgraph.demo.policy.OfflinePolicyModel` it is a *policy*, not a
language model: it reads what the runtime shows it — the tools bound for this turn, the
tool outputs in its input, the verifier's rejections — and walks its task's reference
:class:`~execgraph.eval.tasks.common.Script` under whichever architecture asks:

* react: every ready step (its dependencies done) as one batch of calls, then ``finish``;
* workflow: the ready steps whose tools the stage offers; a plain reply when none is;
* plan_execute: ``submit_plan`` with every step it can already spell out (a DAG), then
  ``revise_plan`` while steps whose arguments needed an observation remain, then
  ``finish``; a replan with nothing left re-checks the first step;
* hybrid: the ready steps the phase offers (reads, writes, irreversible), then the
  phase's ``finish``.

A failed step is retried (at most three attempts) unless the failure is final — denied,
not found, refused, or a write whose outcome is unknown (retrying a write blindly could
do it twice): a step it can then never finish makes it ``abort``. Call ids carry the step
id (``<step>~<n>``), which is how an observation is traced back to its step.

``fault`` makes it commit one of the suite's policy-side faults (``illegal_output``,
``unknown_tool``, ``schema_violation``, ``no_progress``, ``verification_fails``; see
:mod:`execgraph.eval.faults`), once, at a fixed decision.

It keeps a count of its own calls (fresh per run: :func:`execgraph.eval.suite.policy_model`
makes one per run). The runtime replays a logged reply rather than asking again, so the
count is the number of replies actually given, and a run is a deterministic function of
(task, fault) alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, PrivateAttr

from execgraph.eval.tasks.common import Script, Seen, Step
from execgraph.nodes.models.scripted import estimate_tokens

__all__ = ["POLICY_MODEL_NAME", "POLICY_PRICES", "OraclePolicy", "Reply", "observe"]

POLICY_MODEL_NAME = "execgraph-eval-policy"
POLICY_PRICES = {POLICY_MODEL_NAME: {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}
"""What the suite's policies cost, so cost per success is not 0 (``build_graph(prices=...)``)."""

CONTROLS = ("finish", "ask_user", "abort", "revise_plan", "submit_plan")
MAX_ATTEMPTS = 3
FINAL = frozenset({"DENIED", "UNKNOWN", "CANCELLED"})
"""Observation statuses a retry cannot fix (or must not try to: an unknown write)."""
WRONG_ANSWER = "The task is done."
"""The unfounded result ``verification_fails`` states first (no check can accept it)."""

_BLOCK = re.compile(r'^<tool_output tool="[^"]*" untrusted="true">\n(.*)\n</tool_output>$', re.S)
_STEP = re.compile(
    r'step ([A-Za-z0-9_.-]+): <tool_output tool="[^"]*" untrusted="true">\n(.*?)\n</tool_output>',
    re.S,
)
_STATUS = re.compile(r'"status": "([A-Z_]+)"')
_GOAL = re.compile(r"^Task: (.*?)(?:\n\nCurrent step:|$)", re.S)
_REJECTED = ("finish rejected", "Replanning because: evidence gap")


@dataclass
class Reply:
    """One decision: tool calls (name, args, id), a plain text, or a malformed reply."""

    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    text: str = ""
    malformed: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else str(message.content)


def _body(block: str) -> tuple[str, Any]:
    """(status, data) of one observation body (a truncated one keeps its status only)."""
    try:
        parsed = json.loads(block)
    except json.JSONDecodeError:
        status = _STATUS.search(block)
        return (status.group(1) if status else "UNKNOWN"), None
    return str(parsed.get("status") or ""), parsed.get("data")


def _record(seen: Seen, step_id: str, block: str) -> None:
    status, data = _body(block)
    seen.status[step_id] = status
    if status == "OK":
        seen.data[step_id] = data


def observe(messages: Sequence[BaseMessage]) -> Seen:
    """What the input shows: the goal, each step's latest observation, any rejection."""
    seen = Seen()
    calls: dict[str, str] = {}  # tool call id -> step id
    for message in messages:
        text = _text(message)
        if not seen.goal and (goal := _GOAL.match(text)):
            seen.goal = goal.group(1)
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                if call.get("id") and "~" in str(call["id"]):
                    calls[str(call["id"])] = str(call["id"]).split("~", 1)[0]
        elif isinstance(message, ToolMessage) and message.tool_call_id in calls:
            block = _BLOCK.match(text.strip())
            if block:
                _record(seen, calls[message.tool_call_id], block.group(1))
        for step_id, block in _STEP.findall(text):
            _record(seen, step_id, block)
        if any(marker in text for marker in _REJECTED):
            seen.rejections.append(text[:200])
    return seen


class OraclePolicy(BaseChatModel):
    """Deterministic policy walking one task's reference script (no network, no key)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: Any
    """The task's :class:`~execgraph.eval.tasks.common.Script`."""
    fault: str | None = None
    model_name: str = POLICY_MODEL_NAME

    _calls: int = PrivateAttr(default=0)
    _issued: dict[str, int] = PrivateAttr(default_factory=dict)
    _rejected: bool = PrivateAttr(default=False)
    _injected: bool = PrivateAttr(default=False)
    _repeat: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=list)
    _log: list[str] = PrivateAttr(default_factory=list)

    @property
    def injected(self) -> list[str]:
        """The errors and faults its replies carried so far, in order (for tests and
        reports; each reply also says so in ``response_metadata``)."""
        return list(self._log)

    @property
    def _llm_type(self) -> str:
        return "execgraph-eval-oracle"

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Remember which tools this turn offers; the policy proposes only offered ones."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        offered = [t["function"]["name"] for t in kwargs.get("tools", []) if "function" in t]
        seen = observe(messages)
        self._rejected = self._rejected or bool(seen.rejections)
        reply = self.choose(seen, offered)
        self._log += [str(v) for k, v in reply.meta.items() if k.startswith("injected_")]
        self._calls += 1
        message = self._message(reply, messages)
        return ChatResult(generations=[ChatGeneration(message=message)])

    # ----------------------------------------------------------------- the reply

    def _message(self, reply: Reply, messages: Sequence[BaseMessage]) -> AIMessage:
        text_in = sum(estimate_tokens(_text(m)) for m in messages)
        payload = [[n, a] for n, a, _ in reply.calls]
        text_out = estimate_tokens(json.dumps(payload) + reply.text)
        usage = {
            "input_tokens": text_in,
            "output_tokens": text_out,
            "total_tokens": text_in + text_out,
        }
        meta = {"model_name": self.model_name, **reply.meta}
        if reply.malformed:
            name = reply.calls[0][0] if reply.calls else "finish"
            bad = {
                "name": name,
                "args": '{"unterminated": ',
                "id": f"bad~{self._calls}",
                "error": "not JSON",
                "type": "invalid_tool_call",
            }
            return AIMessage(
                content="",
                invalid_tool_calls=[bad],
                usage_metadata=usage,
                response_metadata=meta,
            )
        calls = [{"name": n, "args": a, "id": i, "type": "tool_call"} for n, a, i in reply.calls]
        return AIMessage(
            content=reply.text,
            tool_calls=calls,
            usage_metadata=usage,
            response_metadata=meta,
        )

    def call_id(self, step_id: str) -> str:
        """A call id that names its step and is unique in the run."""
        return f"{step_id}~{self._calls}.{sum(self._issued.values())}"

    def _call(self, step: Step, seen: Seen) -> tuple[str, dict[str, Any], str]:
        self._issued[step.id] = self._issued.get(step.id, 0) + 1
        return step.tool, step.arguments(seen), self.call_id(step.id)

    # ----------------------------------------------------------------- the walk

    @property
    def plan(self) -> Script:
        """The task's script."""
        assert isinstance(self.script, Script)
        return self.script

    def done(self, step: Step, seen: Seen) -> bool:
        """The step's latest observation succeeded."""
        return seen.status.get(step.id) == "OK"

    def dead(self, step: Step, seen: Seen) -> bool:
        """The step failed for good, a step it needs did, or what those steps observed
        cannot make its arguments (a wrong fact believed earlier)."""
        status = seen.status.get(step.id)
        needs_met = all(self.done(d, seen) for d in self._needs(step))
        if status is None and needs_met and self._arguments(step, seen) is None:
            return True
        if status in FINAL or (
            status not in (None, "OK") and self._issued.get(step.id, 0) >= MAX_ATTEMPTS
        ):
            return True
        return any(self.dead(d, seen) for d in self._needs(step))

    @staticmethod
    def _arguments(step: Step, seen: Seen) -> dict[str, Any] | None:
        try:
            return step.arguments(seen)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, StopIteration):
            return None

    def _needs(self, step: Step) -> list[Step]:
        return [s for s in (self.plan.step(d) for d in step.after) if s is not None]

    def ready(self, seen: Seen, tools: Sequence[str]) -> list[Step]:
        """Steps not done, not dead, whose needs are done and whose tool is offered."""
        return [
            s
            for s in self.plan.steps
            if s.tool in tools
            and not self.done(s, seen)
            and not self.dead(s, seen)
            and all(self.done(d, seen) for d in self._needs(s))
        ]

    def left(self, seen: Seen) -> list[Step]:
        """Steps still to do that can still be done."""
        return [s for s in self.plan.steps if not self.done(s, seen) and not self.dead(s, seen)]

    def answer(self, seen: Seen) -> str:
        """The final output from what was observed (a partial one if data is missing)."""
        if self.fault == "verification_fails" and not self._rejected:
            return WRONG_ANSWER
        try:
            return self.plan.answer(seen)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            return "The task could not be completed from what was observed."

    def choose(self, seen: Seen, offered: Sequence[str]) -> Reply:
        """The oracle's decision for this turn (faults applied)."""
        if self.fault == "illegal_output" and self._calls == 0:
            return Reply(malformed=True, meta={"injected_fault": "illegal_output"})
        if self.fault == "no_progress" and self._repeat:
            return self._again(offered)
        reply = self.decide(seen, offered)
        if self.fault == "no_progress" and reply.calls and reply.calls[0][0] == "submit_plan":
            step = reply.calls[0][1]["steps"][0]
            self._repeat = [(step["tool"], step["arguments"])]
            return self._again(offered)
        if (
            reply.calls
            and not self._injected
            and self.fault in ("unknown_tool", "schema_violation")
        ):
            self._injected = True
            reply = self._inject(reply, offered)
        if any(n == "finish" and a.get("output") == WRONG_ANSWER for n, a, _ in reply.calls):
            reply.meta.setdefault("injected_fault", "verification_fails")
        if self.fault == "no_progress" and not self._repeat:
            acts = [(n, a) for n, a, _ in reply.calls if n not in CONTROLS]
            self._repeat = acts
        return reply

    def decide(self, seen: Seen, offered: Sequence[str]) -> Reply:
        """The correct next decision for what ``seen`` shows."""
        tools = [n for n in offered if n not in CONTROLS]
        if "submit_plan" in offered:
            return self._submit(seen)
        ready = self.ready(seen, tools)
        if ready:
            return Reply(calls=[self._call(s, seen) for s in ready])
        return self.conclude(seen, offered)

    def conclude(self, seen: Seen, offered: Sequence[str]) -> Reply:
        """Nothing to call now: ask for a new plan, give up, finish, or (a workflow stage
        with nothing for it) say so in plain text."""
        left = self.left(seen)
        blocked = any(self.dead(s, seen) for s in self.plan.steps)
        if "revise_plan" in offered and left:
            return self._control("revise_plan", "reason", "the next steps need what was observed")
        acting = [n for n in offered if n not in CONTROLS]
        if self._rejected and left and not acting and "abort" in offered:
            # Rejected, work left, and no tool to do it with: saying it again is no answer.
            return self._control("abort", "reason", "the work left needs tools not offered")
        if blocked and "abort" in offered:
            return self._control("abort", "reason", self._why_blocked(seen))
        if "finish" in offered:
            return self._control("finish", "output", self.answer(seen))
        if "abort" in offered:
            return self._control("abort", "reason", "no offered tool fits the next step")
        return Reply(text="Nothing to do at this step.")

    def _why_blocked(self, seen: Seen) -> str:
        dead = [s for s in self.plan.steps if self.dead(s, seen) and s.id in seen.status]
        named = ", ".join(f"{s.tool} ({seen.status[s.id]})" for s in dead) or "a step"
        return f"the task cannot be completed: {named} failed and may not be retried"

    def _control(self, name: str, arg: str, text: str) -> Reply:
        return Reply(calls=[(name, {arg: text}, f"{name}~{self._calls}")])

    def _submit(self, seen: Seen) -> Reply:
        """``submit_plan`` with every step whose arguments can be spelled out now."""
        chosen: list[Step] = []
        ids: set[str] = set()
        for step in self.plan.steps:
            if self.done(step, seen) or self.dead(step, seen):
                continue
            needs = self._needs(step)
            known = all(self.done(d, seen) for d in needs)
            if all(self.done(d, seen) or d.id in ids for d in needs) and (
                known or not callable(step.args)
            ):
                chosen.append(step)
                ids.add(step.id)
        if not chosen and any(self.dead(s, seen) for s in self.plan.steps):
            return self._control("abort", "reason", self._why_blocked(seen))
        plan = [
            {
                "id": s.id,
                "tool": s.tool,
                "arguments": s.arguments(seen),
                "depends_on": [d for d in s.after if d in ids],
            }
            for s in chosen
        ]
        for s in chosen:
            self._issued[s.id] = self._issued.get(s.id, 0) + 1
        if not plan:  # everything done, the result was rejected: look again, then answer
            first = self.plan.steps[0]
            again = {"id": f"recheck{self._calls}", "tool": first.tool}
            plan = [{**again, "arguments": first.arguments(seen), "depends_on": []}]
        return Reply(calls=[("submit_plan", {"steps": plan}, f"submit_plan~{self._calls}")])

    # ----------------------------------------------------------------- faults

    def _inject(self, reply: Reply, offered: Sequence[str]) -> Reply:
        """Add one refused call to a turn that acts: an unknown tool, or bad arguments."""
        fault = str(self.fault)
        meta = {"injected_fault": fault}
        name, args = reply.calls[0][0], reply.calls[0][1]
        if name == "submit_plan":
            first = args["steps"][0]
            bad = {"id": "injected", "tool": "teleport", "arguments": {"to": "mars"}}
            if fault == "schema_violation":
                bad = {"id": "injected", "tool": first["tool"], "arguments": {"bogus": 7}}
            steps = [*args["steps"], {**bad, "depends_on": []}]
            return Reply(calls=[(name, {"steps": steps}, reply.calls[0][2])], meta=meta)
        bad_call = ("teleport", {"to": "mars"}) if fault == "unknown_tool" else (name, {"bogus": 7})
        extra = (*bad_call, f"injected~{self._calls}")
        return Reply(calls=[*reply.calls, extra], text=reply.text, meta=meta)

    def _again(self, offered: Sequence[str]) -> Reply:
        """``no_progress``: the first action again, whatever was observed."""
        meta = {"injected_fault": "no_progress"}
        if "submit_plan" in offered:
            tool, args = self._repeat[0]
            ids = [f"again{self._calls}.{n}" for n in range(4)]
            steps: list[dict[str, Any]] = [
                {"id": i, "tool": tool, "arguments": args, "depends_on": ids[:n][-1:]}
                for n, i in enumerate(ids)
            ]
            return Reply(
                calls=[("submit_plan", {"steps": steps}, f"again~{self._calls}")], meta=meta
            )
        if "revise_plan" in offered:
            reply = self._control("revise_plan", "reason", "look again")
            return Reply(calls=reply.calls, meta=meta)
        calls = [(n, a, f"again~{self._calls}.{i}") for i, (n, a) in enumerate(self._repeat)]
        if any(n in offered for n, _ in self._repeat) or "finish" not in offered:
            return Reply(calls=calls, meta=meta)
        reply = self._control("finish", "output", WRONG_ANSWER)
        return Reply(calls=reply.calls, meta=meta)
