"""The suite's deterministic offline policy (the oracle), one concern per module.

``transcript`` reads what the runtime shows it; ``walk`` judges where the run stands in
the task's reference script; ``policy`` holds :class:`OraclePolicy`, the chat model that
makes each architecture's decision from those; ``policy_faults`` the faults it commits on
purpose; ``reply`` a decision and the message that carries it. The names below are the
ones importers use.
"""

from execgraph.eval.oracle.policy import POLICY_MODEL_NAME, POLICY_PRICES, OraclePolicy
from execgraph.eval.oracle.reply import CONTROLS, Reply
from execgraph.eval.oracle.transcript import observe

__all__ = ["CONTROLS", "POLICY_MODEL_NAME", "POLICY_PRICES", "OraclePolicy", "Reply", "observe"]
