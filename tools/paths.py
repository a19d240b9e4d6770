"""Workspace confinement for every path a tool touches.

A path from a model is hostile until proven otherwise: NUL bytes, absolute paths, ``..``
segments and symlinks that point outside the root are all refused with
:class:`~execgraph.state.errors.PathEscapeError` before any file is opened.
"""

from __future__ import annotations

import fnmatch
import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from execgraph.state.errors import PathEscapeError

__all__ = ["confine_path", "in_scope", "normalize_relpath"]


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


def confine_path(root: Path, raw: str) -> Path:
    """Absolute path for ``raw`` inside ``root``, refusing symlink escapes."""
    rel = normalize_relpath(raw)
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / rel))
    if target != base and base not in target.parents:
        raise PathEscapeError("path resolves outside the workspace (symlink escape)")
    return target


def in_scope(relpath: str, scope: Sequence[str]) -> bool:
    """True when ``relpath`` matches the data scope (an empty scope is the whole workspace)."""
    if not scope:
        return True
    return any(
        fnmatch.fnmatchcase(relpath, pattern) or relpath.startswith(pattern.rstrip("/") + "/")
        for pattern in scope
    )
