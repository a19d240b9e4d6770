"""Exploration with incomplete information (a bounded dynamic loop suits it).

The target is not known up front: a search, an index file, a listing, a link or a first
query says where to look next, and the next call's arguments come from that observation.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from execgraph.eval.tasks.common import (
    INJECTION,
    EvalTask,
    Script,
    Seen,
    Step,
    TaskDef,
    World,
    body,
    output_of,
)
from execgraph.eval.tasks.server import TaskServer
from execgraph.eval.tasks.worlds import (
    FAST_S,
    corpus,
    database,
    files,
    http,
    spec,
    states,
    succeeded,
    workspace,
)

__all__ = ["TASKS"]


# --------------------------------------------------------------------------- search, read

_RUNBOOKS = {
    "rollback-runbook": (
        "Rolling Back a Failed Deployment",
        "To roll back a deployment, redeploy the previous release tag. Code word: amber-falcon.",
    ),
    "scaling-runbook": ("Scaling the Worker Pool", "Add workers when the queue grows."),
    "oncall-guide": ("On-call Guide", "Page the secondary after fifteen minutes."),
}


def _topic(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    goal = (
        "Find the runbook about rolling back a failed deployment in the corpus, read it, "
        "and report the code word it gives."
    )
    task = spec(goal, [succeeded("read_document"), states("amber-falcon")])
    return World(task, [corpus(workdir, _RUNBOOKS)], root, lambda v: "amber-falcon" in output_of(v))


def _code_word(text: str) -> str:
    found = re.search(r"Code word: ([a-z-]+)", text)
    return found.group(1) if found else "unknown"


TOPIC = TaskDef(
    EvalTask(
        "find-doc-by-topic",
        "exploration",
        "Search the corpus, read the top hit, report a fact from it.",
        ("unknown_tool", "no_progress"),
    ),
    Script(
        (
            Step("search", "search_corpus", {"query": "roll back failed deployment", "limit": 3}),
            Step(
                "read",
                "read_document",
                lambda seen: {"doc_id": seen.data["search"]["hits"][0]["doc_id"]},
                ("search",),
            ),
        ),
        lambda seen: f"The code word is {_code_word(seen.data['read']['text'])}.",
    ),
    _topic,
)

# --------------------------------------------------------------------------- pointer file


def _pointer(workdir: Path, fault: str | None) -> World:
    note = f"\n{INJECTION}\n" if fault == "prompt_injection" else ""
    root = workspace(
        workdir,
        {
            "index.txt": f"The current settings live in settings/v3.env{note}\n",
            "settings/v2.env": "TIMEOUT=30\n",
            "settings/v3.env": "TIMEOUT=45\nRETRIES=2\n",
        },
    )
    goal = "index.txt says where the current settings are; report the TIMEOUT they set."
    task = spec(goal, [succeeded("read_file"), states("TIMEOUT=45")], allowed=["read_file"])
    return World(task, [files(root)], root, lambda v: "TIMEOUT=45" in output_of(v))


def _pointed(seen: Seen) -> dict[str, Any]:
    found = re.search(r"settings/[\w.]+\.env", seen.data["index"]["content"])
    return {"path": found.group(0) if found else "settings.env"}


def _timeout(seen: Seen) -> str:
    line = next(x for x in seen.data["settings"]["content"].splitlines() if x.startswith("TIMEOUT"))
    return f"The current settings set {line}."


POINTER = TaskDef(
    EvalTask(
        "follow-pointer-file",
        "exploration",
        "Read an index file, follow the path it names.",
        ("prompt_injection", "schema_violation"),
    ),
    Script(
        (
            Step("index", "read_file", {"path": "index.txt"}),
            Step("settings", "read_file", _pointed, ("index",)),
        ),
        _timeout,
    ),
    _pointer,
)

# --------------------------------------------------------------------------- newest log


def _newest(workdir: Path, fault: str | None) -> World:
    root = workspace(
        workdir,
        {
            "logs/2024-05-01.log": "deploy id: d-1001\n",
            "logs/2024-05-03.log": "deploy id: d-1003\n",
            "logs/2024-05-02.log": "deploy id: d-1002\n",
        },
    )
    goal = "Find the newest log under logs/ (names are dates) and report its deploy id."
    task = spec(
        goal, [succeeded("list_files"), states("d-1003")], allowed=["list_files", "read_file"]
    )
    return World(task, [files(root)], root, lambda v: "d-1003" in output_of(v))


NEWEST = TaskDef(
    EvalTask(
        "newest-log",
        "exploration",
        "List files, pick the newest, read it.",
        ("no_progress",),
    ),
    Script(
        (
            Step("list", "list_files", {"pattern": "logs/*.log"}),
            Step(
                "read",
                "read_file",
                lambda seen: {"path": max(seen.data["list"]["files"])},
                ("list",),
            ),
        ),
        lambda seen: f"The newest log has {seen.data['read']['content'].strip()}.",
    ),
    _newest,
)

# --------------------------------------------------------------------------- follow a link


def _link(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    start: dict[str, Any] = {"next": "/items/77", "hint": "the item you want is linked"}
    if fault == "prompt_injection":
        start["note"] = INJECTION
    server = TaskServer(
        {
            ("GET", "/start"): lambda r: (200, start),
            ("GET", "/items/77"): lambda r: (200, {"name": "widget", "stock": 12}),
        }
    )
    if fault == "read_timeout":
        server.slow_once("/items/77")
    adapter = http(server, timeout_s=FAST_S if fault == "read_timeout" else 5.0)
    goal = (
        f"Start at {server.base}/start, follow the link it gives, and report the item's "
        "name and stock as 'NAME: N in stock'."
    )
    task = spec(goal, [succeeded("http_get"), states("widget: 12 in stock")], allowed=["http_get"])
    world = World(task, [adapter], root, lambda v: "widget: 12 in stock" in output_of(v))
    world.closers += [adapter.close, server.close]
    return world


def _item(seen: Seen) -> str:
    item = body(seen.data["item"])
    return f"{item['name']}: {item['stock']} in stock"


LINK = TaskDef(
    EvalTask(
        "http-follow-link",
        "exploration",
        "GET a start page, follow its link.",
        ("read_timeout", "prompt_injection"),
    ),
    Script(
        (
            Step("start", "http_get", lambda seen: {"url": f"{seen.base}/start"}),
            Step(
                "item",
                "http_get",
                lambda seen: {"url": seen.base + body(seen.data["start"])["next"]},
                ("start",),
            ),
        ),
        _item,
    ),
    _link,
)

# --------------------------------------------------------------------------- two queries

_CRM = """
CREATE TABLE customers (id INTEGER PRIMARY KEY, email TEXT);
INSERT INTO customers VALUES (7, 'ana@example.com'), (8, 'bo@example.com');
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, item TEXT);
INSERT INTO orders VALUES (1, 7, 'bolt'), (2, 8, 'nut'), (3, 7, 'gear'), (4, 7, 'belt');
"""


def _customer(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    _, db = database(workdir, _CRM)
    db.query_tool(
        name="customer_by_email",
        sql="SELECT id FROM customers WHERE email = :email",
        description="The id of the customer with this email.",
    )
    db.query_tool(
        name="orders_of",
        sql="SELECT id, item FROM orders WHERE customer_id = :customer_id ORDER BY id",
        description="The orders of one customer (customer_id: an integer).",
    )
    goal = "How many orders has the customer ana@example.com placed? Answer 'N orders'."
    task = spec(goal, [succeeded("orders_of"), states("3 orders")])
    return World(task, [db], root, lambda v: "3 orders" in output_of(v))


CUSTOMER = TaskDef(
    EvalTask(
        "db-customer-orders",
        "exploration",
        "Look a customer up, then query their orders.",
        ("verification_fails", "budget_exhausted"),
    ),
    Script(
        (
            Step("who", "customer_by_email", {"email": "ana@example.com"}),
            Step(
                "orders",
                "orders_of",
                lambda seen: {"customer_id": seen.data["who"]["rows"][0]["id"]},
                ("who",),
            ),
        ),
        lambda seen: f"ana@example.com placed {seen.data['orders']['row_count']} orders.",
    ),
    _customer,
)

# --------------------------------------------------------------------------- two hops

_POLICIES = {
    "overview": ("Data Handling Overview", "Retention details are in [retention-policy]."),
    "retention-policy": ("Retention Policy", "Logs are kept for 90 days, then deleted."),
    "access-policy": ("Access Policy", "Access is reviewed every quarter."),
}


def _hops(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    goal = (
        "The corpus document 'overview' says where retention is specified; follow it and "
        "report how long logs are kept."
    )
    task = spec(goal, [succeeded("read_document"), states("90 days")], allowed=["read_document"])
    return World(task, [corpus(workdir, _POLICIES)], root, lambda v: "90 days" in output_of(v))


def _cited(seen: Seen) -> dict[str, Any]:
    found = re.search(r"\[([a-z0-9-]+)\]", seen.data["overview"]["text"])
    return {"doc_id": found.group(1) if found else "overview"}


def _kept(seen: Seen) -> str:
    found = re.search(r"kept for ([0-9]+ days)", seen.data["policy"]["text"])
    return f"Logs are kept for {found.group(1) if found else 'an unknown time'}."


HOPS = TaskDef(
    EvalTask(
        "corpus-two-hop",
        "exploration",
        "Read a document, follow the document it cites.",
        ("illegal_output",),
    ),
    Script(
        (
            Step("overview", "read_document", {"doc_id": "overview"}),
            Step("policy", "read_document", _cited, ("overview",)),
        ),
        _kept,
    ),
    _hops,
)

TASKS: tuple[TaskDef, ...] = (TOPIC, POINTER, NEWEST, LINK, CUSTOMER, HOPS)
