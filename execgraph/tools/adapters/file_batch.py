"""``write_files``: several files replaced one by one, with a recovery manifest.

Each file is replaced atomically (as ``write_file`` does), but a set of files cannot be:
a failure at the third file leaves the first two written. So before the first write the
tool checks every path (confined, inside the data scope, no duplicates), reads every
current content (a directory or FIFO target fails here, when nothing is written yet),
keeps a **backup copy** of every file it will overwrite, and writes a **manifest** naming,
per file, its hash before and after and its backup. Both live in the workspace journal
(:data:`~.file_journal.JOURNAL_DIR`, hidden from ``list_files``) and outlive a crash.

A failure after the first file ends the call ``partial``: the written paths, the pending
ones, the typed error and a :class:`~execgraph.state.contracts.RecoveryRef` whose ``ref``
is the manifest. Finish: call ``write_files`` again with the pending files. Undo:
:func:`undo_files` puts every written file back (from its backup, or removes it when it did
not exist) where it still holds what this call wrote, and never touches a file changed since.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from execgraph.state.contracts import Evidence, PartialProgress, RecoveryRef
from execgraph.state.errors import (
    ExecGraphError,
    PathEscapeError,
    PermanentError,
    PolicyDenied,
    ToolCancelled,
)
from execgraph.tools.adapters.file_args import WriteFilesArgs
from execgraph.tools.adapters.file_content import ABSENT, sha_of
from execgraph.tools.adapters.file_journal import JOURNAL_DIR
from execgraph.tools.fileio import check_running, os_error, replace_at
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.paths import in_scope, normalize_relpath
from execgraph.tools.resolve_beneath import Beneath, Spot

__all__ = ["RECOVERY_DIR", "reconcile_files", "undo_files", "write_files"]

RECOVERY_DIR = f"{JOURNAL_DIR}/recovery"
"""Where ``write_files`` keeps its manifests and backup copies, one folder per call."""

_put_target = replace_at
"""The replace of a target file (a seam for fault injection in tests)."""


def _put(root: Path, rel: str, data: bytes, mode: int = 0o600) -> None:
    with Beneath(root) as tree:
        spot = tree.locate(rel, make_parents=True)
        replace_at(spot.dir_fd, spot.name, data, mode)


def _plan(args: WriteFilesArgs, ctx: InvokeContext) -> list[str]:
    rels = [normalize_relpath(f.path) for f in args.files]
    if len(set(rels)) != len(rels):
        raise PermanentError("write_files names the same path twice")
    for rel in rels:
        if rel == JOURNAL_DIR or rel.startswith(f"{JOURNAL_DIR}/"):
            raise PathEscapeError(f"{rel!r} is inside the runtime's journal")
        if ctx.data_scope and not in_scope(rel, ctx.data_scope):
            # write_files has no single path argument for the policy to match, so the
            # data scope is enforced here, for every file, before anything is written.
            raise PolicyDenied(f"{rel!r} is outside the contract's data scope")
    return rels


def _folder(ctx: InvokeContext) -> str:
    tag = hashlib.sha256((ctx.idempotency_key or ctx.call_id).encode()).hexdigest()[:24]
    return f"{RECOVERY_DIR}/{tag}"


def _prepare(
    root: Path,
    ctx: InvokeContext,
    rels: list[str],
    befores: list[bytes | None],
    afters: list[bytes],
) -> tuple[str, dict[str, str]]:
    """Write the backups and the manifest; return the manifest's path and the backups."""
    folder = _folder(ctx)
    backups: dict[str, str] = {}
    entries: list[dict[str, Any]] = []
    for index, (rel, before, after) in enumerate(zip(rels, befores, afters, strict=True)):
        backup = ""
        if before is not None:
            backup = f"{folder}/{index}.bak"
            _put(root, backup, before)
        backups[rel] = backup
        entries.append(
            {
                "path": rel,
                "before": sha_of(before) if before is not None else ABSENT,
                "after": sha_of(after),
                "backup": backup,
            }
        )
    manifest = f"{folder}/manifest.json"
    _put(root, manifest, json.dumps({"call_id": ctx.call_id, "files": entries}).encode())
    return manifest, backups


