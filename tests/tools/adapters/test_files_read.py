"""FileAdapter read_file and list_files: content, hashes, paging within budget, globbing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from execgraph.state.errors import PermanentError, TargetNotFound
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from tests.tools.adapters.file_helpers import Artifacts, call, ctx_for, json_len, sha


def page_through(adapter: FileAdapter, ctx: InvokeContext, path: str) -> list[AdapterOutput]:
    pages = [call(adapter, "read_file", ctx, path=path)]
    while pages[-1].data["next_offset"] is not None:
        offset = pages[-1].data["next_offset"]
        assert offset > pages[-1].data["offset"]  # paging always advances
        pages.append(call(adapter, "read_file", ctx, path=path, offset=offset))
    return pages


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


# ------------------------------------------------------------------ list_files


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


def test_hostile_recursive_glob_stays_cheap(adapter: FileAdapter, root: Path) -> None:
    deep = root.joinpath(*["d"] * 25)
    deep.mkdir(parents=True)
    (deep / "x.txt").write_text("x")
    pattern = "/".join(["**"] * 40) + "/nomatch"
    assert call(adapter, "list_files", ctx_for(root), pattern=pattern).data["files"] == []
    hit = call(adapter, "list_files", ctx_for(root), pattern="**/**/d/**/x.txt")
    assert hit.data["files"] == ["/".join(["d"] * 25) + "/x.txt"]


def test_dangling_link_inside_and_missing_root_are_not_found(
    adapter: FileAdapter, root: Path, tmp_path: Path
) -> None:
    os.symlink(root / "nowhere.txt", root / "dangling.txt")
    with pytest.raises(TargetNotFound):
        call(adapter, "read_file", ctx_for(root), path="dangling.txt")
    with pytest.raises(TargetNotFound):
        call(adapter, "list_files", ctx_for(tmp_path / "missing"))


def test_a_page_is_the_longest_prefix_that_fits(adapter: FileAdapter, root: Path) -> None:
    """Expensive escapes (newline 2 bytes, NUL 6) shrink a page in proportion, no more."""
    body = ("a\n\t\x00é" * 400).encode()
    (root / "mixed.txt").write_bytes(body)
    budget = 700
    ctx = ctx_for(root, output_budget=budget)
    pages = page_through(adapter, ctx, "mixed.txt")
    assert b"".join(p.data["content"].encode() for p in pages) == body
    for page in pages[:-1]:
        assert json_len(page.data) <= budget
        shown = len(page.data["content"].encode())
        start = page.data["offset"]
        ahead = body[start : start + shown + 4].decode(errors="ignore")
        one_more = ahead[: len(page.data["content"]) + 1]
        assert json_len({**page.data, "content": one_more}) > budget  # nothing left unused
