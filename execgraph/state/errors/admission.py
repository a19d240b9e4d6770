"""Admission refusals with a cause of their own: a release that is not this one, a
dependency that is not there. Both are :class:`AdmissionError`s: nothing ran, no model
call was spent, and the run's record is left as it was."""

from __future__ import annotations

from execgraph.state.errors.refusals import AdmissionError

__all__ = ["DependencyUnavailable", "ReleaseMismatch"]


class ReleaseMismatch(AdmissionError):
    """The run is bound to another release of the agent and its tools than this graph's.

    A run's contract names the release it was admitted under (``release_ref``); resuming
    it under another would finish one run with two versions of the code. Resume it with
    the release it names, or start a new run.
    """


class DependencyUnavailable(AdmissionError):
    """A tool the task may use needs something that is not there (a database that does
    not answer, a binary that is not installed, a server that is down): refused at
    admission instead of at the tool's first call."""
