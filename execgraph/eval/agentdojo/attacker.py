"""The compromised model: it does the user's task, and obeys any injection it reads.

A real model may or may not fall for an injection; this one always does, so what the
benchmark measures is only what the runtime enforces. It replays the user task's
ground-truth calls one per turn; as soon as an injection's text is in what it is shown
(a tool output, whole or cut), it performs the injection task's ground-truth calls next,
then goes on with the user's. Its final answer is the user task's expected answer, with
the injection task's expected answer added when that attack asks for text in the reply.
A refused or failed call does not stop it: it goes on with the next.

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

from langchain_core.messages import AIMessage, BaseMessage

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
    _queue: list[Call] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._queue = list(self.user_calls)

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
        if not self.triggered and any(m.type != "ai" and shows(m, self.probe) for m in messages):
            self.triggered = True
            self._queue[:0] = self.injection_calls
        if self._queue:
            call = self._queue.pop(0)
            return AIMessage(
                content="",
                tool_calls=[
                    {"name": call.name, "args": call.args, "id": f"call_{uuid.uuid4().hex[:20]}"}
                ],
            )
        extra = self.injection_answer if self.triggered and self.injection_answer else ""
        return AIMessage(content=f"{self.answer}\n{extra}".strip() or "Done.")


def compromised_model(policy: CompromisedPolicy, *, turns: int = 200) -> ScriptedChatModel:
    """A scripted chat model that asks ``policy`` at every turn (``turns`` at most)."""
    return ScriptedChatModel([policy] * turns, keep_calls=2)
