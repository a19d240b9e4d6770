"""Text from a run, made inert before a terminal sees it.

Everything the command line prints about a run came from outside the process: a model's
arguments and replies, a tool's output and errors, a thread id a Temporal client chose.
A terminal acts on some characters instead of drawing them: ESC starts a CSI sequence
that moves the cursor and erases what was written (``ATTACKER\\x1b[17D\\x1b[Kalice``
shows as ``alice``) or an OSC sequence that sets the window title or writes the clipboard
(OSC 52); C0 and C1 controls do the same in one byte; bidi overrides reorder what is
shown; zero-width and format characters hide text or make two strings look alike.

:func:`inert` shows each such character as its escape (``\\x1b``, ``\\u202e``), so what a
person reads is what the run holds. The set is Unicode's control, format, surrogate and
line/paragraph-separator categories (``Cc Cf Cs Zl Zp``, listed below so no table is
computed at start-up; a test checks the list against :mod:`unicodedata`), and a few
letters that draw nothing (the Hangul fillers, the Khmer inherent vowels, the combining
grapheme joiner).
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["INERT_RANGES", "inert", "short"]

INERT_RANGES: tuple[tuple[int, int], ...] = (
    (0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x034F, 0x034F),
    (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
    (0x2066, 0x206F), (0x3164, 0x3164), (0xD800, 0xDFFF), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip
"""The code points :func:`inert` escapes, as inclusive ranges."""

_CLASS = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in INERT_RANGES)
_ANY = re.compile(f"[{_CLASS}]")
_BUT_LINES = re.compile(f"(?![\\n\\t])[{_CLASS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def inert(text: str, *, lines: bool = False) -> str:
    """``text`` with every character a terminal acts on, or that hides or reorders text,
    shown as its escape; ``lines`` keeps newlines and tabs (a traceback, a report)."""
    if lines:
        return _BUT_LINES.sub(_escape, text)
    return _ANY.sub(_escape, text)


def short(value: Any, limit: int = 60) -> str:
    """``value`` on one line (JSON unless it is a string), inert, at most ``limit``
    characters (a cut ends in ``…``)."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    text = inert(" ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"
