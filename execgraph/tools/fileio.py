"""File primitives shared by the tools that write: atomic replace, hashing, typed OS errors.

An atomic replace (temp file in the same directory, fsync, ``os.replace``, fsync of the
directory) leaves either the old or the new content after a crash, never a torn file —
which is what lets reconcile probes answer by comparing hashes. :func:`replace_at` does
it relative to a directory descriptor, so the temp file and the rename stay in the one
directory that was confined, whatever is renamed or swapped around it meanwhile.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path

from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PathEscapeError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.invocation import InvokeContext

__all__ = [
    "atomic_replace",
    "check_running",
    "fsync_dir",
    "os_error",
    "replace_at",
    "sha256_file",
]

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str | None:
    """sha256 of a regular file, or None when there is none (or it cannot be read)."""
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return None


def fsync_dir(directory: Path) -> None:
    """Persist a rename itself; best effort where directories cannot be opened."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_at(
    dir_fd: int,
    name: str,
    data: bytes,
    mode: int = 0o644,
    *,
    before_rename: Callable[[], None] | None = None,
) -> None:
    """Replace entry ``name`` of directory ``dir_fd`` with ``data``, atomically and durably.

    The temp file is created ``O_EXCL | O_NOFOLLOW`` in that same directory and renamed
    over ``name`` there (a link at ``name`` is replaced, never followed); it is removed
    if anything fails before the rename, ``before_rename`` too (the fence check: the
    rename is the effect, the temp file is nothing yet).

    Raises:
        OSError: as the filesystem reports it; callers turn it into a typed error.
    """
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, 0o600, dir_fd=dir_fd)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.fsync(dir_fd)


def atomic_replace(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically and durably (:func:`replace_at` by name).

    Raises:
        OSError: as the filesystem reports it; callers turn it into a typed error.
    """
    dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        replace_at(dir_fd, path.name, data, mode)
    finally:
        os.close(dir_fd)


def check_running(ctx: InvokeContext) -> None:
    """Refuse to start (or continue) once cancelled or past the deadline."""
    if ctx.cancel.is_set():
        raise ToolCancelled("the call was cancelled before anything was written")
    if ctx.deadline is not None and ctx.remaining_s() == 0:
        raise DeadlineExceeded("the deadline passed before the file operation started")


def os_error(exc: OSError, rel: str, verb: str) -> ExecGraphError:
    """A typed error written by us, never the OS text (which may carry absolute paths)."""
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and verb == "read":
        return TargetNotFound(f"no file at {rel!r}")
    if exc.errno == errno.EISDIR:
        return PermanentError(f"{rel!r} is a directory, not a file")
    if exc.errno == errno.ENOTDIR:
        return PermanentError(f"a parent of {rel!r} is not a directory")
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return PermanentError(f"permission denied to {verb} {rel!r}")
    if exc.errno == errno.ELOOP:
        return PathEscapeError(f"{rel!r} could not be reached without following a link out")
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EAGAIN, errno.EBUSY):
        return TransientError(f"the filesystem is busy or full; could not {verb} {rel!r}")
    return PermanentError(f"could not {verb} {rel!r} (OS error {exc.errno})")
