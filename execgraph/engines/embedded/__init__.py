"""The embedded engine: runs driven in this process, their state in a home or PostgreSQL."""

from execgraph.engines.embedded.runs import EmbeddedRuns

__all__ = ["EmbeddedRuns"]
