"""OraclePolicy: the deterministic offline policy that solves every task of the suite.

Like the demo's :class:`~execgraph.demo.policy.OfflinePolicyModel` it is a *policy*, not a
language model: it reads what the runtime shows it (:mod:`~execgraph.eval.oracle.transcript`)
— the tools bound for this turn, the tool outputs in its input, the verifier's
rejections — and walks its task's reference :class:`~execgraph.eval.tasks.common.Script`
(:mod:`~execgraph.eval.oracle.walk`) under whichever architecture asks:

* react: every ready step (its dependencies done) as one batch of calls, then ``finish``;
* workflow: the ready steps whose tools the stage offers; a plain reply when none is;
* plan_execute: ``submit_plan`` with every step it can already spell out (a DAG), then
  ``revise_plan`` while steps whose arguments needed an observation remain, then
  ``finish``; a replan with nothing left re-checks the first step;
* hybrid: the ready steps the phase offers (reads, writes, irreversible), then the
  phase's ``finish``.

A step it can never finish makes it ``abort``. ``fault`` makes it commit one of the
suite's policy-side faults (:mod:`~execgraph.eval.oracle.policy_faults`).

It remembers what it was shown (each step's latest observation, every rejection), as a
model keeps notes: a context window that no longer shows an old observation does not make
it redo that step, so its decisions are the same under the projected context and the
whole transcript, and what ``context="full"`` changes is only what the input costs.

It keeps a count of its own calls (fresh per run: :func:`execgraph.eval.suite.policy_model`
makes one per run). The runtime replays a logged reply rather than asking again, so the
count is the number of replies actually given, and a run is a deterministic function of
(task, fault) alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import ConfigDict, PrivateAttr

from execgraph.eval.oracle.policy_faults import (
    WRONG_ANSWER,
    first_action_again,
    with_refused_call,
)
from execgraph.eval.oracle.reply import CONTROLS, Reply, control, to_message
from execgraph.eval.oracle.transcript import observe
from execgraph.eval.oracle.walk import Walk
from execgraph.eval.tasks.common import Script, Seen, Step
from execgraph.testing.binding import ToolBindingChatModel, offered_names

__all__ = ["POLICY_MODEL_NAME", "POLICY_PRICES", "OraclePolicy"]

POLICY_MODEL_NAME = "execgraph-eval-policy"
POLICY_PRICES = {POLICY_MODEL_NAME: {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}
"""What the suite's policies cost, so cost per success is not 0 (``build_graph(prices=...)``)."""


