"""FileAdapter against real files in tmp_path: confinement, atomic writes, evidence, hooks."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from state.errors import (
    DeadlineExceeded,
    PathEscapeError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    VerificationError,
)
from tools.adapters import FileAdapter, InvokeContext
from tools.adapters.base import AdapterOutput
from tools.adapters.files import ABSENT, JOURNAL_DIR
from tools.registry import ToolRegistry
from tools.spec import ToolSpec


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


class Artifacts:
    """A real in-memory artifact store (a fake, not a mock)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[bytes, str]] = {}

    def put(self, data: bytes, kind: str) -> str:
        ref = f"artifact-{len(self.items)}"
        self.items[ref] = (data, kind)
        return ref


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def adapter(root: Path) -> FileAdapter:
    return FileAdapter(root)


@pytest.fixture
def artifacts() -> Artifacts:
    return Artifacts()


def ctx_for(root: Path, call_id: str = "c1", **kw: Any) -> InvokeContext:
    return InvokeContext(run_id="r1", call_id=call_id, attempt_id="a1", workspace_root=root, **kw)


def spec(adapter: FileAdapter, name: str) -> ToolSpec:
    return {s.name: s for s in adapter.tools()}[name]


def call(adapter: FileAdapter, name: str, ctx: InvokeContext, **args: Any) -> AdapterOutput:
    s = spec(adapter, name)
    return s.run(s.input_model.model_validate(args), ctx)


def args(adapter: FileAdapter, name: str, **values: Any) -> BaseModel:
    return spec(adapter, name).input_model.model_validate(values)


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


# ------------------------------------------------------------------ read_file


def test_read_returns_content_hash_and_verified_evidence(adapter: FileAdapter, root: Path) -> None:
    (root / "notes.txt").write_text("hello\n")
    out = call(adapter, "read_file", ctx_for(root), path="notes.txt")
    assert out.data["content"] == "hello\n"
    assert out.data["sha256"] == sha("hello\n")
    assert out.truncated is False and out.data["next_offset"] is None
    assert out.committed is False
    (ev,) = out.evidence
    assert (ev.source_id, ev.kind, ev.value, ev.verified) == (
        "file:notes.txt",
        "file_hash",
        sha("hello\n"),
        True,
    )
    assert ev.call_id == "c1" and ev.version == (root / "notes.txt").stat().st_mtime_ns


def test_read_missing_file_is_target_not_found(adapter: FileAdapter, root: Path) -> None:
    with pytest.raises(TargetNotFound):
        call(adapter, "read_file", ctx_for(root), path="nope.txt")
    (root / "plain").write_text("x")
    with pytest.raises(TargetNotFound):
        call(adapter, "read_file", ctx_for(root), path="plain/child.txt")


def test_read_directory_is_permanent_error(adapter: FileAdapter, root: Path) -> None:
    (root / "d").mkdir()
    with pytest.raises(PermanentError) as info:
        call(adapter, "read_file", ctx_for(root), path="d")
    assert "directory" in info.value.message


def json_len(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())


def page_through(adapter: FileAdapter, ctx: InvokeContext, path: str) -> list[AdapterOutput]:
    pages = [call(adapter, "read_file", ctx, path=path)]
    while pages[-1].data["next_offset"] is not None:
        offset = pages[-1].data["next_offset"]
        assert offset > pages[-1].data["offset"]  # paging always advances
        pages.append(call(adapter, "read_file", ctx, path=path, offset=offset))
    return pages


def test_read_fits_budget_stores_artifact_and_pages(
    adapter: FileAdapter, root: Path, artifacts: Artifacts
) -> None:
    body = "".join(f"line {i}\tend\n" for i in range(300)).encode()
    (root / "big.txt").write_bytes(body)
    ctx = ctx_for(root, output_budget=500, put_artifact=artifacts.put)
    pages = page_through(adapter, ctx, "big.txt")
    first = pages[0]
    assert first.truncated is True and len(pages) > 2
    assert first.data["sha256"] == sha(body) and first.data["size"] == len(body)
    # The whole result, JSON-encoded as the executor bounds it, fits the budget.
    assert all(json_len(p.data) <= 500 for p in pages)
    assert "".join(p.data["content"] for p in pages).encode() == body
    assert pages[-1].truncated is False
    content_ev = [e for e in first.evidence if e.kind == "file_content"]
    assert len(content_ev) == 1 and artifacts.items[content_ev[0].ref or ""] == (body, "file")


