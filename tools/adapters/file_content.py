"""What the file tools do to bytes: hash, page within a budget, decode, diff, glob.

Pure helpers of :mod:`execgraph.tools.adapters.files`, apart from the adapter (confinement, atomic
writes, the intent journal) so each can be read and tested on its own.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from execgraph.state.errors import ToolCancelled
from execgraph.tools.invocation import InvokeContext

__all__ = [
    "ABSENT",
    "decode",
    "diff",
    "file_state",
    "fit_page",
    "glob_match",
    "json_len",
    "scan",
    "sha_of",
]

ABSENT = "absent"
"""The ``sha256`` state of a file that does not exist (for compare-and-swap)."""

_CHUNK = 1 << 20
_DIFF_LINES = 60
_DIFF_CHARS = 4000
_DIFF_MAX_INPUT = 256 * 1024


def sha_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_state(path: Path) -> tuple[str, int]:
    """(sha256 or ABSENT, mtime_ns) of ``path``; a directory is not a file."""
    try:
        with open(path, "rb") as fh:
            digest = hashlib.sha256()
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
            return digest.hexdigest(), os.fstat(fh.fileno()).st_mtime_ns
    except FileNotFoundError:
        return ABSENT, 0


def json_len(value: object) -> int:
    """Bytes ``value`` takes as JSON, measured as the executor bounds tool data."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def scan(path: Path, offset: int, limit: int, ctx: InvokeContext) -> tuple[str, int, int, bytes]:
    """Hash the whole file and capture ``limit`` bytes from ``offset``, from one open handle.

    One handle means the hash and the content describe the same file even if it is
    replaced meanwhile. Returns (sha256, size, mtime_ns, captured bytes).
    """
    digest, captured, pos = hashlib.sha256(), bytearray(), 0
    with open(path, "rb") as fh:
        mtime = os.fstat(fh.fileno()).st_mtime_ns
        while chunk := fh.read(_CHUNK):
            if ctx.cancel.is_set():
                raise ToolCancelled("the read was cancelled")
            digest.update(chunk)
            lo, hi = max(offset - pos, 0), limit + offset - pos
            if hi > 0 and lo < len(chunk):
                captured += chunk[lo:hi]
            pos += len(chunk)
    return digest.hexdigest(), pos, mtime, bytes(captured)


def fit_page(page: dict[str, Any], captured: bytes, budget: int) -> tuple[dict[str, Any], int]:
    """The read result whose JSON fits ``budget`` bytes, and how many file bytes it shows.

    The executor spills any data larger than the budget to an artifact and shows the model
    a stub, so the page is cut here, on a character boundary, to stay readable inline.
    """
    text, binary = decode(captured[: max(budget, 0)])
    if not text and captured and not binary:  # a budget below one character
        text = decode(captured[:4])[0][:1]
    if binary:  # a replacement char or \u escape is at most 6 JSON bytes per input byte
        shown = min(len(captured), max(budget - json_len(page) - 80, 6) // 6)
        text = captured[:shown].decode("utf-8", errors="replace")
    while True:
        if not binary:
            shown = len(text.encode())
        more = page["offset"] + shown < page["size"]
        data = {**page, "content": text, "binary": binary, "next_offset": None}
        if more:
            data["next_offset"] = page["offset"] + shown
        excess = json_len(data) - budget
        if excess <= 0 or len(text) <= 1 or binary:  # one char at least, so paging advances
            return data, shown
        text = text[: max(len(text) - excess, 1)]  # every char costs at least one byte


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 text of ``data`` (a cut multibyte tail is dropped); True when binary."""
    for cut in range(4):
        try:
            return data[: len(data) - cut].decode("utf-8"), False
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace"), True


def diff(rel: str, before: bytes, after: bytes) -> tuple[str, str]:
    """(bounded summary, full unified diff) of a change, cheap for huge files."""
    if len(before) > _DIFF_MAX_INPUT or len(after) > _DIFF_MAX_INPUT:
        summary = f"{rel}: {len(before)} -> {len(after)} bytes (too large to diff)"
        return summary, summary
    old = decode(before)[0].splitlines(keepends=True)
    new = decode(after)[0].splitlines(keepends=True)
    lines = list(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}", n=2))
    full = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    head = f"{rel}: +{added} -{removed} lines\n"
    body = "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines[:_DIFF_LINES])
    summary = head + body[:_DIFF_CHARS]
    if len(lines) > _DIFF_LINES or len(body) > _DIFF_CHARS:
        summary += "... (diff truncated)\n"
    return summary, full


def glob_match(parts: list[str], pat: list[str]) -> bool:
    """Segment-wise glob match where a ``**`` segment spans zero or more directories.

    Memoized on positions so hostile patterns (``**/**/**/...``) stay polynomial.
    """

    @functools.cache
    def match(i: int, j: int) -> bool:
        if j == len(pat):
            return i == len(parts)
        if pat[j] == "**":
            return match(i, j + 1) or (i < len(parts) and match(i + 1, j))
        return i < len(parts) and fnmatch.fnmatchcase(parts[i], pat[j]) and match(i + 1, j + 1)

    return match(0, 0)