class OraclePolicy(ToolBindingChatModel):
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
    _memory: Seen = PrivateAttr(default_factory=Seen)

    @property
    def injected(self) -> list[str]:
        """The errors and faults its replies carried so far, in order (for tests and
        reports; each reply also says so in ``response_metadata``)."""
        return list(self._log)

    @property
    def _llm_type(self) -> str:
        return "execgraph-eval-oracle"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        offered = offered_names(kwargs)
        seen = self._remember(observe(messages))
        self._rejected = self._rejected or bool(seen.rejections)
        reply = self.choose(seen, offered)
        self._log += [str(v) for k, v in reply.meta.items() if k.startswith("injected_")]
        self._calls += 1
        message = to_message(reply, messages, self.model_name, self._calls)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _remember(self, shown: Seen) -> Seen:
        """What it knows now: what it was shown before, updated by what it is shown now."""
        memory = self._memory
        memory.goal = memory.goal or shown.goal
        memory.status.update(shown.status)
        for step, status in shown.status.items():
            if status == "OK":
                memory.data[step] = shown.data.get(step)
        memory.rejections += [r for r in shown.rejections if r not in memory.rejections]
        return Seen(
            goal=memory.goal,
            data=dict(memory.data),
            status=dict(memory.status),
            attempts=dict(memory.attempts),
            rejections=list(memory.rejections),
        )

    def call_id(self, step_id: str) -> str:
        """A call id that names its step and is unique in the run."""
        return f"{step_id}~{self._calls}.{sum(self._issued.values())}"

    def _call(self, step: Step, seen: Seen) -> tuple[str, dict[str, Any], str]:
        self._issued[step.id] = self._issued.get(step.id, 0) + 1
        return step.tool, step.arguments(seen), self.call_id(step.id)

    def _control(self, name: str, arg: str, text: str) -> Reply:
        return control(name, arg, text, self._calls)

    # ----------------------------------------------------------------- the walk

    @property
    def plan(self) -> Script:
        """The task's script."""
        assert isinstance(self.script, Script)
        return self.script

    @property
    def walk(self) -> Walk:
        """Where this run stands in the script (it sees the steps issued so far)."""
        return Walk(self.plan, self._issued)

    def done(self, step: Step, seen: Seen) -> bool:
        """The step's latest observation succeeded."""
        return self.walk.done(step, seen)

    def dead(self, step: Step, seen: Seen) -> bool:
        """The step can never finish (see :meth:`Walk.dead`)."""
        return self.walk.dead(step, seen)

    def ready(self, seen: Seen, tools: Sequence[str]) -> list[Step]:
        """Steps not done, not dead, whose needs are done and whose tool is offered."""
        return self.walk.ready(seen, tools)

    def left(self, seen: Seen) -> list[Step]:
        """Steps still to do that can still be done."""
        return self.walk.left(seen)

    def answer(self, seen: Seen) -> str:
        """The final output from what was observed (a partial one if data is missing)."""
        if self.fault == "verification_fails" and not self._rejected:
            return WRONG_ANSWER
        try:
            return self.plan.answer(seen)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            return "The task could not be completed from what was observed."

    # ----------------------------------------------------------------- the decisions

    def choose(self, seen: Seen, offered: Sequence[str]) -> Reply:
        """The oracle's decision for this turn (faults applied)."""
        if self.fault == "illegal_output" and self._calls == 0:
            return Reply(malformed=True, meta={"injected_fault": "illegal_output"})
        if self.fault == "no_progress" and self._repeat:
            return first_action_again(self._repeat, offered, self._calls)
        reply = self.decide(seen, offered)
        if self.fault == "no_progress" and reply.calls and reply.calls[0][0] == "submit_plan":
            step = reply.calls[0][1]["steps"][0]
            self._repeat = [(step["tool"], step["arguments"])]
            return first_action_again(self._repeat, offered, self._calls)
        if (
            reply.calls
            and not self._injected
            and self.fault in ("unknown_tool", "schema_violation")
        ):
            self._injected = True
            reply = with_refused_call(reply, str(self.fault), self._calls)
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
        walk = self.walk
        if "revise_plan" in offered and left:
            done = sum(1 for s in self.plan.steps if walk.done(s, seen))
            why = f"the next steps need what was observed ({done} of {len(self.plan.steps)} done)"
            return self._control("revise_plan", "reason", why)
        acting = [n for n in offered if n not in CONTROLS]
        if self._rejected and left and not acting and "abort" in offered:
            # Rejected, work left, and no tool to do it with: saying it again is no answer.
            return self._control("abort", "reason", "the work left needs tools not offered")
        if walk.blocked(seen) and "abort" in offered:
            return self._control("abort", "reason", walk.why_blocked(seen))
        if "finish" in offered:
            return self._control("finish", "output", self.answer(seen))
        if "abort" in offered:
            return self._control("abort", "reason", "no offered tool fits the next step")
        return Reply(text="Nothing to do at this step.")

    def _submit(self, seen: Seen) -> Reply:
        """``submit_plan`` with every step whose arguments can be spelled out now."""
        walk = self.walk
        chosen: list[Step] = []
        ids: set[str] = set()
        for step in self.plan.steps:
            if walk.done(step, seen) or walk.dead(step, seen):
                continue
            needs = walk.needs(step)
            known = all(walk.done(d, seen) for d in needs)
            if all(walk.done(d, seen) or d.id in ids for d in needs) and (
                known or not callable(step.args)
            ):
                chosen.append(step)
                ids.add(step.id)
        if not chosen and walk.blocked(seen):
            return self._control("abort", "reason", walk.why_blocked(seen))
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
