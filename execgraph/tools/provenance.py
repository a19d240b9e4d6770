"""Provenance: where each argument value of a proposed call came from.

The runtime's promise is that tool output may change what the agent believes, never what
it is allowed to do. To keep it by enforcement, a policy must know, for each argument a
model proposes, whether the user (or the developer's contract) said that value, whether
it was read from a tool's output — and from which call, which field — or whether the model
made it up. Each value gets one of three labels
(:func:`~execgraph.tools.provenance_labels.label_arguments` gives them):

- **trusted**: the value appears in a trusted input (the user's request, the contract,
  what a person typed into an approval).
- **untrusted**: it appears only in recorded observations; each :class:`Source` names
  the call, the tool, the path inside its output, and whether that place is free *text*
  (prose that a third party may have written: an email body, a web page, a review) or a
  *field* (a structured value: an id, an address in a recipients list, a channel name).
- **new**: it appears nowhere: the model composed it.

A tool that returns the user's own account data (their IBAN, their profile) declares its
output trusted; a structured tool declares which of its output fields hold free text
(:class:`OutputProvenance`); an undeclared tool's every string counts as text. This module
holds what a label is made of and how a person is shown it; the matching is in
:mod:`execgraph.tools.provenance_labels`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from execgraph.tools.value_match import atoms_of, normalize

__all__ = [
    "PROSE_CHARS",
    "ArgumentProvenance",
    "Label",
    "Observation",
    "OutputProvenance",
    "Source",
    "TrustedInputs",
    "ValueProvenance",
    "describe_provenance",
    "echo_of",
    "is_text",
]

Label = Literal["trusted", "untrusted", "new"]
Where = Literal["text", "field"]

PROSE_CHARS = 80
"""A structured field this long, with spaces, is read as text: it can carry a sentence."""


@dataclass(frozen=True)
class OutputProvenance:
    """What a tool declares about its output, for provenance.

    Attributes:
        trusted: The output is the user's own data (their account, their profile, the
            date), not something a third party could have written: values read from it
            are trusted.
        text_fields: Keys (at any depth) whose string values are free text. ``None``:
            every string of the output is text (the safe default for a tool that says
            nothing). Strings under any other key, and in lists outside any key, are
            structured fields — unless they are prose (:data:`PROSE_CHARS` or more, with
            spaces: long enough to carry an instruction, whatever the key says); an output
            that is one string is text whole.
        secret_fields: Keys whose values are the user's secrets (a passport number, a
            card number): a call that sends one out needs the user to ask for it
            (:attr:`ArgumentProvenance.secrets`).
    """

    trusted: bool = False
    text_fields: tuple[str, ...] | None = None
    secret_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class Observation:
    """One recorded tool result of the run: what it said, and who said it."""

    call_id: str
    tool: str
    data: Any
    arguments: Mapping[str, Any] = field(default_factory=dict)
    declared: OutputProvenance = field(default_factory=OutputProvenance)


@dataclass(frozen=True)
class TrustedInputs:
    """The run's trusted inputs: named texts and values (the request, the contract, ...).

    ``texts`` are matched as prose (a value inside them counts); ``values`` by whole
    value (a contract's allowed recipients, a value a person typed).
    """

    texts: Mapping[str, str] = field(default_factory=dict)
    values: Mapping[str, Sequence[Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Source:
    """Where an untrusted value was read: a call's output, at a path, as text or a field."""

    call_id: str
    tool: str
    path: str
    where: Where
    excerpt: str = ""
    arguments: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def describe(self) -> str:
        """``read_file #c2 (text at $)``: what a person is shown."""
        return f"{self.tool} #{self.call_id} ({self.where} at {self.path})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "tool": self.tool,
            "path": self.path,
            "where": self.where,
            "excerpt": self.excerpt,
            "arguments": {k: _shown(v) for k, v in self.arguments.items()},
        }


_SHOWN_CHARS = 1000
"""How much of a long string the dict form of a provenance (what a person is shown, what an
approval request carries) keeps: the whole value is in the call's own arguments, and an
approval's request must not carry a megabyte argument twice."""


