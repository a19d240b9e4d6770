"""stub"""

from execgraph.eval.tasks.common import TaskDef

TASKS: tuple[TaskDef, ...] = ()
