"""Content-Encoding decoding with a cap on *decoded* bytes, enforced while streaming.

httpx decodes each raw chunk in one call with no output limit, so 13 KB of
``Content-Encoding: gzip, gzip`` can ask for gigabytes before any size check runs. Here
every layer decompresses at most ``_STEP`` bytes at a time (``zlib``'s ``max_length``) and
the final output is counted as it appears: memory stays a few steps per layer, and the
decoder refuses (``PermanentError`` naming the cap) the moment the total passes it.

The adapter asks for ``identity``; a server that encodes anyway gets gzip / deflate
decoded, and anything else refused (never passed on as undecoded bytes).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from execgraph.state.errors import PermanentError

__all__ = ["BoundedDecoder"]

_STEP = 64 * 1024
_GZIP = ("gzip", "x-gzip")
_CORRUPT = "the response body is not valid compressed data"


class _Layer:
    """One zlib layer; ``deflate`` guesses zlib-wrapped vs raw the way httpx does."""

    def __init__(self, encoding: str) -> None:
        self._raw_fallback = encoding == "deflate"
        wbits = 16 + zlib.MAX_WBITS if encoding in _GZIP else zlib.MAX_WBITS
        self._z = zlib.decompressobj(wbits)
        self._started = False

    def decompress(self, data: bytes) -> Iterator[bytes]:
        """Decompress ``data`` in steps of at most ``_STEP`` output bytes."""
        while not self._z.eof:  # bytes after the end of the stream are ignored
            try:
                out = self._z.decompress(data, _STEP)
            except zlib.error:
                if not (self._raw_fallback and not self._started):
                    raise PermanentError(_CORRUPT) from None
                self._z, self._raw_fallback = zlib.decompressobj(-zlib.MAX_WBITS), False
                continue
            self._started = True
            data = self._z.unconsumed_tail
            if out:
                yield out
            if not data and len(out) < _STEP:  # input used up and no output held back
                return


class BoundedDecoder:
    """Decode one response body; ``PermanentError`` past ``limit`` decoded bytes.

    Args:
        content_encoding: The response's ``Content-Encoding`` (layers in the order applied).
        limit: Decoded bytes allowed when encoded (an identity body is the caller's to cut).
    """

    def __init__(self, content_encoding: str | None, limit: int) -> None:
        names = [e.strip().lower() for e in (content_encoding or "").split(",")]
        names = [n for n in names if n and n != "identity"]
        unknown = [n for n in names if n not in (*_GZIP, "deflate")]
        if unknown:
            raise PermanentError(
                f"the response uses Content-Encoding {unknown[0]!r}, which this adapter does "
                "not decode (it asks for identity)"
            )
        self.encoding = ", ".join(names)
        self._layers = [_Layer(n) for n in reversed(names)]
        self._limit = limit
        self._decoded = 0

    @property
    def encoded(self) -> bool:
        """True when the body has at least one encoding layer to undo."""
        return bool(self._layers)

    def feed(self, raw: bytes) -> bytes:
        """Decoded bytes for one raw chunk (at most the cap in total)."""
        return self._count(self._through(0, raw))

    def _through(self, level: int, data: bytes) -> Iterator[bytes]:
        if level == len(self._layers):
            yield data
            return
        for out in self._layers[level].decompress(data):
            yield from self._through(level + 1, out)

    def _count(self, outputs: Iterator[bytes]) -> bytes:
        parts: list[bytes] = []
        for out in outputs:
            self._decoded += len(out)
            if self._layers and self._decoded > self._limit:
                raise PermanentError(
                    f"the response body decodes to more than {self._limit} bytes "
                    f"(Content-Encoding {self.encoding}); refused at the cap"
                )
            parts.append(out)
        return b"".join(parts)
