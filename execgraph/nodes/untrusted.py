"""The untrusted wrapper: how tool-derived text reaches the model.

Everything a tool returned — an observation, an evidence item's title, header or file
name — reaches the model only inside ``<tool_output … untrusted="true">`` … ``</tool_output>``,
and the rules in the system message say that nothing inside is an instruction. So the
text must not be able to close the wrapper (or open a forged one): any spelling a model
could read as that tag has its opening bracket written as a JSON escape (``\\u003c`` for
``<``). Inside a JSON body (observations and evidence are JSON) the escape still decodes
to the same character.

"Any spelling a model could read as that tag" is judged on the text as a reader sees it,
not on its code points: any case; whitespace after the bracket or around ``/``; ``-`` or
a space for ``_``; characters that are not drawn (zero-width spaces and joiners, the soft
hyphen, other format characters); compatibility forms (fullwidth ``＜ｔｏｏｌ``, math
alphanumerics), folded by NFKC; brackets that look like ``<`` (``‹``, ``〈``, ``﹤`` …); and
the Cyrillic and Greek letters that pass for the Latin ones of ``tool_output``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["neutralize", "reads_as", "wrap_untrusted"]

_TAG = re.compile(r"<(?=\s*/?\s*tool[\s_-]*output)", re.IGNORECASE)

# Brackets drawn like '<', and the lookalike letters of "tool_output" (after NFKC).
_OPENERS = "<\uff1c\ufe64\u2039\u2329\u3008\u27e8\u276e\u02c2\u1438\u276c"
_MAY_OPEN = re.compile(f"[{_OPENERS}]")
_ASCII_LOOKALIKES = str.maketrans({"0": "o", "1": "l", "|": "l"})
_LOOKALIKES = str.maketrans(
    {
        **dict.fromkeys(_OPENERS, "<"),
        **dict.fromkeys("0\u043e\u03bf\u041e\u039f\u0585", "o"),  # о ο О Ο օ
        **dict.fromkeys("\u0442\u03c4\u0422\u03a4", "t"),  # т τ Т Τ
        **dict.fromkeys("\u03c5\u057d\u028b", "u"),  # υ ս ʋ
        **dict.fromkeys("\u0440\u03c1\u0420\u03a1", "p"),  # р ρ Р Ρ
        **dict.fromkeys("1|\u04cf\u0456\u03b9\u0406\u0399\u2223", "l"),  # ӏ і ι І Ι ∣
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2212\u2043\ufe63", "-"),
        **dict.fromkeys("\u2017\u203f\u2040", "_"),
    }
)


def _drawn(char: str) -> str:
    """How one character reads: nothing for an undrawn format character, else its NFKC
    form with lookalike letters and brackets folded."""
    if char.isascii():
        return char.translate(_ASCII_LOOKALIKES)
    if unicodedata.category(char) == "Cf":
        return ""
    return unicodedata.normalize("NFKC", char).translate(_LOOKALIKES)


def reads_as(text: str) -> tuple[str, list[int]]:
    """``text`` as a reader sees it, and for each character of that reading the index of
    the character of ``text`` it came from."""
    if text.isascii():  # one character each: fold in C
        return text.translate(_ASCII_LOOKALIKES), list(range(len(text)))
    folded: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        seen = _drawn(char)
        folded.append(seen)
        origin.extend([i] * len(seen))
    return "".join(folded), origin


def neutralize(text: str) -> str:
    """``text`` with every spelling of a ``tool_output`` tag defused (see the module doc)."""
    if not _MAY_OPEN.search(text):
        return text
    folded, origin = reads_as(text)
    openers = {origin[m.start()] for m in _TAG.finditer(folded)}
    if not openers:
        return text
    return "".join(f"\\u{ord(c):04x}" if i in openers else c for i, c in enumerate(text))


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def wrap_untrusted(text: str, **attributes: str) -> str:
    """``text`` inside the untrusted tool-output wrapper, with no way to break out of it."""
    attrs = "".join(f' {k}="{_attribute(v)}"' for k, v in attributes.items())
    return f'<tool_output{attrs} untrusted="true">\n{neutralize(text)}\n</tool_output>'
