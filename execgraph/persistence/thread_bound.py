"""A run's entry points refuse a config without a thread id, saying what is missing, and
a resume that carries no answer (so does the executor compiled alone:
:mod:`execgraph.persistence.answer_guard`).

The thread id is the run id: checkpoints, the execution log, idempotency keys and the
model replies a re-run replays are all filed under it. LangGraph itself, given a
checkpointer and no ``configurable`` at all, raises ``ValueError("Checkpointer requires one
or more of the following 'configurable' keys: thread_id, checkpoint_ns, checkpoint_id")``;
given a ``configurable`` without ``thread_id`` (a ``checkpoint_ns``, a user id, or the
price table ``build_graph`` binds), it passes it on and the saver fails with a bare
``KeyError: 'thread_id'``, as do ``get_state``, ``get_state_history`` and
``update_state``. Without a checkpointer LangGraph needs no thread id, but every such run
would share one run id and replay each other's logged replies. So every way into a
compiled run graph — ``invoke``/``stream`` and their async twins (which all go through
``stream``/``astream``), state reads and state updates — first checks the merged config
and raises :class:`~execgraph.state.errors.UsageError` (a ``ValueError``, like
LangGraph's) naming ``{"configurable": {"thread_id": ...}}``.

Time travel forks the same run, so it replays rather than re-decides. A fork —
``app.invoke(None, config_with_checkpoint_id)``, or ``update_state`` on an old checkpoint
and then ``invoke`` — re-runs the turns after that checkpoint under the same thread id.
Each turn's model reply is looked up in the execution log by its deterministic event id
(run id, turn, attempt: ``execgraph.nodes.model.call.recorded_replies``), exactly as when
a crash makes a turn run again, and each call's result comes from its execution record.
So the model is not asked again for a turn it already answered, an effect is not
repeated, and a state update made on the old checkpoint (a note, a changed value) does
not change a decision already logged; turns past the last logged one call the model as
usual. To have the model decide again from some point, start a new thread (a new run
id) with the task, rather than forking the old one.

An update of a checkpoint where the run waits for a person's answer (an approval, a
question: an ``interrupt()`` pending) is refused with a
:class:`~execgraph.state.errors.UsageError` that says so (LangGraph Server answers it with
a 400 and the message): LangGraph would write the update as a new checkpoint without the
pending interrupt, so the approval would no longer be offered while the state still read
``WAITING``. The answer comes first (``Command(resume=...)``); a fork from an earlier
checkpoint, and an update at a static breakpoint (``interrupt_before``), are not refused.

One worker runs a thread at a time: ``stream`` and ``astream`` (so ``invoke`` and
``ainvoke``) hold the thread's run lease in the execution store while they run, and a
thread another live worker holds is refused at once with
:class:`~execgraph.state.errors.RunInProgress` (:mod:`execgraph.persistence.run_lease`). State
reads and updates take no lease. While they run, the run's checkpoints are fenced by that
lease (:mod:`execgraph.persistence.fenced_saver`): a worker that stalled past it and was
taken over writes no checkpoint and stops with
:class:`~execgraph.state.errors.FencedOut`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import DEFAULT_RECURSION_LIMIT, merge_configs
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot, StateUpdate

from execgraph.nodes.answer_format import AnswerFormat
from execgraph.nodes.executor import require_answer
from execgraph.nodes.executor.stages.approval import check_resume
from execgraph.nodes.release import check_release
from execgraph.persistence.checkpoint_log import CheckpointLog
from execgraph.persistence.fenced_saver import FencedSaver
from execgraph.persistence.run_lease import held_run
from execgraph.persistence.waiting import no_edit_while_waiting, waiting_output, waiting_snapshot
from execgraph.state.compiled import RunGraph
from execgraph.state.errors import UsageError
from execgraph.state.errors.tool_bugs import take_due
from execgraph.state.schema import (
    RunInput,
    RunState,
)
from execgraph.state.store.base import ExecutionStore

__all__ = [
    "MISSING_THREAD",
    "ThreadBoundGraph",
    "attrs_of",
    "thread_bound",
]

MISSING_THREAD = (
    'a run needs a thread id (it is the run id): pass config={"configurable": '
    '{"thread_id": "..."}}, the same id to continue the run'
)


class ThreadBoundGraph(CompiledStateGraph[RunState, None, RunInput, RunState]):
    """A compiled run graph whose entry points require ``configurable.thread_id``.

    ``run_store`` is the execution store its executor records in (None: a graph built
    without one, which takes no run lease).
    """

    def __init__(
        self,
        *,
        run_store: ExecutionStore | None = None,
        release_ref: str | None = None,
        answer_format: AnswerFormat | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.run_store = run_store  # kept in __dict__: LangGraph's copy passes it on
        self.release_ref = release_ref  # a run bound to another is not continued here
        self.answer_format = answer_format  # invoke returns the answer as its type

    def _same_release(self, values: Any) -> None:
        """Any input to a thread whose run is under way and bound to another release — a
        resume, a continue (``None``), a new request — is refused before LangGraph records
        it (:mod:`execgraph.nodes.release`)."""
        check_release(values if isinstance(values, dict) else None, self.release_ref)

    def _snapshot(self, config: RunnableConfig | None, *, resumes: bool) -> StateSnapshot | None:
        """The thread's state, read once per call: for the release check where the graph
        has a checkpointer of its own (not compiled without one, not inside a parent graph
        that lends its own), and for a resume's pending questions; None where neither
        applies or there is no checkpointer to read."""
        if not (resumes or self._own_state(config)):
            return None
        try:
            return self.get_state(config)  # type: ignore[arg-type]
        except ValueError:  # no checkpointer: LangGraph refuses a resume itself
            return None

    def _own_state(self, config: RunnableConfig | None) -> bool:
        configurable = (config or {}).get("configurable") or {}
        lent = CONFIG_KEY_CHECKPOINTER in configurable
        return isinstance(self.checkpointer, BaseCheckpointSaver) and not lent

    def _require_thread(self, config: RunnableConfig | None) -> None:
        if not self._thread(config):
            raise UsageError(MISSING_THREAD)

    def _thread(self, config: RunnableConfig | None) -> str:
        merged = merge_configs(self.config, config)
        return str((merged.get("configurable") or {}).get("thread_id") or "")

    def _fenced(
        self, config: RunnableConfig | None
    ) -> tuple[RunnableConfig | None, CheckpointLog | None]:
        """``config`` lending LangGraph this graph's checkpointer fenced by the run lease
        (unless a parent graph lends one already), and the log of its checkpoints, which
        the stream writes when it ends."""
        saver, store = self.checkpointer, self.run_store
        if store is None or not isinstance(saver, BaseCheckpointSaver):
            return config, None
        configurable = dict((config or {}).get("configurable") or {})
        if CONFIG_KEY_CHECKPOINTER in configurable:
            return config, None
        fenced = FencedSaver(saver, store)
        configurable[CONFIG_KEY_CHECKPOINTER] = fenced
        return {**(config or {}), "configurable": configurable}, fenced.checkpoints

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        """LangGraph's ``stream`` (and so ``invoke``), once the config names a thread,
        holding the thread's run lease while it runs (:mod:`execgraph.persistence.run_lease`)."""
        self._require_thread(config)
        require_answer(input)
        snapshot = self._snapshot(config, resumes=_resumes(input))
        self._same_release(snapshot.values if snapshot is not None else None)
        if _resumes(input):
            check_resume(snapshot.interrupts if snapshot is not None else (), input.resume)
        config = self._own_limit(config)
        fenced, checkpoints = self._fenced(config)
        inner = super().stream(input, fenced, **kwargs)
        if self.run_store is None:
            return inner
        return _leased(self.run_store, self._thread(config), inner, checkpoints)

    def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """LangGraph's ``astream`` (and so ``ainvoke``), once the config names a thread."""
        self._require_thread(config)
        require_answer(input)
        config = self._own_limit(config)
        return self._achecked(input, config, **kwargs)

    def _astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        fenced, checkpoints = self._fenced(config)
        inner = super().astream(input, fenced, **kwargs)
        if self.run_store is None:
            return inner
        return _aleased(self.run_store, self._thread(config), inner, checkpoints)

    async def _achecked(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        """``astream`` once the run's release is this graph's and a resume's answers are
        readable (:func:`check_resume`)."""
        pending: Sequence[Any] = ()
        values: Any = None
        if _resumes(input) or self._own_state(config):
            try:
                snapshot = await self.aget_state(config)  # type: ignore[arg-type]
                pending, values = snapshot.interrupts, snapshot.values
            except ValueError:  # no checkpointer to read: LangGraph refuses the resume itself
                pass
        self._same_release(values)
        if _resumes(input):
            check_resume(pending, input.resume)
        async for chunk in self._astream(input, config, **kwargs):
            yield chunk

    def _own_limit(self, config: RunnableConfig | None) -> RunnableConfig | None:
        """``config`` with the graph's own ``recursion_limit`` where it carries LangGraph's
        default (``astream_events`` fills the default in; LangChain's ``merge_configs``
        reads the default as unset too), so every entry point runs to the same limit."""
        own = self.config.get("recursion_limit") if self.config else None
        if own is None or config is None:
            return config
        if config.get("recursion_limit") == DEFAULT_RECURSION_LIMIT:
            return {**config, "recursion_limit": own}
        return config

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """LangGraph's ``invoke``; a run paused on any interrupt reads ``WAITING``, and a
        structured answer is of the graph's ``response_format`` type."""
        return self._typed(waiting_output(super().invoke(input, config, **kwargs)))

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """LangGraph's ``ainvoke``, read as :meth:`invoke`'s result is."""
        return self._typed(waiting_output(await super().ainvoke(input, config, **kwargs)))

    def _typed(self, out: Any) -> Any:
        """``out`` with its ``structured_response`` (JSON data in the state) validated as
        the answer format's type, as ``create_agent`` returns it."""
        answer = self.answer_format
        if answer is None or not isinstance(out, dict):
            return out
        if out.get("structured_response") is None:
            return out
        return {**out, "structured_response": answer.typed(out["structured_response"])}

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """LangGraph's ``get_state``; a run paused on any interrupt reads ``WAITING``."""
        self._require_thread(config)
        return waiting_snapshot(super().get_state(config, subgraphs=subgraphs))

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        self._require_thread(config)
        return waiting_snapshot(await super().aget_state(config, subgraphs=subgraphs))

    def get_state_history(self, config: RunnableConfig, **kwargs: Any) -> Iterator[StateSnapshot]:
        self._require_thread(config)
        return super().get_state_history(config, **kwargs)

    def aget_state_history(
        self, config: RunnableConfig, **kwargs: Any
    ) -> AsyncIterator[StateSnapshot]:
        self._require_thread(config)
        return super().aget_state_history(config, **kwargs)

    def bulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]
    ) -> RunnableConfig:
        """LangGraph's ``bulk_update_state`` (and so ``update_state``), once the config
        names a thread and its checkpoint waits for no answer."""
        self._require_thread(config)
        no_edit_while_waiting(self._thread(config), super().get_state(config).interrupts)
        return super().bulk_update_state(config, supersteps)

    async def abulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]
    ) -> RunnableConfig:
        self._require_thread(config)
        waiting = (await super().aget_state(config)).interrupts
        no_edit_while_waiting(self._thread(config), waiting)
        return await super().abulk_update_state(config, supersteps)


