"""The embedded default checkpointer: LangGraph's ``SqliteSaver``, under sync and async.

``build_graph`` with no ``checkpointer=`` must serve ``invoke``/``stream`` and
``ainvoke``/``astream``/``astream_events`` alike, on one SQLite file, so a thread started
one way can be continued the other. ``SqliteSaver`` refuses every async method, and
LangGraph's ``AsyncSqliteSaver`` cannot be the default either: it binds to the event loop
running when it is created (``build_graph`` is called outside any loop, and a script may
run several ``asyncio.run`` in turn), its sync methods only work from another thread than
that loop's, and its ``aiosqlite`` connection runs on a non-daemon thread that keeps the
process alive until someone closes it. So the default is one ``SqliteSaver`` whose async
methods run its sync ones on a worker thread: one connection and one lock for both, the
same rows either way, and nothing to open or close per loop.

Channel versions are plain integers, as LangGraph's ``InMemorySaver`` makes them, not
``SqliteSaver``'s ``"<32 digits>.<random float>"`` strings: every checkpoint holds a
version per channel and per node that has seen it (about 30 on a run graph), so the
strings were over a kilobyte of each step's checkpoint. The random part keeps versions
unique across forks for savers that file channel values under their version (PostgreSQL's
blobs); ``SqliteSaver`` keeps them inline in the checkpoint, so nothing is keyed by
them here. A thread begun under string versions continues with them, so a thread's
versions always compare with each other.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)
from langgraph.checkpoint.sqlite import SqliteSaver

__all__ = ["EmbeddedSqliteSaver", "open_embedded_saver"]


class EmbeddedSqliteSaver(SqliteSaver):
    """A ``SqliteSaver`` that also serves LangGraph's async methods, off the event loop."""

    def get_next_version(self, current: str | int | None, channel: None) -> Any:
        """The next integer version (a thread begun under string versions keeps them)."""
        if isinstance(current, str):
            return super().get_next_version(current, channel)
        return (current or 0) + 1

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` on a worker thread."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list`` on a worker thread, read whole there: the sync generator holds the
        saver's lock while it iterates, which must not span the caller's awaits."""

        def read() -> list[CheckpointTuple]:
            return list(self.list(config, filter=filter, before=before, limit=limit))

        for item in await asyncio.to_thread(read):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put`` on a worker thread."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes`` on a worker thread."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread`` on a worker thread."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """``SqliteSaver``'s fast path for the delta channels, on a worker thread."""
        return await asyncio.to_thread(
            lambda: self.get_delta_channel_history(config=config, channels=channels)
        )


def open_embedded_saver(path: Path) -> EmbeddedSqliteSaver:
    """The saver over ``path`` (created with its directory), in WAL mode so another
    process can read checkpoints while a run writes them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    return EmbeddedSqliteSaver(conn)
