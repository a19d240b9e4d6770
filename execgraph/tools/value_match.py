"""Matching values: when an argument's value is the same as, or is written in, a text.

Provenance (:mod:`execgraph.tools.provenance`) labels values by matching them against the
trusted inputs and the tools' outputs; this module owns how two values compare and when a
text mentions one. The rules, and why:

- Strings compare up to case, surrounding quotes and space, how much white space
  separates words (a tab or three are one space), ``mailto:``, a URL's scheme, ``www.``
  and a trailing slash, and — for a value without spaces, or an id written in groups —
  the spaces and dashes inside it (an IBAN or a phone number). Numbers compare by value.
- A date written ``YYYY-MM-DD`` (a tool's or an API's form) is mentioned by a text that
  writes the same day in words: "June 1, 2024", "1 June 2024", "the 1st of June, 2024".
  A day without its year is not that date (a year-less "June 1" could be any year's).
- A short value (fewer than :data:`MIN_SUBSTRING` characters) is mentioned by a text only
  as a whole token (``"13"`` is in "file 13", not in "2024-05-13"); a longer one anywhere.
- A short string of digits is an id: a text mentions it only where it names it as one —
  quoted, after ``#``, or after "id", "no." or "number" — since "3 people" or "June 13"
  are not file 3 or file 13.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MIN_SUBSTRING",
    "Text",
    "atoms_of",
    "links_in",
    "normalize",
    "same_value",
    "short_id",
]

MIN_SUBSTRING = 6
"""Values shorter than this match inside a text only as a whole token."""

_EXCERPT = 40

_SCHEME = re.compile(r"^(?:https?://|mailto:)")
_LINK = re.compile(
    r"(?P<url>(?:https?://|www\.)[^\s'\"<>)]+)"
    r"|(?P<email>(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)++)"
    r"|(?P<path>(?<![\w.-])(?P<run>[\w.-]++)/)"
    r"|(?P<iban>\b[A-Z]{2}\d{2}[A-Z0-9]{10,30}\b)"
)
"""Links, email addresses and account numbers; ``path`` is a run of host characters before
a ``/``, kept when it ends with a host name (:func:`_host`). A match starts only where
a run of the characters it is made of starts (the lookbehinds) and gives nothing back
(possessive): the scan is linear in the text, so a long argument or output (a megabyte of
one word, of dots, of digits) costs milliseconds, not hours."""
_NOT_PATH = re.compile("|".join(p for p in _LINK.pattern.split("|") if "?P<path>" not in p))
_TLD = re.compile(r"[a-z]{2,6}")
_PATH_TAIL = re.compile(r"[^\s'\"<>)]*+")
_COMPACT_DROP = re.compile(r"[\s\-]")
_GROUPED = re.compile(r"(?=[a-z0-9]*\d)[a-z0-9]{6,}")
"""An id written in groups (an IBAN, a card or phone number): letters and digits, some
digits, once its spaces and dashes are gone."""
_TOKEN = re.compile(r"[\w@.+\-/:%~#=?&]+")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:[.,]\d+)?|\.\d+)$")
_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)


def _norm(text: str) -> str:
    """Case, quotes and surrounding space, a URL's scheme, ``www.``, a trailing slash."""
    text = " ".join(text.strip().strip("'\"`").casefold().split())
    text = _SCHEME.sub("", text)
    if text.startswith("www."):
        text = text[4:]
    return text.rstrip("/") if "/" in text else text


@functools.lru_cache(maxsize=8)
def _forms(value: str) -> frozenset[str]:
    """The normalized forms a value may be written in (compact: no spaces or dashes).

    The last few are kept: labelling compares one argument with every field of a run's
    outputs, and a long argument is normalized once, not once per field."""
    base = _norm(value)
    forms = {base} if base else set()
    compact = _COMPACT_DROP.sub("", base)
    if compact and (" " not in value.strip() or _GROUPED.fullmatch(compact)):
        forms.add(compact)
    return frozenset(forms)


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        try:
            return float(value.strip().replace(",", "."))
        except ValueError:  # pragma: no cover - the pattern admits only numbers
            return None
    return None


def _tokens(text: str) -> set[str]:
    """A text's tokens, trailing sentence punctuation dropped, normalized."""
    return {_norm(t.rstrip(".,:;?!")) for t in _TOKEN.findall(text)}


