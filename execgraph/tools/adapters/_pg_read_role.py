"""The role a PostgreSQL read tool runs as: never one that can act on the server.

A READ ONLY transaction does not stop a superuser's ``lo_export`` / ``COPY TO`` a file,
``pg_terminate_backend``, ``pg_reload_conf`` or ``dblink_exec``; the privilege check inside
each of those functions does, for a role without the privilege. So a read tool whose
connection is privileged (a superuser, or a member of one of :data:`PRIVILEGED_ROLES`)
switches, inside its transaction, to ``SET LOCAL ROLE``:

* the ``read_role`` the user configured, or else
* :data:`READ_ROLE`, which the adapter creates once (NOLOGIN, a member of
  ``pg_read_all_data`` only: it reads every table and can do nothing else).

Whatever role results is checked on every call; a privileged one is refused with a
:class:`PolicyDenied` that says what to configure. An unprivileged connection runs as itself.
"""

from __future__ import annotations

from typing import Any

from execgraph.state.errors import PolicyDenied

__all__ = ["PRIVILEGED_ROLES", "READ_ROLE", "prepare_read_role", "switch_to_read_role"]

READ_ROLE = "execgraph_reader"
PRIVILEGED_ROLES = (
    "pg_write_server_files",
    "pg_read_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_checkpoint",
)
_PRIVILEGED = (
    "SELECT r.rolsuper OR EXISTS (SELECT 1 FROM pg_roles p WHERE p.rolname = ANY(%s) "
    "AND pg_has_role(r.oid, p.oid, 'MEMBER')), r.rolsuper OR r.rolcreaterole "
    "FROM pg_roles r WHERE r.rolname = current_user"
)
_HOW = "give DatabaseAdapter(read_role=...) a role that may only SELECT, or connect as one"


def _one(conn: Any, query: str, params: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
    """One row as a tuple, whatever row factory the connection was opened with."""
    from psycopg.rows import tuple_row

    with conn.cursor(row_factory=tuple_row) as cur:
        row: tuple[Any, ...] | None = cur.execute(query, params).fetchone()
        return row


def _privileged(conn: Any) -> tuple[bool, bool]:
    """(privileged, may create roles) for the connection's current role."""
    row = _one(conn, _PRIVILEGED, (list(PRIVILEGED_ROLES),))
    return (bool(row[0]), bool(row[1])) if row else (True, False)


def prepare_read_role(conn: Any, configured: str | None) -> str | None:
    """Decide, once per adapter, which role read tools switch to (None: stay as is).

    Runs in its own committed transaction before any read one (``CREATE ROLE`` cannot run
    inside a READ ONLY transaction); a concurrent creator elsewhere is not an error.
    """
    import psycopg

    if configured is not None:
        return configured
    privileged, can_create = _privileged(conn)
    conn.rollback()
    if not privileged:
        return None
    if not can_create or conn.info.server_version < 140000:
        raise PolicyDenied(
            "read tools will not run on a connection that may write server files or signal "
            f"other sessions, and no read-only role could be created; {_HOW}"
        )
    exists = _one(conn, "SELECT 1 FROM pg_roles WHERE rolname = %s", (READ_ROLE,))
    if exists is None:
        try:
            conn.execute(f'CREATE ROLE "{READ_ROLE}" NOLOGIN')
            conn.commit()
        except (psycopg.errors.DuplicateObject, psycopg.errors.UniqueViolation):
            conn.rollback()  # created by another adapter meanwhile
    member = _one(conn, "SELECT pg_has_role(%s, 'pg_read_all_data', 'MEMBER')", (READ_ROLE,))
    if not (member and member[0]):
        conn.execute(f'GRANT pg_read_all_data TO "{READ_ROLE}"')
    conn.commit()
    return READ_ROLE


def switch_to_read_role(conn: Any, role: str | None, tool: str) -> None:
    """Inside the read transaction: become ``role``, then refuse if still privileged."""
    from psycopg import sql

    if role is not None:
        conn.execute(sql.SQL("SET LOCAL ROLE {}").format(sql.Identifier(role)))
    if _privileged(conn)[0]:
        raise PolicyDenied(
            f"{tool} is a read tool and will not run as a role that may write server files, "
            f"signal other sessions or is a superuser; {_HOW}"
        )
