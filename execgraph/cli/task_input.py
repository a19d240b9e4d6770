"""What the command line reads from its user: a task file, a JSON object, a new run id.

Every failure is one line naming what is wrong (a :class:`~execgraph.state.errors.
CliError`, exit 2), never a traceback from the parser.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any

from execgraph.state.errors import CliError

__all__ = ["load_task", "new_run_id", "parse_json_object"]


def new_run_id() -> str:
    """A sortable, readable run id, e.g. ``run-20260101-120000-3f9a``."""
    return time.strftime("run-%Y%m%d-%H%M%S-", time.gmtime()) + secrets.token_hex(2)


def load_task(path: Path) -> dict[str, Any]:
    """A TaskSpec from a JSON file, validated."""
    from pydantic import ValidationError

    from execgraph.state.contracts import TaskSpec

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"task file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"task file {str(path)!r} cannot be read ({type(exc).__name__})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"task file {str(path)!r} is not valid JSON: {exc.msg} "
            f"(line {exc.lineno}, column {exc.colno})"
        ) from None
    if not isinstance(raw, dict):
        raise CliError(f"task file {str(path)!r} must hold a JSON object (a TaskSpec)")
    try:
        TaskSpec.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "task"
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise CliError(
            f"task file {str(path)!r} is not a valid TaskSpec: {where}: {first['msg']}{more}"
        ) from None
    return raw


def parse_json_object(raw: str, what: str) -> dict[str, Any]:
    """A JSON object from the command line."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise CliError(f"{what} must be a JSON object of the new arguments")
    return value
