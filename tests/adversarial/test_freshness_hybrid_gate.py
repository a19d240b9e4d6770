"""Hybrid's publish gate applies an approval only while its target is as the person saw it.

A publish call that overwrites a file shows the file's state (its SHA-256) in the
approval request. When someone else writes the file while the person decides, the
approval is about a file that no longer exists: it is not used. The person is asked
again, shown the file as it is now, as the executor's own approvals do; rejecting then
writes nothing, approving writes once. A file unchanged since the question runs on the
first approval.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.types import Command

from execgraph import build_graph, tool_spec
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(120)

THEIRS = "changed by someone else while you decided\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _file_state(key: str, args: Any, root: Path) -> str | None:
    path = root / key.removeprefix("file:")
    return _sha(path.read_text()) if path.exists() else "absent"


@tool_spec(
    name="publish",
    effect="irreversible",
    targets=["file:{path}"],
    path_args=["path"],
    read_state=_file_state,
)
def publish(path: str, text: str, ctx: Any) -> str:
    """Publish ``text`` as the workspace file ``path`` (overwriting it)."""
    (ctx.workspace_root / path).write_text(text)
    return "published"


def _publish_then_finish(messages: list[Any]) -> AIMessage:
    if any(m.type == "tool" for m in messages):
        call = {"name": "finish", "args": {"output": "published"}, "id": "f"}
    else:
        call = {"name": "publish", "args": {"path": "post.txt", "text": "mine\n"}, "id": "p"}
    return AIMessage("", tool_calls=[call])


def _hybrid(tmp_path: Path) -> tuple[Any, Path]:
    ws = tmp_path / "ws"
    model = ScriptedChatModel([_publish_then_finish] * 10)
    app = build_graph("hybrid", model=model, tools=[publish], home=tmp_path, workspace=ws)
    (ws / "post.txt").write_text("v1\n")
    return app, ws


CFG = {"configurable": {"thread_id": "gate"}}
TASK = {
    "goal": "Publish the post.",
    "success_checks": [{"kind": "tool_succeeded", "target": "publish"}],
}


def _answer(pause: Any, action: str) -> Command:
    return Command(resume={pause.id: {"action": action}})


def test_a_target_changed_while_the_person_decided_is_asked_again_not_overwritten(
    tmp_path: Path,
) -> None:
    app, ws = _hybrid(tmp_path)
    [pause] = app.invoke({"task": TASK}, CFG)["__interrupt__"]
    assert pause.value["target_state"] == {"file:post.txt": _sha("v1\n")}

    (ws / "post.txt").write_text(THEIRS)  # while the person decides
    out = app.invoke(_answer(pause, "approve"), CFG)
    assert (ws / "post.txt").read_text() == THEIRS  # the old approval wrote nothing
    [again] = out["__interrupt__"]
    assert again.value["target_state"] == {"file:post.txt": _sha(THEIRS)}
    assert "file:post.txt changed" in again.value["reason"]

    out = app.invoke(_answer(again, "approve"), CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "post.txt").read_text() == "mine\n"


def test_asked_again_and_rejected_publishes_nothing(tmp_path: Path) -> None:
    app, ws = _hybrid(tmp_path)
    [pause] = app.invoke({"task": TASK}, CFG)["__interrupt__"]
    (ws / "post.txt").write_text(THEIRS)
    [again] = app.invoke(_answer(pause, "approve"), CFG)["__interrupt__"]
    app.invoke(_answer(again, "reject"), CFG)
    assert (ws / "post.txt").read_text() == THEIRS


def test_an_unchanged_target_publishes_on_the_first_approval(tmp_path: Path) -> None:
    app, ws = _hybrid(tmp_path)
    [pause] = app.invoke({"task": TASK}, CFG)["__interrupt__"]
    out = app.invoke(_answer(pause, "approve"), CFG)
    assert out["status"] == "COMPLETED", out.get("error")
    assert (ws / "post.txt").read_text() == "mine\n"
