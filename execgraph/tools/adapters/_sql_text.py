"""Declared SQL statements and the rows they return, for the database backends.

A tool declares its statement with ``:name`` parameters; :func:`scan_sql` rewrites them
into the driver's placeholder style (skipping strings, comments and dollar quotes) so
values are always bound, never spliced. :func:`bounded` keeps the rows that fit the
call's output budget, as JSON-safe values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from datetime import time as dtime
from typing import Any

from execgraph.state.errors import ToolDeclarationError

__all__ = ["Row", "Statement", "bounded", "scan_sql"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$")
Row = dict[str, Any]


@dataclass(frozen=True)
class Statement:
    """A declared statement in its driver's placeholder style, with its parameter names."""

    text: str
    names: tuple[str, ...]

    def bind(self, values: dict[str, Any]) -> dict[str, Any]:
        """Only the statement's own parameters, by name: the driver binds them."""
        return {n: values[n] for n in self.names}


def scan_sql(sql: str, dialect: str) -> Statement:
    """Find ``:name`` placeholders outside literals and comments.

    For PostgreSQL they become psycopg's ``%(name)s`` and every other ``%`` is doubled, so
    the text the user declared is exactly the text the server parses. Positional styles are
    refused: mixing them with named binding is how values end up in the wrong column.
    """
    out: list[str] = []
    names: list[str] = []
    pg = dialect == "postgresql"
    i, n = 0, len(sql)

    def verbatim(end: int) -> None:
        nonlocal i
        chunk = sql[i:end]
        out.append(chunk.replace("%", "%%") if pg else chunk)
        i = end

    while i < n:
        ch = sql[i]
        if ch in "'\"":
            j = i + 1
            while True:
                j = sql.find(ch, j)
                if j == -1:
                    raise ToolDeclarationError("sql has an unterminated quote")
                if sql.startswith(ch * 2, j):
                    j += 2
                    continue
                break
            verbatim(j + 1)
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            verbatim(n if j == -1 else j)
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            if j == -1:
                raise ToolDeclarationError("sql has an unterminated comment")
            verbatim(j + 2)
        elif ch == "$" and (tag := _DOLLAR_TAG.match(sql, i)) and pg:
            j = sql.find(tag.group(0), tag.end())
            if j == -1:
                raise ToolDeclarationError("sql has an unterminated dollar quote")
            verbatim(j + len(tag.group(0)))
        elif (ch == "$" and sql[i + 1 : i + 2].isdigit()) or (ch == "?" and not pg):
            raise ToolDeclarationError("positional placeholders are not supported; use :name")
        elif sql.startswith("::", i):
            out.append("::")
            i += 2
        elif ch == ":" and (m := _IDENT.match(sql, i + 1)):
            names.append(m.group(0))
            out.append(f"%({m.group(0)})s" if pg else sql[i : m.end()])
            i = m.end()
        else:
            out.append("%%" if pg and ch == "%" else ch)
            i += 1
    return Statement("".join(out), tuple(dict.fromkeys(names)))


def _jsonable(value: Any) -> Any:
    """Column values as JSON-safe scalars (Decimal as text: no silent float rounding)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime | date | dtime):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, dict | list):
        return json.loads(json.dumps(value, default=str))
    return str(value)


def bounded(rows: Iterable[Row], budget: int, max_rows: int | None) -> tuple[list[Row], bool]:
    """Take rows while their JSON size fits ``budget`` bytes; True when some were left."""
    out: list[Row] = []
    used = 2
    for row in rows:
        clean = {k: _jsonable(v) for k, v in row.items()}
        size = len(json.dumps(clean, default=str)) + 2  # ", " between rows
        if (max_rows is not None and len(out) >= max_rows) or used + size > budget:
            return out, True
        out.append(clean)
        used += size
    return out, False