def test_read_truncation_never_splits_a_utf8_character(adapter: FileAdapter, root: Path) -> None:
    text = "é€😀" * 200
    (root / "u.txt").write_text(text, encoding="utf-8")
    pages = page_through(adapter, ctx_for(root, output_budget=300), "u.txt")
    assert len(pages) > 2 and all(p.data["binary"] is False for p in pages)
    assert "".join(p.data["content"] for p in pages) == text
    assert all(json_len(p.data) <= 300 for p in pages)


def test_tiny_budget_still_advances(adapter: FileAdapter, root: Path) -> None:
    (root / "u.txt").write_text("éé", encoding="utf-8")
    pages = page_through(adapter, ctx_for(root, output_budget=1), "u.txt")
    assert [p.data["content"] for p in pages] == ["é", "é"]


def test_read_without_artifact_store_still_truncates(adapter: FileAdapter, root: Path) -> None:
    (root / "big.txt").write_text("x" * 1000)
    out = call(adapter, "read_file", ctx_for(root, output_budget=300), path="big.txt")
    assert out.truncated is True and 0 < len(out.data["content"]) < 300
    assert set(out.data["content"]) == {"x"}
    assert [e.kind for e in out.evidence] == ["file_hash"]


def test_max_read_bytes_caps_inline_and_artifact(root: Path, artifacts: Artifacts) -> None:
    (root / "big.bin").write_bytes(b"y" * 5000)
    small = FileAdapter(root, max_read_bytes=300)
    ctx = ctx_for(root, output_budget=400, put_artifact=artifacts.put)
    out = call(small, "read_file", ctx, path="big.bin")
    assert out.data["sha256"] == sha(b"y" * 5000) and out.truncated is True
    (stored,) = artifacts.items.values()
    assert stored == (b"y" * 300, "file")
    roomy = call(small, "read_file", ctx_for(root, output_budget=10_000), path="big.bin")
    assert roomy.data["content"] == "y" * 300 and roomy.truncated is True
    assert roomy.data["next_offset"] == 300


def test_binary_file_is_flagged(adapter: FileAdapter, root: Path) -> None:
    (root / "b.bin").write_bytes(b"\xff\xfe\x00\x81binary")
    out = call(adapter, "read_file", ctx_for(root), path="b.bin")
    assert out.data["binary"] is True and out.data["sha256"] == sha(b"\xff\xfe\x00\x81binary")


# ------------------------------------------------------------------ confinement


@pytest.mark.parametrize("bad", ["../outside.txt", "/etc/passwd", "a/../../x", "a\\..\\..\\x"])
def test_every_tool_refuses_escaping_paths(
    adapter: FileAdapter, root: Path, tmp_path: Path, bad: str
) -> None:
    ctx = ctx_for(root)
    with pytest.raises(PathEscapeError):
        call(adapter, "read_file", ctx, path=bad)
    with pytest.raises(PathEscapeError):
        call(adapter, "write_file", ctx, path=bad, content="pwned")
    with pytest.raises(PathEscapeError):
        call(adapter, "patch_file", ctx, path=bad, old="a", new="b")
    assert not (tmp_path / "outside.txt").exists() and not (tmp_path / "x").exists()


