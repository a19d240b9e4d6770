"""AgentDojo's prompt-injection suites, run against a compromised model.

``execgraph eval --suite agentdojo`` runs AgentDojo's workspace, travel, banking and
slack suites (benchmark v1.2.2) with a scripted model that always obeys an injection it is
shown, so the attack success rate measures only what the runtime enforces — not how
robust a model is. Each configuration is a setting an execgraph user has (approvals, an
allow-list, provenance policies, a least-privilege contract); every policy is the generic
mechanism, derived from the task's request and the tools' declarations. Needs the
``agentdojo`` extra.
"""

try:
    import agentdojo  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    needs = 'the AgentDojo benchmark needs agentdojo: pip install "execgraph[agentdojo]"'
    raise ImportError(needs) from exc

from execgraph.eval.agentdojo.configs import CONFIGURATIONS, Configuration, configurations
from execgraph.eval.agentdojo.report import AgentDojoReport, run_benchmark, write_report

__all__ = [
    "CONFIGURATIONS",
    "AgentDojoReport",
    "Configuration",
    "configurations",
    "run_benchmark",
    "write_report",
]