def write_files(load: Any, root: Path, args: WriteFilesArgs, ctx: InvokeContext) -> AdapterOutput:
    """Replace ``args.files`` in order; ``partial`` with a recovery manifest on a midway stop.

    Args:
        load: ``(ctx, rel, verb) -> (bytes | None, mode)``, the adapter's confined read.
        root: The call's workspace root.
        args: The files.
        ctx: The call's context.
    """
    check_running(ctx)
    rels = _plan(args, ctx)
    loaded = [load(ctx, rel, "write") for rel in rels]
    afters = [f.content.encode("utf-8") for f in args.files]
    try:
        manifest, backups = _prepare(root, ctx, rels, [b for b, _ in loaded], afters)
    except OSError as exc:
        raise os_error(exc, RECOVERY_DIR, "write") from None
    ctx.check_fence()
    evidence: list[Evidence] = []
    for index, rel in enumerate(rels):
        try:
            if ctx.cancel.is_set():
                raise ToolCancelled("the call was cancelled between two files")
            ctx.check_fence()
            with Beneath(root) as tree:
                spot = tree.locate(rel, make_parents=True)
                _put_target(spot.dir_fd, spot.name, afters[index], loaded[index][1] or 0o644)
        except (OSError, ExecGraphError) as exc:
            error = os_error(exc, rel, "write") if isinstance(exc, OSError) else exc
            if index == 0:
                raise error from None  # nothing written: an ordinary typed failure
            return _partial(rels, index, error, manifest, backups, args, evidence)
        pre = loaded[index][0]
        evidence.append(
            Evidence(
                source_id=f"write:{rel}:{ctx.call_id}",
                kind="file_write",
                value=f"{sha_of(pre) if pre is not None else ABSENT}->{sha_of(afters[index])}",
                call_id=ctx.call_id,
                observed_at=time.time(),
                version=time.time_ns(),
            )
        )
    data = {"written": rels, "recovery_ref": manifest}
    return AdapterOutput(data, True, f"wrote {len(rels)} file(s)", tuple(evidence))


def _partial(
    rels: list[str],
    done: int,
    error: ExecGraphError,
    manifest: str,
    backups: dict[str, str],
    args: WriteFilesArgs,
    evidence: list[Evidence],
) -> AdapterOutput:
    written, pending = rels[:done], rels[done:]
    stopped = f"{error.type}: {error.message}"
    recovery = RecoveryRef(
        kind="files",
        ref=manifest,
        finish=f"call write_files again with the {len(pending)} pending file(s)",
        undo=f"restore the {len(written)} written file(s) from their backups (undo_files)",
        backups={rel: backups[rel] for rel in written},
    )
    data = {
        "written": written,
        "pending": pending,
        "stopped_by": stopped,
        "recovery_ref": manifest,
        "backups": recovery.backups,
    }
    return AdapterOutput(
        data=data,
        committed=True,
        summary=(
            f"wrote {len(written)} of {len(rels)} file(s), then stopped ({error.type}); "
            f"recovery: {manifest}"
        ),
        evidence=tuple(evidence),
        partial=PartialProgress(
            committed=written, pending=pending, stopped_by=stopped, recovery_ref=recovery
        ),
    )


def undo_files(root: Path | str, ref: str) -> list[str]:
    """Undo the files a ``write_files`` call wrote, from its manifest ``ref``.

    A file that holds what the call wrote is put back: its backup restored, or removed
    when it did not exist before. A file that holds anything else (never written, or
    changed since) is left alone. Returns the paths put back.
    """
    root = Path(root)
    with Beneath(root) as tree:
        manifest = json.loads(tree.read_all(tree.open_file(normalize_relpath(ref))))
    undone: list[str] = []
    for entry in manifest["files"]:
        rel = str(entry["path"])
        with Beneath(root) as tree:
            found = tree.open_existing(rel)
            if isinstance(found, Spot) or sha_of(tree.read_all(found)) != entry["after"]:
                continue
            if entry["backup"]:
                old = tree.read_all(tree.open_file(str(entry["backup"])))
                spot = tree.locate(rel)
                replace_at(spot.dir_fd, spot.name, old, found.st.st_mode & 0o7777)
            else:
                spot = tree.locate(rel)
                os.unlink(spot.name, dir_fd=spot.dir_fd)
        undone.append(rel)
    return undone


def _current(root: Path, rel: str) -> str:
    with Beneath(root) as tree:
        found = tree.open_existing(rel)
        return ABSENT if isinstance(found, Spot) else sha_of(tree.read_all(found))


def reconcile_files(root: Path, args: WriteFilesArgs, ctx: InvokeContext) -> AdapterOutput | None:
    """Did an interrupted ``write_files`` land, wholly, partly or not at all? Its manifest
    (written before the first file) and the files' hashes tell; None when they cannot
    (a file holds neither its old nor its new content)."""
    manifest = f"{_folder(ctx)}/manifest.json"
    try:
        with Beneath(root) as tree:
            entries = json.loads(tree.read_all(tree.open_file(manifest)))["files"]
        states = [_current(root, str(e["path"])) for e in entries]
    except FileNotFoundError:
        return AdapterOutput(None, False, "write_files never started writing")
    except (OSError, ExecGraphError, ValueError, KeyError, TypeError):
        return None
    done = [s == e["after"] for s, e in zip(states, entries, strict=True)]
    rels = [str(e["path"]) for e in entries]
    if all(done):
        return AdapterOutput({"written": rels, "recovery_ref": manifest}, True, "all files written")
    if not any(done) and all(s == e["before"] for s, e in zip(states, entries, strict=True)):
        return AdapterOutput(None, False, "no file was written")
    cut = done.index(False)
    if any(done[cut:]):
        return None  # not the prefix a write in order leaves: a person must look
    backups = {str(e["path"]): str(e["backup"]) for e in entries}
    stop = PermanentError("write_files was interrupted")
    return _partial(rels, cut, stop, manifest, backups, args, [])
