"""FakeAdapter: scripted tools for fault injection in executor and graph tests.

Each fake tool follows a per-call script (succeed, fail, hang, lose the response, commit
part of a batch, raise a foreign exception carrying a secret) and records every real
execution and every effect it performed, under a lock, so a test can prove that a call
ran exactly once however many retries, replays and resumes the runtime went through.
``reconcile`` answers from the recorded effects, exactly as a real probe would ask the
world, so lost responses can be reconciled without guessing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.contracts import Evidence, PartialProgress
from execgraph.state.errors import (
    PermanentError,
    ResponseLostError,
    ToolCancelled,
    ToolDeclarationError,
    TransientError,
    VerificationError,
)
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import Effect, ToolSpec

__all__ = ["SECRET", "Behaviour", "FakeAdapter", "FakeArgs", "FakeCall", "FakeEffect", "Step"]

Behaviour = Literal[
    "succeed", "fail", "fail_transient", "hang", "lose_response", "partial", "raise_secret"
]
ReconcileMode = Literal["probe", "unknown", "none"]
VerifyMode = Literal["pass", "fail", "none"]

SECRET = "sk-live-FAKE-SECRET-0000"
"""The text ``raise_secret`` smuggles into a foreign exception; it must never surface."""


class FakeArgs(BaseModel):
    """Default input of a fake tool: one ``item`` (a batch in ``items``) and a ``path``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item: str = Field(default="item", description="what the call acts on")
    items: list[str] = Field(default_factory=list, description="a batch, for partial")
    path: str | None = Field(default=None, description="a workspace path, for path tests")


@dataclass(frozen=True)
class Step:
    """One scripted call.

    Attributes:
        behaviour: What the call does.
        retry_after_s: For ``fail_transient``: the retry hint carried by TransientError.
        message: Error text (ours, so safe) for ``fail`` / ``fail_transient``.
        data: Returned data for ``succeed`` (default: a small dict naming the item).
        commit: For ``partial``: how many of ``items`` (or of ``["a", "b"]``) commit.
        effect_first: For ``hang``: perform the effect before hanging, so a timeout is
            not proof that nothing happened.
    """

    behaviour: Behaviour = "succeed"
    retry_after_s: float | None = None
    message: str = ""
    data: Any = None
    commit: int = 1
    effect_first: bool = False


@dataclass(frozen=True)
class FakeCall:
    """One real execution of a fake tool's ``run``."""

    tool: str
    behaviour: Behaviour
    call_id: str
    attempt_id: str
    idempotency_key: str
    args: dict[str, Any]


@dataclass(frozen=True)
class FakeEffect:
    """One effect a fake tool performed on its pretend world."""

    tool: str
    item: str
    call_id: str
    idempotency_key: str


@dataclass
class _Tool:
    name: str
    effect: Effect
    script: list[Step]
    index: int = 0
    started: threading.Event = field(default_factory=threading.Event)


def _steps(behaviour: Behaviour | Step | Sequence[Behaviour | Step]) -> list[Step]:
    items = [behaviour] if isinstance(behaviour, str | Step) else list(behaviour)
    steps = [s if isinstance(s, Step) else Step(behaviour=s) for s in items]
    if not steps:
        raise ToolDeclarationError("a fake tool needs at least one scripted step")
    return steps


