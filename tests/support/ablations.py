"""Running one architecture with the ablation settings, for ``tests/graph/test_ablations.py``.

Every run is a real compiled graph on real SQLite (execution store and checkpoints under
the test's temporary directory), driven by a :class:`ScriptedChatModel` that records its
inputs and the tools offered on each call, over :class:`FakeAdapter` tools that count what
really executed: ``lookup`` (read), ``save`` (write, read-after-write verified) and
``publish`` (irreversible, so hybrid has a publish phase when a task allows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from execgraph.graph import Stage, build_graph
from execgraph.state.events import Event
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel
from execgraph.tools.adapters.fake import Behaviour, FakeAdapter, Step

__all__ = ["ARCHS", "STAGES", "AblationRun", "run_arch", "task"]

ARCHS = ("workflow", "react", "plan_execute", "hybrid")
STAGES = [
    Stage("collect", ("lookup",), "Look the item up."),
    Stage("write", ("save",), "Save the item."),
]


def task(
    *,
    checks: Sequence[Mapping[str, Any]] = (),
    budgets: Mapping[str, float] | None = None,
    allowed: Sequence[str] = ("lookup", "save"),
) -> dict[str, Any]:
    """The test task: look an item up and save it, with the given checks and budgets."""
    return {
        "goal": "Look the item up and save it.",
        "allowed_actions": list(allowed),
        "success_checks": [dict(c) for c in checks],
        "budgets": dict(budgets or {"model_calls": 12, "tool_calls": 8}),
    }


@dataclass
class AblationRun:
    """One finished run: its output, the model's record, the fakes' and the store's."""

    out: dict[str, Any]
    model: ScriptedChatModel
    fake: FakeAdapter
    store: SqliteExecutionStore

    @property
    def events(self) -> list[Event]:
        """The run's event log, in append order."""
        return self.store.events(self.out["contract"]["run_id"])

    def of_type(self, kind: str) -> list[Event]:
        """The run's events of one type."""
        return [e for e in self.events if e.type.value == kind]

    @property
    def tokens_in(self) -> int:
        """Input tokens the run was charged (the scripted model estimates them from its input)."""
        return int(self.out["budget"]["used"].get("tokens_in", 0))

    def inputs_text(self) -> list[str]:
        """Each model call's whole input as one text."""
        return ["\n".join(str(m.content) for m in call) for call in self.model.calls]


def ai_turns(messages: Sequence[BaseMessage]) -> list[AIMessage]:
    """The model replies an input carries."""
    return [m for m in messages if isinstance(m, AIMessage)]


def tool_texts(messages: Sequence[BaseMessage]) -> list[str]:
    """The tool answers an input carries."""
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def run_arch(
    tmp: Path,
    arch: str,
    replies: list[Any],
    run_task: dict[str, Any],
    *,
    lookup: Behaviour | Step | Sequence[Behaviour | Step] = "succeed",
    stages: Sequence[Stage] | None = STAGES,
    checks: Mapping[str, Any] | None = None,
    **settings: Any,
) -> AblationRun:
    """Build ``arch`` with ``settings`` and run ``run_task`` once (no interrupt expected)."""
    fake = FakeAdapter()
    fake.tool("lookup", effect="read", behaviour=lookup)
    fake.tool("save", effect="write", verify="pass")
    fake.tool("publish", effect="irreversible")
    store = SqliteExecutionStore(tmp / "exec.db")
    model = ScriptedChatModel(replies)
    app = build_graph(
        arch,
        model=model,
        tools=fake.tools(),
        store=store,
        workspace=tmp / "ws",
        home=tmp,
        stages=list(stages) if stages is not None else None,
        checks=checks,
        **settings,
    )
    out = app.invoke({"task": run_task}, {"configurable": {"thread_id": f"{arch}-run"}})
    return AblationRun(out, model, fake, store)
