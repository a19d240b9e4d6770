"""Resolve and open workspace paths beneath a descriptor of the root, never through a link out.

Checking a path and then opening it by name is a race: a directory swapped for a symlink
between the two sends the open outside the workspace. So nothing here opens a path by
name from the top. A descriptor of the root is opened once, and every component below it
is opened relative to its parent's descriptor (``openat``) with ``O_NOFOLLOW``, so the
kernel never follows a link on our behalf. The file itself is looked at with ``lstat``
first (a FIFO or device is refused without being opened), then opened the same way with
``O_NONBLOCK`` (one swapped in meanwhile cannot stall the open) and checked with
``fstat`` on the descriptor actually read. Linux's ``openat2(RESOLVE_BENEATH)`` would do
the walk in the kernel; this one is portable (older kernels, the BSDs, seccomp'd
containers) at two system calls per component.

Symlinks *inside* the workspace are followed, but by this module, not the kernel: the
link is read (``readlinkat``), its target joined to the link's workspace-relative
position and normalized lexically (``..`` pops a real directory walked just before), and
the walk restarts from the root. A target that leaves the root, even briefly, is a
:class:`~execgraph.state.errors.PathEscapeError`. A swap mid-walk therefore meets either a
real directory (inside) or a link that is re-resolved (inside, or refused): never the
outside. A regular file with more than one hard link is refused too: its other name may
be outside the workspace, where no confinement can see it.

Out of scope: a directory *renamed* out of the workspace while a descriptor of it is
held (that needs write access to both places; ``RESOLVE_BENEATH`` cannot stop it either).

Errors: refusals are typed; everything the filesystem reports is an ``OSError`` the
caller names with :func:`execgraph.tools.fileio.os_error` (it knows the verb and path).
Linux and the BSDs (``dir_fd`` and ``O_NOFOLLOW`` support) are required.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from execgraph.state.errors import PathEscapeError, PermanentError, TransientError

__all__ = ["MAX_LINKS", "Beneath", "Opened", "Spot", "check_regular"]

MAX_LINKS = 40
"""Symlinks (and races retried) one resolution may meet, as the kernel's own limit."""

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_STEP = _DIR | os.O_NOFOLLOW
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_DIR_MODE = 0o777  # the umask applies, as for mkdir -p
_CHUNK = 1 << 20
_NOT_REGULAR = "{rel!r} is not a regular file (a FIFO, socket or device); it is not opened"


@dataclass(frozen=True)
class Spot:
    """Where a workspace path lands: its directory's descriptor, its name, its real path.

    ``rel`` is the canonical workspace-relative path once symlinks inside are resolved:
    what policy and data scope must match. ``dir_fd`` is -1 for a lenient resolution
    that stopped at a missing directory (the rest of ``rel`` is then lexical).
    """

    dir_fd: int
    name: str
    rel: str


@dataclass(frozen=True)
class Opened:
    """A regular file opened for reading beneath the root (``fd`` is owned by the Beneath)."""

    spot: Spot
    fd: int
    st: os.stat_result


