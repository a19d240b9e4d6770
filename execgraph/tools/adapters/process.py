"""The process adapter: run an allow-listed program, never a shell, and leave nothing behind.

Security: the program must be on the adapter's allow-list and runs by absolute path from
an argv list (``shell=False``), so ``;``, ``$(...)``, backticks and ``|`` in arguments are
inert text. The child gets a scrubbed environment (allow-listed variables, never a
secret-looking one, plus a fixed ``PATH`` and a private ``TMPDIR``, also its ``HOME`` when
confined), a working directory confined to the workspace, no stdin, and its own session.
With Landlock
(:mod:`execgraph.tools.sandbox`) it can read only the system trees, its program's prefix,
the workspace and its temp directory: not the execution home (approval key, stores) nor
the ``/proc`` entries of this process. Arguments of programs named in ``path_args`` are
confined to the workspace before anything runs.

Process trees (:mod:`execgraph.tools.proctree`, watched by
:mod:`~execgraph.tools.adapters.process_supervisor`): the child and all its descendants,
even those that ``setpgid``, ``setsid`` or double-fork, are tracked (a cgroup v2 here,
else a ``/proc`` sweep) and killed on cancel or timeout, and when the child exits; a call
whose descendants were still running when it exited is never a success.

Outcome mapping (the model must see a clear status;
:mod:`~execgraph.tools.adapters.process_outcome`):

========================================  =============================================
what happened                              result
========================================  =============================================
program not on the allow-list              ``PolicyDenied`` (DENIED; nothing ran)
``cwd`` outside the workspace              ``PathEscapeError`` (DENIED; nothing ran)
a declared path argument outside it        ``PathEscapeError`` (DENIED; nothing ran)
``cwd`` missing / program not installed    ``TargetNotFound`` (nothing ran)
cancelled or out of time before the start  ``ToolCancelled`` / ``DeadlineExceeded``
exit status 0                              ``AdapterOutput`` (committed unless effect=read)
non-zero exit status                       ``ProcessExitError`` (a ``PermanentError``,
                                           PERMANENT_ERROR, exit code in the message);
                                           ``on_nonzero="data"`` returns it as data instead
exit status 0, descendants still running   they are killed; ``ProcessLeftoverError`` (a
                                           ``ProcessExitError``, exit code 0, the count in
                                           ``leftover_processes``); ``"data"`` returns it
cancelled while running                    tree killed, ``ToolCancelled`` (CANCELLED)
time limit hit while running               tree killed; effect ``read``: ``TransientError``;
                                           ``write``/``irreversible``: ``ResponseLostError``
                                           (UNKNOWN: it may have acted half-way; reconcile)
========================================  =============================================

Every error raised after the child started carries what was observed (an
:class:`AdapterOutput` with the bounded streams and the evidence): read it with
:func:`output_of`. Output is streamed as ``tool.output`` events coalesced per stream (see
:mod:`execgraph.tools.adapters._streams`), so a child writing one byte at a time yields a
bounded number of events.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from execgraph.state.errors import (
    DeadlineExceeded,
    PathEscapeError,
    PermanentError,
    PolicyDenied,
    SchemaViolation,
    TargetNotFound,
    ToolCancelled,
    ToolDeclarationError,
)
from execgraph.tools.adapters.process_outcome import (
    ProcessExitError,
    ProcessLeftoverError,
    outcome,
)
from execgraph.tools.adapters.process_supervisor import supervise
from execgraph.tools.invocation import AdapterOutput, InvokeContext, output_of
from execgraph.tools.paths import confine_path
from execgraph.tools.proctree import ProcessTree, open_tree
from execgraph.tools.sandbox import (
    SYSTEM_READ_PATHS,
    Ruleset,
    landlock_abi,
    program_read_paths,
    warn_unconfined_once,
)
from execgraph.tools.spec import Effect, ToolSpec

__all__ = [
    "DEFAULT_ENV_ALLOW",
    "DEFAULT_PATH",
    "ProcessAdapter",
    "ProcessExitError",
    "ProcessLeftoverError",
    "RunProcessArgs",
    "output_of",
]

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
#: Copied from this process when set; a trailing ``*`` matches a prefix (``LC_*``).
DEFAULT_ENV_ALLOW = ("HOME", "LANG", "LANGUAGE", "LC_*", "TZ")
#: Names never copied into a child, whatever the allow-list says.
_SECRET_NAME = re.compile(r"SECRET|TOKEN|PASSW|PASSPHRASE|API_?KEY|PRIVATE|CREDENTIAL|AUTH")
_MAX_ARG_BYTES = 128 * 1024


class RunProcessArgs(BaseModel):
    """Arguments of ``run_process``: an argv list, never a command line."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    program: str = Field(min_length=1, max_length=4096, description="Allow-listed program name")
    args: list[str] = Field(default_factory=list, max_length=1024, description="argv[1:]")
    cwd: str = Field(default=".", description="Workspace-relative working directory")
    timeout_s: float | None = Field(default=None, gt=0, description="Time limit in seconds")

    @field_validator("args")
    @classmethod
    def _plain_strings(cls, value: list[str]) -> list[str]:
        if any("\x00" in arg for arg in value):
            raise SchemaViolation("arguments must not contain NUL bytes")
        if sum(len(arg.encode()) for arg in value) > _MAX_ARG_BYTES:
            raise SchemaViolation("arguments are too long")
        return value


