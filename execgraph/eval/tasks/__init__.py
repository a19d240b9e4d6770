"""The suite's tasks, one module per task class of seed 002 §17."""
