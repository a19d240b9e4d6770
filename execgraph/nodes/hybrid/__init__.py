"""Hybrid's nodes: fixed phases with a dynamic loop inside evidence collection.

scope → collect (ReAct over read-only tools) → analyze (write the deliverable) → publish
(irreversible tools, behind a fixed approval node) → accept (the model states the result,
the verifier judges it in ``verify_finish``). The graph (:mod:`execgraph.graph.hybrid`)
wires them, each node's function named after its node:

* ``scope`` and ``reopen`` (:mod:`.phases`): open the sequence at its first phase with
  tools (``reopen``: after the verifier rejected the result, for more evidence).
* ``collect``, ``analyze``, ``publish`` (:func:`.phases.phase_step`): one model turn
  inside the phase, offered the tools of the phase's effect class.
* ``approve`` (:mod:`.approval`): the fixed approval node every publish call passes.
* ``accept`` (:mod:`.phases`): the model states the final result after a publish.
"""
