"""Stage 3 alone: schema (naming fields, never values), state guard, deadline, paths."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from execgraph.nodes.executor.stages.normalize import normalize
from execgraph.nodes.executor.stages.validate import validate
from execgraph.state.errors import (
    DeadlineExceeded,
    DomainViolation,
    PathEscapeError,
    SchemaViolation,
    StateGuardMismatch,
)
from tests.nodes.executor.stages.stage_helpers import req, save


def test_validate_schema_names_fields_only() -> None:
    with pytest.raises(SchemaViolation) as info:
        validate(req(), save, normalize(req(args={"path": "a", "text": {"k": "s3cr3t"}}), save))
    assert "text" in info.value.message and "s3cr3t" not in info.value.message


def test_validate_state_guard_and_deadline(tmp_path: Path) -> None:
    def read_state(key: str, args: Any, root: Path) -> str | None:
        return (root / args.path).read_text() if key == "content" else None

    guarded = save.with_(read_state=read_state)
    (tmp_path / "a.txt").write_text("v1")
    request = req(root=tmp_path, expected_state={"content": "v1"})
    assert validate(request, guarded, normalize(request, guarded)).args.path == "a.txt"  # type: ignore[attr-defined]
    stale = req(root=tmp_path, expected_state={"content": "v0"})
    with pytest.raises(StateGuardMismatch):
        validate(stale, guarded, normalize(stale, guarded))
    with pytest.raises(DomainViolation):  # a tool that cannot read state cannot be guarded
        validate(stale, save, normalize(stale, save))
    late = req(root=tmp_path, deadline=time.time() - 1)
    with pytest.raises(DeadlineExceeded):
        validate(late, save, normalize(late, save))


def test_validate_refuses_symlink_escape(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "link").symlink_to(outside)
    request = req(root=root, args={"path": "link/x.txt"})
    with pytest.raises(PathEscapeError):
        validate(request, save, normalize(request, save))
