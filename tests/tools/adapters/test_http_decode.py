"""BoundedDecoder (tools/adapters/_httpdecode.py): layered gzip/deflate under a decoded cap."""

from __future__ import annotations

import gzip
import os
import zlib

import pytest

from execgraph.state.errors import PermanentError
from execgraph.tools.adapters._httpdecode import BoundedDecoder

PLAIN = os.urandom(50_000) + b"\0" * 200_000


def _feed(decoder: BoundedDecoder, data: bytes, step: int) -> bytes:
    return b"".join(decoder.feed(data[i : i + step]) for i in range(0, len(data), step))


@pytest.mark.parametrize("step", [1, 7, 4096, 1 << 20])
@pytest.mark.parametrize(
    ("encoding", "encode"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),
        ("gzip, gzip", lambda b: gzip.compress(gzip.compress(b))),
        ("deflate, GZIP", lambda b: gzip.compress(zlib.compress(b))),
        ("identity", lambda b: b),
    ],
)
def test_any_chunking_decodes_exactly(encoding: str, encode: object, step: int) -> None:
    assert callable(encode)
    decoder = BoundedDecoder(encoding, limit=len(PLAIN))
    assert _feed(decoder, encode(PLAIN), step) == PLAIN


def test_one_byte_past_the_cap_is_refused() -> None:
    decoder = BoundedDecoder("gzip", limit=len(PLAIN) - 1)
    with pytest.raises(PermanentError, match=f"more than {len(PLAIN) - 1} bytes"):
        _feed(decoder, gzip.compress(PLAIN), 4096)


def test_identity_bodies_are_left_to_the_caller_to_cut() -> None:
    assert BoundedDecoder(None, limit=10).feed(b"x" * 100) == b"x" * 100


def test_corrupt_data_is_a_typed_refusal() -> None:
    with pytest.raises(PermanentError, match="not valid compressed data"):
        BoundedDecoder("gzip", limit=100).feed(b"definitely not gzip")


def test_bytes_after_the_end_of_the_stream_are_ignored() -> None:
    data = gzip.compress(b"hello") + b"trailing junk" * 1000
    assert BoundedDecoder("gzip", limit=100).feed(data) == b"hello"
