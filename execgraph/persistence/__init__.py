"""Where a run's state lives between steps: checkpointers, the one-DSN PostgreSQL setup,
the thread-bound entry points and the run lease.

The graphs in :mod:`execgraph.graph` only wire nodes; this package owns what they are
compiled onto: LangGraph's ``SqliteSaver`` as the embedded default (sync and async, long
strings stored once), the execution store and checkpoints on one PostgreSQL DSN, and the
wrapper that makes every entry into a compiled graph name its thread and hold its run
lease.
"""
