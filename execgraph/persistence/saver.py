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

Every SQLite failure (a full disk, a read-only or unwritable home) becomes a
:class:`~execgraph.state.errors.StoreError` naming the database file, from opening it to
every read and write, so a caller never meets a raw ``sqlite3.OperationalError``.

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

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from execgraph.persistence.async_over_sync import AsyncOverSync
from execgraph.persistence.shared_strings import SharingSerializer
from execgraph.state.errors import StoreError
from execgraph.state.home import private_file
from execgraph.state.store.wal import use_wal

__all__ = ["EmbeddedSqliteSaver", "open_embedded_saver"]

_BUSY_TIMEOUT_S = 30.0  # as the execution store's: another process's write is waited for


class EmbeddedSqliteSaver(AsyncOverSync, SqliteSaver):
    """A ``SqliteSaver`` that also serves LangGraph's async methods, off the event loop."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        path: Path | None = None,
        serde: SerializerProtocol | None = None,
    ) -> None:
        self.sharing = SharingSerializer(serde or JsonPlusSerializer(), self._shared)
        super().__init__(conn, serde=self.sharing)
        self.path = path
        self._writer = threading.local()  # the thread id of the row being written

    def setup(self) -> None:
        """``SqliteSaver``'s tables, and the one for strings stored once."""
        if self.is_setup:
            return
        super().setup()
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS shared_strings (thread_id TEXT NOT NULL, "
            "ref TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (thread_id, ref))"
        )

    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        """``SqliteSaver.cursor`` (every read and write goes through it), with SQLite's
        errors turned into a :class:`StoreError` that names the file, and the long
        strings of the rows written stored in their transaction."""
        try:
            with super().cursor(transaction) as cur:
                yield cur
                shared = self.sharing.take_pending()
                if shared:
                    thread = getattr(self._writer, "thread_id", "")
                    cur.executemany(
                        "INSERT OR IGNORE INTO shared_strings (thread_id, ref, data) "
                        "VALUES (?, ?, ?)",
                        [(thread, ref, data) for ref, data in shared],
                    )
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from exc

    def _shared(self, refs: Iterable[str]) -> dict[str, bytes]:
        """Strings stored once, by ref (read while a saver method holds the connection)."""
        wanted = sorted(refs)
        marks = ", ".join("?" * len(wanted))
        rows = self.conn.execute(
            f"SELECT ref, data FROM shared_strings WHERE ref IN ({marks})", wanted
        ).fetchall()
        return {ref: bytes(data) for ref, data in rows}

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``SqliteSaver.put``, its long strings filed under the thread."""
        self._writer.thread_id = str(config["configurable"]["thread_id"])
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``SqliteSaver.put_writes``, its long strings filed under the thread."""
        self._writer.thread_id = str(config["configurable"]["thread_id"])
        super().put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """``SqliteSaver.delete_thread``, and the thread's shared strings with it."""
        super().delete_thread(thread_id)
        with self.cursor() as cur:
            cur.execute("DELETE FROM shared_strings WHERE thread_id = ?", (str(thread_id),))

    def get_next_version(self, current: str | int | None, channel: None) -> Any:
        """The next integer version (a thread begun under string versions keeps them)."""
        if isinstance(current, str):
            return super().get_next_version(current, channel)
        return (current or 0) + 1


def open_embedded_saver(path: Path) -> EmbeddedSqliteSaver:
    """The saver over ``path`` (created with its directory), in WAL mode so another
    process can read checkpoints while a run writes them. Its tables are made here, so a
    full disk or an unwritable home is a :class:`StoreError` at build time, not mid-run.
    Another process writing the file, or making it at the same moment, is waited for up
    to the same busy timeout as the execution store's."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        private_file(path)  # 0600, and so its WAL and shared memory
    except OSError as exc:
        raise _store_error(path, exc) from exc
    try:
        conn = sqlite3.connect(path, check_same_thread=False, timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise _store_error(path, exc) from exc
    try:
        use_wal(conn, _BUSY_TIMEOUT_S)  # before SqliteSaver's own switch, which cannot wait
    except sqlite3.Error as exc:
        conn.close()
        raise _store_error(path, exc) from exc
    saver = EmbeddedSqliteSaver(conn, path=path)
    try:
        with saver.cursor():  # SqliteSaver.setup(): the tables before the first run
            pass
    except StoreError:
        conn.close()
        raise
    return saver


def _store_error(path: Path | None, exc: BaseException) -> StoreError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f" at {path}" if path is not None else ""
    return StoreError(f"the checkpoint database{where} is not usable: {reason}")
