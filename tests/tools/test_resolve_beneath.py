"""Beneath: resolving and opening below a root descriptor, links inside followed by us."""

from __future__ import annotations

import contextlib
import os
import socket
from pathlib import Path

import pytest

from execgraph.state.errors import PathEscapeError, PermanentError
from execgraph.tools.fileio import replace_at
from execgraph.tools.resolve_beneath import Beneath, Spot


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.txt").write_text("a")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    return root


def where(root: Path, rel: str, **kw: bool) -> str:
    with Beneath(root) as tree:
        return tree.locate(rel, **kw).rel


def open_fds() -> set[str]:
    """This process's open descriptors, each as what it points to (a descriptor another
    test's thread closes meanwhile is not a leak of ours; one we leave open is)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):
            found.add(f"{fd}:{os.readlink(f'/proc/self/fd/{fd}')}")
    return found


def test_links_inside_resolve_lexically_from_their_position(ws: Path) -> None:
    (ws / "public").mkdir()
    os.symlink("../docs", ws / "public" / "assets")
    os.symlink(ws / "docs" / "a.txt", ws / "abs_alias.txt")  # absolute, inside
    os.symlink("public/assets", ws / "hop")  # a chain of two links
    assert where(ws, "public/assets/a.txt") == "docs/a.txt"
    assert where(ws, "abs_alias.txt") == "docs/a.txt"
    assert where(ws, "hop/new/deep.txt", lenient=True) == "docs/new/deep.txt"


def test_a_root_reached_through_a_link_accepts_absolute_links_to_either_name(
    ws: Path, tmp_path: Path
) -> None:
    via = tmp_path / "via"
    os.symlink(ws, via)
    os.symlink(via / "docs", ws / "by_via")
    assert where(via, "by_via/a.txt") == "docs/a.txt"
    assert where(ws, "by_via/a.txt") == "docs/a.txt"


@pytest.mark.parametrize("target", ["../outside", "docs/../../outside", "{outside}", "/etc"])
def test_links_that_leave_are_refused_even_for_missing_files(
    ws: Path, tmp_path: Path, target: str
) -> None:
    os.symlink(target.format(outside=tmp_path / "outside"), ws / "out")
    for rel in ("out", "out/secret.txt", "out/not-yet/x.txt"):
        with pytest.raises(PathEscapeError):
            where(ws, rel, lenient=True)
    with pytest.raises(PathEscapeError):
        where(ws, "out/new/x.txt", make_parents=True)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]


def test_a_link_loop_is_a_permanent_error(ws: Path) -> None:
    os.symlink("b", ws / "a")
    os.symlink("a", ws / "b")
    with pytest.raises(PermanentError, match="too many symbolic links"):
        where(ws, "a/x")


def test_missing_directories_are_lexical_when_lenient_and_made_when_asked(ws: Path) -> None:
    assert where(ws, "new/deep/f.txt", lenient=True) == "new/deep/f.txt"
    with pytest.raises(FileNotFoundError):
        where(ws, "new/deep/f.txt")
    assert not (ws / "new").exists()
    os.symlink("docs", ws / "d")
    assert where(ws, "d/made/f.txt", make_parents=True) == "docs/made/f.txt"
    assert (ws / "docs" / "made").is_dir() and not (ws / "made").exists()


def test_only_plain_regular_files_are_opened(ws: Path, tmp_path: Path) -> None:
    os.mkfifo(ws / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(ws / "sock"))
    os.link(tmp_path / "outside" / "secret.txt", ws / "hard.txt")
    try:
        with Beneath(ws) as tree:
            assert tree.read_all(tree.open_file("docs/a.txt")) == b"a"
            for rel in ("fifo", "sock"):
                with pytest.raises(PermanentError, match="not a regular file"):
                    tree.open_file(rel)
            with pytest.raises(PathEscapeError, match="hard links"):
                tree.open_file("hard.txt")
            with pytest.raises(IsADirectoryError):
                tree.open_file("docs")
            absent = tree.open_existing("docs/none.txt")
            assert isinstance(absent, Spot) and absent.rel == "docs/none.txt"
    finally:
        server.close()


def test_every_descriptor_is_closed(ws: Path) -> None:
    os.symlink("docs", ws / "d")
    before = open_fds()
    for _ in range(20):
        with Beneath(ws) as tree:
            tree.open_file("d/a.txt")
            tree.locate("d/new/x", make_parents=True)
        with pytest.raises(FileNotFoundError), Beneath(ws) as tree:
            tree.open_file("nope/x")
    assert open_fds() - before == set()


def test_replace_at_writes_in_the_directory_and_leaves_no_temp_file(ws: Path) -> None:
    (ws / "docs" / "full").mkdir()
    (ws / "docs" / "full" / "keep").write_text("k")
    with Beneath(ws) as tree:
        spot = tree.locate("docs/a.txt")
        replace_at(spot.dir_fd, spot.name, b"new", 0o600)
        full = tree.locate("docs/full")
        with pytest.raises(OSError):  # a non-empty directory cannot be replaced
            replace_at(full.dir_fd, full.name, b"x")
    assert (ws / "docs" / "a.txt").read_bytes() == b"new"
    assert (ws / "docs" / "a.txt").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (ws / "docs").iterdir()) == ["a.txt", "full"]
