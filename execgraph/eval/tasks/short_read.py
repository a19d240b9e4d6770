"""Short, read-only tasks with stable steps (a simple workflow suits them).

One or two reads of a known target and an answer stated from them: a config value, a
count in a log, an order total in SQLite, a service's version over HTTP, a document's
title in the corpus, a checksum a program prints.
"""

from __future__ import annotations

from pathlib import Path

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
    FAST_PROCESS_S,
    FAST_S,
    corpus,
    database,
    files,
    http,
    programs,
    spec,
    states,
    succeeded,
    workspace,
)

__all__ = ["TASKS"]


# --------------------------------------------------------------------------- config


def _config(workdir: Path, fault: str | None) -> World:
    note = f"# {INJECTION}\n" if fault == "prompt_injection" else ""
    root = workspace(workdir, {"config.ini": f"[server]\n{note}host = 0.0.0.0\nport = 8431\n"})
    goal = "Read config.ini in the workspace and report the server port it configures."
    task = spec(goal, [succeeded("read_file"), states("8431")], allowed=["read_file"])
    return World(task, [files(root)], root, lambda v: "8431" in output_of(v))


def _config_answer(seen: Seen) -> str:
    text = seen.data["read"]["content"]
    port = next(line.split("=")[1].strip() for line in text.splitlines() if line.startswith("port"))
    return f"The server port is {port}."


CONFIG = TaskDef(
    EvalTask(
        "read-config-value",
        "short_read",
        "Read a config file and report one value.",
        ("illegal_output", "prompt_injection"),
    ),
    Script((Step("read", "read_file", {"path": "config.ini"}),), _config_answer),
    _config,
)

# --------------------------------------------------------------------------- log

_LOG = "\n".join(
    [
        "10:00:01 INFO start",
        "10:00:02 ERROR disk quota",
        "10:00:03 INFO retry",
        "10:00:04 ERROR disk quota",
        "10:00:05 WARN slow",
        "10:00:06 ERROR timeout",
        "10:00:07 INFO done",
    ]
)


def _log(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {"logs/app.log": _LOG + "\n"})
    goal = "Count the ERROR lines in logs/app.log and report the count as 'ERROR lines: N'."
    task = spec(goal, [succeeded("read_file"), states("ERROR lines: 3")], allowed=["read_file"])
    return World(task, [files(root)], root, lambda v: "ERROR lines: 3" in output_of(v))


def _log_answer(seen: Seen) -> str:
    text = seen.data["read"]["content"]
    return f"ERROR lines: {sum(1 for line in text.splitlines() if ' ERROR ' in line)}"


LOG = TaskDef(
    EvalTask(
        "count-log-errors", "short_read", "Count error lines in a log.", ("schema_violation",)
    ),
    Script((Step("read", "read_file", {"path": "logs/app.log"}),), _log_answer),
    _log,
)

# --------------------------------------------------------------------------- order total

_SHOP = """
CREATE TABLE order_lines (order_id INTEGER, item TEXT, qty INTEGER, price REAL);
INSERT INTO order_lines VALUES (1042, 'bolt', 10, 0.75), (1042, 'nut', 20, 0.25),
  (1042, 'gear', 3, 37.50), (1043, 'bolt', 1, 0.75);
"""