class FakeAdapter:
    """Scripted tools that count what they really did.

    Example:
        >>> fake = FakeAdapter()
        >>> publish = fake.tool("publish", effect="irreversible", behaviour="succeed")
        >>> flaky = fake.tool("flaky", behaviour=["fail_transient", "succeed"])
        >>> publish.key
        'publish@1.0.0'

    A script is consumed one step per call; the last step repeats once it runs out.
    """

    def __init__(self, name: str = "fake") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._tools: dict[str, _Tool] = {}
        self._specs: list[ToolSpec] = []
        self._calls: list[FakeCall] = []
        self._effects: list[FakeEffect] = []
        self._state: dict[str, str] = {}

    # ------------------------------------------------------------------ records

    @property
    def calls(self) -> list[FakeCall]:
        """A snapshot of every real execution, in order."""
        with self._lock:
            return list(self._calls)

    @property
    def effects(self) -> list[FakeEffect]:
        """A snapshot of every effect performed, in order."""
        with self._lock:
            return list(self._effects)

    def call_count(self, tool: str | None = None) -> int:
        """How many times ``tool`` (or any tool) really ran."""
        with self._lock:
            return sum(1 for c in self._calls if tool is None or c.tool == tool)

    def effect_count(self, tool: str | None = None) -> int:
        """How many effects ``tool`` (or any tool) performed."""
        with self._lock:
            return sum(1 for e in self._effects if tool is None or e.tool == tool)

    def wait_started(self, tool: str, timeout: float | None = None) -> bool:
        """Block until ``tool`` has started running at least once (for hang tests)."""
        return self._tools[tool].started.wait(timeout)

    def set_state(self, key: str, value: str) -> None:
        """Set a value ``read_state`` reports, to drive compare-and-swap tests."""
        with self._lock:
            self._state[key] = value

    # ------------------------------------------------------------------ building

    def tool(
        self,
        name: str,
        *,
        effect: Effect = "write",
        behaviour: Behaviour | Step | Sequence[Behaviour | Step] = "succeed",
        version: str = "1.0.0",
        description: str | None = None,
        input_model: type[BaseModel] = FakeArgs,
        locks: Sequence[str] = (),
        path_args: Sequence[str] = (),
        reconcile: ReconcileMode = "probe",
        verify: VerifyMode = "none",
        timeout_s: float | None = None,
    ) -> ToolSpec:
        """Create (or re-script) a fake tool and return its ToolSpec.

        Args:
            name: Tool name; calling ``tool`` again with a name replaces its script.
            effect: ``read``, ``write`` or ``irreversible``; reads record no effects.
            behaviour: One behaviour, one :class:`Step`, or a per-call script of them.
            reconcile: ``probe`` answers from recorded effects, ``unknown`` always answers
                None (cannot tell), ``none`` gives the tool no reconcile hook.
            verify: ``pass`` returns verified evidence, ``fail`` raises VerificationError,
                ``none`` gives the tool no verify hook.
        """
        script = _steps(behaviour)

        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            return self._run(name, args, ctx)

        def probe(args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
            return self._reconcile(name, args, ctx)

        def check(args: BaseModel, out: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
            return self._verify(name, verify, ctx)

        spec = ToolSpec(
            name=name,
            version=version,
            description=description or f"fake {effect} tool {name}",
            input_model=input_model,
            effect=effect,
            run=run,
            locks=tuple(locks),
            path_args=tuple(path_args),
            verify=None if verify == "none" else check,
            reconcile={"probe": probe, "unknown": _cannot_tell, "none": None}[reconcile],
            read_state=self._read_state,
            timeout_s=timeout_s,
        )
        with self._lock:  # register only once the spec is known to be valid
            self._tools[name] = _Tool(name, effect, script)
            self._specs = [s for s in self._specs if s.key != spec.key] + [spec]
        return spec

    def tools(self) -> list[ToolSpec]:
        """Every tool created so far, in creation order."""
        with self._lock:
            return list(self._specs)

    def close(self) -> None:
        """Release every hanging call (they end as cancelled)."""
        self._closed.set()

    # ------------------------------------------------------------------ behaviour

    def _next_step(self, name: str) -> Step:
        with self._lock:
            t = self._tools[name]
            step = t.script[min(t.index, len(t.script) - 1)]
            t.index += 1
            return step

    def _perform(self, name: str, item: str, ctx: InvokeContext) -> None:
        with self._lock:
            if self._tools[name].effect != "read":
                self._effects.append(FakeEffect(name, item, ctx.call_id, ctx.idempotency_key))

    def _run(self, name: str, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        step = self._next_step(name)
        payload = args.model_dump(mode="json")
        item = str(payload.get("item", "item"))
        with self._lock:
            self._calls.append(
                FakeCall(
                    name, step.behaviour, ctx.call_id, ctx.attempt_id, ctx.idempotency_key, payload
                )
            )
            tool = self._tools[name]
        tool.started.set()
        kind = step.behaviour
        if kind == "fail":
            raise PermanentError(step.message or f"{name} failed (scripted permanent failure)")
        if kind == "fail_transient":
            raise TransientError(
                step.message or f"{name} is busy (scripted transient failure)",
                retry_after_s=step.retry_after_s,
            )
        if kind == "raise_secret":
            raise RuntimeError(f"upstream refused: Authorization: Bearer {SECRET}")
        if kind == "hang":
            if step.effect_first:
                self._perform(name, item, ctx)
            self._hang(ctx)
        if kind == "partial":
            return self._partial(name, payload, step, ctx)
        self._perform(name, item, ctx)
        if kind == "lose_response":
            raise ResponseLostError(f"{name} performed its effect but the response was lost")
        data = step.data if step.data is not None else {"tool": name, "item": item}
        evidence = Evidence(
            source_id=f"fake:{name}:{item}",
            kind=f"fake_{tool.effect}",
            value=str(data),
            call_id=ctx.call_id,
            observed_at=time.time(),
            version=time.time_ns(),
        )
        return AdapterOutput(
            data=data,
            committed=tool.effect != "read",
            summary=f"{name} succeeded on {item}",
            evidence=(evidence,),
        )

    def _hang(self, ctx: InvokeContext) -> None:
        """Block until cancelled, closed or past the deadline; never returns normally."""
        while True:
            remaining = ctx.remaining_s()
            if ctx.cancel.is_set() or self._closed.is_set():
                raise ToolCancelled("the call was cancelled while running")
            if remaining == 0:
                raise ToolCancelled("the deadline passed while the call was running")
            ctx.cancel.wait(0.02 if remaining is None else min(0.02, remaining))

    def _partial(
        self, name: str, payload: dict[str, Any], step: Step, ctx: InvokeContext
    ) -> AdapterOutput:
        items = [str(i) for i in payload.get("items") or ["a", "b"]]
        done, pending = items[: step.commit], items[step.commit :]
        for i in done:
            self._perform(name, i, ctx)
        return AdapterOutput(
            data={"committed": done, "pending": pending},
            committed=bool(done),
            summary=f"{name} committed {len(done)} of {len(items)} items",
            partial=PartialProgress(committed=done, pending=pending),
        )

    # ------------------------------------------------------------------ hooks

    def _mine(self, name: str, ctx: InvokeContext) -> list[FakeEffect]:
        """Effects of this call: matched by idempotency key when there is one, else call id."""
        with self._lock:
            if ctx.idempotency_key:
                return [
                    e
                    for e in self._effects
                    if e.tool == name and e.idempotency_key == ctx.idempotency_key
                ]
            return [e for e in self._effects if e.tool == name and e.call_id == ctx.call_id]

    def _reconcile(self, name: str, args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
        done = [e.item for e in self._mine(name, ctx)]
        wanted = [str(i) for i in (getattr(args, "items", None) or [])]
        if wanted and done and len(done) < len(wanted):
            pending = [i for i in wanted if i not in done]
            return AdapterOutput(
                data={"committed": done, "pending": pending},
                committed=True,
                summary=f"probe: {len(done)} of {len(wanted)} items committed",
                partial=PartialProgress(committed=done, pending=pending),
            )
        if done:
            return AdapterOutput(
                data={"items": done}, committed=True, summary="probe: effect found"
            )
        return AdapterOutput(data=None, committed=False, summary="probe: no effect recorded")

    def _verify(self, name: str, mode: VerifyMode, ctx: InvokeContext) -> list[Evidence]:
        writes = self._tools[name].effect != "read"
        if mode == "fail" or (writes and not self._mine(name, ctx)):
            raise VerificationError(f"{name}: the effect is not visible after the call")
        return [
            Evidence(
                source_id=f"fake-verify:{name}:{ctx.call_id}",
                kind="fake_verified",
                value="effect present",
                call_id=ctx.call_id,
                verified=True,
                observed_at=time.time(),
                version=time.time_ns(),
            )
        ]

    def _read_state(self, key: str, args: BaseModel, root: Path) -> str | None:
        """``effects`` is the number of effects so far; other keys come from set_state."""
        with self._lock:
            if key == "effects":
                return str(len(self._effects))
            return self._state.get(key)


def _cannot_tell(args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
    """A reconcile probe that never knows (forces the 'ask a person' path)."""
    return None
