"""The executor's three nodes, one per durability boundary.

``authorize`` (resolve → normalize → validate → policy) is pure and may re-run freely;
``approval`` holds the only ``interrupt()`` and re-checks freshness on resume (both in
:mod:`nodes.executor.gate`); ``execute`` (reserve → lock → invoke → outcome → evidence →
commit, in :mod:`nodes.executor.run`) starts no side effect before the durable execution
record exists. Each returns only reducer fields to the caller's graph.
"""

from nodes.executor.gate import (
    approval_node,
    authorize_node,
    needs_approval,
    preview,
    route_after_approval,
    route_after_authorize,
)
from nodes.executor.run import execute_node

__all__ = [
    "approval_node",
    "authorize_node",
    "execute_node",
    "needs_approval",
    "preview",
    "route_after_approval",
    "route_after_authorize",
]
