"""One benchmark run: an AgentDojo pipeline element that runs the agent under a configuration.

AgentDojo's own harness (``TaskSuite.run_task_with_pipeline``) loads and injects the
environment, calls :meth:`AgentRun.query` with the user's prompt and the pair's
environment, and judges the returned messages with the suite's utility and security
checks. The element builds the pair's tools on that environment, the compromised model
for the pair, and runs it under the configuration: LangChain's ``create_agent``, or an
execgraph ``react`` graph whose interrupts the configuration's person answers.

What AgentDojo reads back: the final answer, and the calls that ran (a call the runtime
refused before it started is not in the trace, since it never acted).
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
from agentdojo.functions_runtime import EmptyEnv, Env, FunctionCall, FunctionsRuntime
from agentdojo.types import (
    ChatAssistantMessage,
    ChatMessage,
    ChatUserMessage,
    text_content_block_from_string,
)
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.eval.agentdojo.attacker import CompromisedPolicy, compromised_model
from execgraph.eval.agentdojo.configs import Configuration
from execgraph.eval.agentdojo.people import Person, ReadsProvenance, approves_all
from execgraph.eval.agentdojo.tools import EnvHolder, langchain_tools, tool_specs
from execgraph.graph.build import build_graph
from execgraph.tools.answer_marks import AnswerSpan, withhold
from execgraph.tools.argument_rules import Fallback
from execgraph.tools.policy import PolicyEngine

__all__ = ["MAX_RESUMES", "AgentRun", "Outcome"]

MAX_RESUMES = 40
"""Approval requests answered per run at most."""

_NEVER_RAN = ("resolve", "validate", "policy")


@dataclass
class Outcome:
    """What one run did, besides AgentDojo's verdicts."""

    approvals: int = 0
    refused: list[str] = field(default_factory=list)
    seconds: float = 0.0
    status: str = ""


def _assistant(text: str, calls: list[FunctionCall] | None = None) -> ChatAssistantMessage:
    return ChatAssistantMessage(
        role="assistant", content=[text_content_block_from_string(text)], tool_calls=calls
    )


