"""Pytest plugin: a real, throwaway PostgreSQL cluster for the whole test session.

``postgres_dsn`` runs ``initdb`` into a fresh temporary directory, starts the server on a
free 127.0.0.1 port (unix socket in the same directory, so nothing collides with a system
cluster) and stops and deletes it after the session. ``postgres_database`` gives each test
its own empty database on that cluster, so tests never see each other's tables.
:func:`postgres_cluster` and :func:`fresh_database` are the same as plain context
managers, for code outside pytest (the benchmark).

initdb refuses to run as root, so under root the server binaries run as an unprivileged
user (``postgres`` when it exists, else ``nobody``) through ``runuser`` or ``setpriv``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

__all__ = ["fresh_database", "postgres_cluster", "postgres_database", "postgres_dsn"]

_READY_TIMEOUT_S = 60.0


def _bin_dir() -> Path:
    """Where initdb and pg_ctl live: PATH first, else the newest Debian-style install."""
    env = os.environ.get("EXECGRAPH_PG_BIN")
    if env:
        return Path(env)
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent

    def major(initdb: str) -> int:
        version = Path(initdb).parent.parent.name
        return int(version) if version.isdigit() else 0

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=major)
    if not candidates:
        raise RuntimeError(
            "PostgreSQL server binaries (initdb, pg_ctl) were not found on PATH or under "
            "/usr/lib/postgresql/*/bin; install the postgresql package"
        )
    return Path(candidates[-1]).parent


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged account to run the server as, or None when not root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root but neither a 'postgres' nor a 'nobody' user exists")


def _command(user: pwd.struct_passwd | None, argv: list[str]) -> list[str]:
    if user is None:
        return argv
    if shutil.which("runuser"):
        return ["runuser", "-u", user.pw_name, "--", *argv]
    if shutil.which("setpriv"):
        return [
            "setpriv",
            f"--reuid={user.pw_uid}",
            f"--regid={user.pw_gid}",
            "--clear-groups",
            "--",
            *argv,
        ]
    raise RuntimeError("running as root needs runuser or setpriv to drop privileges")


def _run(user: pwd.struct_passwd | None, argv: list[str], cwd: Path) -> None:
    env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
    if user is not None:
        env["HOME"] = str(cwd)
    proc = subprocess.run(
        _command(user, argv), cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"{Path(argv[0]).name} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(dsn: str) -> None:
    import psycopg

    deadline = time.monotonic() + _READY_TIMEOUT_S
    while True:
        try:
            with psycopg.connect(dsn, connect_timeout=5) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Start a fresh PostgreSQL cluster (superuser ``postgres``, trust auth, fsync off);
    yield its DSN; stop and delete it on exit, however the block ends."""
    bin_dir = _bin_dir()
    user = _run_as()
    # Directly under the system temp dir: pytest's own tmp dirs are 0700 root-owned,
    # which an unprivileged server user could not enter. Short, too: socket paths are
    # limited to ~100 bytes.
    root = Path(tempfile.mkdtemp(prefix="execgraph-pg-"))
    data = root / "data"
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    pg_ctl = str(bin_dir / "pg_ctl")
    started = False
    try:
        _run(
            user,
            [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
             "-E", "UTF8", "--no-sync"],
            root,
        )  # fmt: skip
        last_error: Exception | None = None
        for _ in range(5):  # a free port can be taken between probing and binding
            port = _free_port()
            options = (
                f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c max_connections=300 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            )
            try:
                _run(
                    user,
                    [pg_ctl, "-D", str(data), "-l", str(root / "server.log"), "-o", options,
                     "-w", "-t", str(int(_READY_TIMEOUT_S)), "start"],
                    root,
                )  # fmt: skip
            except RuntimeError as exc:
                last_error = exc
                continue
            started = True
            break
        if not started:
            log = root / "server.log"
            detail = log.read_text(errors="replace") if log.exists() else ""
            raise RuntimeError(f"PostgreSQL did not start: {last_error}\n{detail}")
        dsn = f"postgresql://postgres@127.0.0.1:{port}/postgres"
        _wait_ready(dsn)
        yield dsn
    finally:
        if started:
            with suppress(RuntimeError):  # a dead server is what we wanted anyway
                _run(user, [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"], root)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """DSN of a fresh PostgreSQL cluster (superuser ``postgres``, trust auth) for the session."""
    with postgres_cluster() as dsn:
        yield dsn


@contextmanager
def fresh_database(admin_dsn: str, prefix: str = "test") -> Iterator[str]:
    """DSN of a new, empty database on the cluster ``admin_dsn`` reaches; dropped on exit."""
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        # FILE_COPY (PostgreSQL 15+) is faster than WAL_LOG for an empty template.
        strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
        conn.execute(f'CREATE DATABASE "{name}"{strategy}')
    base = admin_dsn.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_database(postgres_dsn: str) -> Iterator[str]:
    """DSN of a new, empty database on the session cluster, dropped after the test."""
    with fresh_database(postgres_dsn) as dsn:
        yield dsn
