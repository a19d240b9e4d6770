"""CorpusAdapter: search and read a local, read-only collection of Markdown documents.

The research-assistant demo needs a source of facts that works offline and answers the
same way every time, so ranking is a small dependency-free BM25 over the documents of one
directory. A document's id is its file stem; ids from a model are matched against the
loaded index only, so no model-supplied text ever becomes a filesystem path.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.contracts import Evidence
from execgraph.state.errors import DeadlineExceeded, TargetNotFound, ToolCancelled
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = [
    "DEFAULT_CORPUS",
    "DOC_ID_PATTERN",
    "CorpusAdapter",
    "ReadDocumentArgs",
    "SearchCorpusArgs",
]

DEFAULT_CORPUS = Path(__file__).resolve().parent / "documents"
"""The demo corpus shipped with the package (``execgraph/demo/documents/*.md``)."""

DOC_ID_PATTERN = r"^[a-z0-9-]{1,64}$"
"""A document id: the file stem, lowercase letters, digits and hyphens."""

SNIPPET_CHARS = 200
_MAX_DOC_BYTES = 1 << 20
_K1, _B = 1.5, 0.75
_TITLE_WEIGHT = 2  # title words count this many extra times: a title states the topic
_ID_RE = re.compile(DOC_ID_PATTERN)
_WORD_RE = re.compile(r"[a-z0-9]+")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_MARKUP_RE = re.compile(r"\*\*|__|^[>\-*#\d.]+\s+", re.MULTILINE)
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a about an and are as at be by can do does for from has have how "
        "in into is it its not of on or so than that the their then there these "
        "this to vs was were what when which who why will with",
    )
)
_SEARCH_DOC = (
    "Search the local research corpus; returns ranked hits with doc_id, title and a short "
    "snippet. Read a hit with read_document before citing it."
)
_READ_DOC = "Read one corpus document by doc_id (from search_corpus); cite it as [doc_id]."


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SearchCorpusArgs(_Args):
    """Arguments of ``search_corpus``."""

    query: str = Field(min_length=1, max_length=500, description="keywords to search for")
    limit: int = Field(default=5, ge=1, le=20, description="most hits returned")


class ReadDocumentArgs(_Args):
    """Arguments of ``read_document``; the pattern keeps path syntax out of ids."""

    doc_id: str = Field(pattern=DOC_ID_PATTERN, description="a doc_id from search_corpus")


@dataclass(frozen=True)
class _Doc:
    doc_id: str
    title: str
    text: str
    sha256: str
    terms: Counter[str]
    length: int


def _stem(word: str) -> str:
    """Fold simple English plurals so 'costs' finds 'cost' (deliberately crude, no deps)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _terms(text: str) -> list[str]:
    """Lowercased, stemmed word tokens without stopwords."""
    return [_stem(w) for w in _WORD_RE.findall(text.lower()) if w not in _STOPWORDS]


def _json_len(value: object) -> int:
    """Bytes ``value`` takes as JSON, measured the way the executor bounds tool data."""
    return len(json.dumps(value, ensure_ascii=False).encode())


def _check_running(ctx: InvokeContext) -> None:
    if ctx.cancel.is_set():
        raise ToolCancelled("the call was cancelled")
    if ctx.deadline is not None and ctx.remaining_s() == 0:
        raise DeadlineExceeded("the deadline passed before the corpus was searched")


def _parse(doc_id: str, raw: bytes) -> _Doc:
    """A document from its file bytes: first line ``# Title``, the rest is the text."""
    content = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    first, _, rest = content.partition("\n")
    if first.startswith("# "):
        title, text = first[2:].strip(), rest.strip()
    else:
        title, text = doc_id, content.strip()
    terms = Counter(_terms(text))
    for term in _terms(title):
        terms[term] += _TITLE_WEIGHT
    return _Doc(doc_id, title, text, hashlib.sha256(raw).hexdigest(), terms, sum(terms.values()))


def _snippet(text: str, query: set[str]) -> str:
    """The sentence sharing most query terms (earliest on ties), at most SNIPPET_CHARS."""
    best, best_hits = "", -1
    for raw in _SENTENCE_RE.split(text):
        sentence = " ".join(_MARKUP_RE.sub("", raw).split())
        if not sentence or sentence.startswith("---"):
            continue
        hits = len(query & set(_terms(sentence)))
        if hits > best_hits:
            best, best_hits = sentence, hits
    if len(best) <= SNIPPET_CHARS:
        return best
    cut = best[: SNIPPET_CHARS - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > SNIPPET_CHARS // 2 else cut).rstrip(" ,;:") + "…"


def _fit_text(data: dict[str, Any], budget: int) -> tuple[dict[str, Any], bool]:
    """``data`` with its text cut (on a character) so its JSON fits ``budget`` bytes."""
    if _json_len(data) <= budget:
        return data, False
    lo, hi = 0, len(data["text"])  # the longest prefix that fits, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _json_len({**data, "text": data["text"][:mid]}) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return {**data, "text": data["text"][:lo]}, True


class CorpusAdapter:
    """Read-only corpus tools: ``search_corpus`` and ``read_document``.

    Args:
        root: Directory of ``*.md`` documents; defaults to the packaged demo corpus.
            Files whose stem is not a valid id, symlinks and files over 1 MiB are ignored.
    """

    name = "corpus"

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else DEFAULT_CORPUS
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._docs: dict[str, _Doc] = {}

    # ------------------------------------------------------------------ index

    def doc_ids(self) -> list[str]:
        """Ids of the documents currently in the corpus, sorted."""
        return sorted(self._documents())

    def _documents(self) -> dict[str, _Doc]:
        """The current documents by id, reloaded when a file was added, changed or removed."""
        found: list[tuple[str, str, int, int]] = []  # (id, path, mtime_ns, size)
        try:
            with os.scandir(self.root) as listing:
                for entry in listing:
                    doc_id = entry.name.removesuffix(".md")
                    if doc_id == entry.name or not _ID_RE.match(doc_id) or entry.is_symlink():
                        continue
                    if entry.is_file():
                        st = entry.stat()
                        found.append((doc_id, entry.path, st.st_mtime_ns, st.st_size))
        except OSError:
            raise TargetNotFound("the research corpus is not available") from None
        found.sort()
        signature = tuple((doc_id, mtime, size) for doc_id, _, mtime, size in found)
        with self._lock:
            if signature != self._signature:
                docs: dict[str, _Doc] = {}
                for doc_id, path, _, size in found:
                    if size > _MAX_DOC_BYTES:
                        continue
                    try:
                        docs[doc_id] = _parse(doc_id, Path(path).read_bytes())
                    except OSError:
                        continue  # removed or unreadable since the listing: not a document
                self._docs, self._signature = docs, signature
            return self._docs

    def rank(self, query: str) -> list[tuple[float, str]]:
        """(BM25 score, doc id) for every matching document, best first, ties by id."""
        docs = self._documents()
        wanted = set(_terms(query))
        if not docs or not wanted:
            return []
        avg = sum(d.length for d in docs.values()) / len(docs)
        scored: list[tuple[float, str]] = []
        for doc in docs.values():
            score = 0.0
            for term in wanted:
                tf = doc.terms.get(term, 0)
                if not tf:
                    continue
                df = sum(1 for d in docs.values() if term in d.terms)
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * doc.length / avg))
            if score > 0:
                scored.append((round(score, 4), doc.doc_id))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return scored

    # ------------------------------------------------------------------ tools

    def _search(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, SearchCorpusArgs)
        _check_running(ctx)
        docs = self._documents()
        wanted = set(_terms(args.query))
        ranked = self.rank(args.query)
        hits: list[dict[str, Any]] = []
        data: dict[str, Any] = {"query": args.query, "hits": hits}
        for score, doc_id in ranked[: args.limit]:
            doc = docs[doc_id]
            hit = {
                "doc_id": doc_id,
                "title": doc.title,
                "snippet": _snippet(doc.text, wanted),
                "score": score,
            }
            if _json_len({**data, "hits": [*hits, hit]}) > ctx.output_budget:
                break  # fewer hits rather than a spilled artifact the model cannot read
            hits.append(hit)
        truncated = len(hits) < min(len(ranked), args.limit)
        normalized = " ".join(args.query.lower().split())
        evidence = Evidence(
            source_id=f"search:{normalized}",
            kind="search",
            value=f"{len(hits)} hits",
            call_id=ctx.call_id,
            observed_at=time.time(),
        )
        summary = f"{len(hits)} hits for {normalized!r}"
        return AdapterOutput(data, False, summary, (evidence,), truncated)

    def _read(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, ReadDocumentArgs)
        _check_running(ctx)
        doc_id = args.doc_id
        if not isinstance(doc_id, str) or not _ID_RE.match(doc_id):
            # Reached only when validation was bypassed; never echo the hostile id.
            raise TargetNotFound("no such document; doc ids come from search_corpus")
        doc = self._documents().get(doc_id)
        if doc is None:
            raise TargetNotFound(f"no document {doc_id!r}; use search_corpus to find doc ids")
        full = {"doc_id": doc_id, "title": doc.title, "text": doc.text, "sha256": doc.sha256}
        data, truncated = _fit_text(full, ctx.output_budget)
        evidence = Evidence(
            source_id=f"doc:{doc_id}",
            kind="document",
            value=doc.title,
            verified=True,
            call_id=ctx.call_id,
            observed_at=time.time(),
        )
        shown = len(data["text"])
        summary = f"read {doc_id} ({shown} of {len(doc.text)} chars)"
        return AdapterOutput(data, False, summary, (evidence,), truncated)

    # ------------------------------------------------------------------ adapter

    def tools(self) -> list[ToolSpec]:
        """``search_corpus`` and ``read_document``, both read-only, bound to this corpus."""
        return [
            ToolSpec("search_corpus", "1.0.0", _SEARCH_DOC, SearchCorpusArgs, "read", self._search),
            ToolSpec("read_document", "1.0.0", _READ_DOC, ReadDocumentArgs, "read", self._read),
        ]

    def close(self) -> None:
        """Nothing to release: files are read per load."""
