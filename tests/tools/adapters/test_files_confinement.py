"""FileAdapter confinement: escaping paths, patterns and symlinks never leave the workspace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from execgraph.state.errors import PathEscapeError
from execgraph.tools.adapters import FileAdapter
from tests.tools.adapters.file_helpers import call, ctx_for

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


@pytest.mark.parametrize("bad", ["../*", "/etc/*", "src/../../*", ""])
def test_list_files_refuses_escaping_patterns(adapter: FileAdapter, tree: Path, bad: str) -> None:
    with pytest.raises(PathEscapeError):
        call(adapter, "list_files", ctx_for(tree), pattern=bad)
