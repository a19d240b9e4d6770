"""The process adapter: run an allow-listed program, never a shell, and leave nothing behind.

Security (DESIGN §10): the program must be on the adapter's allow-list and runs by absolute
path from an argv list (``shell=False``), so ``;``, ``$(...)``, backticks and ``|`` in
arguments are inert text. The child gets a scrubbed environment (allow-listed variables,
never a secret-looking one, plus a fixed ``PATH`` and a private ``TMPDIR``, also its
``HOME`` when confined), a working
directory confined to the workspace, no stdin, and its own session. With Landlock
(:mod:`execgraph.tools.sandbox`) it can read only the system trees, its program's prefix,
the workspace and its temp directory: not the execution home (approval key, stores) nor
the ``/proc`` entries of this process. Arguments of programs named in ``path_args`` are
confined to the workspace before anything runs.

Process trees (:mod:`execgraph.tools.proctree`): the child and all its descendants, even
those that ``setpgid``, ``setsid`` or double-fork, are tracked (a cgroup v2 here, else a
``/proc`` sweep) and killed on cancel or timeout, and when the child exits; a call whose
descendants were still running when it exited is never a success.

Outcome mapping (the model must see a clear status):

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

import contextlib
import fnmatch
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    DeadlineExceeded,
    PathEscapeError,
    PermanentError,
    PolicyDenied,
    ResponseLostError,
    SchemaViolation,
    TargetNotFound,
    ToolCancelled,
    ToolDeclarationError,
    TransientError,
)
from execgraph.tools.adapters._streams import StreamReader, store_artifact
from execgraph.tools.invocation import AdapterOutput, InvokeContext, attach_output, output_of
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
_POLL_S = 0.02
_KILL_ROUNDS = 250
_MAX_ARG_BYTES = 128 * 1024


class ProcessExitError(PermanentError):
    """The program ran to completion and reported failure with a non-zero exit status."""

    def __init__(self, message: str, *, exit_code: int, output: AdapterOutput) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.output = output


class ProcessLeftoverError(ProcessExitError):
    """The program exited but left descendants running (a daemon): they were killed, and
    the call is not a success, since what they were doing was cut short."""


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


def _exited(pid: int) -> bool:
    """True once the child has exited, WITHOUT reaping it.

    While the leader stays an unreaped zombie its pid (= the process group id) cannot be
    reused, so signalling the group afterwards can never hit an unrelated process.
    """
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


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
                return self._supervise(proc, tree, args, ctx, deadline)
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

    def _supervise(
        self,
        proc: subprocess.Popen[bytes],
        tree: ProcessTree,
        args: RunProcessArgs,
        ctx: InvokeContext,
        deadline: float,
    ) -> AdapterOutput:
        assert proc.stdout is not None and proc.stderr is not None
        emit_lock = threading.Lock()
        seq = [0]

        def emit(payload: dict[str, Any]) -> None:
            with emit_lock:  # one total order across both streams
                seq[0] += 1
                ctx.emit("tool.output", {**payload, "call_id": ctx.call_id, "seq": seq[0]})

        readers = [
            StreamReader("stdout", proc.stdout, ctx.output_budget, emit),
            StreamReader("stderr", proc.stderr, ctx.output_budget, emit),
        ]
        for reader in readers:
            reader.start()
        stopped: str | None = None
        leftover = 0
        try:
            while not _exited(proc.pid):
                if ctx.cancel.is_set():
                    stopped = "cancelled"
                    break
                left = deadline - time.time()
                if left <= 0:
                    stopped = "deadline"
                    break
                tree.observe()
                ctx.cancel.wait(min(_POLL_S, left))
            if stopped is None:  # the child exited: whatever of its tree still runs is left
                leftover = len([pid for pid in tree.pids() if pid != proc.pid])
        finally:
            # Whatever happened (even an exception in this thread), nothing outlives the call.
            self._stop_tree(proc, tree, readers)
        return self._result(proc, args, ctx, readers, stopped, leftover)

    def _stop_tree(
        self, proc: subprocess.Popen[bytes], tree: ProcessTree, readers: list[StreamReader]
    ) -> None:
        """SIGTERM the tree, wait up to ``grace_s``, SIGKILL it until it is empty, reap the
        child, drain the pipes."""
        pgid = proc.pid  # start_new_session: the child leads its own group

        def signal_all(sig: int) -> None:
            tree.signal(sig)
            _signal_group(pgid, sig)

        signal_all(signal.SIGTERM)
        give_up = time.time() + self._grace_s
        # Wait for the tree and every pipe holder to go, within the grace.
        while time.time() < give_up and not (
            _exited(proc.pid) and not tree.pids() and all(r.done.is_set() for r in readers)
        ):
            time.sleep(_POLL_S)
        signal_all(signal.SIGKILL)
        for _ in range(_KILL_ROUNDS):  # a forking tree may need more than one round
            if not tree.pids():
                break
            time.sleep(_POLL_S)
            signal_all(signal.SIGKILL)
        proc.wait()  # reap; after SIGKILL this returns promptly
        for reader in readers:
            # EOF arrives once the last holder of the pipe is dead. One that escaped every
            # tracker could hold it forever: stop reading after a bound.
            if not reader.done.wait(self._grace_s + 1.0):
                reader.stop()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def _result(
        self,
        proc: subprocess.Popen[bytes],
        args: RunProcessArgs,
        ctx: InvokeContext,
        readers: list[StreamReader],
        stopped: str | None,
        leftover: int,
    ) -> AdapterOutput:
        out, err = readers
        code = proc.returncode
        data = {
            "program": args.program,
            "args": list(args.args),
            "exit_code": code,
            "stopped": stopped,
            "leftover_processes": leftover,
            "stdout": out.text(),
            "stderr": err.text(),
            "stdout_bytes": out.total,
            "stderr_bytes": err.total,
            "stdout_truncated": out.truncated,
            "stderr_truncated": err.truncated,
        }
        now = time.time()
        evidence = [
            Evidence(
                source_id=f"process:{ctx.call_id}:exit_code",
                kind="exit_code",
                value=str(code),
                call_id=ctx.call_id,
                verified=stopped is None and not leftover,
                observed_at=now,
            )
        ]
        for reader in readers:
            evidence.append(
                Evidence(
                    source_id=f"process:{ctx.call_id}:{reader.stream}",
                    kind=f"{reader.stream}_sha256",
                    value=reader.hexdigest(),
                    ref=store_artifact(ctx, reader.kept_bytes(), reader.stream),
                    call_id=ctx.call_id,
                    verified=stopped is None and not leftover and not reader.abandoned,
                    observed_at=now,
                )
            )
        acted = self._effect != "read"
        name = args.program
        whole = stopped is None and not leftover
        output = AdapterOutput(
            data=data,
            # Killed mid-way (it, or a daemon it left), a write may have acted part-way.
            committed=acted if whole else (None if acted else False),
            summary=f"{name} exited with status {code}" if stopped is None else f"{name} {stopped}",
            evidence=tuple(evidence),
            truncated=out.truncated or err.truncated,
        )
        if stopped is None and ((code == 0 and not leftover) or self._on_nonzero == "data"):
            return output
        error: Exception
        if stopped == "cancelled":
            error = ToolCancelled(
                f"cancelled while {name!r} was running; its process tree was killed"
                + ("; effects it had already made are unknown" if acted else "")
            )
        elif stopped == "deadline" and acted:
            error = ResponseLostError(
                f"{name!r} ran out of time and its process tree was killed; it may have "
                "acted part-way, so the outcome is unknown and must be reconciled"
            )
        elif stopped == "deadline":
            error = TransientError(f"{name!r} ran out of time and was killed")
        elif code == 0:
            error = ProcessLeftoverError(
                f"{name!r} exited with status 0 but left {leftover} process(es) running; "
                "they were killed, so the call did not complete",
                exit_code=code,
                output=output,
            )
        else:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
            error = ProcessExitError(f"{name!r} {how}", exit_code=code, output=output)
        raise attach_output(error, output)
