"""A node's updates folded with the reducers the state schema declares, and nothing else.

LangGraph applies what a node returns to each channel with the reducer its field declares
in :mod:`execgraph.state.schema`: ``Annotated[T, reducer]``, or ``Annotated[T,
DeltaChannel(batch)]`` whose batch form folds its writes one by one with a two-argument
reducer. A node that must read the state as it will be after its own update
(:func:`fold`), or that returns several partial updates as one (:func:`merge`), uses those
very functions, read from the annotations: the merge rules live once, in the schema.

A node returns one value per field, as LangGraph streams a node's update (a field written
twice would reach ``stream_mode="updates"`` as a list of one-field updates). So several
writes of one field are combined here by the field's reducer with its window lifted
(``window=None``; the channel applies the window once, to the combined write), which
neither drops a result nor miscounts an event. That needs an update of the value's own
shape, which holds for every field but ``progress`` (one write per node).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, partial
from types import MappingProxyType
from typing import Any, get_type_hints

from langgraph.channels.base import BaseChannel
from langgraph.channels.delta import DeltaChannel

from execgraph.state.schema import RunState

__all__ = ["FieldRule", "fold", "merge", "rules"]

Reducer = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class FieldRule:
    """How one field takes a write, from its declaration in the schema.

    Attributes:
        apply: The channel's own fold of one write into the current value (windows
            included); the current value is None while the field is unset.
        combine: Two writes of one node folded into one, by the same reducer without
            its window.
    """

    apply: Reducer
    combine: Reducer


def _last(value: Any, update: Any) -> Any:
    return update


#: A field without a reducer: the last write wins.
_PLAIN = FieldRule(_last, _last)


def _unbounded(reducer: Reducer) -> Reducer:
    """``reducer`` with its window lifted, if it has one."""
    if "window" in inspect.signature(reducer).parameters:
        windowed: Callable[..., Any] = reducer
        return partial(windowed, window=None)
    return reducer


def _one_write(batch: Callable[[Any, Sequence[Any]], Any]) -> Reducer:
    def apply(value: Any, update: Any) -> Any:
        return batch(value, [update])

    return apply


def _rule(metadata: Sequence[Any]) -> FieldRule:
    """The rule LangGraph's own reading of the annotation implies (a channel first, then a
    reducer as the last item; else a plain field)."""
    for item in metadata:
        if isinstance(item, DeltaChannel):
            apply = _one_write(item.reducer)
            binary = inspect.unwrap(item.reducer)  # the two-argument fold of its batch form
            return FieldRule(apply, apply if binary is item.reducer else _unbounded(binary))
        if isinstance(item, BaseChannel) or (
            inspect.isclass(item) and issubclass(item, BaseChannel)
        ):
            raise NotImplementedError(f"no fold for a field kept in {item!r}")
    if metadata and callable(metadata[-1]):
        reducer = metadata[-1]
        return FieldRule(reducer, _unbounded(reducer))
    return _PLAIN


@cache
def rules(schema: type = RunState) -> Mapping[str, FieldRule]:
    """Each field's rule, read from ``schema``'s annotations as LangGraph reads them."""
    hints = get_type_hints(schema, include_extras=True)
    return MappingProxyType(
        {name: _rule(getattr(hint, "__metadata__", ())) for name, hint in hints.items()}
    )


def fold(
    state: Mapping[str, Any], update: Mapping[str, Any], schema: type = RunState
) -> dict[str, Any]:
    """``state`` as it will read once LangGraph has applied ``update`` (a node's return)."""
    table = rules(schema)
    view = dict(state)
    for key, value in update.items():
        view[key] = table.get(key, _PLAIN).apply(state.get(key), value)
    return view


def merge(updates: Iterable[Mapping[str, Any]], schema: type = RunState) -> dict[str, Any]:
    """Several updates of one node as one, a single write per field.

    Applying the result is applying the updates one after another: each field's writes
    are combined by its reducer (unwindowed), a plain field keeps its last write.
    """
    table = rules(schema)
    merged: dict[str, Any] = {}
    for update in updates:
        for key, value in update.items():
            if key in merged:
                merged[key] = table.get(key, _PLAIN).combine(merged[key], value)
            else:
                merged[key] = value
    return merged
