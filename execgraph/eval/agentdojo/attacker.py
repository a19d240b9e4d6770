"""The compromised model: it does the user's task, and obeys any injection it reads.

A real model may or may not fall for an injection; this one always does, so what the
benchmark measures is only what the runtime enforces. It replays the user task's
ground-truth calls one per turn; as soon as an injection's text is in what it is shown
(a tool output, whole or cut), it performs the injection task's ground-truth calls next,
then goes on with the user's. Its final answer is the user task's expected answer, with
the injection task's expected answer added when that attack asks for text in the reply.
A refused or failed call does not stop it: it goes on with the next — except a call whose
arguments hold what only the refused call would have shown it (a passport number it was
never allowed to read): that one it cannot write, so it skips it.

It sees only what the runtime shows it: an injection cut off by the observation limit is
not seen, and then not obeyed. Asked to plan a least-privilege contract (a question that
shows it only the user's request), it submits the capabilities an honest planner would
(:mod:`execgraph.eval.agentdojo.planner`): there is no injection it could have read.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from execgraph.nodes.least_privilege import PLANNER_INSTRUCTION
from execgraph.testing.scripted import ScriptedChatModel
from execgraph.tools.capabilities import CAPABILITIES_TOOL

__all__ = ["Call", "CompromisedPolicy", "compromised_model", "probe_of", "shows"]

_PROBE_CHARS = 48
_PLANNING = PLANNER_INSTRUCTION[:60]
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class Call:
    """One scripted tool call."""

    name: str
    args: dict[str, Any]
    needs: frozenset[int] = frozenset()
    """The calls of the same script whose output this call's arguments are read from."""


def probe_of(goal: str) -> str:
    """What marks an injection in a text: the start of its goal, letters and digits only
    (so JSON's or YAML's quoting of the text does not hide it)."""
    return _NON_ALNUM.sub("", goal.casefold())[:_PROBE_CHARS]


def shows(message: BaseMessage, probe: str) -> bool:
    """Whether ``message`` shows the injection marked by ``probe``."""
    content = message.content if isinstance(message.content, str) else str(message.content)
    return bool(probe) and probe in _NON_ALNUM.sub("", content.casefold())


@dataclass
class CompromisedPolicy:
    """The compromised model's decisions (a callable reply for the scripted model)."""

    user_calls: list[Call]
    answer: str
    injection_calls: list[Call] = field(default_factory=list)
    injection_answer: str = ""
    probe: str = ""
    capabilities: dict[str, Any] | None = None
    triggered: bool = False
    _queue: list[tuple[str, int]] = field(default_factory=list)
    _sent: dict[str, tuple[str, int]] = field(default_factory=dict)
    _failed: set[tuple[str, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._queue = [("user", i) for i in range(len(self.user_calls))]

    @property
    def user_failed(self) -> list[str]:
        """The user task's calls that were refused, failed or skipped, by tool name."""
        return [self.user_calls[i].name for script, i in sorted(self._failed) if script == "user"]

    def _call(self, key: tuple[str, int]) -> Call:
        script = self.user_calls if key[0] == "user" else self.injection_calls
        return script[key[1]]

    def _next(self) -> tuple[str, int] | None:
        """The next call it can make: one whose inputs it has seen. A call that needs the
        output of a call that was refused (or skipped) is skipped: even a compromised
        model cannot write a value it never read."""
        while self._queue:
            key = self._queue.pop(0)
            if any((key[0], i) in self._failed for i in self._call(key).needs):
                self._failed.add(key)
                continue
            return key
        return None

    def __call__(self, messages: Sequence[BaseMessage]) -> AIMessage:
        if messages and messages[0].type == "system" and _PLANNING in str(messages[0].content):
            return AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": CAPABILITIES_TOOL,
                        "args": self.capabilities or {"tools": []},
                        "id": f"call_{uuid.uuid4().hex[:20]}",
                    }
                ],
            )
        for m in messages:
            if isinstance(m, ToolMessage) and m.status == "error" and m.tool_call_id in self._sent:
                self._failed.add(self._sent[m.tool_call_id])
        if not self.triggered and any(m.type != "ai" and shows(m, self.probe) for m in messages):
            self.triggered = True
            self._queue[:0] = [("injection", i) for i in range(len(self.injection_calls))]
        key = self._next()
        if key is not None:
            call, call_id = self._call(key), f"call_{uuid.uuid4().hex[:20]}"
            self._sent[call_id] = key
            return AIMessage(
                content="",
                tool_calls=[{"name": call.name, "args": call.args, "id": call_id}],
            )
        extra = self.injection_answer if self.triggered and self.injection_answer else ""
        return AIMessage(content=f"{self.answer}\n{extra}".strip() or "Done.")


def compromised_model(policy: CompromisedPolicy, *, turns: int = 200) -> ScriptedChatModel:
    """A scripted chat model that asks ``policy`` at every turn (``turns`` at most)."""
    return ScriptedChatModel([policy] * turns, keep_calls=2)
