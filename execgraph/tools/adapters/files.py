"""FileAdapter: read, list, write and patch files confined to a workspace root.

Every path is normalized (no ``..``, no absolute path) and then opened *beneath a
descriptor of the call's workspace root*, one component at a time with ``O_NOFOLLOW``
(:mod:`execgraph.tools.resolve_beneath`): nothing is opened by a name checked earlier, so a
directory swapped for a symlink mid-call can never carry a read or a write outside.
Symlinks inside the workspace are followed when their target stays inside (resolved by
us, lexically, from the root), refused when it leaves. Only plain regular files are read
or replaced: a FIFO, socket or device is refused at once (opened ``O_NONBLOCK``, checked
with ``fstat``), and so is a file with other hard links (one may be outside).

Writes are atomic (temp file in the target's own directory, through the same descriptor,
fsync, rename) so a crash leaves either the old or the new content, never a torn file;
that is what makes ``reconcile`` able to answer by comparing hashes. Every OS error
becomes a typed error (:func:`execgraph.tools.fileio.os_error`).

Here: the adapter (its tools, read-after-write verify, reconcile, compare-and-swap state).
The tools' arguments are in :mod:`.file_args`, the write-intent notes reconcile reads in
:mod:`.file_journal`, the confined walk behind ``list_files`` in :mod:`.file_listing`,
what is done to the bytes in :mod:`.file_content`.
"""

from __future__ import annotations

import stat
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    ExecGraphError,
    PathEscapeError,
    PermanentError,
    TargetNotFound,
    VerificationError,
)
from execgraph.tools.adapters.file_args import (
    ListFilesArgs,
    PatchFileArgs,
    ReadFileArgs,
    WriteFileArgs,
    WriteFilesArgs,
)
from execgraph.tools.adapters.file_content import (
    ABSENT,
    decode,
    diff,
    file_state,
    fit_page,
    scan,
    sha_of,
)
from execgraph.tools.adapters.file_journal import recall, remember
from execgraph.tools.adapters.file_listing import fit_listing, matching_files
from execgraph.tools.fileio import check_running, os_error, replace_at
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.paths import in_scope, normalize_relpath
from execgraph.tools.resolve_beneath import Beneath, Spot
from execgraph.tools.spec import Effect, Runner, ToolSpec

__all__ = [
    "ABSENT",
    "FileAdapter",
    "ListFilesArgs",
    "PatchFileArgs",
    "ReadFileArgs",
    "WriteFileArgs",
]

_READ_DOC = "Read a UTF-8 workspace file; page with offset when it exceeds the output budget."
_LIST_DOC = "List workspace files matching a glob; '**' spans directories."
_WRITE_DOC = "Atomically replace a workspace file with content, creating parent directories."
_WRITE_FILES_DOC = (
    "Replace several workspace files, one by one; if it stops midway the result says which "
    "were written and which are pending."
)
_PATCH_DOC = "Replace one exact, unique occurrence of `old` with `new` in a workspace file."


def _ev(ctx: InvokeContext, source_id: str, kind: str, value: str, **kw: Any) -> Evidence:
    """One evidence item for this call (``version`` defaults to now, so newer wins)."""
    kw.setdefault("version", time.time_ns())
    kw.update(call_id=ctx.call_id, observed_at=time.time())
    return Evidence(source_id=source_id, kind=kind, value=value, **kw)


def _try_artifact(ctx: InvokeContext, data: bytes, kind: str) -> str | None:
    """Store ``data`` as an artifact if the context has a store attached."""
    try:
        return ctx.put_artifact(data, kind)
    except RuntimeError:  # the default context has no artifact store; inline output only
        return None


