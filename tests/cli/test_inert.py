"""``inert``: the characters a terminal acts on are shown as escapes, the rest as written."""

from __future__ import annotations

import unicodedata

import pytest

from execgraph.cli.approvals import approval_text, call_text, value_text
from execgraph.cli.inert import INERT_RANGES, inert, short


def _listed(code: int) -> bool:
    return any(a <= code <= b for a, b in INERT_RANGES)


def test_the_ranges_cover_every_control_format_surrogate_and_separator() -> None:
    missing = [
        hex(code)
        for code in range(0x110000)
        if unicodedata.category(chr(code)) in ("Cc", "Cf", "Cs", "Zl", "Zp") and not _listed(code)
    ]
    assert missing == []


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("ATTACKER\x1b[17D\x1b[Kalice", "ATTACKER\\x1b[17D\\x1b[Kalice"),  # CSI
        ("\x1b]52;c;ZXZpbA==\x07", "\\x1b]52;c;ZXZpbA==\\x07"),  # OSC 52
        ("\x9b2J", "\\x9b2J"),  # C1 CSI
        ("pay\u202e1000", "pay\\u202e1000"),  # bidi override
        ("a\u200bb\u00adc\ufeff", "a\\u200bb\\xadc\\ufeff"),  # zero width, soft hyphen, BOM
        ("tag\U000e0041", "tag\\U000e0041"),  # tag characters smuggle ASCII
        ("\u3164", "\\u3164"),  # a letter that draws nothing
        ("line\rover", "line\\x0dover"),
        ("café 中文 Ωmega", "café 中文 Ωmega"),  # text is text
    ],
)
def test_inert_escapes_what_a_terminal_acts_on(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_lines_keep_newlines_and_tabs_only() -> None:
    assert inert("a\n\tb\x1b", lines=True) == "a\n\tb\\x1b"
    assert inert("a\nb") == "a\\x0ab"
    assert short("a\n b\x1b[2J", 60) == "a b\\x1b[2J"


def test_an_argument_is_shown_bare_only_when_it_cannot_read_as_another() -> None:
    assert value_text("report.md") == "report.md"
    assert value_text("alice, amount=1") == '"alice, amount=1"'  # never two arguments
    assert value_text(" padded") == '" padded"'
    assert value_text(5) == "5" and value_text("5") == "5"
    assert call_text("pay", {"to": "a\u202eb"}) == 'pay(to="a\\u202eb")'


def test_an_approval_names_its_hash_and_cuts_a_long_argument_visibly() -> None:
    value = {
        "kind": "approval", "run_id": "r1", "call_id": "t1.c0", "tool": "pay",
        "arguments": {"to": "bob", "memo": "x" * 5000}, "args_hash": "ab" * 32,
    }  # fmt: skip
    line = approval_text(value, " --home h")
    assert line.startswith("approval of pay(to=bob, memo=xxx")
    assert "<5000 characters in all>" in line and "[call t1.c0] · args abababababab" in line
    assert line.endswith("(every argument: execgraph status r1 --call t1.c0 --home h)")
    elided = {**value, "arguments": {"to": "bob", "memo": None}, "elided": {"memo": {"chars": 9}}}
    assert "memo=<9 characters, not shown here>" in approval_text(elided)