def test_symlink_escape_is_refused_for_reads_and_writes(
    adapter: FileAdapter, root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    os.symlink(outside, root / "link")
    os.symlink(outside / "secret.txt", root / "secret_link.txt")
    ctx = ctx_for(root)
    for path in ("link/secret.txt", "secret_link.txt"):
        with pytest.raises(PathEscapeError):
            call(adapter, "read_file", ctx, path=path)
        with pytest.raises(PathEscapeError):
            call(adapter, "write_file", ctx, path=path, content="pwned")
    with pytest.raises(PathEscapeError):
        call(adapter, "write_file", ctx, path="link/new/deep.txt", content="pwned")
    assert (outside / "secret.txt").read_text() == "secret"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


def test_symlink_inside_workspace_writes_its_target(adapter: FileAdapter, root: Path) -> None:
    (root / "real.txt").write_text("old")
    os.symlink(root / "real.txt", root / "alias.txt")
    call(adapter, "write_file", ctx_for(root), path="alias.txt", content="new")
    assert (root / "real.txt").read_text() == "new"
    assert (root / "alias.txt").is_symlink()


def test_context_workspace_root_wins_over_adapter_root(
    adapter: FileAdapter, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    call(adapter, "write_file", ctx_for(other), path="f.txt", content="per run")
    assert (other / "f.txt").read_text() == "per run"
    assert not (adapter.root / "f.txt").exists()


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


# ------------------------------------------------------------------ list_files


@pytest.fixture
def tree(root: Path, tmp_path: Path) -> Path:
    for rel in ("a.txt", "b.py", "src/m.py", "src/pkg/n.py", "src/pkg/data.json", ".hidden"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "leak.py").write_text("leak")
    os.symlink(outside / "leak.py", root / "leak_link.py")
    os.symlink(outside, root / "outdir")
    os.symlink(root / "src", root / "srclink")  # a directory link is never descended
    return root


def test_list_files_globs_and_hides_escapes(adapter: FileAdapter, tree: Path) -> None:
    ctx = ctx_for(tree)
    out = call(adapter, "list_files", ctx, pattern="**/*.py")
    assert out.data["files"] == ["b.py", "src/m.py", "src/pkg/n.py"]
    assert call(adapter, "list_files", ctx, pattern="*.txt").data["files"] == ["a.txt"]
    assert call(adapter, "list_files", ctx, pattern="src/*").data["files"] == ["src/m.py"]
    everything = call(adapter, "list_files", ctx).data["files"]
    assert "leak_link.py" not in everything and not any(f.startswith("out") for f in everything)
    assert ".hidden" in everything and out.evidence[0].kind == "file_listing"


def test_list_files_limit_and_budget_truncate(adapter: FileAdapter, tree: Path) -> None:
    out = call(adapter, "list_files", ctx_for(tree), pattern="**/*", limit=2)
    assert out.truncated is True and out.data["count"] == 2 and out.data["total"] > 2
    tight = call(adapter, "list_files", ctx_for(tree, output_budget=50), pattern="**/*")
    assert tight.truncated is True and tight.data["files"] == [".hidden"]
    assert json_len(tight.data) <= 50


@pytest.mark.parametrize("bad", ["../*", "/etc/*", "src/../../*", ""])
def test_list_files_refuses_escaping_patterns(adapter: FileAdapter, tree: Path, bad: str) -> None:
    with pytest.raises(PathEscapeError):
        call(adapter, "list_files", ctx_for(tree), pattern=bad)


def test_hostile_recursive_glob_stays_cheap(adapter: FileAdapter, root: Path) -> None:
    deep = root.joinpath(*["d"] * 25)
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    pattern = "/".join(["**"] * 40) + "/nomatch"
    assert call(adapter, "list_files", ctx_for(root), pattern=pattern).data["files"] == []
    hit = call(adapter, "list_files", ctx_for(root), pattern="**/**/d/**/x.txt")
    assert hit.data["files"] == ["/".join(["d"] * 25) + "/x.txt"]


def test_rewriting_identical_content_is_a_committed_no_change(
    adapter: FileAdapter, root: Path
) -> None:
    (root / "same.txt").write_text("same")
    out = call(adapter, "write_file", ctx_for(root), path="same.txt", content="same")
    assert out.committed is True and out.data["changed"] is False
    assert out.data["diff"].startswith("same.txt: +0 -0 lines")


def test_dangling_link_inside_and_missing_root_are_not_found(
    adapter: FileAdapter, root: Path, tmp_path: Path
) -> None:
    os.symlink(root / "nowhere.txt", root / "dangling.txt")
    with pytest.raises(TargetNotFound):
        call(adapter, "read_file", ctx_for(root), path="dangling.txt")
    with pytest.raises(TargetNotFound):
        call(adapter, "list_files", ctx_for(tmp_path / "missing"))
