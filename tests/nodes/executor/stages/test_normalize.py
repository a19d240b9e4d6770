"""Stage 2 alone: aliases, canonical paths and defaults, hashed before and after."""

from __future__ import annotations

import pytest

from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.stages.normalize import normalize
from execgraph.state.errors import PathEscapeError, SchemaViolation
from tests.nodes.executor.stages.stage_helpers import req, save


def test_normalize_applies_aliases_paths_defaults_and_hashes() -> None:
    n = normalize(req(args={"file": "./docs//a.txt"}), save)
    assert n.arguments == {"path": "docs/a.txt", "text": "", "mode": "w"}
    assert n.paths == ("docs/a.txt",)
    assert n.hash_before == stable_hash({"file": "./docs//a.txt"})
    assert n.args_hash == stable_hash(n.arguments)
    same = normalize(req(args={"path": "docs/a.txt", "mode": "w"}), save)
    assert same.args_hash == n.args_hash  # two spellings, one action


@pytest.mark.parametrize("bad", ["../etc/passwd", "/etc/passwd", "a\x00b", "a/../../x"])
def test_normalize_refuses_path_escapes(bad: str) -> None:
    with pytest.raises(PathEscapeError):
        normalize(req(args={"path": bad}), save)


def test_normalize_refuses_alias_collisions() -> None:
    with pytest.raises(SchemaViolation):
        normalize(req(args={"path": "a", "file": "b"}), save)