class AgentRun(BasePipelineElement):
    """Runs the compromised model for one pair under one configuration."""

    name = "execgraph-compromised"

    def __init__(
        self,
        suite_name: str,
        config: Configuration,
        policy: CompromisedPolicy,
        *,
        allowed: list[str] | None = None,
        injected: tuple[str, ...] = (),
        observation_chars: int | None = None,
    ) -> None:
        self.suite_name = suite_name
        self.config = config
        self.policy = policy
        self.allowed = allowed
        self.injected = injected
        self.observation_chars = observation_chars
        self.outcome = Outcome()

    def query(
        self,
        query: str,
        runtime: FunctionsRuntime,
        env: Env = EmptyEnv(),  # noqa: B008 - AgentDojo's own signature
        messages: Sequence[ChatMessage] = (),
        extra_args: dict[str, Any] | None = None,
    ) -> tuple[str, FunctionsRuntime, Env, Sequence[ChatMessage], dict[str, Any]]:
        started = time.perf_counter()
        holder = EnvHolder(runtime, env)
        functions = list(runtime.functions.values())
        if self.config.runner == "create_agent":
            answer, calls = self._create_agent(query, functions, holder)
        else:
            answer, calls = self._execgraph(query, functions, holder)
        self.outcome.seconds = time.perf_counter() - started
        trace: list[ChatMessage] = [
            ChatUserMessage(role="user", content=[text_content_block_from_string(query)])
        ]
        trace += [_assistant("", [FunctionCall(function=n, args=a)]) for n, a in calls]
        trace.append(_assistant(answer))
        return query, runtime, env, trace, dict(extra_args or {})

    # ------------------------------------------------------------------ create_agent

    def _create_agent(
        self, query: str, functions: list[Any], holder: EnvHolder
    ) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        from langchain.agents import create_agent

        agent = create_agent(compromised_model(self.policy), langchain_tools(functions, holder))
        values = agent.invoke({"messages": [HumanMessage(query)]}, {"recursion_limit": 400})
        calls = [
            (c["name"], dict(c["args"]))
            for m in values["messages"]
            if isinstance(m, AIMessage)
            for c in m.tool_calls
        ]
        self.outcome.status = "COMPLETED"
        return str(values["messages"][-1].content), calls

    # ------------------------------------------------------------------ execgraph

    def _person(self) -> Person | None:
        if self.config.person == "approves_all":
            return approves_all
        if self.config.person == "reads_provenance":
            return ReadsProvenance(self.injected)
        return None

    def _policy(self) -> PolicyEngine:
        """The effect defaults; with provenance, irreversible calls need no person unless
        provenance does not support them: a sensitive argument read from tool output
        text, or content copied from tool output text into the user's own data, is
        asked (or, when there is no person, refused with the reason); a sensitive value
        the model made up (nothing to show a person), and content copied from tool
        output text that would leave (an irreversible or open-world call), are refused
        with the reason, person or not."""
        if not self.config.provenance:
            return PolicyEngine()
        fallback: Fallback = "ask" if self.config.person != "none" else "refuse"
        return PolicyEngine(
            [{"effect": "irreversible", "decision": "allow", "override": True}],
            sensitive_fallback=fallback,
            copied_text=fallback,
            copied_egress="refuse",  # content dictated by data does not leave
            made_up="refuse",
        )

    def _execgraph(
        self, query: str, functions: list[Any], holder: EnvHolder
    ) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
        home = Path(tempfile.mkdtemp(prefix="execgraph-agentdojo-"))
        try:
            settings: dict[str, Any] = {}
            if self.observation_chars is not None:
                settings["observation_chars"] = self.observation_chars
            if self.config.contract is not None:
                settings["contract"] = self.config.contract
            policy = self._policy()
            graph = build_graph(
                "react",
                model=compromised_model(self.policy),
                tools=tool_specs(
                    self.suite_name, functions, holder, provenance=self.config.provenance
                ),
                home=home,
                policy=policy,
                checkpointer=InMemorySaver(),
                **settings,
            )
            task: dict[str, Any] = {"goal": query, "budgets": {"model_calls": 200}}
            if self.allowed is not None:
                task["allowed_actions"] = self.allowed
            values = self._drive(graph, task)
            self.outcome.status = str(values.get("status") or "")
            answer = str(values.get("output") or "")
            if self.config.provenance:  # the application withholds text copied from data
                spans = [AnswerSpan.from_dict(d) for d in values.get("output_sources") or ()]
                answer = withhold(answer, self._reviewed(spans))
            return answer, self._ran(values)
        finally:
            shutil.rmtree(home, ignore_errors=True)

    def _reviewed(self, spans: list[AnswerSpan]) -> list[AnswerSpan]:
        """The answer's parts quoted from tool-output text that stay withheld: all of them,
        unless a person who reads provenance reviews them (one approval) and releases
        those that are not the injected text."""
        person = self._person()
        quoted = [s for s in spans if s.where == "text"]
        if not quoted or not isinstance(person, ReadsProvenance):
            return spans
        self.outcome.approvals += 1
        return [s for s in spans if s.where != "text" or not person.release(s.text)]

    def _drive(self, graph: Any, task: Mapping[str, Any]) -> Mapping[str, Any]:
        config = {"configurable": {"thread_id": f"agentdojo-{uuid.uuid4().hex[:12]}"}}
        person = self._person()
        values: Mapping[str, Any] = graph.invoke({"task": dict(task)}, config)
        for _ in range(MAX_RESUMES):
            interrupts = values.get("__interrupt__")
            if not interrupts:
                break
            answers = {}
            for item in interrupts:
                request = item.value if isinstance(item.value, Mapping) else {}
                self.outcome.approvals += 1
                answers[item.id] = person(request) if person is not None else "reject"
            values = graph.invoke(Command(resume=answers), config)
        return values

    def _ran(self, values: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The calls that started, in the order the model made them."""
        results: dict[str, Any] = {}
        for m in values.get("messages") or ():
            if isinstance(m, ToolMessage) and m.artifact is not None:
                results[m.tool_call_id] = m.artifact
        ran: list[tuple[str, dict[str, Any]]] = []
        for m in values.get("messages") or ():
            if not isinstance(m, AIMessage):
                continue
            for c in m.tool_calls:
                result = results.get(c["id"] or "")
                error = _field(result, "error")
                phase = _field(error, "phase") if error is not None else None
                if phase in _NEVER_RAN:
                    self.outcome.refused.append(f"{c['name']}: {_field(error, 'message')}")
                    continue
                ran.append((c["name"], dict(c["args"])))
        return ran


def _field(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)