def _resolve_programs(allowed: Mapping[str, str] | Sequence[str], path: str) -> dict[str, str]:
    """name -> absolute executable path; fails at construction, not at call time."""
    pairs = list(allowed.items()) if isinstance(allowed, Mapping) else [(p, p) for p in allowed]
    table: dict[str, str] = {}
    for name, target in pairs:
        found = target if os.path.isabs(target) else shutil.which(target, path=path)
        if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
            raise ToolDeclarationError(f"allowed program {target!r} is not an executable file")
        found = os.path.abspath(found)
        table[name] = found
        table.setdefault(os.path.basename(name), found)
    return table


def _is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name.upper())) or name.upper().startswith("PGPASS")


def _check_env_allow(names: Sequence[str]) -> tuple[str, ...]:
    for name in names:
        if _is_secret_name(name.rstrip("*")):
            raise ToolDeclarationError(
                f"env_allow names {name!r}, which looks like a secret: a child never gets "
                "this process's secrets (set an operator value with env_set if it must)"
            )
    return tuple(names)


def _arg_paths(argv: Sequence[str]) -> list[str]:
    """The operands of an argv: every argument not an option, all of them after ``--``."""
    found: list[str] = []
    operands = False
    for arg in argv:
        if not operands and arg == "--":
            operands = True
        elif operands or not arg.startswith("-"):
            found.append(arg)
    return found


