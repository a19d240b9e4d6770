"""Provenance: where each argument value of a proposed call came from.

The runtime's promise is that tool output may change what the agent believes, never what
it is allowed to do. To keep it by enforcement, a policy must know, for each argument a
model proposes, whether the user (or the developer's contract) said that value, whether
it was read from a tool's output — and from which call, which field — or whether the model
made it up. :func:`label_arguments` answers that, deterministically, by matching values:

- **trusted**: the value appears in a trusted input (the user's request, the contract,
  what a person typed into an approval).
- **untrusted**: it appears only in recorded observations; each :class:`Source` names
  the call, the tool, the path inside its output, and whether that place is free *text*
  (prose that a third party may have written: an email body, a web page, a review) or a
  *field* (a structured value: an id, an address in a recipients list, a channel name).
- **new**: it appears nowhere: the model composed it.

A tool that returns the user's own account data (their IBAN, their profile) declares its
output trusted; a structured tool declares which of its output fields hold free text
(:class:`OutputProvenance`); an undeclared tool's every string counts as text.

Matching works on atoms (strings, numbers; lists and dicts are walked) by the rules of
:mod:`execgraph.tools.value_match` (case, spacing, a URL's scheme, an IBAN's spaces,
numbers by value, ISO dates as spelled out in words, short values only as whole words,
short ids only where named as ids). A short id is never trusted by the request's prose
("on June 13" does not name file ``"13"``). A structured field matches only by whole
value, and a value equal to a whole string of the output is read from a field even where
that string is text (a channel picked by its full name names an entity; it does not
quote a passage). The keys of a mapping in an output are fields too (an address a file
is shared with, a name prices are listed under). Booleans and ``None`` carry no
provenance (they are always *trusted*). An argument also lists the user's declared
secrets it carries anywhere inside its value (a card number in an email's body), and the
links, addresses and accounts written inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from execgraph.tools.value_match import (
    MIN_SUBSTRING,
    Text,
    atoms_of,
    links_in,
    normalize,
    same_value,
    short_id,
)

__all__ = [
    "MIN_SUBSTRING",
    "PROSE_CHARS",
    "ArgumentProvenance",
    "Label",
    "Observation",
    "OutputProvenance",
    "Source",
    "TrustedInputs",
    "ValueProvenance",
    "atoms_of",
    "describe_provenance",
    "echo_of",
    "is_text",
    "label_arguments",
    "label_value",
    "links_in",
    "same_value",
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


def _leaves(data: Any, path: str, key: str | None) -> Iterator[tuple[str, str | None, Any]]:
    """``(path, nearest key, leaf)`` for every string or number in ``data``, and every key
    of a mapping (a file's ``shared_with`` keyed by address, prices keyed by name: a key
    is data too), once per output, its path the first place it keys, its nearest key
    none (a key is a field, whatever key holds it)."""
    keys: set[str] = set()
    yield from _walk(data, path, key, keys)


def _walk(
    data: Any, path: str, key: str | None, keys: set[str]
) -> Iterator[tuple[str, str | None, Any]]:
    if isinstance(data, Mapping):
        for k, v in data.items():
            if isinstance(k, str) and k.strip() and k not in keys:
                keys.add(k)
                yield f"{path}.{k}", None, k
            yield from _walk(v, f"{path}.{k}", str(k), keys)
    elif isinstance(data, list | tuple):
        for i, v in enumerate(data):
            yield from _walk(v, f"{path}[{i}]", key, keys)
    elif isinstance(data, str | int | float) and not isinstance(data, bool):
        yield path, key, data


# ----------------------------------------------------------------------------- labelling


@dataclass
class _Index:
    """Trusted inputs and observations prepared once for labelling many values."""

    trusted_texts: list[tuple[str, Text]]
    trusted_values: list[tuple[str, Any]]
    texts: list[tuple[Observation, str, Text]]
    fields: list[tuple[Observation, str, Any]]
    trusted_observations: list[tuple[Observation, str, Any]]
    secrets: list[tuple[Observation, str, str]]
    refused: list[Any] = field(default_factory=list)


def _index(trusted: TrustedInputs, observations: Iterable[Observation]) -> _Index:
    index = _Index(
        [(name, Text(text)) for name, text in trusted.texts.items() if text],
        [(name, v) for name, values in trusted.values.items() for v in atoms_of(values)],
        [],
        [],
        [],
        [],
    )
    for obs in observations:
        declared = obs.declared
        said = echo_of(obs)
        for path, key, leaf in _leaves(obs.data, "$", None):
            if isinstance(leaf, str) and normalize(leaf) in said:
                continue  # the call's own arguments echoed back: the model's words
            if key is not None and key in declared.secret_fields and len(str(leaf)) >= 4:
                index.secrets.append((obs, path, str(leaf)))
            if declared.trusted:
                index.trusted_observations.append((obs, path, leaf))
            elif isinstance(leaf, str) and is_text(declared, path, key, leaf):
                index.texts.append((obs, path, Text(leaf)))
            else:
                index.fields.append((obs, path, leaf))
    return index


def _label(value: Any, index: _Index) -> ValueProvenance:
    by = [
        name for name, text in index.trusted_texts if not short_id(value) and text.contains(value)
    ]
    by += [name for name, v in index.trusted_values if same_value(value, v)]
    by += [
        f"{obs.tool} #{obs.call_id}"
        for obs, _path, leaf in index.trusted_observations
        if same_value(value, leaf) or (isinstance(leaf, str) and Text(leaf).contains(value))
    ]
    if by:
        return ValueProvenance(value, "trusted", tuple(dict.fromkeys(by)))
    sources = []
    for obs, path, text in index.texts:
        if same_value(value, text.raw):  # the whole of it: an entity picked by its name
            sources.append(
                Source(obs.call_id, obs.tool, path, "field", text.raw[:120], obs.arguments)
            )
        elif text.contains(value):
            sources.append(
                Source(obs.call_id, obs.tool, path, "text", text.excerpt(value), obs.arguments)
            )
    sources += [
        Source(obs.call_id, obs.tool, path, "field", str(leaf)[:80], obs.arguments)
        for obs, path, leaf in index.fields
        if same_value(value, leaf)
    ]
    refused = any(same_value(value, r) for r in index.refused)
    if sources:
        return ValueProvenance(value, "untrusted", (), tuple(sources), refused)
    return ValueProvenance(value, "new", refused=refused)


def label_value(
    value: Any, trusted: TrustedInputs, observations: Iterable[Observation]
) -> ArgumentProvenance:
    """The provenance of one value (its atoms labelled one by one)."""
    index = _index(trusted, observations)
    return ArgumentProvenance(
        "value",
        tuple(_label(a, index) for a in atoms_of(value)),
        _secrets(value, index),
        _embedded(value, index),
    )


def label_arguments(
    arguments: Mapping[str, Any],
    trusted: TrustedInputs,
    observations: Iterable[Observation],
    *,
    only: Iterable[str] | None = None,
    refused: Iterable[Any] = (),
) -> dict[str, ArgumentProvenance]:
    """Label every argument (or those named in ``only``) of a proposed call.

    ``refused`` are values a person refused earlier in the run: an untrusted or new atom
    equal to one is marked ``refused``. Deterministic: the same arguments, trusted inputs
    and observations give the same labels, sources in observation order.
    """
    index = _index(trusted, observations)
    index.refused = list(refused)
    wanted = set(only) if only is not None else None
    return {
        name: ArgumentProvenance(
            name,
            tuple(_label(a, index) for a in atoms_of(value)),
            _secrets(value, index),
            _embedded(value, index),
        )
        for name, value in arguments.items()
        if wanted is None or name in wanted
    }


def _embedded(value: Any, index: _Index) -> tuple[ValueProvenance, ...]:
    """Each link inside a longer string atom of ``value``, labelled."""
    found = []
    for atom in atoms_of(value):
        if not isinstance(atom, str):
            continue
        for link in links_in(atom):
            if link.strip() != atom.strip():
                found.append(_label(link, index))
    return tuple(found)


def _secrets(value: Any, index: _Index) -> tuple[Source, ...]:
    """The declared secrets inside ``value`` (any atom containing one) the trusted
    inputs do not say."""
    if not index.secrets:
        return ()
    found = []
    texts = [Text(str(a)) for a in atoms_of(value) if isinstance(a, str | int | float)]
    for obs, path, secret in index.secrets:
        if any(t.contains(secret) for t in texts) and not any(
            t.contains(secret) for _n, t in index.trusted_texts
        ):
            found.append(Source(obs.call_id, obs.tool, path, "field", "(secret)", obs.arguments))
    return tuple(found)


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
