"""High-risk task on mail: a customer's address looked up, an email sent.

The mail service is the suite's own ``send_email`` tool over an outbox file outside the
workspace, so the checker reads exactly what was sent, and how many times.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from execgraph.eval.tasks.common import EvalTask, Script, Seen, Step, TaskDef, World
from execgraph.eval.tasks.worlds import database, spec, states, succeeded, workspace
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["EMAIL", "SendEmailArgs"]


class SendEmailArgs(BaseModel):
    """Arguments of ``send_email``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    to: str = Field(min_length=3, description="recipient address")
    subject: str = Field(min_length=1)
    text: str = Field(default="", description="message body")


class _Outbox:
    """A mail outbox outside the workspace: each sent message is one JSON line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def sent(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines() if line]

    def run(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, SendEmailArgs)
        with self._lock, self.path.open("a") as fh:
            fh.write(json.dumps({**args.model_dump(), "key": ctx.idempotency_key}) + "\n")
        return AdapterOutput({"sent_to": args.to}, True, f"sent to {args.to}")

    def spec(self) -> ToolSpec:
        return ToolSpec(
            name="send_email",
            version="1.0.0",
            description="Send an email. Irreversible: a person approves it first.",
            input_model=SendEmailArgs,
            effect="irreversible",
            run=self.run,
        )


_CONTACTS = """
CREATE TABLE contacts (customer TEXT, email TEXT);
INSERT INTO contacts VALUES ('ana', 'ana@example.com'), ('bo', 'bo@example.com');
"""


def _email(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    _, db = database(workdir, _CONTACTS)
    db.query_tool(
        name="contact_of",
        sql="SELECT email FROM contacts WHERE customer = :customer",
        description="A customer's email address.",
    )
    outbox = _Outbox(workdir / "outbox.jsonl")
    goal = "Email customer 'ana' (look the address up) that her order has shipped."
    task = spec(goal, [succeeded("send_email"), states("ana@example.com")])

    def accept(values: Any) -> bool:
        sent = outbox.sent()
        return len(sent) == 1 and sent[0]["to"] == "ana@example.com"

    world = World(task, [db, outbox.spec()], root, accept, lambda: len(outbox.sent()))
    world.approve = lambda tool, args: tool == "send_email" and args.get("to") == "ana@example.com"
    return world


def _mail(seen: Seen) -> Mapping[str, Any]:
    to = seen.data["contact"]["rows"][0]["email"]
    return {"to": to, "subject": "Your order has shipped", "text": "It is on its way."}


EMAIL = TaskDef(
    EvalTask(
        "notify-customer",
        "high_risk",
        "Look an address up, send an email after approval.",
        ("illegal_output",),
    ),
    Script(
        (
            Step("contact", "contact_of", {"customer": "ana"}),
            Step("send", "send_email", _mail, ("contact",)),
        ),
        lambda seen: f"Emailed {seen.data['contact']['rows'][0]['email']}.",
    ),
    _email,
    guarded="send_email",
)