def check_regular(st: os.stat_result, rel: str) -> None:
    """Refuse what is not a plain, singly linked regular file (checked on the open fd)."""
    if stat.S_ISDIR(st.st_mode):
        raise OSError(errno.EISDIR, "is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise PermanentError(_NOT_REGULAR.format(rel=rel))
    if st.st_nlink > 1:
        raise PathEscapeError(
            f"{rel!r} has {st.st_nlink} hard links; one may be outside the workspace, so it"
            " is neither read nor written"
        )


def _real(path: str) -> str:
    """``realpath`` that never raises (a path changing under it is simply not inside)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return ""


class Beneath:
    """A descriptor of a workspace root, and every descriptor opened below it for one call.

    Use as a context manager; all descriptors close on exit. Paths given are already
    normalized (:func:`execgraph.tools.paths.normalize_relpath`).
    """

    def __init__(self, root: Path | str) -> None:
        self.root = os.path.abspath(root)
        self._fds: list[int] = []
        self.fd = -1

    def __enter__(self) -> Beneath:
        # The root itself may be reached through a link: it is configuration, not input.
        self.fd = self._keep(os.open(self.root, _DIR))
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def _keep(self, fd: int) -> int:
        self._fds.append(fd)
        return fd

    def _release(self, fd: int) -> None:
        if fd != self.fd and fd in self._fds:
            self._fds.remove(fd)
            os.close(fd)

    # ------------------------------------------------------------------ resolution

    def locate(self, rel: str, *, make_parents: bool = False, lenient: bool = False) -> Spot:
        """The directory descriptor and name ``rel`` lands on, symlinks inside resolved.

        ``make_parents`` creates missing directories (beneath the root, never through a
        link); ``lenient`` stops at a missing or unreadable directory instead of raising,
        giving the rest lexically (where a write would create it).

        Raises:
            PathEscapeError: a symlink on the way points outside the workspace.
            PermanentError: more than :data:`MAX_LINKS` links (a loop), or the path kept
                changing under the walk that long.
            OSError: the filesystem refused (missing directory, permission...).
        """
        parts = rel.split("/")
        for _ in range(MAX_LINKS + 1):
            found = self._walk(parts, make_parents, lenient)
            if isinstance(found, Spot):
                return found
            parts = found
        raise PermanentError(f"too many symbolic links (or changes) resolving {rel!r}")

    def _walk(self, parts: list[str], make_parents: bool, lenient: bool) -> Spot | list[str]:
        """One pass from the root: the Spot, or the parts to restart with (a link met)."""
        cur = self.fd
        for i, name in enumerate(parts[:-1]):
            try:
                nxt = self._keep(os.open(name, _STEP, dir_fd=cur))
            except OSError as exc:
                try:
                    return self._step_failed(cur, name, exc, make_parents, parts, i)
                except OSError:
                    if lenient:  # where a write would create the rest
                        return Spot(-1, parts[-1], "/".join(parts))
                    raise
                finally:
                    self._release(cur)
            self._release(cur)
            cur = nxt
        name = parts[-1]
        try:
            target = os.readlink(name, dir_fd=cur)
        except OSError as exc:
            if exc.errno in (errno.EINVAL, errno.ENOENT):  # not a link, or nothing there
                return Spot(cur, name, "/".join(parts))
            self._release(cur)
            if lenient:
                return Spot(-1, name, "/".join(parts))
            raise
        self._release(cur)
        return self._join(parts[:-1], target, [])

    def _step_failed(
        self, cur: int, name: str, exc: OSError, make_parents: bool, parts: list[str], i: int
    ) -> list[str]:
        """After directory ``parts[i]`` could not be opened: the parts to walk next.

        A link is resolved from its position; a missing directory is made when asked;
        an entry swapped back to a directory meanwhile is walked again. Anything else
        is the filesystem's answer, raised.
        """
        if exc.errno == errno.ENOENT and make_parents:
            with contextlib.suppress(FileExistsError):  # made meanwhile: the next pass opens it
                os.mkdir(name, _DIR_MODE, dir_fd=cur)
            return parts
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            try:
                target = os.readlink(name, dir_fd=cur)
            except OSError:
                if self._is_dir(cur, name):
                    return parts
                raise exc from None
            return self._join(parts[:i], target, parts[i + 1 :])
        raise exc

    @staticmethod
    def _is_dir(cur: int, name: str) -> bool:
        try:
            return stat.S_ISDIR(os.stat(name, dir_fd=cur, follow_symlinks=False).st_mode)
        except OSError:
            return False

    def _join(self, base: list[str], target: str, rest: list[str]) -> list[str]:
        """``target`` (a link in directory ``base``) joined lexically, then ``rest``."""
        if target.startswith("/"):
            target, base = self._inner(target), []
        out = list(base)
        for part in target.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not out:
                    raise PathEscapeError("a symlink in the path points outside the workspace")
                out.pop()
            else:
                out.append(part)
        out += rest
        if not out:
            raise OSError(errno.EISDIR, "the path names the workspace root")
        return out

    def _inner(self, target: str) -> str:
        """An absolute link target as a path relative to the root, or PathEscapeError.

        A target naming the root by another name (a link to it elsewhere) is accepted
        when its real path is inside: what it names is then opened beneath the root like
        any other path, so even a lying answer cannot lead outside.
        """
        norm = os.path.normpath(target)
        prefixes = (self.root, _real(self.root))  # only absolute links pay for realpath
        for candidate in (norm, _real(norm)):
            for prefix in prefixes:
                if candidate == prefix:
                    return "."
                if candidate.startswith(prefix.rstrip("/") + "/"):
                    return candidate[len(prefix.rstrip("/")) + 1 :]
        raise PathEscapeError("a symlink in the path points outside the workspace")

    # ------------------------------------------------------------------ files

    def open_file(self, rel: str) -> Opened:
        """Open the regular file ``rel`` lands on, for reading.

        Raises:
            PermanentError: not a regular file (FIFO, socket, device): refused at once,
                seen by ``lstat`` (not opened) or, if swapped in since, opened
                ``O_NONBLOCK`` and refused on ``fstat`` of the descriptor.
            PathEscapeError: an escaping link, or a file with other hard links.
            OSError: as :meth:`locate`; ENOENT when absent, EISDIR for a directory.
        """
        found = self.open_existing(rel)
        if isinstance(found, Spot):
            raise FileNotFoundError(errno.ENOENT, "no such file")
        return found

    def open_existing(self, rel: str) -> Opened | Spot:
        """:meth:`open_file`, or only the Spot where ``rel`` would land when it is absent."""
        for _ in range(MAX_LINKS + 1):
            spot = self.locate(rel)
            try:
                mode = os.stat(spot.name, dir_fd=spot.dir_fd, follow_symlinks=False).st_mode
                if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
                    raise PermanentError(_NOT_REGULAR.format(rel=rel))  # never opened at all
                fd = self._keep(os.open(spot.name, _FILE, dir_fd=spot.dir_fd))
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # became a link since locate: resolve again
                    continue
                if exc.errno == errno.ENOENT:
                    return spot
                if exc.errno == errno.ENXIO:  # a socket (or a device with nothing behind)
                    raise PermanentError(_NOT_REGULAR.format(rel=rel)) from None
                raise
            st = os.fstat(fd)
            check_regular(st, rel)
            return Opened(spot, fd, st)
        raise TransientError(f"{rel!r} kept changing while it was opened")

    def read_all(self, opened: Opened, limit: int | None = None) -> bytes:
        """The bytes of an opened file from its start (at most ``limit``)."""
        chunks, size = [], 0
        os.lseek(opened.fd, 0, os.SEEK_SET)
        while limit is None or size < limit:
            chunk = os.read(opened.fd, _CHUNK if limit is None else min(_CHUNK, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
