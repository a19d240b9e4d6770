"""``python -m execgraph.cli``: the same command line as the ``execgraph`` script."""

from execgraph.cli.commands import app

app()