class Text:
    """A text prepared for matching: normalized, compacted, tokenized (lazily)."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.norm = " ".join(raw.casefold().split())
        self._compact: str | None = None
        self._tokens: set[str] | None = None
        self._numbers: set[float] | None = None

    @property
    def compact(self) -> str:
        if self._compact is None:
            self._compact = _COMPACT_DROP.sub("", self.norm)
        return self._compact

    @property
    def tokens(self) -> set[str]:
        if self._tokens is None:
            self._tokens = _tokens(self.raw)
        return self._tokens

    @property
    def numbers(self) -> set[float]:
        if self._numbers is None:
            found = {_as_number(t) for t in self.tokens}
            self._numbers = {n for n in found if n is not None}
        return self._numbers

    def contains(self, value: Any) -> bool:
        """Whether ``value`` is mentioned in this text (see the module's rules)."""
        if short_id(value):  # an id, named as one: 'ID 13', "#13", '13' quoted
            return _named_id(str(value).strip()).search(self.raw) is not None
        number = _as_number(value)
        if number is not None and (not isinstance(value, str) or len(value) < MIN_SUBSTRING):
            return number in self.numbers
        spelled = _spelled_date(value) if isinstance(value, str) else None
        if spelled is not None and spelled.search(self.norm) is not None:
            return True
        for form in _forms(str(value)):
            if len(form) < MIN_SUBSTRING:
                if form in self.tokens:
                    return True
            elif form in self.norm or form in self.compact:
                return True
        return False

    def excerpt(self, value: Any) -> str:
        """A little of the text around ``value``, for a person to judge."""
        shown = " ".join(self.raw.split())
        lowered = shown.casefold()
        wanted = _norm(str(value))
        at = lowered.find(wanted) if wanted else -1
        spelled = _spelled_date(value) if isinstance(value, str) and at < 0 else None
        if spelled is not None and (found := spelled.search(lowered)) is not None:
            at, wanted = found.start(), found.group()
        if at < 0:
            return shown[: 2 * _EXCERPT]
        start = max(0, at - _EXCERPT)
        return shown[start : at + len(wanted) + _EXCERPT]


def same_value(value: Any, other: Any) -> bool:
    """Whether two atoms are the same value, as provenance matches them: numbers by value,
    strings up to case, quotes, a URL's scheme, ``www.``, and an id's spaces and dashes."""
    return _field_equal(value, other)


def _field_equal(value: Any, leaf: Any) -> bool:
    """Whole-value equality of an argument atom and a structured output field."""
    a, b = _as_number(value), _as_number(leaf)
    if a is not None and b is not None:
        return a == b
    if isinstance(leaf, str) and isinstance(value, str | int | float):
        return bool(_forms(str(value)) & _forms(leaf))
    return False


def atoms_of(value: Any) -> list[Any]:
    """The atoms of an argument value: strings and numbers, lists and dicts walked."""
    if isinstance(value, Mapping):
        return [a for v in value.values() for a in atoms_of(v)]
    if isinstance(value, list | tuple | set | frozenset):
        return [a for v in value for a in atoms_of(v)]
    if value is None or isinstance(value, bool):
        return []
    if isinstance(value, str) and not value.strip():
        return []
    return [value]


@functools.cache
def _named_id(digits: str) -> re.Pattern[str]:
    """Where a text names ``digits`` as an identifier: quoted, after ``#``, or after the
    word id, no. or number."""
    before = r"(?:['\"#]|\b(?:id|no|nr|number)\b\.?\s*[:=]?\s*['\"]?)"
    return re.compile(before + re.escape(digits) + r"(?![\w.])", re.IGNORECASE)


def _spelled_date(value: str) -> re.Pattern[str] | None:
    """How a text spells the day an ISO date ``value`` names, or None for any other value."""
    match = _ISO_DATE.fullmatch(value.strip())
    if match is None or not 1 <= int(match.group(2)) <= 12:
        return None
    return _date_words(match.group(1), int(match.group(2)), int(match.group(3)))


@functools.cache
def _date_words(year: str, month: int, day: int) -> re.Pattern[str]:
    """ "June 1, 2024", "Jun. 1st 2024", "1 June 2024", "the 1st of June, 2024" (casefolded
    text): the month by name or its first three letters, the day with or without its
    ordinal suffix, then the year."""
    name = _MONTHS[month - 1]
    m = rf"(?:{name}|{name[:3]}\.?)"
    d = rf"0?{day}(?:st|nd|rd|th)?"
    return re.compile(rf"\b(?:{m} {d},? {year}|{d} (?:of )?{m},? {year})\b")


def short_id(value: Any) -> bool:
    """A short string of digits: an id, which a date or an amount in prose does not name."""
    return isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < MIN_SUBSTRING


def links_in(text: str) -> list[str]:
    """The links, email addresses and account numbers written in ``text``."""
    found = []
    pos = 0
    while (m := _LINK.search(text, pos)) is not None:
        if m.lastgroup != "path":
            link, pos = m.group(), m.end()
        elif (host := _host(m.group("run"))) is not None:
            # the run's characters before its host may hold another link (an account
            # number, say); the host goes on with what follows its slash
            found += links_in(m.group("run")[: len(m.group("run")) - len(host)])
            tail = _PATH_TAIL.match(text, m.end())
            link, pos = host + "/" + (tail.group() if tail else ""), tail.end() if tail else m.end()
        else:  # no host before the slash: another kind of link here, or go on inside it
            other = _NOT_PATH.match(text, m.start())
            link, pos = (other.group(), other.end()) if other else ("", m.start() + 1)
        if link:
            found.append(link.rstrip(".,;:!?"))
    return found


def _host(run: str) -> str | None:
    """The host name a run of host characters ends with: its last labels (none empty, two
    at least, the last of 2 to 6 letters), leading dashes dropped; None if it ends in none."""
    labels: list[str] = []
    for label in reversed(run.split(".")):
        if not label:
            break
        labels.append(label)
    labels.reverse()
    while labels and not labels[0].strip("-"):
        labels.pop(0)
    if len(labels) < 2 or not _TLD.fullmatch(labels[-1]):
        return None
    return ".".join(labels).lstrip("-")


def normalize(text: str) -> str:
    """A string as values compare (case, quotes, a URL's scheme, ``www.``, trailing slash)."""
    return _norm(text)