class FileAdapter:
    """Workspace file tools: ``read_file``, ``list_files``, ``write_file``, ``patch_file``.

    Args:
        root: Default workspace root; each call uses ``ctx.workspace_root`` so one adapter
            can serve every run.
        max_read_bytes: The most bytes one read loads into memory (inline plus artifact).
        write_files: Also offer ``write_files`` (several files in one call, ``partial``
            with a recovery manifest when it stops midway; :mod:`.file_batch`).
    """

    name = "files"

    def __init__(
        self, root: Path | str, *, max_read_bytes: int = 8 * 1024 * 1024, write_files: bool = False
    ) -> None:
        self.root = Path(root)
        self.max_read_bytes = max_read_bytes
        self.write_files = write_files

    # ------------------------------------------------------------------ helpers

    def _root(self, ctx: InvokeContext | None) -> Path:
        return Path(ctx.workspace_root) if ctx is not None and ctx.workspace_root else self.root

    @staticmethod
    def _state(root: Path, rel: str) -> tuple[str, int]:
        """(sha256 or ABSENT, mtime_ns) of the file ``rel`` lands on, opened beneath ``root``.

        Raises:
            OSError, PathEscapeError, PermanentError: as :class:`Beneath` reports them.
        """
        try:
            with Beneath(root) as tree:
                found = tree.open_existing(rel)
                return (ABSENT, 0) if isinstance(found, Spot) else file_state(found.fd)
        except FileNotFoundError:  # the root, or a parent directory, does not exist
            return ABSENT, 0

    # ------------------------------------------------------------------ read tools

    def _read(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, ReadFileArgs)
        check_running(ctx)
        rel = normalize_relpath(args.path)
        try:
            with Beneath(self._root(ctx)) as tree:
                opened = tree.open_file(rel)
                sha, size, mtime, captured = scan(opened.fd, args.offset, self.max_read_bytes, ctx)
        except OSError as exc:
            raise os_error(exc, rel, "read") from None
        page = {"path": rel, "sha256": sha, "size": size, "offset": args.offset}
        data, shown = fit_page(page, captured, ctx.output_budget)
        truncated = data["next_offset"] is not None
        version = max(mtime, 1)
        evidence = [_ev(ctx, f"file:{rel}", "file_hash", sha, verified=True, version=version)]
        if truncated and len(captured) > shown:
            ref = _try_artifact(ctx, captured, "file")
            if ref is not None:
                source = f"content:{rel}@{args.offset}"
                evidence.append(_ev(ctx, source, "file_content", sha, ref=ref, version=version))
        summary = f"read {shown} of {size} bytes of {rel}"
        return AdapterOutput(data, False, summary, tuple(evidence), truncated)

    def _list(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, ListFilesArgs)
        check_running(ctx)
        pattern = normalize_relpath(args.pattern).split("/")
        base = self._root(ctx)
        if not base.is_dir():
            raise TargetNotFound("the workspace root does not exist")
        try:
            found = matching_files(base, pattern, ctx)
        except OSError as exc:
            raise os_error(exc, args.pattern, "list") from None
        files = fit_listing(found, args.limit, ctx.output_budget)
        truncated = len(files) < len(found)
        listing = "\n".join(files)
        digest = sha_of(listing.encode())
        evidence = _ev(ctx, f"list:{args.pattern}", "file_listing", digest, verified=True)
        data = {"files": files, "count": len(files), "total": len(found)}
        summary = f"{len(found)} files match {args.pattern!r}"
        return AdapterOutput(data, False, summary, (evidence,), truncated)

    # ------------------------------------------------------------------ write tools

    def _commit(
        self, ctx: InvokeContext, rel: str, before: bytes | None, mode: int, after: bytes
    ) -> AdapterOutput:
        """Atomically replace the file ``rel`` lands on with ``after``; describe the change."""
        pre = sha_of(before) if before is not None else ABSENT
        intended = sha_of(after)
        check_running(ctx)  # last point at which nothing has happened yet
        ctx.check_fence()  # a stale owner (taken over while it stalled) writes nothing
        try:
            remember(self._root(ctx), ctx, pre, intended)
            with Beneath(self._root(ctx)) as tree:
                spot = tree.locate(rel, make_parents=True)
                _check_scope(ctx, rel, spot.rel)
                replace_at(spot.dir_fd, spot.name, after, mode, before_rename=ctx.check_fence)
        except OSError as exc:
            raise os_error(exc, rel, "write") from None
        summary, full = diff(rel, before or b"", after)
        ref = _try_artifact(ctx, full.encode(), "diff") if len(full) > len(summary) else None
        evidence = (
            _ev(ctx, f"write:{rel}:{ctx.call_id}", "file_write", f"{pre}->{intended}"),
            _ev(ctx, f"diff:{rel}:{ctx.call_id}", "file_diff", summary, ref=ref),
        )
        data = {
            "path": rel,
            "sha256_before": pre,
            "sha256_after": intended,
            "bytes": len(after),
            "changed": pre != intended,
            "diff": summary,
        }
        return AdapterOutput(data, True, f"wrote {len(after)} bytes to {rel}", evidence)

    def _load(self, ctx: InvokeContext, rel: str, verb: str) -> tuple[bytes | None, int]:
        """(current bytes or None when absent, mode to keep) of the file ``rel`` lands on."""
        try:
            with Beneath(self._root(ctx)) as tree:
                found = tree.open_existing(rel)
                if isinstance(found, Spot):
                    return None, 0o644
                return tree.read_all(found), stat.S_IMODE(found.st.st_mode)
        except FileNotFoundError:  # the root or a parent does not exist yet
            return None, 0o644
        except OSError as exc:
            raise os_error(exc, rel, verb) from None

    def _write(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, WriteFileArgs)
        rel = normalize_relpath(args.path)
        before, mode = self._load(ctx, rel, "write")
        return self._commit(ctx, rel, before, mode, args.content.encode("utf-8"))

    def _patch(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, PatchFileArgs)
        rel = normalize_relpath(args.path)
        before, mode = self._load(ctx, rel, "read")
        if before is None:
            raise TargetNotFound(f"no file at {rel!r} to patch")
        text, binary = decode(before)
        if binary or len(text.encode("utf-8")) != len(before):
            raise PermanentError(f"{rel!r} is not UTF-8 text; it cannot be patched")
        count = text.count(args.old)
        if count == 0:
            raise TargetNotFound(f"the text to replace does not occur in {rel!r}")
        if count > 1:
            raise PermanentError(
                f"the text to replace occurs {count} times in {rel!r}; include more context"
            )
        return self._commit(ctx, rel, before, mode, text.replace(args.old, args.new).encode())

    # ------------------------------------------------------------------ hooks

    def _verify(self, args: BaseModel, out: AdapterOutput, ctx: InvokeContext) -> list[Evidence]:
        """Read-after-write: the file on disk must hash to what the write produced."""
        rel = normalize_relpath(getattr(args, "path", ""))
        expected = out.data.get("sha256_after") if isinstance(out.data, dict) else None
        try:
            sha, mtime = self._state(self._root(ctx), rel)
        except (OSError, ExecGraphError):
            raise VerificationError(f"{rel!r} could not be re-read after the write") from None
        if expected is None or sha != expected:
            raise VerificationError(f"{rel!r} does not hold the content just written")
        return [_ev(ctx, f"file:{rel}", "file_hash", sha, verified=True, version=max(mtime, 1))]

    def _reconcile(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
        """Did an interrupted write land? Compare the file to the pre-image and the intent."""
        rel = normalize_relpath(getattr(args, "path", ""))
        try:
            sha, _ = self._state(self._root(ctx), rel)
        except (OSError, ExecGraphError):
            return None
        note = recall(self._root(ctx), ctx)
        pre, intended = note if note is not None else (None, None)
        if isinstance(args, WriteFileArgs):
            intended = sha_of(args.content.encode("utf-8"))  # known from the arguments alone
        data = {"path": rel, "sha256": sha}
        if intended is not None and sha == intended:
            return AdapterOutput(data, True, f"{rel} holds the intended content")
        if note is None:
            return AdapterOutput(data, False, f"no write of {rel} was ever started")
        if sha == pre:
            return AdapterOutput(data, False, f"{rel} still holds its previous content")
        return None

    def _read_state(self, key: str, args: BaseModel, root: Path) -> str | None:
        """sha256 of the ``path`` argument's file (or ``absent``), for compare-and-swap.

        Asked as ``sha256`` or by the file's target name, ``file:<path>``: the source id
        of the ``file_hash`` evidence a read (or a verified write) reports, whose value is
        this same hash. So a write of a file the run has read is guarded by what it read.
        """
        path = getattr(args, "path", None)
        if not isinstance(path, str) or key not in ("sha256", f"file:{normalize_relpath(path)}"):
            return None
        try:
            return self._state(root or self.root, normalize_relpath(path))[0]
        except IsADirectoryError:
            return None
        except OSError as exc:
            raise os_error(exc, normalize_relpath(path), "read") from None

    # ------------------------------------------------------------------ adapter

    def tools(self) -> list[ToolSpec]:
        """The four file tools, bound to this adapter."""
        hooks: dict[str, Any] = {"path_args": ("path",), "read_state": self._read_state}
        writes = {
            **hooks,
            "targets": ("file:{path}",),
            "locks": ("file:{path}",),
            "verify": self._verify,
            "reconcile": self._reconcile,
        }
        table: list[tuple[str, str, type[BaseModel], Effect, Runner, dict[str, Any]]] = [
            ("read_file", _READ_DOC, ReadFileArgs, "read", self._read, hooks),
            ("list_files", _LIST_DOC, ListFilesArgs, "read", self._list, {}),
            ("write_file", _WRITE_DOC, WriteFileArgs, "write", self._write, writes),
            ("patch_file", _PATCH_DOC, PatchFileArgs, "write", self._patch, writes),
        ]
        specs = [
            ToolSpec(name, "1.0.0", doc, model, effect, run, **extra)
            for name, doc, model, effect, run, extra in table
        ]
        if self.write_files:
            specs.append(self._write_files_spec())
        return specs

    def _write_files_spec(self) -> ToolSpec:
        from execgraph.tools.adapters.file_batch import reconcile_files, write_files

        def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
            assert isinstance(args, WriteFilesArgs)
            return write_files(self._load, self._root(ctx), args, ctx)

        def reconcile(args: BaseModel, ctx: InvokeContext) -> AdapterOutput | None:
            assert isinstance(args, WriteFilesArgs)
            return reconcile_files(self._root(ctx), args, ctx)

        # One lane for batch writes: their paths are a list no lock template can name.
        return ToolSpec(
            "write_files", "1.0.0", _WRITE_FILES_DOC, WriteFilesArgs, "write", run,
            locks=("files:write_files",), reconcile=reconcile,
        )  # fmt: skip

    def close(self) -> None:
        """Nothing to release: files are opened and closed per call."""


def _check_scope(ctx: InvokeContext, rel: str, landed: str) -> None:
    """Refuse a write a link carries out of the data scope, seen where it lands *now*.

    Policy already matched the landing path; this closes the window between its
    decision and the write (a link made meanwhile). Only a link's doing is refused: a
    path written outside the scope was the policy's to allow (an ``override`` rule).
    """
    scope = ctx.data_scope
    if scope and landed != rel and in_scope(rel, scope) and not in_scope(landed, scope):
        raise PathEscapeError(f"{rel!r} lands outside the data scope through a symlink")
