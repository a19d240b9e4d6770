"""Event ids of :mod:`execgraph.state.events` identify an occurrence, so replays deduplicate."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from execgraph.state.events import EVENT_SCHEMA_VERSION, Event, EventType, make_event
from execgraph.state.reducers import dedupe_events


def _call_event(**overrides: Any) -> Event:
    fields: dict[str, Any] = {
        "type": EventType.TOOL_STARTED,
        "run_id": "run-1",
        "call_id": "call-1",
        "turn_id": "turn-1",
        "decision_id": "dec-1",
        "attempt_id": "att-1",
        "step_id": "step-1",
    }
    fields.update(overrides)
    return make_event(fields.pop("type"), fields.pop("run_id"), **fields)


# --------------------------------------------------------------------------- determinism


def test_same_occurrence_same_id() -> None:
    first = _call_event(payload={"n": 1})
    again = _call_event(payload={"n": 2})  # a replayed node may rebuild the payload
    assert first.event_id == again.event_id


def test_id_does_not_depend_on_the_clock() -> None:
    # Two builds of one occurrence get different timestamps but never different ids.
    a = _call_event()
    b = _call_event()
    later = Event.model_validate({**a.model_dump(), "ts": a.ts + 1000.0})
    assert a.event_id == b.event_id == later.event_id


def test_id_differs_by_type() -> None:
    ids = {_call_event(type=t).event_id for t in EventType}
    assert len(ids) == len(EventType)


def test_id_differs_by_attempt() -> None:
    assert _call_event(attempt_id="att-1").event_id != _call_event(attempt_id="att-2").event_id
    assert _call_event(attempt_id="att-1").event_id != _call_event(attempt_id=None).event_id


def test_id_differs_by_seq() -> None:
    ids = [_call_event(type=EventType.TOOL_OUTPUT, seq=s).event_id for s in (None, 0, 1, 2)]
    assert len(set(ids)) == 4
    assert (
        _call_event(seq="chunk-a").event_id
        == _call_event(seq="chunk-a").event_id
        != _call_event(seq="chunk-b").event_id
    )


def test_id_differs_by_call() -> None:
    assert _call_event(call_id="call-1").event_id != _call_event(call_id="call-2").event_id


def test_id_differs_by_run_for_the_same_call_id() -> None:
    # The store's event log is unique on event_id across runs: two runs whose tool calls
    # share an id (`call_0` from a model that numbers its calls) must not collide.
    assert _call_event(run_id="run-1").event_id != _call_event(run_id="run-2").event_id


def test_turn_and_run_level_ids() -> None:
    turn_a = make_event(EventType.MODEL_CALLED, "run-1", turn_id="turn-1")
    turn_b = make_event(EventType.MODEL_CALLED, "run-1", turn_id="turn-2")
    run_a = make_event(EventType.RUN_ADMITTED, "run-1")
    run_b = make_event(EventType.RUN_ADMITTED, "run-2")
    assert turn_a.event_id == make_event(EventType.MODEL_CALLED, "run-1", turn_id="turn-1").event_id
    assert len({turn_a.event_id, turn_b.event_id, run_a.event_id, run_b.event_id}) == 4
    assert run_a.event_id == make_event(EventType.RUN_ADMITTED, "run-1").event_id


def test_every_id_is_carried() -> None:
    event = _call_event(payload={"tool": "t"})
    assert (event.run_id, event.turn_id, event.decision_id) == ("run-1", "turn-1", "dec-1")
    assert (event.call_id, event.attempt_id, event.step_id) == ("call-1", "att-1", "step-1")
    assert event.type is EventType.TOOL_STARTED
    assert event.payload == {"tool": "t"}


def test_payload_defaults_to_empty_dict() -> None:
    assert make_event(EventType.RUN_FINISHED, "run-1").payload == {}


def test_replayed_events_are_counted_once_by_the_reducer() -> None:
    emitted = [
        _call_event(type=EventType.TOOL_STARTED),
        _call_event(type=EventType.TOOL_OUTPUT, seq=0),
        _call_event(type=EventType.TOOL_OUTPUT, seq=1),
        _call_event(type=EventType.TOOL_COMPLETED),
    ]
    replayed = [
        _call_event(type=EventType.TOOL_STARTED),
        _call_event(type=EventType.TOOL_OUTPUT, seq=0),
    ]
    count = dedupe_events(None, [e.event_id for e in emitted])
    count = dedupe_events(count, [e.event_id for e in replayed])
    assert count["count"] == 4


id_part = st.text(alphabet="abcdefgh0123-_", min_size=1, max_size=6)


@settings(max_examples=100, deadline=None)
@given(
    st.tuples(
        st.sampled_from(list(EventType)),
        id_part,
        st.one_of(st.none(), id_part),
        st.one_of(st.none(), id_part),
        st.one_of(st.none(), st.integers(0, 5)),
    ),
    st.tuples(
        st.sampled_from(list(EventType)),
        id_part,
        st.one_of(st.none(), id_part),
        st.one_of(st.none(), id_part),
        st.one_of(st.none(), st.integers(0, 5)),
    ),
)
def test_ids_are_equal_exactly_for_equal_occurrences(a: tuple, b: tuple) -> None:
    """Over type, run, call, attempt (letters) and seq (numbers): ids collide iff equal."""

    def build(occurrence: tuple) -> str:
        type_, run, call, attempt, seq = occurrence
        # Attempt ids are letters-first here so they cannot spell a bare seq number.
        attempt = f"a{attempt}" if attempt else None
        return make_event(type_, run, call_id=call, attempt_id=attempt, seq=seq).event_id

    assert (build(a) == build(b)) is (a == b)


# --------------------------------------------------------------------------- schema


def test_schema_version_is_present() -> None:
    event = _call_event()
    assert event.schema_version == EVENT_SCHEMA_VERSION
    assert isinstance(EVENT_SCHEMA_VERSION, int)
    assert EVENT_SCHEMA_VERSION >= 1
    assert event.model_dump(mode="json")["schema_version"] == EVENT_SCHEMA_VERSION


def test_json_round_trip() -> None:
    event = _call_event(
        type=EventType.TOOL_COMPLETED,
        seq=3,
        payload={"outcome": "succeeded", "nested": {"list": [1, 2.5, None, "é"]}},
    )
    assert Event.model_validate_json(event.model_dump_json()) == event
    as_json = event.model_dump(mode="json")
    assert json.loads(json.dumps(as_json)) == as_json
    assert as_json["type"] == "tool.completed"
    assert Event.model_validate(as_json) == event


def test_event_is_frozen_and_strict() -> None:
    event = _call_event()
    with pytest.raises(ValidationError):
        event.event_id = "forged"
    with pytest.raises(ValidationError):
        Event.model_validate({**event.model_dump(), "secret": "x"})
    with pytest.raises(ValidationError):
        Event.model_validate({**event.model_dump(), "type": "tool.exploded"})


@pytest.mark.parametrize("member", list(EventType))
def test_event_type_values_are_dotted_and_stable(member: EventType) -> None:
    area, _, name = member.value.partition(".")
    assert area in {"run", "model", "decision", "tool", "approval", "verifier", "state"}
    assert name
    assert EventType(member.value) is member
