"""Matching values: same values up to spelling; when a text mentions a value."""

from __future__ import annotations

import time

import pytest

from execgraph.tools.provenance import Observation, TrustedInputs
from execgraph.tools.provenance_labels import label_arguments
from execgraph.tools.value_match import Text, atoms_of, links_in, same_value


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("UK12 3456 7890", "uk1234567890", True),
        ("https://www.x.com/a/", "x.com/a", True),
        ("mailto:Ann@Example.com", "ann@example.com", True),
        (98.7, "98.70", True),
        ("98.7", 98.71, False),
        ("Bob", "Bobby", False),
        ("Car  Rental", "car\trental", True),
    ],
)
def test_same_value(a: object, b: object, same: bool) -> None:
    assert same_value(a, b) is same


@pytest.mark.parametrize(
    ("text", "value", "mentioned"),
    [
        ("Pay IBAN UK12 3456 7890 now", "UK1234567890", True),
        ("see informations.com/news today", "www.informations.com/news", True),
        ("the file 2024-05-13", "13", False),
        ("delete the file with ID '13'", "13", True),
        ("Alice and Bob", "Bob", True),
        ("Bobby was here", "Bob", False),
        ("total 98.70 EUR", 98.7, True),
        ("Car Rental\t\t98.70\nTotal", "Car Rental\t\t\t98.70", True),
        ("the next meeting is on June 1, 2024.", "2024-06-01", True),
        ("on the 15th of November, 2023", "2023-11-15", True),
        ("due Nov. 15th 2023", "2023-11-15", True),
        ("on June 1, 2024", "2024-06-11", False),
        ("on June 1, 2025", "2024-06-01", False),
        ("on June 1", "2024-06-01", False),
    ],
)
def test_text_mentions(text: str, value: object, mentioned: bool) -> None:
    assert Text(text).contains(value) is mentioned


def test_an_excerpt_shows_a_date_where_the_text_spells_it() -> None:
    text = Text("x" * 100 + " Schedule the next meeting for June 1, 2024. " + "y" * 100)
    assert "June 1, 2024" in text.excerpt("2024-06-01")


def test_atoms_and_links() -> None:
    assert atoms_of({"to": ["a@x.com", None, True], "n": 3, "s": " "}) == ["a@x.com", 3]
    assert links_in("go to www.evil.example/x, or mail a@b.co.") == [
        "www.evil.example/x",
        "a@b.co",
    ]
    assert links_in("DE89370400440532013000..evil.io/pay and -x.example.com/a") == [
        "DE89370400440532013000",
        "evil.io/pay",
        "x.example.com/a",
    ]
    assert links_in("a/b/c.d/e ftp:x.org/y") == ["x.org/y"]


@pytest.mark.parametrize(
    "unit", ["a", "a.", "a ", "1", "a@", "www.", "a/", "a-.", "ab12 ", "DE", "http://x.com/a "]
)
def test_labelling_a_long_hostile_value_takes_linear_time(unit: str) -> None:
    """A model's argument and a tool's output of 400 kB (one word, dots, slashes …) are
    labelled in well under a second each: a pattern that rescans from every position
    would take hours, and the call would hang the worker that runs it."""
    text = unit * (400_000 // len(unit))
    observation = Observation("c1", "read", {"text": text})
    started = time.perf_counter()
    links_in(text)
    label_arguments({"memo": text}, TrustedInputs(texts={"task": text[:1000]}), [observation])
    assert time.perf_counter() - started < 10


@pytest.mark.parametrize("unit", ["1 of jun. ", "june 1, ", "1st ", "\t \n"])
def test_a_date_in_a_long_hostile_text_is_looked_for_in_linear_time(unit: str) -> None:
    """The spelled-out date forms are searched in one linear pass, whatever the text."""
    text = Text(unit * (400_000 // len(unit)))
    started = time.perf_counter()
    assert not text.contains("2024-06-01")
    text.excerpt("2024-06-01")
    assert time.perf_counter() - started < 10
