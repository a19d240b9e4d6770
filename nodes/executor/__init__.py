"""The executor pipeline's stages, one file each, and its three durability-boundary nodes."""

from nodes.executor.pipeline import (
    approval_node,
    authorize_node,
    execute_node,
    route_after_approval,
    route_after_authorize,
)
from nodes.executor.results import ExecutorDeps
from nodes.executor.tokens import issue_token, verify_token

__all__ = [
    "ExecutorDeps",
    "approval_node",
    "authorize_node",
    "execute_node",
    "issue_token",
    "route_after_approval",
    "route_after_authorize",
    "verify_token",
]
