"""High-risk tasks behind approval (what they test: authorization outside the model).

Each ends in an irreversible call — a publication, a purge, a payment, a deployment, an
account closed, an email sent — that the default policy (or the task's rule) sends to a
person. The scripted person approves exactly the call the task needs and rejects any
other; the checker looks at what really happened.

One module per world the irreversible call acts on: ``workspace`` (a report published, a
release deployed by a program), ``database`` (sessions purged), ``services`` (a payment
and an account closure over HTTP), ``mail`` (an email sent through an outbox).
"""

from execgraph.eval.tasks.common import TaskDef
from execgraph.eval.tasks.high_risk.database import PURGE
from execgraph.eval.tasks.high_risk.mail import EMAIL
from execgraph.eval.tasks.high_risk.services import CLOSE, PAYMENT
from execgraph.eval.tasks.high_risk.workspace import DEPLOY, PUBLISH

__all__ = ["CLOSE", "DEPLOY", "EMAIL", "PAYMENT", "PUBLISH", "PURGE", "TASKS"]

TASKS: tuple[TaskDef, ...] = (PUBLISH, PURGE, PAYMENT, DEPLOY, CLOSE, EMAIL)
