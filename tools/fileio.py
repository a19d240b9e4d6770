"""File primitives shared by the tools that write: atomic replace, hashing, typed OS errors.

An atomic replace (temp file in the same directory, fsync, ``os.replace``, fsync of the
directory) leaves either the old or the new content after a crash, never a torn file —
which is what lets reconcile probes answer by comparing hashes.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path

from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.invocation import InvokeContext

__all__ = ["atomic_replace", "check_running", "fsync_dir", "os_error", "sha256_file"]

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


def atomic_replace(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` with ``data`` atomically and durably.

    Raises:
        OSError: as the filesystem reports it; callers turn it into a typed error.
    """
    fd, tmp = -1, ""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fd = -1
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        tmp = ""
        fsync_dir(path.parent)
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


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
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EAGAIN, errno.EBUSY):
        return TransientError(f"the filesystem is busy or full; could not {verb} {rel!r}")
    return PermanentError(f"could not {verb} {rel!r} (OS error {exc.errno})")
