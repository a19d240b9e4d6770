"""FileAdapter: read, list, write and patch files confined to a workspace root.

Every path is normalized (no ``..``, no absolute path) and then opened *beneath a
descriptor of the call's workspace root*, one component at a time with ``O_NOFOLLOW``
(:mod:`execgraph.tools.beneath`): nothing is opened by a name checked earlier, so a
directory swapped for a symlink mid-call can never carry a read or a write outside.
Symlinks inside the workspace are followed when their target stays inside (resolved by
us, lexically, from the root), refused when it leaves. Only plain regular files are read
or replaced: a FIFO, socket or device is refused at once (opened ``O_NONBLOCK``, checked
with ``fstat``), and so is a file with other hard links (one may be outside).

Writes are atomic (temp file in the target's own directory, through the same descriptor,
fsync, rename) so a crash leaves either the old or the new content, never a torn file;
that is what makes ``reconcile`` able to answer by comparing hashes. Every OS error
becomes a typed error (:func:`execgraph.tools.fileio.os_error`).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    ExecGraphError,
    PathEscapeError,
    PermanentError,
    TargetNotFound,
    ToolCancelled,
    VerificationError,
)
from execgraph.tools.adapters.file_content import (
    ABSENT,
    decode,
    diff,
    file_state,
    fit_page,
    glob_match,
    json_len,
    scan,
    sha_of,
)
from execgraph.tools.beneath import Beneath, Spot
from execgraph.tools.fileio import check_running, os_error, replace_at
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.paths import in_scope, landing, normalize_relpath
from execgraph.tools.spec import Effect, Runner, ToolSpec

__all__ = [
    "ABSENT",
    "FileAdapter",
    "ListFilesArgs",
    "PatchFileArgs",
    "ReadFileArgs",
    "WriteFileArgs",
]

JOURNAL_DIR = ".execgraph-journal"
"""Where writes note their intent before the replace (hidden from list_files)."""
MAX_LIST_DEPTH = 128
"""Directories deeper than this below the root are not listed (a hostile tree is finite)."""
_READ_DOC = "Read a UTF-8 workspace file; page with offset when it exceeds the output budget."
_LIST_DOC = "List workspace files matching a glob; '**' spans directories."
_WRITE_DOC = "Atomically replace a workspace file with content, creating parent directories."
_PATCH_DOC = "Replace one exact, unique occurrence of `old` with `new` in a workspace file."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadFileArgs(_Args):
    """Arguments of ``read_file``; ``offset`` pages through files larger than the budget."""

    path: str = Field(description="workspace-relative file path")
    offset: int = Field(default=0, ge=0, description="byte offset to start reading at")


class ListFilesArgs(_Args):
    """Arguments of ``list_files``; ``**`` matches any number of directories."""

    pattern: str = Field(default="**/*", description="glob, e.g. 'src/**/*.py'")
    limit: int = Field(default=1000, ge=1, le=100_000, description="most names returned")


class WriteFileArgs(_Args):
    """Arguments of ``write_file``: the whole new UTF-8 content."""

    path: str = Field(description="workspace-relative file path")
    content: str = Field(description="complete new file content")


class PatchFileArgs(_Args):
    """Arguments of ``patch_file``: ``old`` must occur exactly once."""

    path: str = Field(description="workspace-relative file path")
    old: str = Field(min_length=1, description="exact text to replace (must be unique)")
    new: str = Field(description="replacement text")


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
    """

    name = "files"

    def __init__(self, root: Path | str, *, max_read_bytes: int = 8 * 1024 * 1024) -> None:
        self.root = Path(root)
        self.max_read_bytes = max_read_bytes

    # ------------------------------------------------------------------ helpers

    def _root(self, ctx: InvokeContext | None) -> Path:
        return Path(ctx.workspace_root) if ctx is not None and ctx.workspace_root else self.root

    @staticmethod
    def _journal_rel(ctx: InvokeContext) -> str:
        name = hashlib.sha256((ctx.idempotency_key or ctx.call_id).encode()).hexdigest()[:32]
        return f"{JOURNAL_DIR}/{name}.json"

    def _remember(self, ctx: InvokeContext, pre: str, intended: str) -> None:
        """Durably note (pre-image, intended) hashes *before* the replace.

        The note outlives a crash, so a new process's reconcile can prove a write absent
        (the file still holds its pre-image, or no note exists: the write never started)
        or present (it holds the intended content), instead of leaving it unknown.
        """
        root = self._root(ctx)
        root.mkdir(parents=True, exist_ok=True)  # the root is configuration, not input
        with Beneath(root) as tree:
            spot = tree.locate(self._journal_rel(ctx), make_parents=True)
            replace_at(
                spot.dir_fd, spot.name, json.dumps({"pre": pre, "intended": intended}).encode()
            )

    def _recall(self, ctx: InvokeContext) -> tuple[str, str] | None:
        try:
            with Beneath(self._root(ctx)) as tree:
                note = json.loads(tree.read_all(tree.open_file(self._journal_rel(ctx))))
            return str(note["pre"]), str(note["intended"])
        except (OSError, ExecGraphError, ValueError, KeyError, TypeError):
            return None

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
            with Beneath(base) as tree:
                found = [
                    rel
                    for rel, is_link in _walk_files(tree.fd, "", ctx, 0)
                    if glob_match(rel.split("/"), pattern) and (not is_link or _listable(base, rel))
                ]
        except OSError as exc:
            raise os_error(exc, args.pattern, "list") from None
        # Fit the JSON of the whole result into the budget (the executor spills anything
        # larger to an artifact the model cannot read).
        used = json_len({"files": [], "count": len(found), "total": len(found)})
        files: list[str] = []
        for rel in found[: args.limit]:
            used += json_len(rel) + 2
            if used > ctx.output_budget:
                break
            files.append(rel)
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
        try:
            self._remember(ctx, pre, intended)
            with Beneath(self._root(ctx)) as tree:
                spot = tree.locate(rel, make_parents=True)
                _check_scope(ctx, rel, spot.rel)
                replace_at(spot.dir_fd, spot.name, after, mode)
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
        note = self._recall(ctx)
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
        return [
            ToolSpec(name, "1.0.0", doc, model, effect, run, **extra)
            for name, doc, model, effect, run, extra in table
        ]

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


def _walk_files(
    dir_fd: int, reldir: str, ctx: InvokeContext, depth: int
) -> Iterator[tuple[str, bool]]:
    """(workspace-relative name, is a link) of the non-directories below ``dir_fd``, sorted.

    Directories are entered beneath their parent's descriptor with ``O_NOFOLLOW``, so a
    directory swapped for a link mid-listing is skipped, never listed through; a
    directory link is never descended (it could loop or leave the root).
    """
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
