"""Evaluation as a feature: judge an execution mechanism by layered, measured evidence.

A task suite with acceptance checkers of its own (independent of the runtime's verifier),
a deterministic offline policy and a seeded noisy one, layered metrics computed from a
run's event log, the diagnosis of a failed run (which layer to look at first), and the runner
behind ``execgraph eval`` (suite x architectures x ablations x seeds).
"""
