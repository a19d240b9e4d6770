"""Path traversal battery for tools.paths, against a real directory tree and real symlinks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from execgraph.state.errors import PathEscapeError
from execgraph.tools.paths import confine_path, in_scope, normalize_relpath


@pytest.fixture
def root(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "a.txt").write_text("a")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    return ws


# ------------------------------------------------------------------ normalize_relpath


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a.txt", "a.txt"),
        ("./a/./b", "a/b"),
        ("a//b/", "a/b"),
        ("a\\b\\c.txt", "a/b/c.txt"),  # backslashes fold to separators
        ("...", "..."),  # three dots is a legal name, not a parent step
        ("..foo/bar..", "..foo/bar.."),
        ("~/x", "~/x"),  # never expanded to a home directory
        ("%2e%2e/x", "%2e%2e/x"),  # no URL decoding: a literal directory name
        ("e\u0301.txt", "\u00e9.txt"),  # NFC: one spelling per file name
    ],
)
def test_normalize_accepts_and_canonicalizes(raw: str, expected: str) -> None:
    assert normalize_relpath(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "..",
        "../x",
        "a/../b",
        "a/b/..",
        "a/../../etc/passwd",
        "a\\..\\..\\x",  # backslash traversal
        "..\\x",
        "/etc/passwd",
        "//etc/passwd",
        "\\etc\\passwd",
        "\\\\server\\share\\x",  # UNC
        "C:\\Windows\\x",
        "c:x",
        "./c:x",  # the drive-letter form behind a leading "./"
        ".\\0:",
        "a\x00b",
        "\x00",
        "a.txt\x00.png",
        "",
        ".",
        "./",
        "a／b",  # full-width solidus
        "．．/x",  # full-width full stops
        "．．",
        "a/．．/b",
        "．．／etc／passwd",
        "\u2025/x",  # two-dot leader folds to '..'
        "\ufe52\ufe52/x",  # small full stops
    ],
)
def test_normalize_refuses_hostile_paths(raw: str) -> None:
    with pytest.raises(PathEscapeError):
        normalize_relpath(raw)


@pytest.mark.parametrize("raw", [None, 3, b"a.txt"])
def test_normalize_refuses_non_strings(raw: object) -> None:
    with pytest.raises(PathEscapeError):
        normalize_relpath(raw)  # type: ignore[arg-type]


def test_refusal_messages_are_ours_and_name_the_reason() -> None:
    with pytest.raises(PathEscapeError) as info:
        normalize_relpath("../x")
    assert "'..'" in info.value.message and info.value.status == "DENIED"


# ------------------------------------------------------------------ confine_path


def test_confine_returns_absolute_path_inside_root(root: Path) -> None:
    target = confine_path(root, "docs/a.txt")
    assert target == Path(os.path.realpath(root)) / "docs" / "a.txt"
    assert target.read_text() == "a"


def test_confine_allows_paths_that_do_not_exist_yet(root: Path) -> None:
    target = confine_path(root, "new/deep/file.txt")
    assert target.parent.parent.parent == Path(os.path.realpath(root))


@pytest.mark.parametrize("raw", ["../outside/secret.txt", "/etc/passwd", "docs/../../x"])
def test_confine_refuses_traversal(root: Path, raw: str) -> None:
    with pytest.raises(PathEscapeError):
        confine_path(root, raw)


def test_symlinked_directory_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", root / "escape")
    assert (root / "escape" / "secret.txt").read_text() == "secret"  # the link is real
    with pytest.raises(PathEscapeError):
        confine_path(root, "escape/secret.txt")
    with pytest.raises(PathEscapeError):
        confine_path(root, "escape/not-yet-created.txt")
    with pytest.raises(PathEscapeError):
        confine_path(root, "escape")


def test_symlinked_file_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside" / "secret.txt", root / "innocent.txt")
    with pytest.raises(PathEscapeError):
        confine_path(root, "innocent.txt")


def test_dangling_symlink_pointing_outside_is_refused(root: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside" / "future.txt", root / "dangling.txt")
    with pytest.raises(PathEscapeError):
        confine_path(root, "dangling.txt")


def test_relative_symlink_climbing_out_is_refused(root: Path) -> None:
    os.symlink("../../outside/secret.txt", root / "docs" / "rel.txt")
    with pytest.raises(PathEscapeError):
        confine_path(root, "docs/rel.txt")


def test_symlink_chain_ending_outside_is_refused(root: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "outside", root / "hop2")
    os.symlink(root / "hop2", root / "hop1")
    with pytest.raises(PathEscapeError):
        confine_path(root, "hop1/secret.txt")


def test_symlink_to_sibling_with_root_as_prefix_is_refused(root: Path, tmp_path: Path) -> None:
    # "/tmp/x/ws-evil" starts with "/tmp/x/ws" as a string but is not inside it.
    evil = tmp_path / "ws-evil"
    evil.mkdir()
    os.symlink(evil, root / "sib")
    with pytest.raises(PathEscapeError):
        confine_path(root, "sib/x")


def test_symlinks_staying_inside_are_allowed(root: Path) -> None:
    os.symlink(root / "docs", root / "docs_link")
    os.symlink("a.txt", root / "docs" / "alias.txt")
    real = Path(os.path.realpath(root)) / "docs" / "a.txt"
    assert confine_path(root, "docs_link/a.txt") == real
    assert confine_path(root, "docs/alias.txt") == real


def test_root_given_through_a_symlink_still_confines(root: Path, tmp_path: Path) -> None:
    via = tmp_path / "via"
    os.symlink(root, via)
    assert confine_path(via, "docs/a.txt").read_text() == "a"
    with pytest.raises(PathEscapeError):
        confine_path(via, "../outside/secret.txt")


# ------------------------------------------------------------------ in_scope


@pytest.mark.parametrize(
    ("relpath", "scope", "expected"),
    [
        ("anything/at/all.txt", [], True),
        ("data/x.csv", ["data"], True),
        ("data/sub/x.csv", ["data/"], True),
        ("database.db", ["data"], False),  # a prefix of a name is not a directory
        ("notes/a.md", ["*.md"], True),  # fnmatch '*' spans separators
        ("notes/a.txt", ["*.md", "notes/*"], True),
        ("src/a.py", ["data", "*.md"], False),
        ("data", ["data"], True),
    ],
)
def test_in_scope(relpath: str, scope: list[str], expected: bool) -> None:
    assert in_scope(relpath, scope) is expected
