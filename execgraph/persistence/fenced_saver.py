"""Checkpoints of a run are written only by the worker holding its run lease.

The execution store fences a stale worker's commits (:mod:`.run_lease`), but a worker
stopped past its lease (``SIGSTOP``, a swap storm, a paused VM) and woken after another
worker took the run over would still go on with the graph it had in memory: its next
step's checkpoint would overwrite the new owner's, and a run another worker finished
would appear to end again, as this one saw it. So while a run graph streams, LangGraph
is handed its checkpointer wrapped in :class:`FencedSaver` (through the run's config,
``CONFIG_KEY_CHECKPOINTER``: the graph's own ``checkpointer`` attribute stays what it
was), whose writes (``put``/``put_writes`` and their async twins) first ask
:func:`~execgraph.persistence.run_lease.check_run_fence`: a worker whose run lease was
taken over gets :class:`~execgraph.state.errors.FencedOut` and writes nothing; the run
stops there with that error. Reads, and writes outside a run this process holds (a
state update), pass through unchanged.

Each checkpoint it writes is then logged as ``state.checkpointed`` in the run's event log
(:mod:`.checkpoint_log`): this wrapper is where a run's checkpointer and its execution
store meet.

Not covered: a worker stopped after the check and before its write lands (the check and
the write are not one transaction; the window is one statement wide).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from execgraph.persistence.checkpoint_log import CheckpointLog
from execgraph.persistence.run_lease import check_run_fence
from execgraph.state.store.base import ExecutionStore

__all__ = ["FencedSaver"]


class FencedSaver(BaseCheckpointSaver[Any]):
    """``inner`` whose writes of a run are refused once this worker lost its run lease."""

    def __init__(self, inner: BaseCheckpointSaver[Any], store: ExecutionStore) -> None:
        super().__init__(serde=inner.serde)
        self.inner, self.store = inner, store
        self.checkpoints = CheckpointLog(store)  # flushed when the run's stream ends

    def _check(self, config: RunnableConfig) -> None:
        thread = (config.get("configurable") or {}).get("thread_id")
        if thread:
            check_run_fence(self.store, str(thread))

    # -- writes: fenced ---------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self._check(config)
        saved = self.inner.put(config, checkpoint, metadata, new_versions)
        if self.checkpoints.note(saved, metadata):
            self.checkpoints.flush()
        return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._check(config)
        self.inner.put_writes(config, writes, task_id, task_path)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        self._check(config)  # one cheap check; a store read only for a stalled worker
        saved = await self.inner.aput(config, checkpoint, metadata, new_versions)
        if self.checkpoints.note(saved, metadata):
            await asyncio.to_thread(self.checkpoints.flush)  # a store write: off the loop
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._check(config)
        await self.inner.aput_writes(config, writes, task_id, task_path)

    # -- everything else: the inner saver's -------------------------------------------

    @property
    def config_specs(self) -> list[Any]:
        return self.inner.config_specs

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        return self.inner.alist(config, filter=filter, before=before, limit=limit)

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> FencedSaver:
        inner = self.inner.with_allowlist(extra_allowlist)
        return self if inner is self.inner else FencedSaver(inner, self.store)

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.inner.delete_for_runs(run_ids)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.inner.copy_thread(source_thread_id, target_thread_id)
