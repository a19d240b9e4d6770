"""The executor's stages, one module each, in the order the pipeline runs them.

resolve → normalize → validate → policy → approval (the gate: no side effect), then
reserve → lock → invoke → outcome → evidence → commit. Each is a function testable alone
and a point where a test may inject a fault; :mod:`execgraph.nodes.executor.pipeline`
names them in order.
"""
