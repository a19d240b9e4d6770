"""Confinement of tool child processes: what a child may see of the machine and of us.

A child runs as the same user as execgraph (often root in a container or VM), so file
modes and ``prctl(PR_SET_DUMPABLE)`` do not keep it from the execution home (approval key,
stores) or from ``/proc/<parent>/environ``. Linux Landlock does, for root too, and needs no
privilege: the child restricts itself between ``fork`` and ``exec`` to

* read and execute: the system trees (``/usr``, ``/bin``, ``/lib*``, ``/etc``, ``/opt``,
  ``/sys``, ``/dev``), each allowed program's installation prefix, and paths the operator
  adds;
* of ``/proc``: only the child's own ``/proc/<pid>`` and system-wide files (``cpuinfo``,
  ``meminfo``, ``sys``, ...). Landlock's ptrace rule stops ``mem``-style access to other
  processes but, as measured on Linux 6.18, still lets a root child read another
  process's ``/proc/<pid>/environ``: so the other pids' directories are simply not
  granted (a grandchild cannot see its own ``/proc/<pid>`` either: a documented limit);
* read and write: the call's workspace and a private temporary directory (``TMPDIR``);
* nothing else: the home, ``/tmp``, ``/root``, other users' files are invisible.

From ABI 6 on, a confined child may not signal processes outside its domain either. The
ruleset is built in the parent for each call; the child only adds its own ``/proc/<pid>``,
then calls ``prctl`` and ``landlock_restrict_self``.

Without Landlock (an old or non-Linux kernel) :func:`landlock_abi` is 0 and children are
not confined: ``ProcessAdapter(confine="require")`` refuses to build then, ``"auto"`` logs
one warning and runs them with the scrubbed environment only.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import stat
from collections.abc import Iterable

__all__ = [
    "SYSTEM_READ_PATHS",
    "Ruleset",
    "landlock_abi",
    "program_read_paths",
    "warn_unconfined_once",
]

log = logging.getLogger("execgraph")

#: Trees every child may read and execute from (missing ones are skipped).
SYSTEM_READ_PATHS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/sys",
    "/dev",
)
#: System-wide ``/proc`` entries a child may read (none of them about another process).
_PROC_READ = (
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
)
_DEVICES_RW = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_ABI1_ALL = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1, 2


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    libc.syscall.restype = ctypes.c_long
    return libc


@functools.cache
def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing or disabled."""
    libc = _libc()
    if libc is None or not hasattr(libc, "syscall"):
        return 0
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(0, int(version))


def _handled(abi: int) -> int:
    rights = _ABI1_ALL
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def program_read_paths(program: str, workspace: str) -> list[str]:
    """What running ``program`` needs to read: the installation prefix of its path and of
    its real path (``/opt/venv`` for ``/opt/venv/bin/python``), never a directory that
    holds the workspace (its siblings, such as the home, must stay hidden)."""
    found: list[str] = []
    for path in dict.fromkeys((program, os.path.realpath(program))):
        here = os.path.dirname(path)
        prefix = os.path.dirname(here) if os.path.basename(here) in ("bin", "sbin") else here
        for candidate in (prefix, here):
            holds_workspace = os.path.commonpath([candidate, workspace]) == candidate
            if candidate != "/" and not holds_workspace:
                found.append(candidate)
                break
        else:
            found.append(path)  # only the program file itself
    return found


class Ruleset:
    """One call's Landlock ruleset, made in the parent; :meth:`restrict_self` in the child.

    Args:
        read: Trees the child may read and execute from.
        write: Trees the child may read, write, create in and delete from.
    """

    def __init__(self, *, read: Iterable[str], write: Iterable[str]) -> None:
        abi = landlock_abi()
        libc = _libc()
        if abi < 1 or libc is None:
            raise OSError("Landlock is not available on this kernel")
        self._libc = libc
        handled = self._handled = _handled(abi)
        attr = _RulesetAttr(handled, 0, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
        size = 8 if abi < 4 else 16 if abi < 6 else 24
        fd = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
        self.fd = int(fd)
        try:
            for path in (*read, *_PROC_READ):
                self._allow(path, _READ & handled)
            for path in _DEVICES_RW:
                self._allow(path, (_READ_FILE | _WRITE_FILE | _IOCTL_DEV) & handled)
            for path in write:
                self._allow(path, handled)
        except BaseException:
            self.close()
            raise

    def _allow(self, path: str, rights: int) -> None:
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return  # a tree this machine lacks: nothing to allow
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights &= _FILE_RIGHTS
            rule = _PathBeneathAttr(rights, fd)
            if self._libc.syscall(
                _SYS_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
            ):
                raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
        finally:
            os.close(fd)

    def restrict_self(self) -> None:
        """Confine the calling process (the child, before ``exec``) to the rules plus its
        own ``/proc/<pid>``; irreversible."""
        self._allow("/proc/self", (_READ_FILE | _READ_DIR) & self._handled)
        if self._libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if self._libc.syscall(_SYS_RESTRICT_SELF, self.fd, 0):
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")

    def close(self) -> None:
        """Release the ruleset descriptor in the parent (the child keeps its domain)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def warn_unconfined_once() -> None:
    """One warning per process that children run unconfined (no Landlock)."""
    _warn_once()


@functools.cache
def _warn_once() -> None:
    log.warning(
        "execgraph: this kernel has no Landlock; tool child processes get a scrubbed "
        "environment but can read whatever this process's user can (the execution home, "
        "/proc/<pid>/environ). Use ProcessAdapter(confine='require') to refuse instead."
    )
