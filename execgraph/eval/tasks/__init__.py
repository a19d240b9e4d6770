"""The suite's tasks, one module per task class."""
