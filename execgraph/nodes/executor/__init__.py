"""The executor pipeline's stages, one file each, and the node that runs them in order."""

from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.pipeline import executor_node
from execgraph.nodes.executor.tokens import issue_token, verify_token

__all__ = ["ExecutorDeps", "executor_node", "issue_token", "verify_token"]
