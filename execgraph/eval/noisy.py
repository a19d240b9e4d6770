"""NoisyPolicy: the oracle, making a model's typical decision errors at a set rate.

Per decision, with probability ``noise``, it replaces the oracle's decision with one
error chosen (uniformly, among those that fit the turn) from :data:`ERRORS`:

* ``unknown_tool`` — calls a tool no registry has (``lookup_everything``);
* ``disallowed_tool`` — calls a real tool this turn does not offer;
* ``malformed_arguments`` — arguments that are not JSON, or of the wrong types;
* ``invalid_arguments`` — well-formed but wrong: another path, id, URL or number, under
  the step's own call id, so the policy believes what comes back (a wrong id read is a
  wrong fact used);
* ``premature_finish`` — ``finish`` while steps are left (what a verifier gate catches);
* ``repeated_action`` — its previous action again: for two more turns (then it moves
  on), or for the rest of the run (it is stuck) — a coin the seeded generator tosses.
  The stuck loop is what a loop guard catches (no new action, no new observation) and
  what, without one, burns the budget;
* ``ignored_observation`` — acts as if the last error or rejection had not happened:
  goes on past a failed step, or states the rejected result again.

The randomness is its own ``random.Random`` seeded with ``"<seed>:<task id>"`` (never the
global generator, never ``hash()``), drawn once per decision, so the same (task, seed,
noise, fault, architecture, settings) gives the same trajectory. Each reply that carries
an error says which in ``response_metadata["injected_error"]``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pydantic import PrivateAttr

from execgraph.eval.oracle.policy import OraclePolicy
from execgraph.eval.oracle.reply import CONTROLS, Reply
from execgraph.eval.tasks.common import Seen
from execgraph.nodes.deps import CONTROL_TOOLS

__all__ = ["ERRORS", "NoisyPolicy"]

ERRORS: tuple[str, ...] = (
    "unknown_tool",
    "disallowed_tool",
    "malformed_arguments",
    "invalid_arguments",
    "premature_finish",
    "repeated_action",
    "ignored_observation",
)
"""The decision errors the noisy policy makes."""
STREAKS = (2, 10_000)
"""How many more turns a ``repeated_action`` repeats: a short slip (below the loop guard's
default threshold of 3, so it only wastes turns), or for good (stuck)."""
_DECOYS = ("write_file", "http_delete", "run_process", "publish_report")


def _wrong(value: Any) -> Any:
    """A plausible but wrong value of the same type."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return round(value * 1.1, 2)
    if isinstance(value, str):
        return value.rstrip("/") + "-old" if "." not in value[-6:] else value + ".bak"
    if isinstance(value, list) and value:
        return [*value[:-1], _wrong(value[-1])]
    return value


