"""Longer tasks with external writes (what they test: persistence, idempotency, recovery).

Read what the write needs, then change the world: a file written or patched, a row
inserted (read back), a record posted to a service, a brief citing what was read, an
artifact a program builds. The checker looks at the world itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from execgraph.demo.research import RESEARCH_CHECKS
from execgraph.eval.tasks.common import (
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
    corpus,
    database,
    files,
    http,
    programs,
    rows,
    spec,
    states,
    succeeded,
    text_of,
    workspace,
)

__all__ = ["TASKS"]


# --------------------------------------------------------------------------- summary


def _summary(workdir: Path, fault: str | None) -> World:
    root = workspace(
        workdir,
        {"notes/a.txt": "Revenue grew 12% in Q3.\n", "notes/b.txt": "Churn fell to 2.1%.\n"},
    )
    goal = (
        "Read notes/a.txt and notes/b.txt and write summary.md holding both findings, one per line."
    )
    checks = [
        {"kind": "file_contains", "target": "summary.md", "value": "Churn fell to 2.1%"},
        {"kind": "file_contains", "target": "summary.md", "value": "Revenue grew 12%"},
        states("summary.md"),
    ]
    task = spec(goal, checks, allowed=["read_file", "write_file"], data_scope=["summary.md"])

    def accept(values: Any) -> bool:
        text = text_of(root, "summary.md")
        return "Revenue grew 12% in Q3." in text and "Churn fell to 2.1%." in text

    return World(task, [files(root)], root, accept, lambda: int((root / "summary.md").exists()))


def _summary_content(seen: Seen) -> dict[str, Any]:
    lines = [seen.data["a"]["content"].strip(), seen.data["b"]["content"].strip()]
    return {"path": "summary.md", "content": "\n".join(lines) + "\n"}


SUMMARY = TaskDef(
    EvalTask(
        "write-summary-report",
        "long_write",
        "Read two notes, write a summary file.",
        ("permission_denied", "budget_exhausted"),
    ),
    Script(
        (
            Step("a", "read_file", {"path": "notes/a.txt"}),
            Step("b", "read_file", {"path": "notes/b.txt"}),
            Step("write", "write_file", _summary_content, ("a", "b")),
        ),
        lambda seen: "Wrote summary.md with both findings.",
    ),
    _summary,
    guarded="write_file",
)

# --------------------------------------------------------------------------- patch

_SETTINGS = '[app]\nname = "billing"\ndebug = true\nworkers = 4\n'


def _patch(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {"settings.toml": _SETTINGS})
    goal = "Turn debug off in settings.toml (debug = false), changing nothing else."
    checks = [
        {"kind": "file_contains", "target": "settings.toml", "value": "debug = false"},
        states("debug = false"),
    ]
    task = spec(goal, checks, allowed=["read_file", "patch_file"], data_scope=["settings.toml"])

    def accept(values: Any) -> bool:
        want = _SETTINGS.replace("debug = true", "debug = false")
        return text_of(root, "settings.toml") == want and "debug = false" in output_of(values)

    return World(task, [files(root)], root, accept)


PATCH = TaskDef(
    EvalTask("patch-config", "long_write", "Patch one setting in place.", ("verification_fails",)),
    Script(
        (
            Step("read", "read_file", {"path": "settings.toml"}),
            Step(
                "patch",
                "patch_file",
                {"path": "settings.toml", "old": "debug = true", "new": "debug = false"},
                ("read",),
            ),
        ),
        lambda seen: "settings.toml now has debug = false.",
    ),
    _patch,
    guarded="patch_file",
)

# --------------------------------------------------------------------------- shipment

_SHIPPING = """
CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT, address TEXT);
INSERT INTO orders VALUES (501, 'shipped', 'Oslo'), (502, 'paid', 'Lyon'), (503, 'open', 'Graz');
CREATE TABLE shipments (order_id INTEGER, address TEXT, carrier TEXT);
"""


def _shipment(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    path, db = database(workdir, _SHIPPING)
    db.query_tool(
        name="paid_orders",
        sql="SELECT id, address FROM orders WHERE status = :status ORDER BY id",
        description="Orders in one status (e.g. 'paid').",
    )
    db.write_tool(
        name="record_shipment",
        sql="INSERT INTO shipments (order_id, address, carrier) "
        "VALUES (:order_id, :address, :carrier)",
        verify_sql="SELECT order_id FROM shipments WHERE order_id = :order_id",
        description="Record a shipment: order_id, address, carrier.",
    )
    goal = "Record a shipment with carrier 'dhl' for the one paid order, to its address."
    checks = [succeeded("record_shipment"), states("502")]
    task = spec(goal, checks, allowed=["paid_orders", "record_shipment"])

    def accept(values: Any) -> bool:
        got = rows(path, "SELECT order_id, address, carrier FROM shipments")
        return got == [(502, "Lyon", "dhl")]

    def effects() -> int:
        return len(rows(path, "SELECT order_id FROM shipments"))

    return World(task, [db], root, accept, effects)


def _ship_args(seen: Seen) -> dict[str, Any]:
    order = seen.data["paid"]["rows"][0]
    return {"order_id": order["id"], "address": order["address"], "carrier": "dhl"}


SHIPMENT = TaskDef(
    EvalTask(
        "db-record-shipment",
        "long_write",
        "Query paid orders, insert the shipment row.",
        ("permission_denied", "no_progress"),
    ),
    Script(
        (
            Step("paid", "paid_orders", {"status": "paid"}),
            Step("ship", "record_shipment", _ship_args, ("paid",)),
        ),
        lambda seen: f"Recorded a dhl shipment for order {seen.data['paid']['rows'][0]['id']}.",
    ),
    _shipment,
    guarded="record_shipment",
)

# --------------------------------------------------------------------------- post a record


def _post(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    server = TaskServer(
        {
            ("GET", "/items"): lambda r: (200, {"items": [{"name": "gear", "count": 3}]}),
            ("POST", "/records"): lambda r: (201, {"id": 1}),
        }
    )
    if fault == "write_lost":
        server.drop_once("/records")
    adapter = http(server, writes=("/records",))
    goal = (
        f"GET {server.base}/items and POST its first item to {server.base}/records as "
        'JSON {"item": name, "count": count}.'
    )
    task = spec(goal, [succeeded("http_post"), states("gear")], allowed=["http_get", "http_post"])

    def accept(values: Any) -> bool:
        posted = server.requests("POST", "/records")
        return len(posted) == 1 and posted[0].body == {"item": "gear", "count": 3}

    world = World(task, [adapter], root, accept, lambda: len(server.requests("POST", "/records")))
    world.closers += [adapter.close, server.close]
    return world


def _record(seen: Seen) -> dict[str, Any]:
    item = body(seen.data["items"])["items"][0]
    record = {"item": item["name"], "count": item["count"]}
    return {"url": f"{seen.base}/records", "json_body": record}


POST = TaskDef(
    EvalTask(
        "http-post-record",
        "long_write",
        "GET a list, POST a record made from it.",
        ("write_lost", "budget_exhausted"),
    ),
    Script(
        (
            Step("items", "http_get", lambda seen: {"url": f"{seen.base}/items"}),
            Step("post", "http_post", _record, ("items",)),
        ),
        lambda seen: "Posted the gear record.",
    ),
    _post,
    guarded="http_post",
)

# --------------------------------------------------------------------------- brief

_SOURCES = {
    "cache-basics": ("Caching Basics", "A cache keeps hot data close to its readers."),
    "cache-invalidation": (
        "Cache Invalidation",
        "Invalidate a cache entry when its source changes; time-to-live bounds staleness.",
    ),
    "queue-basics": ("Message Queues", "Queues decouple producers from consumers."),
}


def _brief(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    goal = (
        "Search the corpus for cache invalidation, read the two best hits, and write "
        "brief.md summarising them, citing each as [doc-id]."
    )
    checks = [
        {"kind": "citations_resolve", "target": "brief.md", "value": "2"},
        states("brief.md"),
    ]
    task = spec(goal, checks, data_scope=["brief.md"])

    def accept(values: Any) -> bool:
        text = text_of(root, "brief.md")
        return "[cache-invalidation]" in text and "[cache-basics]" in text

    tools = [corpus(workdir, _SOURCES), files(root)]
    return World(task, tools, root, accept, checks=dict(RESEARCH_CHECKS))


def _hit(n: int) -> Any:
    return lambda seen: {"doc_id": seen.data["search"]["hits"][n]["doc_id"]}


def _brief_content(seen: Seen) -> dict[str, Any]:
    lines = ["# Cache invalidation", ""]
    for key in ("read1", "read2"):
        doc = seen.data[key]
        lines.append(f"- {doc['text']} [{doc['doc_id']}]")
    return {"path": "brief.md", "content": "\n".join(lines) + "\n"}


BRIEF = TaskDef(
    EvalTask(
        "research-brief",
        "long_write",
        "Search, read two sources, write a cited brief.",
        ("unknown_tool",),
    ),
    Script(
        (
            Step("search", "search_corpus", {"query": "cache invalidation", "limit": 2}),
            Step("read1", "read_document", _hit(0), ("search",)),
            Step("read2", "read_document", _hit(1), ("search",)),
            Step("write", "write_file", _brief_content, ("read1", "read2")),
        ),
        lambda seen: "Wrote brief.md citing the two sources read.",
    ),
    _brief,
    guarded="write_file",
)

# --------------------------------------------------------------------------- build

_BUILD = """\
import pathlib, sys
version = sys.argv[1]
out = pathlib.Path("dist")
out.mkdir(exist_ok=True)
(out / f"app-{version}.txt").write_text(f"app {version} built\\n")
print("built", version)
"""


def _build(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {"build.py": _BUILD, "VERSION": "3.1.4\n"})
    goal = "Build the app: run build.py with python, passing the version that VERSION holds."
    checks = [
        {"kind": "file_contains", "target": "dist/app-3.1.4.txt", "value": "3.1.4"},
        states("3.1.4"),
    ]
    task = spec(goal, checks, allowed=["read_file", "run_process"])

    def accept(values: Any) -> bool:
        return text_of(root, "dist/app-3.1.4.txt") == "app 3.1.4 built\n"

    return World(task, [files(root), programs(effect="write")], root, accept)


BUILD = TaskDef(
    EvalTask(
        "build-artifact",
        "long_write",
        "Read a version, run a build that writes an artifact.",
        ("schema_violation",),
    ),
    Script(
        (
            Step("version", "read_file", {"path": "VERSION"}),
            Step(
                "build",
                "run_process",
                lambda seen: {
                    "program": "python",
                    "args": ["build.py", seen.data["version"]["content"].strip()],
                },
                ("version",),
            ),
        ),
        lambda seen: f"Built app {seen.data['version']['content'].strip()}.",
    ),
    _build,
    guarded="run_process",
)

TASKS: tuple[TaskDef, ...] = (SUMMARY, PATCH, SHIPMENT, POST, BRIEF, BUILD)
