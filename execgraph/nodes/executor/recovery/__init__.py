"""What recovers a call off the pipeline's main line.

A record another worker holds (:mod:`.owner`: wait, or take over once its owner is gone),
a call taken over (:mod:`.take_over`), an unknown outcome reconciled by the tool's probe
(:mod:`.probe`), a tool that paused the run (:mod:`.paused`), a tool that ignored its stop
signal and still runs (:mod:`.abandoned`), and a person's verdict on an unknown
(:mod:`.verdict`).
"""
