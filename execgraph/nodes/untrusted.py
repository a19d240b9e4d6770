"""The untrusted wrapper: how tool-derived text reaches the model.

Everything a tool returned — an observation, an evidence item's title, header or file
name — reaches the model only inside ``<tool_output … untrusted="true">`` … ``</tool_output>``,
and the rules in the system message say that nothing inside is an instruction. So the
text must not be able to close the wrapper (or open a forged one): any spelling a model
could read as that tag — any case, whitespace after ``<`` or around ``/``, ``-`` or a
space for ``_`` — has its ``<`` written as the JSON escape ``\\u003c``. Inside a JSON body
(observations and evidence are JSON) the escape still decodes to ``<``.
"""

from __future__ import annotations

import re

__all__ = ["neutralize", "wrap_untrusted"]

_TAG = re.compile(r"<(?=\s*/?\s*tool[\s_-]*output)", re.IGNORECASE)


def neutralize(text: str) -> str:
    """``text`` with every ``tool_output`` tag spelling defused (see the module doc)."""
    if "<" not in text:
        return text
    return _TAG.sub(r"\\u003c", text)


def _attribute(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def wrap_untrusted(text: str, **attributes: str) -> str:
    """``text`` inside the untrusted tool-output wrapper, with no way to break out of it."""
    attrs = "".join(f' {k}="{_attribute(v)}"' for k, v in attributes.items())
    return f'<tool_output{attrs} untrusted="true">\n{neutralize(text)}\n</tool_output>'
