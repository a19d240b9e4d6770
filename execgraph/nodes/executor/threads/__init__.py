"""The executor's threads: the shared pools calls and tools run on (:mod:`.pools`,
:mod:`.tool_pool`), and the live progress of calls in flight (:mod:`.progress`)."""
