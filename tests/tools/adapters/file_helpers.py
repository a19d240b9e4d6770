"""Helpers shared by the FileAdapter suites: hashes, an artifact store, calling a tool."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from execgraph.tools.adapters import FileAdapter
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec


def sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


class Artifacts:
    """A real in-memory artifact store (a fake, not a mock)."""

    def __init__(self) -> None:
        self.items: dict[str, tuple[bytes, str]] = {}

    def put(self, data: bytes, kind: str) -> str:
        ref = f"artifact-{len(self.items)}"
        self.items[ref] = (data, kind)
        return ref


def ctx_for(root: Path, call_id: str = "c1", **kw: Any) -> InvokeContext:
    return InvokeContext(run_id="r1", call_id=call_id, attempt_id="a1", workspace_root=root, **kw)


def spec(adapter: FileAdapter, name: str) -> ToolSpec:
    return {s.name: s for s in adapter.tools()}[name]


def call(adapter: FileAdapter, name: str, ctx: InvokeContext, **args: Any) -> AdapterOutput:
    s = spec(adapter, name)
    return s.run(s.input_model.model_validate(args), ctx)


def args(adapter: FileAdapter, name: str, **values: Any) -> BaseModel:
    return spec(adapter, name).input_model.model_validate(values)


def json_len(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())
