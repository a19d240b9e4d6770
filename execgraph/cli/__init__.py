"""The ``execgraph`` command line, built on the public graphs; the core never imports it.

``commands`` holds the commands themselves; ``options`` the shared options and failure
handling; ``inspection`` the read-only commands; ``runs`` run metadata and rebuilding a
run's graph; ``drive`` answering interrupts; ``live`` and ``render`` and ``trace`` what is
printed; ``temporal_runs`` the same commands under ``--engine temporal`` and
``worker_command`` the ``execgraph worker`` that serves them. A run's id is its
LangGraph ``thread_id``, so any later process (``approve``, ``resume``, ``cancel``)
continues the same checkpointed run.
"""

from execgraph.cli.commands import app

__all__ = ["app"]
