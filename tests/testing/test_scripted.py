"""ScriptedChatModel: replay order, shared cursor, loud exhaustion, usage, threads, replay."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
    messages_to_dict,
)
from langchain_core.tools import tool

from execgraph.state.events import EventType, make_event
from execgraph.testing import (
    ScriptedChatModel,
    ScriptExhausted,
    ScriptNotConsumed,
    estimate_tokens,
)


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return path


@tool
def write_file(path: str, text: str) -> str:
    """Write a file."""
    return path


def test_replies_come_back_in_order_as_fresh_copies() -> None:
    scripted = AIMessage("first", id="recorded-1")
    model = ScriptedChatModel([scripted, "second", {"content": "third"}])

    replies = [model.invoke(f"q{i}") for i in range(3)]

    assert [r.content for r in replies] == ["first", "second", "third"]
    assert all(isinstance(r, AIMessage) for r in replies)
    assert len({r.id for r in replies}) == 3
    assert "recorded-1" not in {r.id for r in replies}
    assert scripted.id == "recorded-1" and not scripted.usage_metadata  # script untouched
    assert [[m.content for m in call] for call in model.calls] == [["q0"], ["q1"], ["q2"]]
    assert model.remaining == 0
    model.assert_consumed()


def test_the_same_script_replayed_twice_gives_distinct_ids() -> None:
    script = [AIMessage("same")]
    first = ScriptedChatModel(script).invoke("x")
    second = ScriptedChatModel(script).invoke("x")
    assert first.content == second.content and first.id != second.id


def test_an_extra_call_fails_loudly_naming_the_script_length_and_last_input() -> None:
    model = ScriptedChatModel(["only"])
    model.invoke("hi")
    history: list[BaseMessage] = [
        SystemMessage("rules"),
        HumanMessage("please do the thing"),
        AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c1"}]),
        ToolMessage("contents of a", tool_call_id="c1"),
    ]

    with pytest.raises(ScriptExhausted) as caught:
        model.invoke(history)

    message = str(caught.value)
    assert isinstance(caught.value, AssertionError)
    assert "call #2" in message and "only 1 replies were scripted" in message
    assert "tool: 'contents of a'" in message
    assert len(model.calls) == 2  # the failing call is recorded for inspection


def test_a_long_last_message_is_shortened_in_the_error() -> None:
    model = ScriptedChatModel([])
    with pytest.raises(ScriptExhausted) as caught:
        model.invoke("x" * 1000)
    assert "0 replies were scripted" in str(caught.value)
    assert len(str(caught.value)) < 400


def test_assert_consumed_reports_unused_replies() -> None:
    model = ScriptedChatModel(["a", "b"])
    model.invoke("q")
    with pytest.raises(ScriptNotConsumed, match="1 of 2"):
        model.assert_consumed()


def test_bind_tools_shares_the_cursor_and_records_the_offered_tools() -> None:
    model = ScriptedChatModel(["one", "two", "three"])

    first = model.bind_tools([read_file, write_file]).invoke("a")
    second = model.bind_tools([read_file]).invoke("b")  # rebinding per turn
    third = model.invoke("c")

    assert [first.content, second.content, third.content] == ["one", "two", "three"]
    assert model.tools_offered == [("read_file", "write_file"), ("read_file",), ()]


def test_bind_tools_accepts_schemas_and_tool_choice() -> None:
    schema = {
        "name": "finish",
        "description": "Claim the task is done.",
        "parameters": {"type": "object", "properties": {}},
    }
    model = ScriptedChatModel(["ok"])
    model.bind_tools([schema], tool_choice="any").invoke("q")
    assert model.tools_offered == [("finish",)]


def test_tool_calls_and_invalid_tool_calls_are_replayed() -> None:
    model = ScriptedChatModel(
        [
            {"content": "", "tool_calls": [{"name": "read_file", "args": {"path": "a.txt"}}]},
            {
                "content": "",
                "invalid_tool_calls": [
                    {"name": "read_file", "args": '{"path": ', "error": "bad JSON"}
                ],
            },
        ]
    )
    bound = model.bind_tools([read_file])

    good = bound.invoke("read a")
    bad = bound.invoke("read again")

    assert good.tool_calls[0]["name"] == "read_file"
    assert good.tool_calls[0]["args"] == {"path": "a.txt"}
    assert good.tool_calls[0]["id"]  # filled in: the executor keys results on it
    assert good.response_metadata["finish_reason"] == "tool_calls"
    assert bad.tool_calls == []
    assert bad.invalid_tool_calls[0]["args"] == '{"path": '
    assert bad.invalid_tool_calls[0]["error"] == "bad JSON"
    assert bad.invalid_tool_calls[0]["id"]


def test_callable_replies_see_the_input_messages() -> None:
    def echo(messages: Sequence[BaseMessage]) -> AIMessage:
        return AIMessage(f"you said {messages[-1].content}")

    model = ScriptedChatModel([echo, lambda messages: {"content": str(len(messages))}])
    assert model.invoke("hello").content == "you said hello"
    assert model.invoke([HumanMessage("a"), HumanMessage("b")]).content == "2"


def test_usage_and_response_metadata_are_filled_deterministically() -> None:
    def run() -> AIMessage:
        model = ScriptedChatModel(
            [{"content": "done", "tool_calls": [{"name": "read_file", "args": {"path": "p"}}]}]
        )
        return model.bind_tools([read_file]).invoke([HumanMessage("read p please")])

    first, second = run(), run()

    usage = first.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] > estimate_tokens("read p please")  # tool schema counted
    assert usage["output_tokens"] >= estimate_tokens("done")
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert second.usage_metadata == usage
    assert first.response_metadata["model_name"] == "scripted"
    assert first.response_metadata["script_index"] == 0


def test_recorded_usage_is_kept() -> None:
    recorded = {"input_tokens": 100, "output_tokens": 7, "total_tokens": 107}
    model = ScriptedChatModel([AIMessage("x", usage_metadata=recorded)])
    assert model.invoke("q").usage_metadata == recorded


def test_estimate_tokens() -> None:
    assert [estimate_tokens(s) for s in ("", "a", "abcd", "abcde")] == [0, 1, 1, 2]


def test_parallel_callers_each_get_a_different_reply() -> None:
    count = 40
    model = ScriptedChatModel([f"r{i}" for i in range(count)])
    bound = model.bind_tools([read_file])
    barrier = threading.Barrier(8)
    got: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        barrier.wait()
        for _ in range(count // 8):
            content = str(bound.invoke("go").content)
            with lock:
                got.append(content)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(got) == sorted(f"r{i}" for i in range(count))
    assert len(model.calls) == count
    with pytest.raises(ScriptExhausted):
        model.invoke("one too many")


async def _ainvoke_all(model: ScriptedChatModel) -> list[str]:
    return [str((await model.ainvoke("q")).content) for _ in range(2)]


def test_async_invoke_uses_the_same_script() -> None:
    import asyncio

    model = ScriptedChatModel(["a", "b"])
    assert asyncio.run(_ainvoke_all(model)) == ["a", "b"]


def test_round_trip_from_serialized_messages() -> None:
    original = ScriptedChatModel(
        [
            {"content": "", "tool_calls": [{"name": "read_file", "args": {"path": "a"}}]},
            {"content": "", "invalid_tool_calls": [{"name": "read_file", "args": "{oops"}]},
            "all done",
        ]
    )
    bound = original.bind_tools([read_file])
    transcript: list[BaseMessage] = [HumanMessage("task")]
    for _ in range(3):
        reply = bound.invoke(transcript)
        transcript += [reply, HumanMessage("next")]
    recorded = messages_to_dict(transcript)  # a whole transcript: only AI turns replay

    replay = ScriptedChatModel.from_messages(recorded)
    replayed = [replay.invoke("anything") for _ in range(3)]

    originals = [m for m in messages_from_dict(recorded) if isinstance(m, AIMessage)]
    for old, new in zip(originals, replayed, strict=True):
        assert new.content == old.content
        assert new.tool_calls == old.tool_calls  # ids included: results stay matched
        assert new.invalid_tool_calls == old.invalid_tool_calls
        assert new.usage_metadata == old.usage_metadata
        assert new.id != old.id
    replay.assert_consumed()


def test_replay_from_model_called_events() -> None:
    first = AIMessage("", tool_calls=[{"name": "read_file", "args": {"path": "a"}, "id": "c1"}])
    second = AIMessage("finished")
    events = [
        make_event(EventType.RUN_ADMITTED, "run-1"),
        make_event(
            EventType.MODEL_CALLED,
            "run-1",
            turn_id="t1",
            seq=1,
            payload={"message": message_to_dict(first)},
        ),
        make_event(EventType.TOOL_COMPLETED, "run-1", call_id="c1"),
        make_event(
            EventType.MODEL_CALLED,
            "run-1",
            turn_id="t2",
            seq=1,
            payload={"message": message_to_dict(second)},
        ),
    ]
    duplicated = [*events, events[1]]  # a re-emitted event counts once

    model = ScriptedChatModel.from_events([e.model_dump() for e in duplicated[:2]] + duplicated[2:])

    assert model.invoke("q").tool_calls[0]["id"] == "c1"
    assert model.invoke("q").content == "finished"
    with pytest.raises(ScriptExhausted):
        model.invoke("q")


def test_bad_script_entries_are_rejected_at_construction() -> None:
    with pytest.raises(TypeError, match="reply 1"):
        ScriptedChatModel(["fine", 42])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="human"):
        ScriptedChatModel([HumanMessage("not a reply")])  # type: ignore[list-item]


def test_keep_calls_bounds_the_recorded_inputs_to_the_newest() -> None:
    model = ScriptedChatModel([AIMessage(f"r{i}") for i in range(5)], keep_calls=2)
    for i in range(5):
        model.invoke(f"q{i}")
    assert [call[0].content for call in model.calls] == ["q3", "q4"]
    assert len(model.tools_offered) == 2 and model.remaining == 0
    silent = ScriptedChatModel([AIMessage("r")], keep_calls=0)
    silent.invoke("q")
    assert silent.calls == [] and silent.remaining == 0


def test_repr_names_the_script_length_not_its_replies() -> None:
    model = ScriptedChatModel([AIMessage(f"reply number {i}") for i in range(500)])
    text = repr(model)
    assert "<500 replies>" in text and "reply number" not in text and len(text) < 300
