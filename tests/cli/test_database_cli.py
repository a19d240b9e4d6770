"""``--database`` / ``EXECGRAPH_DATABASE`` for the embedded engine: a run's records and
checkpoints on a real PostgreSQL database, continued by later processes that name it
again, with the home keeping only the run's metadata and workspace."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.support.cli_helpers import cli

pytestmark = pytest.mark.timeout(300)


def _threads(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall()
    return {str(row[0]) for row in rows}


def test_a_run_on_postgresql_is_shown_approved_and_cancelled_through_it(
    postgres_database: str, tmp_path: Path
) -> None:
    dsn = postgres_database.replace("postgres@", "postgres:s3cret-pw@", 1)
    waiting = cli("demo", "--run-id", "p1", "--database", dsn, home=tmp_path)
    assert waiting.code == 3, waiting
    assert waiting.status == "WAITING"
    assert _threads(postgres_database) == {"p1"}
    assert not (tmp_path / "checkpoints.db").exists()
    assert not (tmp_path / "exec.db").exists()
    meta = (tmp_path / "runs" / "p1.json").read_text()
    assert "s3cret-pw" not in meta
    assert postgres_database.rsplit("/", 1)[1] in meta

    status = cli("status", "p1", home=tmp_path, EXECGRAPH_DATABASE=dsn)
    assert status.code == 0, status
    assert status.status == "WAITING"
    assert "waiting for approval of publish_report(path=report.md)" in status.out

    # without the database the run is not silently read from an empty SQLite home
    lost = cli("approve", "p1", home=tmp_path)
    assert lost.code == 2, lost
    assert "keeps its state in PostgreSQL" in lost.err
    assert "s3cret-pw" not in lost.err

    approved = cli("approve", "p1", "--database", dsn, home=tmp_path)
    assert approved.code == 0, approved
    assert approved.status == "COMPLETED"
    assert (tmp_path / "workspaces" / "p1" / "published" / "report.md").is_file()
    again = cli("resume", "p1", home=tmp_path, EXECGRAPH_DATABASE=dsn)
    assert again.code == 0, again
    assert again.status == "COMPLETED"

    second = cli("demo", "--run-id", "p2", home=tmp_path, EXECGRAPH_DATABASE=dsn)
    assert second.code == 3, second
    cancelled = cli("cancel", "p2", "--database", dsn, home=tmp_path)
    assert cancelled.code == 5, cancelled
    assert cancelled.status == "CANCELLED"
    assert not (tmp_path / "exec.db").exists()

    listed = cli("runs", home=tmp_path)
    assert "on PostgreSQL" in listed.out
    assert "s3cret-pw" not in listed.out


def test_a_sqlite_run_refuses_a_database_and_a_bad_dsn_is_bad_input(
    postgres_database: str, tmp_path: Path
) -> None:
    assert cli("demo", "--run-id", "s1", home=tmp_path).code == 3
    refused = cli("status", "s1", "--database", postgres_database, home=tmp_path)
    assert refused.code == 2, refused
    assert "keeps its state in the SQLite files of its home" in refused.err
    bad = cli("demo", "--database", "sqlite:///x.db", home=tmp_path)
    assert bad.code == 2, bad
    assert "--database takes a postgresql:// DSN" in bad.err
