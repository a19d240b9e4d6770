"""The executor: every real action of every architecture passes this one pipeline.

Read :mod:`.pipeline` for the order of the stages, :mod:`.call` for the object that
carries one call through them, :mod:`.node` for how a graph runs them. Modules outside
the executor use only the names below:

- running calls: :class:`ExecutorDeps` (what the executor works with), the node
  (:func:`executor_node`, :func:`aexecutor_node`), :func:`run_calls` and
  :func:`calls_update` (calls run where a turn is, as one node update), :func:`execute`
  with a :class:`Gate` (a call a gate outside the executor decided on), and
  :class:`Finished` (one call's end);
- asking before running: :func:`preview` (a dry run of stages 1–4), :func:`needs_approval`,
  :func:`resolve`, :func:`canonical_arguments`, :func:`target_names`;
- approvals: :func:`approval_request`, :func:`parse_decision`, :func:`decide_once`,
  :func:`require_answer`, signed tokens (:func:`issue_token`, :func:`verify_token`);
- an unknown outcome settled by a person: :func:`reconcile`;
- what the model sees of a call: :func:`tool_message`, :func:`observation_text`,
  :func:`observation_content`;
- arguments: :func:`stable_hash`, :func:`argument_bytes`, :func:`oversized`,
  :func:`schema_message`, :data:`DEFAULT_MAX_ARGUMENT_BYTES`.
"""

from execgraph.nodes.executor.argument_size import (
    DEFAULT_MAX_ARGUMENT_BYTES,
    argument_bytes,
    oversized,
)
from execgraph.nodes.executor.call import Gate
from execgraph.nodes.executor.deps import ExecutorDeps
from execgraph.nodes.executor.hashing import stable_hash
from execgraph.nodes.executor.messages import observation_content, observation_text, tool_message
from execgraph.nodes.executor.node import aexecutor_node, calls_update, executor_node, run_calls
from execgraph.nodes.executor.pipeline import execute, needs_approval, preview
from execgraph.nodes.executor.recovery.verdict import reconcile
from execgraph.nodes.executor.stages.approval import (
    approval_request,
    decide_once,
    parse_decision,
    require_answer,
)
from execgraph.nodes.executor.stages.commit import Finished
from execgraph.nodes.executor.stages.normalize import canonical_arguments
from execgraph.nodes.executor.stages.resolve import resolve
from execgraph.nodes.executor.stages.validate import schema_message
from execgraph.nodes.executor.targets import target_names
from execgraph.nodes.executor.tokens import issue_token, verify_token

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "ExecutorDeps",
    "Finished",
    "Gate",
    "aexecutor_node",
    "approval_request",
    "argument_bytes",
    "calls_update",
    "canonical_arguments",
    "decide_once",
    "execute",
    "executor_node",
    "issue_token",
    "needs_approval",
    "observation_content",
    "observation_text",
    "oversized",
    "parse_decision",
    "preview",
    "reconcile",
    "require_answer",
    "resolve",
    "run_calls",
    "schema_message",
    "stable_hash",
    "target_names",
    "tool_message",
    "verify_token",
]
