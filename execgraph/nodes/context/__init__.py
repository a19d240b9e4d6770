"""Context projection: what the model is shown of a run.

:mod:`.projection` bounds the authoritative state into a model input; with
``context="full"`` :mod:`.whole_transcript` rebuilds every turn from the run's record
instead. Tool-derived text reaches the model only through :mod:`execgraph.nodes.untrusted`.
"""
