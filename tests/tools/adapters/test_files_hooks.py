"""FileAdapter specs and hooks: declarations, verify, reconcile from intent notes, read_state."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import ValidationError

from execgraph.state.errors import PathEscapeError, ToolCancelled, VerificationError
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.adapters.files import ABSENT
from execgraph.tools.registry import ToolRegistry
from tests.tools.adapters.file_helpers import args, ctx_for, sha, spec

# ------------------------------------------------------------------ specs


def test_tool_specs_declare_effects_locks_and_hooks(adapter: FileAdapter) -> None:
    specs = {s.name: s for s in adapter.tools()}
    assert sorted(specs) == ["list_files", "patch_file", "read_file", "write_file"]
    assert {n: s.effect for n, s in specs.items()} == {
        "list_files": "read",
        "patch_file": "write",
        "read_file": "read",
        "write_file": "write",
    }
    for name in ("write_file", "patch_file"):
        assert specs[name].locks == ("file:{path}",)
        assert specs[name].path_args == ("path",)
        assert specs[name].verify is not None and specs[name].reconcile is not None
        assert specs[name].read_state is not None
        assert specs[name].targets == ("file:{path}",)  # named as a read's evidence names it
    assert specs["read_file"].read_state is not None
    with pytest.raises(ValidationError):
        specs["write_file"].input_model.model_validate({"path": "a", "content": "", "mode": 1})
    with pytest.raises(ValidationError):
        specs["patch_file"].input_model.model_validate({"path": "a", "old": "", "new": "x"})


def test_adapter_registers_in_registry(adapter: FileAdapter) -> None:
    registry = ToolRegistry([adapter])
    assert registry.names() == ["list_files", "patch_file", "read_file", "write_file"]
    assert registry.resolve("write_file", "1.0.0").effect == "write"
    adapter.close()


# ------------------------------------------------------------------ hooks


def test_verify_reads_after_write_and_detects_tampering(adapter: FileAdapter, root: Path) -> None:
    ctx = ctx_for(root)
    s = spec(adapter, "write_file")
    a = args(adapter, "write_file", path="v.txt", content="v1")
    out = s.run(a, ctx)
    assert s.verify is not None
    (ev,) = s.verify(a, out, ctx)
    assert (ev.source_id, ev.kind, ev.value, ev.verified) == (
        "file:v.txt",
        "file_hash",
        sha("v1"),
        True,
    )
    (root / "v.txt").write_text("someone else")
    with pytest.raises(VerificationError):
        s.verify(a, out, ctx)
    (root / "v.txt").unlink()
    with pytest.raises(VerificationError):
        s.verify(a, out, ctx)


def test_reconcile_write_tells_committed_pre_image_and_unknown(
    adapter: FileAdapter, root: Path
) -> None:
    (root / "r.txt").write_text("before")
    s = spec(adapter, "write_file")
    assert s.reconcile is not None
    a = args(adapter, "write_file", path="r.txt", content="after")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ToolCancelled):  # journaled, then stopped before the effect
        s.run(a, ctx_for(root, "lost", cancel=cancel))
    not_yet = s.reconcile(a, ctx_for(root, "lost"))
    assert not_yet is not None and not_yet.committed is False
    s.run(a, ctx_for(root, "lost"))
    done = s.reconcile(a, ctx_for(root, "lost"))
    assert done is not None and done.committed is True
    (root / "r.txt").write_text("a third thing")
    assert s.reconcile(a, ctx_for(root, "lost")) is None
    # A fresh process knows the intent from the arguments alone.
    (root / "r.txt").write_text("after")
    fresh = spec(FileAdapter(root), "write_file").reconcile
    assert fresh is not None
    probe = fresh(a, ctx_for(root, "lost"))
    assert probe is not None and probe.committed is True


def test_reconcile_patch_uses_recorded_hashes(adapter: FileAdapter, root: Path) -> None:
    (root / "p.txt").write_text("x = 1\n")
    s = spec(adapter, "patch_file")
    assert s.reconcile is not None
    a = args(adapter, "patch_file", path="p.txt", old="x = 1", new="x = 2")
    s.run(a, ctx_for(root, "p1"))
    result = s.reconcile(a, ctx_for(root, "p1"))
    assert result is not None and result.committed is True
    (root / "p.txt").write_text("x = 1\n")
    result = s.reconcile(a, ctx_for(root, "p1"))
    assert result is not None and result.committed is False
    # A new process reads the durable intent note, so it can still prove the patch absent.
    other = spec(FileAdapter(root), "patch_file").reconcile
    assert other is not None
    fresh = other(a, ctx_for(root, "p1"))
    assert fresh is not None and fresh.committed is False
    (root / "p.txt").write_text("something else entirely\n")
    assert other(a, ctx_for(root, "p1")) is None  # neither pre-image nor intent: cannot tell
    never = other(a, ctx_for(root, "never-started"))
    assert never is not None and never.committed is False  # no note: the write never began


def test_read_state_reports_sha256_or_absent(adapter: FileAdapter, root: Path) -> None:
    s = spec(adapter, "write_file")
    assert s.read_state is not None
    a = args(adapter, "write_file", path="cas.txt", content="new")
    assert s.read_state("sha256", a, root) == ABSENT
    (root / "cas.txt").write_text("v1")
    assert s.read_state("sha256", a, root) == sha("v1")
    assert s.read_state("etag", a, root) is None
    with pytest.raises(PathEscapeError):
        s.read_state("sha256", args(adapter, "write_file", path="../x", content=""), root)


def test_read_state_answers_the_files_target_name_with_its_read_evidence_value(
    adapter: FileAdapter, root: Path
) -> None:
    (root / "cas.txt").write_text("v1")
    read = spec(adapter, "read_file").run(
        args(adapter, "read_file", path="./cas.txt"), ctx_for(root)
    )
    [observed] = [e for e in read.evidence if e.source_id == "file:cas.txt"]
    s = spec(adapter, "write_file")
    assert s.read_state is not None
    a = args(adapter, "write_file", path="./cas.txt", content="new")
    assert s.read_state("file:cas.txt", a, root) == observed.value == sha("v1")
    assert s.read_state("file:other.txt", a, root) is None  # another file is not this call's
