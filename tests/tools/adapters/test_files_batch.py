"""FileAdapter write_files: several files one by one; a midway stop is ``partial`` with a
recovery manifest (written paths, pending paths, backups) that finishes or undoes it."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest

import execgraph.tools.adapters.file_batch as file_batch
from execgraph.state.errors import PermanentError, PolicyDenied, TransientError
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.adapters.file_batch import undo_files
from tests.tools.adapters.file_helpers import call, ctx_for

FILES = [
    {"path": "a.txt", "content": "new a"},
    {"path": "sub/b.txt", "content": "new b"},
    {"path": "c.txt", "content": "new c"},
]


def _fail_on(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Fault injection: the replace of the target ``name`` fails as a full disk would."""
    real = file_batch._put_target

    def put(dir_fd: int, entry: str, data: bytes, mode: int = 0o644, **kw: Any) -> None:
        if entry == name:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(dir_fd, entry, data, mode, **kw)

    monkeypatch.setattr(file_batch, "_put_target", put)


@pytest.fixture
def batch(root: Path) -> FileAdapter:
    (root / "a.txt").write_text("old a")
    (root / "c.txt").write_text("old c")
    return FileAdapter(root, write_files=True)


def _contents(root: Path) -> dict[str, str | None]:
    return {
        f["path"]: (root / f["path"]).read_text() if (root / f["path"]).exists() else None
        for f in FILES
    }


def test_write_files_is_opt_in(root: Path) -> None:
    assert "write_files" not in {s.name for s in FileAdapter(root).tools()}


def test_all_files_written(batch: FileAdapter, root: Path) -> None:
    out = call(batch, "write_files", ctx_for(root), files=FILES)
    assert out.partial is None and out.committed is True
    assert _contents(root) == {"a.txt": "new a", "sub/b.txt": "new b", "c.txt": "new c"}
    assert len(out.evidence) == 3


def test_midway_failure_is_partial_with_backups_and_undo(
    batch: FileAdapter, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on(monkeypatch, "c.txt")
    out = call(batch, "write_files", ctx_for(root), files=FILES)
    partial = out.partial
    assert partial is not None and out.committed is True
    assert partial.committed == ["a.txt", "sub/b.txt"] and partial.pending == ["c.txt"]
    assert partial.stopped_by is not None and partial.stopped_by.startswith("TransientError")
    ref = partial.recovery_ref
    assert ref is not None and ref.kind == "files"
    assert (root / ref.ref).is_file()  # the manifest, in the workspace journal
    assert ref.backups["sub/b.txt"] == ""  # it did not exist: undo removes it
    assert (root / ref.backups["a.txt"]).read_text() == "old a"
    assert _contents(root) == {"a.txt": "new a", "sub/b.txt": "new b", "c.txt": "old c"}
    # Undo puts back exactly what the call wrote.
    assert undo_files(root, ref.ref) == ["a.txt", "sub/b.txt"]
    assert _contents(root) == {"a.txt": "old a", "sub/b.txt": None, "c.txt": "old c"}


def test_undo_leaves_a_file_changed_since_alone(
    batch: FileAdapter, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on(monkeypatch, "c.txt")
    out = call(batch, "write_files", ctx_for(root), files=FILES)
    (root / "a.txt").write_text("edited by a person")
    assert out.partial is not None and out.partial.recovery_ref is not None
    assert undo_files(root, out.partial.recovery_ref.ref) == ["sub/b.txt"]
    assert (root / "a.txt").read_text() == "edited by a person"


def test_finish_with_the_pending_files(
    batch: FileAdapter, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on(monkeypatch, "c.txt")
    out = call(batch, "write_files", ctx_for(root), files=FILES)
    monkeypatch.undo()
    pending = [f for f in FILES if f["path"] in out.data["pending"]]
    again = call(batch, "write_files", ctx_for(root, call_id="c2"), files=pending)
    assert again.partial is None
    assert _contents(root) == {"a.txt": "new a", "sub/b.txt": "new b", "c.txt": "new c"}


def test_failure_at_the_first_file_writes_nothing(
    batch: FileAdapter, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fail_on(monkeypatch, "a.txt")
    with pytest.raises(TransientError):
        call(batch, "write_files", ctx_for(root), files=FILES)
    assert _contents(root) == {"a.txt": "old a", "sub/b.txt": None, "c.txt": "old c"}


def test_every_path_is_checked_before_any_write(batch: FileAdapter, root: Path) -> None:
    (root / "d").mkdir()
    with pytest.raises(PermanentError):  # a directory target: found when loading, not midway
        call(batch, "write_files", ctx_for(root), files=[*FILES, {"path": "d", "content": ""}])
    with pytest.raises(PolicyDenied):
        call(batch, "write_files", ctx_for(root, data_scope=("sub/**",)), files=FILES)
    with pytest.raises(PermanentError):
        call(batch, "write_files", ctx_for(root), files=[FILES[0], FILES[0]])
    assert _contents(root) == {"a.txt": "old a", "sub/b.txt": None, "c.txt": "old c"}
    assert not os.path.exists(root / "sub")


def test_reconcile_tells_from_the_manifest_and_the_hashes(
    batch: FileAdapter, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (spec,) = [s for s in batch.tools() if s.name == "write_files"]
    assert spec.reconcile is not None
    args = spec.input_model.model_validate({"files": FILES})
    never = spec.reconcile(args, ctx_for(root, call_id="never"))
    assert never is not None and never.committed is False  # no manifest: nothing written
    _fail_on(monkeypatch, "c.txt")
    call(batch, "write_files", ctx_for(root, call_id="cut"), files=FILES)
    found = spec.reconcile(args, ctx_for(root, call_id="cut"))
    assert found is not None and found.partial is not None
    assert found.partial.committed == ["a.txt", "sub/b.txt"] and found.partial.pending == ["c.txt"]
    monkeypatch.undo()
    call(batch, "write_files", ctx_for(root, call_id="whole"), files=FILES)
    whole = spec.reconcile(args, ctx_for(root, call_id="whole"))
    assert whole is not None and whole.committed is True and whole.partial is None
    (root / "a.txt").write_text("someone else")  # neither old nor new: a person must look
    assert spec.reconcile(args, ctx_for(root, call_id="whole")) is None