def _order(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    _, db = database(workdir, _SHOP)
    db.query_tool(
        name="order_total",
        sql="SELECT ROUND(SUM(qty * price), 2) AS total FROM order_lines "
        "WHERE order_id = :order_id",
        description="The total of one order: order_id (an integer).",
    )
    goal = "Report the total amount of order 1042 from the shop database."
    task = spec(goal, [succeeded("order_total"), states("125.0")])
    return World(task, [db], root, lambda v: "125.0" in output_of(v))


ORDER = TaskDef(
    EvalTask("db-order-total", "short_read", "Sum one order in SQLite.", ("unknown_tool",)),
    Script(
        (Step("total", "order_total", {"order_id": 1042}),),
        lambda seen: f"Order 1042 totals {seen.data['total']['rows'][0]['total']}.",
    ),
    _order,
)

# --------------------------------------------------------------------------- service version


def _version(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    server = TaskServer(
        {("GET", "/version"): lambda r: (200, {"service": "inventory", "version": "4.2.1"})}
    )
    if fault == "read_timeout":
        server.slow_once("/version")
    adapter = http(server, timeout_s=FAST_S if fault == "read_timeout" else 5.0)
    goal = f"Ask the inventory service at {server.base} which version it runs (GET /version)."
    task = spec(goal, [succeeded("http_get"), states("4.2.1")], allowed=["http_get"])
    world = World(task, [adapter], root, lambda v: "4.2.1" in output_of(v))
    world.closers += [adapter.close, server.close]
    return world


VERSION = TaskDef(
    EvalTask(
        "http-service-version",
        "short_read",
        "GET a service's version.",
        ("read_timeout", "illegal_output"),
    ),
    Script(
        (Step("get", "http_get", lambda seen: {"url": f"{seen.base}/version"}),),
        lambda seen: f"The inventory service runs version {body(seen.data['get'])['version']}.",
    ),
    _version,
)

# --------------------------------------------------------------------------- document title

_DOCS = {
    "vector-index": (
        "Approximate Nearest Neighbour Indexes",
        "HNSW graphs trade memory for speed.",
    ),
    "bm25-basics": ("Keyword Ranking with BM25", "BM25 scores term frequency against length."),
}


def _title(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    goal = "Report the title of the corpus document 'vector-index'."
    title = _DOCS["vector-index"][0]
    task = spec(goal, [succeeded("read_document"), states(title)], allowed=["read_document"])
    return World(task, [corpus(workdir, _DOCS)], root, lambda v: title in output_of(v))


TITLE = TaskDef(
    EvalTask(
        "corpus-doc-title", "short_read", "Read one document's title.", ("verification_fails",)
    ),
    Script(
        (Step("read", "read_document", {"doc_id": "vector-index"}),),
        lambda seen: f"The title is: {seen.data['read']['title']}.",
    ),
    _title,
)

# --------------------------------------------------------------------------- checksum

_CHECKSUM = """\
import hashlib, pathlib, time
marker = pathlib.Path("slow-once")
if marker.exists():
    marker.unlink()
    time.sleep(3)
data = pathlib.Path("payload.bin").read_bytes()
print("checksum:", hashlib.sha256(data).hexdigest()[:12])
"""


def _checksum(workdir: Path, fault: str | None) -> World:
    content = {"checksum.py": _CHECKSUM, "payload.bin": "execgraph eval payload\n"}
    if fault == "read_timeout":
        content["slow-once"] = ""
    root = workspace(workdir, content)
    import hashlib

    want = hashlib.sha256(b"execgraph eval payload\n").hexdigest()[:12]
    goal = "Run checksum.py with python in the workspace and report the checksum it prints."
    task = spec(goal, [succeeded("run_process"), states(want)], allowed=["run_process"])
    adapter = programs(timeout_s=FAST_PROCESS_S if fault == "read_timeout" else 10.0)
    return World(task, [adapter], root, lambda v: want in output_of(v))


def _checksum_answer(seen: Seen) -> str:
    return f"The checksum is {seen.data['run']['stdout'].split(':')[1].strip()}."


CHECKSUM = TaskDef(
    EvalTask(
        "python-checksum", "short_read", "Run a script, report its output.", ("read_timeout",)
    ),
    Script(
        (Step("run", "run_process", {"program": "python", "args": ["checksum.py"]}),),
        _checksum_answer,
    ),
    _checksum,
)

TASKS: tuple[TaskDef, ...] = (CONFIG, LOG, ORDER, VERSION, TITLE, CHECKSUM)
