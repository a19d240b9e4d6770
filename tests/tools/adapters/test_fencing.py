"""The built-in adapters check the call's fence right at the effect: a stale owner (its
call taken over by another worker while it stalled) is refused with ``FencedOut`` and
changes nothing — no file replaced, no temp file left, no row committed.

The HTTP adapter's fence (a header, and a check before each send) is tested with its
server in ``test_http.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from execgraph.state.errors import FencedOut
from execgraph.tools.adapters import FileAdapter
from tests.tools.adapters import database_helpers as dbh
from tests.tools.adapters.database_helpers import Db
from tests.tools.adapters.file_helpers import call, ctx_for


class _Fence:
    """Whether the fence is still this worker's, answered ``held`` times, then lost."""

    def __init__(self, held: int) -> None:
        self.held, self.asked = held, 0

    def __call__(self) -> bool:
        self.asked += 1
        return self.asked <= self.held


def test_a_stale_owner_writes_no_file(adapter: FileAdapter, root: Path) -> None:
    (root / "a.txt").write_text("old")
    ctx = ctx_for(root, fence=2, holds_fence=_Fence(0))
    with pytest.raises(FencedOut):
        call(adapter, "write_file", ctx, path="a.txt", content="new")
    assert (root / "a.txt").read_text() == "old"
    assert ctx.cancel.is_set()  # told to stop, as a lost lease tells it


def test_a_fence_lost_while_the_temp_file_was_written_refuses_the_rename(
    adapter: FileAdapter, root: Path
) -> None:
    (root / "a.txt").write_text("old")
    fence = _Fence(1)  # held at the start, lost by the rename
    with pytest.raises(FencedOut):
        call(adapter, "write_file", ctx_for(root, fence=2, holds_fence=fence), path="a.txt",
             content="new")  # fmt: skip
    assert fence.asked == 2
    assert (root / "a.txt").read_text() == "old"
    assert sorted(p.name for p in root.iterdir() if p.name.endswith(".tmp")) == []


def test_a_held_fence_writes(adapter: FileAdapter, root: Path) -> None:
    fence = _Fence(10)
    out = call(adapter, "write_file", ctx_for(root, fence=1, holds_fence=fence), path="b.txt",
               content="new")  # fmt: skip
    assert out.committed is True and (root / "b.txt").read_text() == "new"
    assert fence.asked == 2  # before anything, and right before the rename


def test_a_stale_owner_commits_no_row(db: Db, tmp_path: Path) -> None:
    adapter = dbh.shop(db)
    before = dbh.count(db)
    ctx = dbh.make_ctx(tmp_path, fence=2, holds_fence=_Fence(0))
    with pytest.raises(FencedOut):
        dbh.call(adapter, "add_order", ctx, customer="cy", item="rug", qty=3)
    assert dbh.count(db) == before  # the statement ran, its transaction was rolled back
    out = dbh.call(adapter, "add_order", dbh.make_ctx(tmp_path, fence=3), customer="cy",
                   item="rug", qty=3)  # fmt: skip
    assert out.committed is True and dbh.count(db) == before + 1
