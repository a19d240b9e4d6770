"""execgraph under an existing ``create_agent`` agent: :class:`ExecutorMiddleware`.

:mod:`.agent` is the middleware, :mod:`.requests` the agent's tool call as the executor's
request (and its record's key), :mod:`.decisions` the approval answers it takes,
:mod:`.budgets` the run's budgets and its end state.
"""

from execgraph.middleware.agent import ExecutorAgentState, ExecutorMiddleware

__all__ = ["ExecutorAgentState", "ExecutorMiddleware"]
