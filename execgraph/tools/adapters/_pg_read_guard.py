"""Statement analysis for PostgreSQL read tools: refuse side effects a READ ONLY transaction
lets through.

``BEGIN READ ONLY`` stops writes to tables, not ``COPY ... TO`` a server file, ``lo_export``,
``dblink_exec`` (another connection), ``pg_terminate_backend`` or ``pg_reload_conf``. A read
tool's statement is therefore checked when it is declared: it must be one ``SELECT`` /
``WITH`` / ``VALUES`` / ``TABLE`` / ``SHOW`` statement that calls none of the side-effecting
functions below. The check is a layer, not the wall: the read role (see
:mod:`._pg_read_role`) still stops a side effect hidden behind a view or a function.

The lexer follows PostgreSQL's own rules where they decide what is code and what is not:
nested ``/* */`` comments, ``E'...'`` backslash escapes, ``$tag$`` quotes, ``$`` inside
names, quoted identifiers (case kept; unquoted ones fold to lower case), so neither case,
quoting, comments nor spacing can hide a call. What it cannot judge for certain (a
``U&"..."`` identifier, a string glued to a name) is refused rather than guessed at.
"""

from __future__ import annotations

import itertools
import re

from execgraph.state.errors import ToolDeclarationError

__all__ = ["READ_STATEMENTS", "check_read_statement"]

READ_STATEMENTS = frozenset({"select", "with", "values", "table", "show"})
_DENIED_FUNCTIONS = frozenset(
    {
        "loread", "lowrite", "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
        "pg_rotate_logfile", "pg_promote", "pg_switch_wal", "pg_backup_start",
        "pg_backup_stop", "pg_start_backup", "pg_stop_backup", "set_config", "pg_notify",
        "pg_replication_slot_advance",
    }
)  # fmt: skip
_DENIED_PREFIXES = (
    "dblink",  # dblink_exec / dblink / dblink_connect...: statements on another connection
    "lo_",  # large objects: lo_export / lo_import write and read server files
    "pg_file_", "pg_logdir_", "pg_read_", "pg_ls_", "pg_stat_reset", "pg_wal_replay_",
    "pg_create_", "pg_drop_replication_", "pg_copy_", "pg_logical_", "pg_replication_origin",
    "pg_import_", "pg_log_backend_", "pg_advisory_", "pg_try_advisory_", "binary_upgrade_",
    # these run a query given as text, which no analysis of this statement can see
    "query_to_xml", "cursor_to_xml", "table_to_xml", "schema_to_xml", "database_to_xml",
)  # fmt: skip
_LETTER = r"A-Za-z_\u0080-\U0010ffff"
_NAME = re.compile(rf"[{_LETTER}][{_LETTER}0-9$]*")
_NUMBER = re.compile(rf"(?:[0-9]|\.[0-9])[{_LETTER}0-9.]*")
_DOLLAR_TAG = re.compile(rf"\$(?:[{_LETTER}][{_LETTER}0-9]*)?\$")
_PREFIXED_STRING = {"e": True, "b": False, "x": False, "n": False}  # prefix -> backslashes


def _refuse(why: str) -> ToolDeclarationError:
    return ToolDeclarationError(f"a read-only tool may not {why}; declare it with write_tool")


def _unclear(why: str) -> ToolDeclarationError:
    return ToolDeclarationError(f"the read-only tool's sql cannot be checked: {why}")


def _string_end(sql: str, i: int, backslashes: bool) -> int:
    """Index after the string literal whose opening quote is at ``i``."""
    j = i + 1
    while j < len(sql):
        ch = sql[j]
        if (backslashes and ch == "\\") or (ch == "'" and sql.startswith("''", j)):
            j += 2
        elif ch == "'":
            return j + 1
        else:
            j += 1
    raise _unclear("an unterminated string")


def _comment_end(sql: str, i: int) -> int:
    """Index after the block comment opening at ``i`` (PostgreSQL's comments nest)."""
    depth, j = 0, i
    while j < len(sql):
        if sql.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif sql.startswith("*/", j):
            depth, j = depth - 1, j + 2
            if depth == 0:
                return j
        else:
            j += 1
    raise _unclear("an unterminated comment")


def _tokens(sql: str) -> list[tuple[str, str]]:
    """(kind, text) for names (``name``, folded as PostgreSQL folds them) and punctuation
    (``punct``); literals become ``literal``, comments and space vanish."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch.isspace():
            i += 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j == -1 else j + 1
        elif sql.startswith("/*", i):
            i = _comment_end(sql, i)
        elif (m := _NAME.match(sql, i)) is not None:
            word, i = m.group(0).lower(), m.end()
            if sql.startswith("'", i) and word in _PREFIXED_STRING:
                i = _string_end(sql, i, _PREFIXED_STRING[word])
                out.append(("literal", ""))
            elif word == "u" and sql.startswith("&'", i):
                i = _string_end(sql, i + 1, False)
                out.append(("literal", ""))
            elif word == "u" and sql.startswith('&"', i):
                raise _unclear('a U&"..." identifier')
            elif sql.startswith(("'", '"'), i):
                raise _unclear(f"a quote glued to the name {word!r}")
            else:
                out.append(("name", word))
        elif (m := _NUMBER.match(sql, i)) is not None:
            i = m.end()
            if sql.startswith(("'", '"'), i):
                raise _unclear("a quote glued to a number")
            out.append(("literal", ""))
        elif ch == "'":
            i = _string_end(sql, i, False)
            out.append(("literal", ""))
        elif ch == '"':
            j = i + 1
            while (j := sql.find('"', j)) != -1 and sql.startswith('""', j):
                j += 2
            if j == -1:
                raise _unclear("an unterminated quoted name")
            out.append(("name", sql[i + 1 : j].replace('""', '"')))  # case kept
            i = j + 1
        elif ch == "$" and (tag := _DOLLAR_TAG.match(sql, i)) is not None:
            j = sql.find(tag.group(0), tag.end())
            if j == -1:
                raise _unclear("an unterminated dollar quote")
            i = j + len(tag.group(0))
            out.append(("literal", ""))
        else:
            out.append(("punct", ch))
            i += 1
    return out


def check_read_statement(sql: str) -> None:
    """Refuse, at declaration, a PostgreSQL read statement that could act on the server.

    Raises:
        ToolDeclarationError: not one read statement, or a side-effecting function call.
    """
    tokens = _tokens(sql)
    while tokens and tokens[-1] == ("punct", ";"):
        tokens.pop()
    if ("punct", ";") in tokens:
        raise _refuse("run more than one statement")
    first = next((text for kind, text in tokens if kind != "punct" or text != "("), "")
    if first not in READ_STATEMENTS:
        raise _refuse(f"run a {first.upper() or 'empty'} statement (only SELECT, WITH, "
                      "VALUES, TABLE and SHOW read)")  # fmt: skip
    for (kind, text), after in itertools.pairwise(tokens):
        if (
            kind == "name"
            and after == ("punct", "(")
            and (text in _DENIED_FUNCTIONS or text.startswith(_DENIED_PREFIXES))
        ):
            raise _refuse(f"call {text}(), which acts on the server outside the transaction")
