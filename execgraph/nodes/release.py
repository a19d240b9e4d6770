"""Which release a run is bound to, and the refusal to go on under another.

A run's contract names the release of the agent and its tools it was admitted under
(``TaskContract.release_ref``, from ``build_graph(..., release_ref=...)`` or the task's
own). Its decisions, tool versions and recorded results belong to that release; finishing
it under another would mix two versions of the code in one run. So every way a run goes on
— a resume with an answer, ``invoke(None, config)`` after a crash, a new input while it is
paused — checks the graph's release against the contract's first, and refuses with
:class:`~execgraph.state.errors.ReleaseMismatch`, leaving the run as it was. A run admitted
without a release (none was declared) is bound to none and resumes anywhere; a finished
run's thread takes a new request under the new release (a new contract).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from execgraph.state.contracts import RunStatus
from execgraph.state.errors import ReleaseMismatch

__all__ = ["check_release", "check_task_release"]


def _named(release: str | None) -> str:
    return repr(release) if release else "no release"


def check_task_release(wanted: str | None, graph: str | None) -> str | None:
    """The release a new run is bound to: the task's, which must be this graph's.

    Raises:
        ReleaseMismatch: the task asks for another release than this graph is.
    """
    if wanted is not None and wanted != graph:
        raise ReleaseMismatch(
            f"the task is meant for release {wanted!r}; this graph is {_named(graph)}"
        )
    return wanted or graph


def check_release(values: Mapping[str, Any] | None, graph: str | None) -> None:
    """Refuse to continue a run bound to another release than ``graph``.

    Args:
        values: The thread's state (its ``contract`` and ``status``), or None.
        graph: The release of the graph asked to continue it.

    Raises:
        ReleaseMismatch: the run is under way and bound to another release.
    """
    contract = (values or {}).get("contract") or {}
    bound = contract.get("release_ref")
    status = (values or {}).get("status")
    if bound is None or bound == graph:
        return
    if status is not None and RunStatus(status).terminal:
        return  # nothing to continue: a new request starts a new run under this release
    raise ReleaseMismatch(
        f"run {contract.get('run_id')!r} is bound to release {bound!r}; this graph is "
        f"{_named(graph)}: resume it with release {bound!r}, or start a new run"
    )