class NoisyPolicy(OraclePolicy):
    """The oracle with the seeded decision errors above, each at rate ``noise``."""

    seed: int = 0
    noise: float = 0.0
    task_id: str = ""

    _rng: random.Random | None = PrivateAttr(default=None)
    _last: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=list)
    _streak: int = PrivateAttr(default=0)

    @property
    def rng(self) -> random.Random:
        """This run's generator (seeded from seed and task id, never from ``hash()``)."""
        if self._rng is None:
            self._rng = random.Random(f"{self.seed}:{self.task_id}")
        return self._rng

    def choose(self, seen: Seen, offered: Sequence[str]) -> Reply:
        """The oracle's decision, or (with probability ``noise``) one error instead."""
        draw = self.rng.random()
        if self._streak > 0 and self._last:
            self._streak -= 1
            return self._repeat_last(offered)
        reply: Reply | None = None
        if draw < self.noise:
            kinds = [k for k in ERRORS if self._fits(k, seen, offered)]
            if kinds:
                reply = self._error(self.rng.choice(kinds), seen, offered)
        if reply is None:
            reply = super().choose(seen, offered)
        acts = [(n, a) for n, a, _ in reply.calls if n not in CONTROLS]
        if reply.calls and reply.calls[0][0] == "submit_plan" and not reply.malformed:
            acts = [(st["tool"], st["arguments"]) for st in reply.calls[0][1]["steps"]]
        if acts:
            self._last = acts
        return reply

    # ----------------------------------------------------------------- which errors fit

    def _fits(self, kind: str, seen: Seen, offered: Sequence[str]) -> bool:
        tools = [n for n in offered if n not in CONTROLS]
        if kind == "premature_finish":
            return "finish" in offered and bool(self.left(seen))
        if kind == "repeated_action":
            return bool(self._last)
        if kind == "ignored_observation":
            return self._failed(seen) is not None or bool(seen.rejections)
        if kind == "invalid_arguments":
            return bool(self.ready(seen, tools)) or "submit_plan" in offered
        if kind in ("unknown_tool", "disallowed_tool", "malformed_arguments"):
            return bool(tools) or "submit_plan" in offered
        return False

    def _failed(self, seen: Seen) -> str | None:
        """A step whose latest observation is a failure, if any."""
        return next((s for s, status in seen.status.items() if status != "OK"), None)

    # ----------------------------------------------------------------- the errors

    def _error(self, kind: str, seen: Seen, offered: Sequence[str]) -> Reply | None:
        meta = {"injected_error": kind}
        if kind == "premature_finish":
            return Reply(
                calls=self._control("finish", "output", self.answer(seen)).calls, meta=meta
            )
        if kind == "repeated_action":
            self._streak = self.rng.choice(STREAKS)
            return self._repeat_last(offered)
        if kind == "ignored_observation":
            return self._ignore(seen, offered, meta)
        base = super().decide(seen, offered)
        if not base.calls or base.calls[0][0] in CONTROL_TOOLS:  # a decision, not an action
            return None
        if base.calls[0][0] == "submit_plan":
            return self._bad_plan(kind, base, offered, meta)
        name, args, call_id = base.calls[0]
        if kind == "unknown_tool":
            return Reply(calls=[("lookup_everything", args, f"noise~{self._calls}")], meta=meta)
        if kind == "disallowed_tool":
            decoy = self._decoy(offered)
            return Reply(calls=[(decoy, args, f"noise~{self._calls}")], meta=meta)
        if kind == "malformed_arguments":
            if self.rng.random() < 0.5:
                return Reply(calls=[(name, args, call_id)], malformed=True, meta=meta)
            typed = {k: 12345 if isinstance(v, str) else "twelve" for k, v in args.items()}
            return Reply(calls=[(name, typed or {"bogus": 7}, f"noise~{self._calls}")], meta=meta)
        wrong = dict(args)
        if wrong:
            key = sorted(wrong)[0]
            wrong[key] = _wrong(wrong[key])
        return Reply(calls=[(name, wrong, call_id)], meta=meta)

    def _decoy(self, offered: Sequence[str]) -> str:
        names = [s.tool for s in self.plan.steps] + list(_DECOYS)
        return next((n for n in names if n not in offered), "write_file")

    def _bad_plan(
        self, kind: str, base: Reply, offered: Sequence[str], meta: dict[str, Any]
    ) -> Reply:
        name, args, call_id = base.calls[0]
        steps = [dict(s) for s in args["steps"]]
        first = steps[0]
        if kind == "malformed_arguments":
            return Reply(calls=base.calls, malformed=True, meta=meta)
        if kind == "unknown_tool":
            first["tool"] = "lookup_everything"
        elif kind == "disallowed_tool":
            first["tool"] = self._decoy(offered)
        elif first["arguments"]:
            key = sorted(first["arguments"])[0]
            first["arguments"] = {**first["arguments"], key: _wrong(first["arguments"][key])}
        return Reply(calls=[(name, {"steps": steps}, call_id)], meta=meta)

    def _repeat_last(self, offered: Sequence[str]) -> Reply:
        """The last action again: the same calls, or (planning) the same steps re-planned."""
        meta = {"injected_error": "repeated_action"}
        if "submit_plan" in offered:
            steps = [
                {"id": f"again{self._calls}.{i}", "tool": n, "arguments": a, "depends_on": []}
                for i, (n, a) in enumerate(self._last)
            ]
            return Reply(
                calls=[("submit_plan", {"steps": steps}, f"noise~{self._calls}")], meta=meta
            )
        if "revise_plan" in offered and not any(n in offered for n, _ in self._last):
            return Reply(calls=self._control("revise_plan", "reason", "once more").calls, meta=meta)
        calls = [(n, a, f"noise~{self._calls}.{i}") for i, (n, a) in enumerate(self._last)]
        return Reply(calls=calls, meta=meta)

    def _ignore(self, seen: Seen, offered: Sequence[str], meta: dict[str, Any]) -> Reply:
        failed = self._failed(seen)
        if failed is None:  # a rejected result: state it again, as if it had been accepted
            if "finish" in offered:
                reply = self._control("finish", "output", self.answer(seen))
                return Reply(calls=reply.calls, meta=meta)
            return Reply(text="Done as before.", meta=meta)
        pretend = Seen(
            goal=seen.goal,
            data={**seen.data, failed: {}},
            status={**seen.status, failed: "OK"},
            attempts=dict(seen.attempts),
            rejections=list(seen.rejections),
        )
        reply = super().decide(pretend, offered)
        return Reply(calls=reply.calls, text=reply.text, malformed=reply.malformed, meta=meta)
