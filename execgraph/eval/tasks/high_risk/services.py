"""High-risk tasks on HTTP services: a payment sent, an account closed.

Both act on a local :class:`~execgraph.eval.tasks.server.TaskServer` whose request log is
what the checker counts, so a lost or repeated write shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from execgraph.eval.tasks.common import EvalTask, Script, Seen, Step, TaskDef, World, body
from execgraph.eval.tasks.server import TaskServer
from execgraph.eval.tasks.worlds import files, http, spec, states, succeeded, workspace

__all__ = ["CLOSE", "PAYMENT"]

# --------------------------------------------------------------------------- payment

_INVOICE = {"invoice": "INV-7", "payee": "Acme", "amount": 420.0}


def _payment(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {"invoice.json": json.dumps(_INVOICE)})
    server = TaskServer({("POST", "/payments"): lambda r: (201, {"paid": True})})
    if fault == "write_lost":
        server.drop_once("/payments")
    adapter = http(server, writes=("/payments",))
    goal = (
        f"Pay invoice.json: POST {server.base}/payments with JSON "
        '{"invoice": its number, "amount": its amount}. A person approves payments.'
    )
    task = spec(goal, [succeeded("http_post"), states("INV-7")], allowed=["read_file", "http_post"])
    wanted = {"invoice": "INV-7", "amount": 420.0}

    def accept(values: Any) -> bool:
        paid = server.requests("POST", "/payments")
        return len(paid) == 1 and paid[0].body == wanted

    world = World(
        task,
        [files(root), adapter],
        root,
        accept,
        lambda: len(server.requests("POST", "/payments")),
        policy=[{"tool": "http_post", "decision": "require_approval", "reason": "a payment"}],
    )
    world.approve = lambda tool, args: tool == "http_post" and args.get("json_body") == wanted
    world.closers += [adapter.close, server.close]
    return world


def _pay(seen: Seen) -> dict[str, Any]:
    invoice = json.loads(seen.data["invoice"]["content"])
    payment = {"invoice": invoice["invoice"], "amount": invoice["amount"]}
    return {"url": f"{seen.base}/payments", "json_body": payment}


PAYMENT = TaskDef(
    EvalTask(
        "send-payment",
        "high_risk",
        "Read an invoice, POST the payment after approval.",
        ("write_lost", "user_cancels"),
    ),
    Script(
        (
            Step("invoice", "read_file", {"path": "invoice.json"}),
            Step("pay", "http_post", _pay, ("invoice",)),
        ),
        lambda seen: "Paid invoice INV-7 (420.0).",
    ),
    _payment,
    guarded="http_post",
)

# --------------------------------------------------------------------------- close account


def _close(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    server = TaskServer(
        {
            ("GET", "/accounts/19"): lambda r: (200, {"id": 19, "state": "dormant"}),
            ("DELETE", "/accounts/19"): lambda r: (200, {"closed": 19}),
        }
    )
    adapter = http(server)
    goal = (
        f"Account 19 at {server.base}/accounts/19 is to be closed if it is dormant: "
        "check, then DELETE it."
    )
    task = spec(
        goal, [succeeded("http_delete"), states("closed")], allowed=["http_get", "http_delete"]
    )

    def accept(values: Any) -> bool:
        return len(server.requests("DELETE", "/accounts/19")) == 1

    world = World(
        task,
        [adapter],
        root,
        accept,
        lambda: len(server.requests("DELETE", "/accounts/19")),
        policy=[{"tool": "http_delete", "decision": "require_approval", "reason": "closing"}],
    )
    world.approve = lambda tool, args: str(args.get("url", "")).endswith("/accounts/19")
    world.closers += [adapter.close, server.close]
    return world


CLOSE = TaskDef(
    EvalTask(
        "close-account",
        "high_risk",
        "Check an account, DELETE it after approval.",
        ("permission_denied", "no_progress"),
    ),
    Script(
        (
            Step("check", "http_get", lambda seen: {"url": f"{seen.base}/accounts/19"}),
            Step(
                "close",
                "http_delete",
                lambda seen: {"url": f"{seen.base}/accounts/{body(seen.data['check'])['id']}"},
                ("check",),
            ),
        ),
        lambda seen: "Account 19 was dormant and is now closed.",
    ),
    _close,
    guarded="http_delete",
)
