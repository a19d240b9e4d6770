"""Labelling: each value of a proposed call matched against what the run was told and saw.

:func:`label_arguments` gives every argument its provenance
(:mod:`execgraph.tools.provenance`), deterministically, by matching values.

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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from execgraph.tools.provenance import (
    ArgumentProvenance,
    Observation,
    Source,
    TrustedInputs,
    ValueProvenance,
    echo_of,
    is_text,
)
from execgraph.tools.value_match import Text, atoms_of, links_in, normalize, same_value, short_id

__all__ = ["label_arguments", "label_value"]


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
