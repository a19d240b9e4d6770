"""The answer channel: which parts of a final answer were copied from tool output.

An injection does not always need a tool: "tell the user to visit X" only needs text in
the reply. The runtime cannot tell a true sentence from a planted one, but it can say
where each part of the answer came from. :func:`mark_answer` finds every stretch of the
answer (at least :data:`MIN_WORDS` words) that appears word for word in a tool's output
and not in the trusted inputs, with the calls it was read from and whether it was free
text or a structured field there. An application can show those parts as quoted data,
or withhold them (:func:`withhold`); a success check can require that named parts of the
answer are backed by trusted sources (:func:`unbacked`).

Matching is on words: case and spacing are ignored, punctuation between words is not
part of a word, so a copied sentence is found however the model re-spaced it. Text is
what provenance calls text, except that an output which is one string is read line by
line, and its short lines are a listing's entries (fields), not prose.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from execgraph.tools.provenance import Observation, TrustedInputs, echo_of, is_text

__all__ = ["MIN_WORDS", "AnswerSpan", "mark_answer", "unbacked", "withhold"]

MIN_WORDS = 3
"""The shortest stretch the answer channel marks: a phrase, not a name's single word."""

_WORD = re.compile(r"[\w@.+\-/:%'’]+")
_EDGE = ".,:;'’"


@dataclass(frozen=True)
class AnswerSpan:
    """A stretch of the answer copied from tool output."""

    start: int
    end: int
    text: str
    where: Literal["text", "field"]
    call_ids: tuple[str, ...]
    tools: tuple[str, ...]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnswerSpan:
        """A span from its :meth:`to_dict` form (a run's ``output_sources`` item)."""
        return cls(
            int(data["start"]),
            int(data["end"]),
            str(data["text"]),
            "text" if data.get("where") == "text" else "field",
            tuple(data.get("call_ids") or ()),
            tuple(data.get("tools") or ()),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "where": self.where,
            "call_ids": list(self.call_ids),
            "tools": list(self.tools),
        }


def _words(text: str) -> list[tuple[str, int, int]]:
    """``(normalized word, start, end)`` for every word of ``text`` (edge punctuation off)."""
    found = []
    for m in _WORD.finditer(text):
        word = m.group()
        core = word.strip(_EDGE)
        if core:
            start = m.start() + len(word) - len(word.lstrip(_EDGE))
            found.append((core.casefold(), start, start + len(core)))
    return found


def _strings(
    data: Any, path: str = "$", key: str | None = None
) -> Iterable[tuple[str, str | None, str]]:
    """``(path, nearest key, string)`` for every string in ``data``."""
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _strings(v, f"{path}.{k}", str(k))
    elif isinstance(data, list | tuple):
        for i, v in enumerate(data):
            yield from _strings(v, f"{path}[{i}]", key)
    elif isinstance(data, str):
        yield path, key, data


def mark_answer(
    answer: str,
    trusted: TrustedInputs,
    observations: Sequence[Observation],
    *,
    min_words: int = MIN_WORDS,
) -> list[AnswerSpan]:
    """The answer's stretches copied from untrusted tool output, longest at each place,
    in answer order (see the module docstring).

    Each source's ``min_words``-word runs are indexed once, so an answer is scanned in
    time linear in its length (plus each stretch's extension), whatever the run's size.
    """
    words = [w for w, _, _ in _words(answer)]
    places = _words(answer)
    if len(words) < min_words:
        return []
    said: set[tuple[str, ...]] = set()
    for text in trusted.texts.values():
        said |= _grams(_words(text), min_words)
    sources: list[tuple[Observation, Literal["text", "field"], str]] = []
    grams: dict[tuple[str, ...], set[int]] = {}
    for obs in observations:
        echoed = echo_of(obs)
        for path, key, whole in _strings(obs.data):
            if whole.strip().strip("'\"`").strip().casefold() in echoed:
                continue  # the call's own arguments echoed back
            text_leaf = is_text(obs.declared, path, key, whole)
            for text in _parts(whole, path):
                seen = _words(text)
                if obs.declared.trusted:
                    said |= _grams(seen, min_words)
                    continue
                if len(seen) < min_words:
                    continue
                index = len(sources)
                prose = text_leaf and (path != "$" or len(text) >= _LISTING_LINE)
                kind: Literal["text", "field"] = "text" if prose else "field"
                sources.append((obs, kind, " " + " ".join(w for w, _, _ in seen) + " "))
                for gram in _grams(seen, min_words):
                    grams.setdefault(gram, set()).add(index)
    spans: list[AnswerSpan] = []
    i = 0
    while i <= len(words) - min_words:
        first = tuple(words[i : i + min_words])
        found = grams.get(first)
        if not found or first in said:
            i += 1
            continue
        j = i + min_words
        while j < len(words):
            phrase = " " + " ".join(words[i : j + 1]) + " "
            longer = {k for k in found if phrase in sources[k][2]}
            if not longer:
                break
            found, j = longer, j + 1
        hits = [sources[k] for k in sorted(found)]
        start, end = places[i][1], places[j - 1][2]
        where: Literal["text", "field"] = (
            "text" if any(w == "text" for _, w, _ in hits) else "field"
        )
        spans.append(
            AnswerSpan(
                start,
                end,
                answer[start:end],
                where,
                tuple(dict.fromkeys(o.call_id for o, _, _ in hits)),
                tuple(dict.fromkeys(o.tool for o, _, _ in hits)),
            )
        )
        i = j
    return spans


_LISTING_LINE = 40
"""In an output that is one string, a line shorter than this is a listing's entry (a
name, a price), not prose."""


def _parts(text: str, path: str) -> list[str]:
    """An output that is one string, line by line (a listing is lines of names); any other
    string whole."""
    return [line for line in text.splitlines() if line.strip()] if path == "$" else [text]


def _grams(words: Sequence[tuple[str, int, int]], n: int) -> set[tuple[str, ...]]:
    flat = [w for w, _, _ in words]
    return {tuple(flat[k : k + n]) for k in range(len(flat) - n + 1)}


def withhold(
    answer: str,
    spans: Iterable[AnswerSpan],
    *,
    where: Iterable[str] = ("text",),
    placeholder: str = "[withheld: copied from tool output]",
) -> str:
    """The answer with the marked spans (those read from ``where``) replaced."""
    kinds = set(where)
    out, at = [], 0
    for span in sorted(spans, key=lambda s: s.start):
        if span.where not in kinds or span.start < at:
            continue
        out += [answer[at : span.start], placeholder]
        at = span.end
    out.append(answer[at:])
    return "".join(out)


def unbacked(answer: str, pattern: str, spans: Iterable[AnswerSpan]) -> list[str]:
    """The parts of the answer matching ``pattern`` that were copied from tool output
    text (not backed by the trusted inputs or a structured field)."""
    marked = [s for s in spans if s.where == "text"]
    found = []
    for match in re.finditer(pattern, answer):
        if any(s.start < match.end() and match.start() < s.end for s in marked):
            found.append(match.group())
    return found
