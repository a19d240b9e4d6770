"""Plan-and-execute's nodes: a plan is a DAG of tool steps; ready steps run in parallel.

The graph (:mod:`execgraph.graph.plan_execute`) wires them, each node's function named
after its node:

* ``plan`` (:mod:`.planner`): one model call, bounded repairs, submits the steps (the plan
  as submitted and checked: :mod:`.steps`); a new version keeps the finished steps.
* ``schedule`` (:mod:`.waves`): queues every ready step as one wave for the executor.
* ``assess`` (:mod:`.replan`): after a wave, replan on a trigger (:mod:`.triggers`), run
  the next wave, or move on to the answer.
* ``respond`` (:mod:`.answer`): the model, shown every step's observation, finishes or
  asks for a new plan; ``rejected`` (:mod:`.replan`) replans when the verifier rejects
  the answer or the model asked.

Step status is never stored twice: it is read from the step's result. The plan is
replaced only by a newer version, and only on a trigger. Steps already done, their facts
and their side-effect records carry over to the new version: a replan never treats past
execution as if it never happened.
"""
