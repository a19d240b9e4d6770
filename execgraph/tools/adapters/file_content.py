"""What the file tools do to bytes: hash, page within a budget, decode, diff, glob.

Pure helpers of :mod:`execgraph.tools.adapters.files`, apart from the adapter (confinement, atomic
writes) and the intent journal (:mod:`.file_journal`) so each can be read and tested on its own.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import hashlib
import json
import os
from typing import Any

from execgraph.state.errors import DeadlineExceeded, ToolCancelled
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


def file_state(fd: int) -> tuple[str, int]:
    """(sha256, mtime_ns) of the open regular file ``fd``, read from its start."""
    digest = hashlib.sha256()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, _CHUNK):
        digest.update(chunk)
    return digest.hexdigest(), os.fstat(fd).st_mtime_ns


def json_len(value: object) -> int:
    """Bytes ``value`` takes as JSON, measured as the executor bounds tool data."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def scan(fd: int, offset: int, limit: int, ctx: InvokeContext) -> tuple[str, int, int, bytes]:
    """Hash the whole file and capture ``limit`` bytes from ``offset``, from one open handle.

    One handle means the hash and the content describe the same file even if it is
    replaced meanwhile. Cancel and deadline are checked between chunks, so a huge (or
    slow) file cannot hold the call past either. Returns (sha256, size, mtime_ns, bytes).
    """
    digest, captured, pos = hashlib.sha256(), bytearray(), 0
    mtime = os.fstat(fd).st_mtime_ns
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, _CHUNK):
        if ctx.cancel.is_set():
            raise ToolCancelled("the read was cancelled")
        if ctx.deadline is not None and ctx.remaining_s() == 0:
            raise DeadlineExceeded("the deadline passed while the file was being read")
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
    The cut is the longest prefix that fits (a binary search on its JSON size), so text
    that escapes expensively (newlines, tabs, NULs: 2-6 JSON bytes each) still pages by
    about ``budget / 6`` bytes at worst, never by one character; at least one character
    is shown even under a budget smaller than the envelope, so paging always advances.
    """
    text, binary = decode(captured[: max(budget, 0)])
    if not text and captured and not binary:  # a budget below one character
        text = decode(captured[:4])[0][:1]
    if binary:  # a replacement char or \u escape is at most 6 JSON bytes per input byte
        shown = min(len(captured), max(budget - json_len(page) - 80, 6) // 6)
        text = captured[:shown].decode("utf-8", errors="replace")
        return _page(page, text, shown, True), shown

    def fits(chars: int) -> bool:
        return json_len(_page(page, text[:chars], len(text[:chars].encode()), False)) <= budget

    if not fits(len(text)):
        lo, hi = 1, len(text)  # lo: shown even if it does not fit; hi never fits
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        text = text[:lo]
    shown = len(text.encode())
    return _page(page, text, shown, False), shown


def _page(page: dict[str, Any], text: str, shown: int, binary: bool) -> dict[str, Any]:
    """The read result showing ``text`` (``shown`` file bytes) of ``page``."""
    more = page["offset"] + shown < page["size"]
    next_offset = page["offset"] + shown if more else None
    return {**page, "content": text, "binary": binary, "next_offset": next_offset}


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
