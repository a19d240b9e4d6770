"""Which engine a command reaches its runs through: the one place it is chosen.

Every command that names a run takes the same options (``--engine``, ``--home``,
``--database``, and Temporal's ``--address``/``--task-queue``/``--namespace``); they
become a :class:`Target`, and :meth:`Target.runs` the :class:`~execgraph.engines.runs.Runs`
the command talks to. No command asks which engine it got.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from execgraph.cli.options import closing, exit_without_teardown, home_dir
from execgraph.state.errors import CliError
from execgraph.state.home import Home

if TYPE_CHECKING:
    from execgraph.engines.graphs import Graphs
    from execgraph.engines.runs import Runs

__all__ = ["Target", "demo_graphs"]

ENGINES = ("embedded", "temporal")


def demo_graphs(*, import_refs: bool) -> Graphs:
    """Graphs with the demo registered (``tools="demo"``, ``model="offline"``)."""
    from execgraph.demo.register import register_demo
    from execgraph.engines.graphs import Graphs

    return register_demo(Graphs(import_refs=import_refs))


@dataclass(frozen=True)
class Target:
    """Where a command's runs are, as its options say."""

    engine: str
    home: Path | None
    database: str | None
    address: str
    task_queue: str
    namespace: str

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise CliError(f"unknown engine {self.engine!r}; choose embedded or temporal")

    def runs(self, watch: Any = None) -> Runs:
        """The engine holding these runs; ``watch`` sees them as they advance."""
        if self.engine == "temporal":
            from execgraph.engines.temporal.engine import TemporalEngine

            # A Temporal client's threads can abort CPython's teardown: end the process
            # right after the command's output (see exit_without_teardown).
            exit_without_teardown()
            return TemporalEngine(
                self.address,
                task_queue=self.task_queue,
                namespace=self.namespace,
                watch=watch,
                approval_key=Home.at(home_dir(self.home)).known_secret(),  # signs answers
            )
        from execgraph.engines.embedded.records import check_database
        from execgraph.engines.embedded.runs import EmbeddedRuns

        # The command line acts for its user, in the user's own process: a --tools
        # MODULE:ATTR it recorded is imported again when a later command needs the graph.
        runs = EmbeddedRuns(
            home_dir(self.home),
            database=check_database(self.database),
            graphs=demo_graphs(import_refs=True),
            watch=watch,
        )
        closing(runs.close)
        return runs