def _resumes(input: Any) -> bool:
    """Whether ``input`` answers a pause (``Command(resume=...)``)."""
    return isinstance(input, Command) and input.resume is not None


def _leased(
    store: ExecutionStore,
    thread: str,
    inner: Iterator[Any],
    checkpoints: CheckpointLog | None = None,
) -> Iterator[Any]:
    """``inner``'s chunks under the thread's run lease, taken at the first chunk asked
    for (a stream never iterated takes nothing) and released when it ends or is closed,
    once the stream's checkpoints are logged; then the bug of a tool that stopped the run
    is raised (:mod:`~execgraph.state.errors.tool_bugs`)."""
    with held_run(store, thread):
        try:
            yield from inner
        finally:
            if checkpoints is not None:
                checkpoints.flush()
    _raise_due(thread)


def _raise_due(thread: str) -> None:
    """Raise the exception of the tool bug that stopped the thread's run, if one did."""
    bug = take_due(thread)
    if bug is not None:
        raise bug


async def _aleased(
    store: ExecutionStore,
    thread: str,
    inner: AsyncIterator[Any],
    checkpoints: CheckpointLog | None = None,
) -> AsyncIterator[Any]:
    """:func:`_leased` for ``astream``; the lease is taken and released off the loop,
    and released only once ``inner`` is closed (the run has stopped)."""
    lease = held_run(store, thread)
    await asyncio.to_thread(lease.__enter__)
    raised: tuple[Any, Any, Any] = (None, None, None)
    try:
        async for chunk in inner:
            yield chunk
        _raise_due(thread)
    except BaseException as exc:
        raised = (type(exc), exc, exc.__traceback__)
        raise
    finally:
        closing = getattr(inner, "aclose", None)
        try:
            if closing is not None:
                await closing()
            if checkpoints is not None:
                await asyncio.to_thread(checkpoints.flush)
        finally:
            await asyncio.to_thread(lease.__exit__, *raised)


def attrs_of(graph: CompiledStateGraph[Any, Any, Any, Any]) -> dict[str, Any]:
    """What rebuilds ``graph`` as another class: the same object graph, as LangGraph's own
    ``copy`` rebuilds one (``with_config`` and ``copy`` keep the class)."""
    return {k: v for k, v in graph.__dict__.items() if k != "__orig_class__"}


def thread_bound(
    graph: RunGraph,
    store: ExecutionStore | None = None,
    release_ref: str | None = None,
    answer_format: AnswerFormat | None = None,
) -> RunGraph:
    """``graph`` as a :class:`ThreadBoundGraph` over the execution store ``store``, of the
    release ``release_ref``, answering in ``answer_format``."""
    return ThreadBoundGraph(
        **attrs_of(graph), run_store=store, release_ref=release_ref, answer_format=answer_format
    )