class ProcessAdapter:
    """Runs allow-listed programs in the workspace as the ``run_process`` tool.

    Args:
        allowed_programs: Names or absolute paths (``["git", "/usr/bin/python3"]``), or a
            mapping of tool-visible name to absolute path (``{"python": sys.executable}``).
            A call may name a program by its key, its base name or its exact resolved path.
        env_allow: Variables copied from this process's environment (a trailing ``*`` is
            a prefix); nothing else leaks, and a secret-looking name (``*_API_KEY``,
            ``*_TOKEN``, ``*SECRET*``, ``PGPASSWORD``, ...) is refused here and never copied.
        env_set: Fixed values the child always gets (``{"GIT_TERMINAL_PROMPT": "0"}``); set
            by the operator, never by the model.
        path: The fixed ``PATH`` the child sees (also used to resolve bare names).
        grace_s: Time between SIGTERM and SIGKILL when the tree is stopped.
        effect: Effect class of ``run_process`` (drives policy and outcome mapping).
        default_timeout_s: Limit when the call gives none; ``max_timeout_s`` caps any.
        on_nonzero: ``"error"`` raises :class:`ProcessExitError`; ``"data"`` returns it.
        version: Tool version approvals bind to.
        confine: ``"auto"`` confines children with Landlock when the kernel has it (one
            warning otherwise); ``"require"`` refuses to build without it; ``"off"``.
        read_paths: More trees a confined child may read (a toolchain outside ``/usr``).
        path_args: Programs whose operands (arguments not starting with ``-``, all after
            ``--``) are paths: each must resolve inside the workspace or nothing runs.
        tree: How descendants are tracked: ``"auto"`` (a cgroup v2 when one can be made
            here, else a ``/proc`` sweep), ``"cgroup"`` or ``"sweep"``.
    """

    name = "process"

    def __init__(
        self,
        allowed_programs: Mapping[str, str] | Sequence[str],
        *,
        env_allow: Sequence[str] = DEFAULT_ENV_ALLOW,
        env_set: Mapping[str, str] | None = None,
        path: str = DEFAULT_PATH,
        grace_s: float = 2.0,
        effect: Effect = "write",
        default_timeout_s: float = 60.0,
        max_timeout_s: float = 3600.0,
        on_nonzero: Literal["error", "data"] = "error",
        version: str = "1.0.0",
        confine: Literal["auto", "require", "off"] = "auto",
        read_paths: Sequence[str] = (),
        path_args: Collection[str] = (),
        tree: Literal["auto", "cgroup", "sweep"] = "auto",
    ) -> None:
        self._programs = _resolve_programs(allowed_programs, path)
        self._env_allow = _check_env_allow(env_allow)
        self._env_set = dict(env_set or {})
        self._path = path
        self._grace_s = grace_s
        self._effect: Effect = effect
        self._default_timeout_s = default_timeout_s
        self._max_timeout_s = max_timeout_s
        self._on_nonzero = on_nonzero
        self._version = version
        if confine == "require" and landlock_abi() < 1:
            raise ToolDeclarationError(
                "confine='require' but this kernel has no Landlock to confine children"
            )
        self._confine = confine
        self._confined = confine != "off" and landlock_abi() >= 1
        self._read_paths = tuple(os.path.abspath(p) for p in read_paths)
        self._path_programs = {self._programs[n] for n in path_args if n in self._programs}
        unknown = [n for n in path_args if n not in self._programs]
        if unknown:
            raise ToolDeclarationError(f"path_args names programs not allowed: {unknown}")
        self._tree = tree

    def tools(self) -> list[ToolSpec]:
        """The single ``run_process`` tool."""
        names = ", ".join(sorted(k for k in self._programs if not os.path.isabs(k)))
        return [
            ToolSpec(
                name="run_process",
                version=self._version,
                description=(
                    "Run an allow-listed program with an argument list (no shell) in a "
                    f"workspace directory. Allowed programs: {names}."
                ),
                input_model=RunProcessArgs,
                effect=self._effect,
                run=self._run,
                timeout_s=self._default_timeout_s,
            )
        ]

    def close(self) -> None:
        """Nothing to release: every call reaps its own process tree before returning."""

    # ------------------------------------------------------------------ preparation

    def _program(self, requested: str) -> str:
        found = self._programs.get(requested)
        if found is None and requested in self._programs.values():
            found = requested
        if found is None:
            raise PolicyDenied(f"program {requested!r} is not on this adapter's allow-list")
        return found

    def _cwd(self, root: Path, raw: str) -> Path:
        if raw.strip() in ("", ".", "./"):
            cwd = Path(os.path.realpath(root))
        else:
            cwd = confine_path(root, raw)
        if not cwd.is_dir():
            raise TargetNotFound(f"working directory {raw!r} does not exist in the workspace")
        return cwd

    def _confine_args(self, program: str, argv: Sequence[str], root: Path, cwd: Path) -> None:
        if program not in self._path_programs:
            return
        base = os.path.realpath(root)
        for arg in _arg_paths(argv):
            target = os.path.realpath(os.path.join(cwd, arg))
            if os.path.commonpath([base, target]) != base:
                raise PathEscapeError(f"argument {arg!r} resolves outside the workspace")

    def _env(self, tmpdir: str, tree: ProcessTree) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if any(fnmatch.fnmatchcase(k, pattern) for pattern in self._env_allow)
            and not _is_secret_name(k)
        }
        if self._confined:  # the real home is out of reach: give it a fresh, private one
            env["HOME"] = tmpdir
        env.update(self._env_set)
        env["PATH"] = self._path
        env["TMPDIR"] = tmpdir
        env.update(tree.environ())
        return env

    def _deadline(self, timeout_s: float | None, ctx: InvokeContext) -> float:
        limit = min(timeout_s or self._default_timeout_s, self._max_timeout_s)
        deadline = time.time() + limit
        return deadline if ctx.deadline is None else min(deadline, ctx.deadline)

    def _ruleset(self, program: str, root: Path, tmpdir: str) -> Ruleset | None:
        if not self._confined:
            if self._confine == "auto":
                warn_unconfined_once()
            return None
        workspace = os.path.realpath(root)
        read = [*SYSTEM_READ_PATHS, *program_read_paths(program, workspace), *self._read_paths]
        try:
            return Ruleset(read=read, write=[workspace, tmpdir])
        except OSError as exc:
            raise PermanentError(f"the child's confinement could not be prepared ({exc})") from None

    # ------------------------------------------------------------------ execution

    def _run(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, RunProcessArgs)
        program = self._program(args.program)
        cwd = self._cwd(ctx.workspace_root, args.cwd)
        self._confine_args(program, args.args, ctx.workspace_root, cwd)
        if ctx.cancel.is_set():
            raise ToolCancelled("cancelled before the process started; nothing ran")
        deadline = self._deadline(args.timeout_s, ctx)
        if deadline <= time.time():
            raise DeadlineExceeded("no time left to start the process; nothing ran")
        tmpdir = tempfile.mkdtemp(prefix="execgraph-call-")
        try:
            try:
                tree = open_tree(self._tree)
            except OSError as exc:
                raise PermanentError(f"the process tree cannot be tracked ({exc})") from None
            try:
                ruleset = self._ruleset(program, ctx.workspace_root, tmpdir)
                proc = self._start(program, args, cwd, tmpdir, tree, ruleset)
                tree.started(proc.pid)
                ended = supervise(proc, tree, ctx, deadline, grace_s=self._grace_s)
                return outcome(
                    proc.returncode,  # reaped: its exit status, or minus the killing signal
                    args.program,
                    list(args.args),
                    ctx,
                    ended,
                    effect=self._effect,
                    on_nonzero=self._on_nonzero,
                )
            finally:
                tree.close()
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)

    def _start(
        self,
        program: str,
        args: RunProcessArgs,
        cwd: Path,
        tmpdir: str,
        tree: ProcessTree,
        ruleset: Ruleset | None,
    ) -> subprocess.Popen[bytes]:
        def preexec() -> None:  # in the child, before exec: join the tree, then confine
            tree.preexec()
            if ruleset is not None:
                ruleset.restrict_self()

        try:
            return subprocess.Popen(  # argv list, allow-listed absolute path: no shell
                [program, *args.args],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=self._env(tmpdir, tree),
                shell=False,
                close_fds=True,
                start_new_session=True,
                preexec_fn=preexec,
            )
        except FileNotFoundError:
            raise TargetNotFound(f"program {args.program!r} is not installed") from None
        except (OSError, subprocess.SubprocessError) as exc:
            raise PermanentError(
                f"program {args.program!r} could not be started ({type(exc).__name__})"
            ) from None
        finally:
            if ruleset is not None:
                ruleset.close()
