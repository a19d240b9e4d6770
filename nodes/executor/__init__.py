"""The executor pipeline's stages, one file each, and the node that runs them in order."""

from nodes.executor.pipeline import executor_node
from nodes.executor.results import ExecutorDeps
from nodes.executor.tokens import issue_token, verify_token

__all__ = ["ExecutorDeps", "executor_node", "issue_token", "verify_token"]