def _shown(value: Any, limit: int = _SHOWN_CHARS) -> Any:
    """``value``, a string beyond ``limit`` characters cut, saying its length."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… ({len(value)} characters)"
    return value


@dataclass(frozen=True)
class ValueProvenance:
    """The provenance of one atom (a string or a number) of an argument."""

    value: Any
    label: Label
    trusted_by: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()
    refused: bool = False
    """A person refused a call carrying this value earlier in the run (a denial sticks)."""

    @property
    def in_text(self) -> bool:
        """Read from free text of an untrusted observation (where an injection speaks)."""
        return self.label == "untrusted" and any(s.where == "text" for s in self.sources)

    def to_dict(self) -> dict[str, Any]:
        found = {
            "value": _shown(self.value),
            "label": self.label,
            "trusted_by": list(self.trusted_by),
            "sources": [s.to_dict() for s in self.sources],
        }
        if self.refused:
            found["refused"] = True
        return found


@dataclass(frozen=True)
class ArgumentProvenance:
    """One argument's provenance: its atoms' labels, summarized.

    ``label`` is ``trusted`` when every atom is, ``untrusted`` when any atom came only from
    observations, else ``new``.
    """

    name: str
    atoms: tuple[ValueProvenance, ...]
    secrets: tuple[Source, ...] = ()
    """The user's secrets (declared ``secret_fields``) this argument carries, anywhere in
    its value, that the trusted inputs do not say."""
    embedded: tuple[ValueProvenance, ...] = ()
    """Links, addresses and account numbers written inside a longer value (a URL in a
    message's body), each labelled: where the content sends its reader."""

    @property
    def label(self) -> Label:
        labels = {a.label for a in self.atoms}
        if "untrusted" in labels:
            return "untrusted"
        if "new" in labels:
            return "new"
        return "trusted"

    @property
    def in_text(self) -> bool:
        """Any atom was read from free text of an untrusted observation."""
        return any(a.in_text for a in self.atoms)

    @property
    def refused(self) -> tuple[Any, ...]:
        """The values of this argument a person refused earlier in the run."""
        return tuple(a.value for a in self.atoms if a.refused)

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(s for a in self.atoms for s in a.sources)

    def describe(self) -> str:
        """One line for a person: ``recipient: untrusted — read_file #c2 (text at $)``."""
        if self.label == "trusted":
            by = sorted({b for a in self.atoms for b in a.trusted_by})
            return f"{self.name}: trusted ({', '.join(by) or 'no value'})"
        if self.label == "new":
            return f"{self.name}: new (not in the request nor in any tool output)"
        where = "; ".join(dict.fromkeys(s.describe() for s in self.sources))
        return f"{self.name}: untrusted — {where}"

    def to_dict(self) -> dict[str, Any]:
        found = {
            "label": self.label,
            "in_text": self.in_text,
            "atoms": [a.to_dict() for a in self.atoms],
        }
        if self.secrets:
            found["secrets"] = [s.to_dict() for s in self.secrets]
        if self.embedded:
            found["embedded"] = [e.to_dict() for e in self.embedded]
        return found


def echo_of(obs: Observation) -> set[str]:
    """A call's own string arguments, normalized: an output that repeats one (the email a
    send returns) says what the model wrote, not what the world said."""
    return {
        normalize(a) for a in atoms_of(dict(obs.arguments)) if isinstance(a, str) and len(a) >= 4
    }


def is_text(declared: OutputProvenance, path: str, key: str | None, leaf: str) -> bool:
    """Whether a string of a tool's output is free text (see :class:`OutputProvenance`)."""
    if declared.text_fields is None or path == "$":
        return True
    if key is not None and key in declared.text_fields:
        return True
    return len(leaf) >= PROSE_CHARS and " " in leaf.strip()


def describe_provenance(payload: Mapping[str, Any], excerpt_chars: int = 160) -> list[str]:
    """What a person is shown: one line per argument (and per value read from tool
    output, where it was read and the text around it), from the dict form an approval
    request carries (``ArgumentProvenance.to_dict`` per argument)."""
    lines = []
    for name, argument in payload.items():
        atoms = argument.get("atoms") or []
        label = argument.get("label", "trusted")
        if label == "trusted":
            by = sorted({b for a in atoms for b in a.get("trusted_by") or ()})
            lines.append(f"{name}: trusted ({', '.join(by) or 'no value'})")
            continue
        lines.append(f"{name}: {label}")
        for atom in atoms:
            value = atom.get("value")
            if atom.get("label") == "new":
                lines.append(f"  {value!r}: in neither the request nor any tool output")
            for source in (atom.get("sources") or [])[:3]:
                where = f"{source.get('tool')} #{source.get('call_id')}"
                place = f"{source.get('where')} at {source.get('path')}"
                text = " ".join(str(source.get("excerpt", "")).split())[:excerpt_chars]
                lines.append(f"  {value!r}: {where} ({place}): \u201c{text}\u201d")
    return lines
