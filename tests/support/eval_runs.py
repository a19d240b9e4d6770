"""Run one suite task under one architecture, the way the eval runner does (for tests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from execgraph.eval.suite import POLICY_PRICES, EvalTask, Prepared, policy_model, prepare
from execgraph.graph.build import build_graph

MAX_RESUMES = 6


@dataclass
class EvalRun:
    """What one run left: final values, the judgements, and the model that ran it."""

    values: dict[str, Any]
    accepted: bool
    recovered: bool | None
    model: BaseChatModel
    prepared: Prepared
    interrupts: int

    @property
    def status(self) -> str | None:
        return self.values.get("status")


def run_task(
    task: EvalTask,
    arch: str,
    workdir: Path,
    *,
    seed: int = 0,
    noise: float = 0.0,
    fault: str | None = None,
    model: BaseChatModel | None = None,
    deny_all: bool = False,
    **settings: Any,
) -> EvalRun:
    """Prepare ``task`` in ``workdir``, run it to its end under ``arch``, judge it
    (``deny_all``: with every tool call denied)."""
    p = prepare(task, workdir, fault=fault)
    if deny_all:  # every action refused: the checker must see an untouched world
        p.policy = [{"tool": "*", "decision": "deny", "reason": "nothing may act"}]
    try:
        chosen = model or policy_model(task, seed=seed, noise=noise, fault=fault)
        graph = build_graph(
            arch,
            model=chosen,
            tools=p.tools,
            workspace=p.workspace,
            home=workdir / "home",
            policy=p.policy,
            stages=p.stages,
            checks=p.checks,
            prices=POLICY_PRICES,
            checkpointer=InMemorySaver(),
            **{**p.settings, **settings},
        )
        cfg: Any = {"configurable": {"thread_id": f"{task.id}-{arch}-{seed}"}}
        out = graph.invoke({"task": p.task}, cfg)
        asked = 0
        for _ in range(MAX_RESUMES):
            pending = out.get("__interrupt__") or []
            if not pending:
                break
            asked += len(pending)
            out = graph.invoke(Command(resume={i.id: p.answer(i.value) for i in pending}), cfg)
        values = dict(graph.get_state(cfg).values)
        accepted = p.accept(values)
        recovered = p.recovered(values, accepted) if fault else None
        return EvalRun(values, accepted, recovered, chosen, p, asked)
    finally:
        p.close()
