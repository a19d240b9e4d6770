"""FileAdapter write_file and patch_file: atomic replacement, diffs, typed failures."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from execgraph.state.errors import DeadlineExceeded, PermanentError, TargetNotFound, ToolCancelled
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.adapters.file_journal import JOURNAL_DIR
from execgraph.tools.adapters.files import ABSENT
from tests.tools.adapters.file_helpers import Artifacts, call, ctx_for, sha

# ------------------------------------------------------------------ write_file


def test_write_creates_parents_atomically_with_evidence(adapter: FileAdapter, root: Path) -> None:
    out = call(adapter, "write_file", ctx_for(root), path="a/b/c.txt", content="hi\n")
    assert (root / "a/b/c.txt").read_text() == "hi\n"
    assert out.committed is True
    assert out.data["sha256_before"] == ABSENT and out.data["sha256_after"] == sha("hi\n")
    assert out.data["changed"] is True
    kinds = {e.kind: e for e in out.evidence}
    assert kinds["file_write"].value == ABSENT + "->" + sha("hi\n")
    assert "+hi" in kinds["file_diff"].value
    assert [p.name for p in (root / "a/b").iterdir()] == ["c.txt"]  # no temp file left


def test_write_replaces_content_keeps_mode_and_diffs(adapter: FileAdapter, root: Path) -> None:
    target = root / "run.sh"
    target.write_text("echo one\necho two\n")
    target.chmod(0o750)
    out = call(adapter, "write_file", ctx_for(root), path="run.sh", content="echo one\necho 2\n")
    assert target.read_text() == "echo one\necho 2\n"
    assert target.stat().st_mode & 0o777 == 0o750
    assert out.data["sha256_before"] == sha("echo one\necho two\n")
    assert "-echo two" in out.data["diff"] and "+echo 2" in out.data["diff"]
    assert out.data["diff"].startswith("run.sh: +1 -1 lines")


def test_large_diff_is_bounded_and_full_diff_is_an_artifact(
    adapter: FileAdapter, root: Path, artifacts: Artifacts
) -> None:
    (root / "f.txt").write_text("".join(f"old {i}\n" for i in range(500)))
    new = "".join(f"new {i}\n" for i in range(500))
    ctx = ctx_for(root, put_artifact=artifacts.put)
    out = call(adapter, "write_file", ctx, path="f.txt", content=new)
    diff_ev = next(e for e in out.evidence if e.kind == "file_diff")
    assert len(diff_ev.value) < 5000 and diff_ev.value.endswith("(diff truncated)\n")
    full, kind = artifacts.items[diff_ev.ref or ""]
    assert kind == "diff" and full.decode().count("\n+new ") == 500


def test_write_onto_directory_and_through_file_fail_typed(adapter: FileAdapter, root: Path) -> None:
    (root / "d").mkdir()
    (root / "f").write_text("x")
    with pytest.raises(PermanentError):
        call(adapter, "write_file", ctx_for(root), path="d", content="x")
    with pytest.raises(PermanentError) as info:
        call(adapter, "write_file", ctx_for(root), path="f/child.txt", content="x")
    assert "not a directory" in info.value.message


def test_concurrent_writes_never_tear_a_file(adapter: FileAdapter, root: Path) -> None:
    versions = [bytes([65 + i]) * 200_000 for i in range(6)]
    (root / "shared.bin").write_bytes(versions[0])
    seen: list[bytes] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            seen.append((root / "shared.bin").read_bytes())

    def writer(i: int) -> None:
        for _ in range(5):
            call(
                adapter,
                "write_file",
                ctx_for(root, f"w{i}"),
                path="shared.bin",
                content=versions[i].decode(),
            )

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(len(versions))]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    watcher.join()
    assert seen and all(content in versions for content in seen)
    assert (root / "shared.bin").read_bytes() in versions
    # no temp file left behind; the intent notes live in their own hidden directory
    assert sorted(p.name for p in root.iterdir()) == [JOURNAL_DIR, "shared.bin"]
    assert all(p.suffix == ".json" for p in (root / JOURNAL_DIR).iterdir())


def test_cancel_or_deadline_before_start_writes_nothing(adapter: FileAdapter, root: Path) -> None:
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(ToolCancelled):
        call(adapter, "write_file", ctx_for(root, cancel=cancelled), path="x.txt", content="x")
    with pytest.raises(DeadlineExceeded):
        call(
            adapter,
            "write_file",
            ctx_for(root, deadline=time.time() - 1),
            path="x.txt",
            content="x",
        )
    assert list(root.iterdir()) == []


# ------------------------------------------------------------------ patch_file


def test_patch_replaces_a_unique_occurrence(adapter: FileAdapter, root: Path) -> None:
    (root / "cfg.ini").write_text("[a]\nport = 80\nhost = x\n")
    out = call(
        adapter, "patch_file", ctx_for(root), path="cfg.ini", old="port = 80", new="port = 8080"
    )
    assert (root / "cfg.ini").read_text() == "[a]\nport = 8080\nhost = x\n"
    assert out.committed is True and out.data["sha256_after"] == sha("[a]\nport = 8080\nhost = x\n")


def test_patch_absent_ambiguous_missing_binary_fail_typed(adapter: FileAdapter, root: Path) -> None:
    (root / "t.txt").write_text("aa bb aa")
    (root / "b.bin").write_bytes(b"\xff\xfeaa")
    ctx = ctx_for(root)
    with pytest.raises(TargetNotFound):
        call(adapter, "patch_file", ctx, path="t.txt", old="zz", new="y")
    with pytest.raises(PermanentError) as info:
        call(adapter, "patch_file", ctx, path="t.txt", old="aa", new="y")
    assert "2 times" in info.value.message
    with pytest.raises(TargetNotFound):
        call(adapter, "patch_file", ctx, path="missing.txt", old="a", new="b")
    with pytest.raises(PermanentError):
        call(adapter, "patch_file", ctx, path="b.bin", old="aa", new="b")
    assert (root / "t.txt").read_text() == "aa bb aa"


def test_rewriting_identical_content_is_a_committed_no_change(
    adapter: FileAdapter, root: Path
) -> None:
    (root / "same.txt").write_text("same")
    out = call(adapter, "write_file", ctx_for(root), path="same.txt", content="same")
    assert out.committed is True and out.data["changed"] is False
    assert out.data["diff"].startswith("same.txt: +0 -0 lines")
