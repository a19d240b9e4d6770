"""Workspace confinement for every path a tool touches.

A path from a model is hostile until proven otherwise: NUL bytes, absolute paths, ``..``
segments and symlinks that point outside the root are all refused with
:class:`~execgraph.state.errors.PathEscapeError` before any file is opened.

:func:`landing` says where a path really lands (symlinks inside the workspace resolved,
beneath a descriptor of the root, see :mod:`execgraph.tools.resolve_beneath`): policy rules and
data scopes match that, so ``public/assets -> ../private`` cannot carry a write past a
rule on ``private/*``. Neither function raises a raw ``OSError``: a path that changes
under the resolution is a typed error too.
"""

from __future__ import annotations

import fnmatch
import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from execgraph.state.errors import ExecGraphError, PathEscapeError, PermanentError
from execgraph.tools.resolve_beneath import Beneath

__all__ = ["confine_path", "in_scope", "landing", "normalize_relpath"]


def normalize_relpath(raw: str) -> str:
    """Canonical workspace-relative POSIX form of ``raw``, or PathEscapeError.

    Unicode is NFC-normalized (so look-alike compositions name one file) and separators
    are folded; the result never starts with ``/`` and never contains ``..``.
    """
    if not isinstance(raw, str) or raw == "":
        raise PathEscapeError("path must be a non-empty string")
    if "\x00" in raw:
        raise PathEscapeError("path contains a NUL byte")
    text = unicodedata.normalize("NFC", raw).replace("\\", "/")
    # Full-width and other compatibility forms of '/' and '.' must not smuggle a separator
    # or a parent step past the checks below.
    folded = unicodedata.normalize("NFKC", text)
    if folded != text and (
        folded.count("/") != text.count("/") or ".." in PurePosixPath(folded).parts
    ):
        raise PathEscapeError("path contains look-alike separators or dots")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise PathEscapeError("absolute paths are not allowed; use a workspace-relative path")
    parts: list[str] = []
    for part in PurePosixPath(text).parts:
        if part in ("", "."):
            continue
        if part == "..":
            raise PathEscapeError("path leaves the workspace ('..' is not allowed)")
        parts.append(part)
    if not parts:
        raise PathEscapeError("path names the workspace root itself")
    rel = "/".join(parts)
    if len(rel) > 1 and rel[1] == ":":  # "./C:/x" drops to a drive-letter form
        raise PathEscapeError("absolute paths are not allowed; use a workspace-relative path")
    return rel


def landing(root: Path | str, raw: str) -> str:
    """The canonical workspace-relative path ``raw`` lands on, symlinks inside followed.

    Components that do not exist yet are taken as written (a write creates them); a
    missing root leaves the path as normalized.

    Raises:
        PathEscapeError: the path, or a symlink on it, leads outside the workspace.
        ExecGraphError: a link loop, or the path kept changing (typed, never ``OSError``).
    """
    rel = normalize_relpath(raw)
    try:
        with Beneath(root) as tree:
            return tree.locate(rel, lenient=True).rel
    except ExecGraphError:
        raise
    except FileNotFoundError:
        return rel  # no workspace yet: nothing in it can be a link
    except IsADirectoryError:
        raise PathEscapeError(f"{rel!r} names the workspace root itself") from None
    except OSError as exc:
        raise PermanentError(f"could not resolve {rel!r} (OS error {exc.errno})") from None


def confine_path(root: Path, raw: str) -> Path:
    """Absolute path for ``raw`` inside ``root``, refusing symlink escapes.

    For checks and for tools that hand a path to something else (a subprocess); the file
    adapter itself opens beneath a descriptor of the root instead of by this name.
    """
    rel = landing(root, raw)
    try:
        return Path(os.path.realpath(root)) / rel
    except OSError as exc:  # the root's own path changed under realpath
        raise PermanentError(
            f"could not resolve the workspace root (OS error {exc.errno})"
        ) from None


def in_scope(relpath: str, scope: Sequence[str]) -> bool:
    """True when ``relpath`` matches the data scope (an empty scope is the whole workspace)."""
    if not scope:
        return True
    return any(
        fnmatch.fnmatchcase(relpath, pattern) or relpath.startswith(pattern.rstrip("/") + "/")
        for pattern in scope
    )
