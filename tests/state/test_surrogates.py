"""Finding a lone surrogate anywhere a payload can hold one, and only there."""

from __future__ import annotations

from typing import Any

import pytest

from execgraph.state.surrogates import has_surrogate, scrub_surrogates

LONE = "\ud800"


class _Opaque:
    """An object a payload may carry: not looked into (its text is not the payload's)."""

    def __str__(self) -> str:
        return LONE


@pytest.mark.parametrize(
    "value",
    [
        LONE,
        {"a": LONE},
        {LONE: 1},
        {"a": [1, {"b": ("x", LONE)}]},
        [None, 2.5, {"deep": {"deeper": ["é", LONE]}}],
        {("tuple", "key"): {"a": LONE}},  # a key JSON cannot hold: walked instead
        {("tuple", LONE): 1},
    ],
)
def test_a_surrogate_is_found_wherever_it_is(value: Any) -> None:
    assert has_surrogate(value)
    scrubbed = scrub_surrogates(value)
    assert not has_surrogate(scrubbed)
    assert "\\ud800" in repr(scrubbed)


@pytest.mark.parametrize(
    "value",
    [
        "plain",
        "é and 😀 (a whole pair is not a lone half)",
        {"a": ["😀", {"b": "中文"}], 3: None, "n": float("nan")},
        {("tuple", "key"): "😀"},
        {"opaque": _Opaque(), "bytes": b"\xed\xa0\x80"},
        [],
        42,
    ],
)
def test_text_without_a_lone_surrogate_is_left_as_it_is(value: Any) -> None:
    assert not has_surrogate(value)
    assert scrub_surrogates(value) is value
