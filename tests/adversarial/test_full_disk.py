"""A full or read-only home before the first run: a typed StoreError naming the path.

The home is a real tiny tmpfs (mounted as root), filled to the last byte, or mounted
read-only; nothing is simulated. Where mounting is not permitted the tests skip.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver

from execgraph.graph import build_graph
from execgraph.persistence.saver import open_embedded_saver
from execgraph.state.errors import StoreError
from execgraph.state.store.sqlite import SqliteExecutionStore
from execgraph.testing import ScriptedChatModel

pytestmark = pytest.mark.timeout(60)


def _mount(target: Path, options: str) -> None:
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")


def _fill(target: Path) -> None:
    """Write until the file system says ENOSPC: nothing is left for SQLite."""
    fd = os.open(target / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"\0" * size)
    finally:
        os.close(fd)


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    mounted: list[Path] = []
    yield mounted
    for target in reversed(mounted):
        subprocess.run(["umount", "-l", str(target)], check=False)


@pytest.fixture
def full_home(tmp_path: Path, mounts: list[Path]) -> Path:
    home = tmp_path / "home"
    _mount(home, "size=64k")
    mounts.append(home)
    _fill(home)
    return home


@pytest.fixture
def readonly_home(tmp_path: Path, mounts: list[Path]) -> Path:
    home = tmp_path / "home"
    _mount(home, "size=64k,ro")
    mounts.append(home)
    return home


def _first_run(home: Path, workspace: Path, **kwargs: Any) -> Any:
    model = ScriptedChatModel([AIMessage(content="done")])
    app = build_graph("react", model=model, tools=[], home=home, workspace=workspace, **kwargs)
    cfg = {"configurable": {"thread_id": "t1"}}
    return app.invoke({"messages": [HumanMessage(content="hello")]}, cfg)


def _only(which: str, tmp_path: Path) -> dict[str, Any]:
    """build_graph arguments that leave only ``which`` of the embedded defaults in the home."""
    if which == "all_defaults":
        return {}
    store = SqliteExecutionStore(tmp_path / "exec.db")
    if which == "default_checkpointer":
        return {"store": store, "approval_secret": b"k"}
    return {"store": store, "checkpointer": InMemorySaver()}


WHICH = ["all_defaults", "default_checkpointer", "approval_key"]


@pytest.mark.integration
@pytest.mark.parametrize("which", WHICH)
def test_full_home_before_the_first_run_is_a_typed_store_error(
    full_home: Path, tmp_path: Path, which: str
) -> None:
    kwargs = _only(which, tmp_path)
    with pytest.raises(StoreError) as info:
        _first_run(full_home, tmp_path / "ws", **kwargs)
    assert str(full_home) in info.value.message, info.value.message


@pytest.mark.integration
@pytest.mark.parametrize("which", WHICH)
def test_read_only_home_before_the_first_run_is_a_typed_store_error(
    readonly_home: Path, tmp_path: Path, which: str
) -> None:
    kwargs = _only(which, tmp_path)
    with pytest.raises(StoreError) as info:
        _first_run(readonly_home, tmp_path / "ws", **kwargs)
    assert str(readonly_home) in info.value.message, info.value.message
    assert os.listdir(readonly_home) == []


@pytest.mark.integration
def test_a_checkpoint_write_on_a_disk_that_filled_later_is_a_store_error(
    tmp_path: Path, mounts: list[Path]
) -> None:
    home = tmp_path / "home"
    _mount(home, "size=256k")
    mounts.append(home)
    saver = open_embedded_saver(home / "checkpoints.db")
    _fill(home)
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"big": "x" * 300_000}
    config: Any = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    with pytest.raises(StoreError) as info:
        saver.put(config, checkpoint, {}, {})
    assert str(home / "checkpoints.db") in info.value.message
    assert "full" in info.value.message
