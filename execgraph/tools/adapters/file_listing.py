"""What ``list_files`` finds: a confined walk of the workspace, fitted to the output budget.

Directories are entered beneath their parent's descriptor with ``O_NOFOLLOW``, so a
directory swapped for a link mid-listing is skipped, never listed through; a directory
link is never descended (it could loop or leave the root), and a hostile tree is finite
(:data:`MAX_LIST_DEPTH`). The intent journal is never listed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from execgraph.state.errors import ExecGraphError, ToolCancelled
from execgraph.tools.adapters.file_content import glob_match, json_len
from execgraph.tools.adapters.file_journal import JOURNAL_DIR
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.paths import landing
from execgraph.tools.resolve_beneath import Beneath

__all__ = ["MAX_LIST_DEPTH", "fit_listing", "matching_files"]

MAX_LIST_DEPTH = 128
"""Directories deeper than this below the root are not listed (a hostile tree is finite)."""


def matching_files(base: Path, pattern: list[str], ctx: InvokeContext) -> list[str]:
    """Workspace-relative names below ``base`` matching the glob ``pattern``'s parts, sorted.

    Raises:
        OSError: as the walk meets it (the caller names the failure).
    """
    with Beneath(base) as tree:
        return [
            rel
            for rel, is_link in _walk_files(tree.fd, "", ctx, 0)
            if glob_match(rel.split("/"), pattern) and (not is_link or _listable(base, rel))
        ]


def fit_listing(found: list[str], limit: int, budget: int) -> list[str]:
    """The first names of ``found`` (at most ``limit``) whose JSON result fits ``budget``.

    The whole result must fit: the executor spills anything larger to an artifact the
    model cannot read.
    """
    used = json_len({"files": [], "count": len(found), "total": len(found)})
    files: list[str] = []
    for rel in found[:limit]:
        used += json_len(rel) + 2
        if used > budget:
            break
        files.append(rel)
    return files


def _walk_files(
    dir_fd: int, reldir: str, ctx: InvokeContext, depth: int
) -> Iterator[tuple[str, bool]]:
    """(workspace-relative name, is a link) of the non-directories below ``dir_fd``, sorted."""
    if ctx.cancel.is_set():
        raise ToolCancelled("the listing was cancelled")
    with os.scandir(dir_fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    subdirs = []
    for entry in entries:
        rel = f"{reldir}{entry.name}"
        try:
            is_dir, is_link = entry.is_dir(follow_symlinks=False), entry.is_symlink()
        except OSError:
            continue  # gone meanwhile
        if not is_dir:
            yield rel, is_link
        elif entry.name != JOURNAL_DIR and depth < MAX_LIST_DEPTH:
            subdirs.append(entry.name)
    for name in subdirs:
        try:
            fd = os.open(
                name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd
            )
        except OSError:
            continue  # swapped for a link or removed since it was listed
        try:
            yield from _walk_files(fd, f"{reldir}{name}/", ctx, depth + 1)
        finally:
            os.close(fd)


def _listable(base: Path, rel: str) -> bool:
    """A link is listed when it lands inside the workspace, and not on a directory."""
    try:
        target = landing(base, rel)
    except ExecGraphError:
        return False  # a symlink pointing outside the workspace is not listed
    return not os.path.isdir(base / target)
