"""The ``execgraph`` command line, built on :mod:`execgraph.engines`; the core never imports it.

``commands`` holds the commands themselves; ``options`` the shared options and failure
handling; ``reach`` which engine a command's runs are reached through; ``starting``,
``inspection``, ``run_metrics``, ``worker_command`` and ``eval_command`` the commands
that need more than a few lines; ``drive``, ``live``, ``render``, ``trace`` and
``prompts`` what is printed and asked. A run's id is its LangGraph ``thread_id``, so any
later process (``approve``, ``resume``, ``cancel``) continues the same checkpointed run.
"""

from execgraph.cli.commands import app

__all__ = ["app"]
