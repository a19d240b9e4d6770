"""Long tasks: about 30 to 100 decisions over many documents, with a pause in the middle.

What they test: the context a long run is shown (the projection's window against the
whole transcript: input tokens per decision, cost per success), progress kept in state
across a pause and resume, and writes to a flaky service over many calls.

* ``ledger-chain``: follow a ledger of :data:`LEDGER_PAGES` pages, each naming the next
  (so every read needs the one before it), write the balance half-way (a person approves
  it: the run pauses and resumes there) and at the end (approved too), and state it.
* ``inventory-sync``: page through a service's inventory (:data:`INVENTORY_PAGES` pages,
  each linking the next) and archive every page to the service as it goes, exactly once
  each, on a service that is flaky when the cell says so.

The checkers read the workspace and the service's own request record.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
from execgraph.eval.tasks.worlds import files, http, spec, states, succeeded, text_of, workspace

__all__ = ["INVENTORY_PAGES", "LEDGER_PAGES", "TASKS"]

LEDGER_PAGES = 28
"""Pages of the ledger: 28 reads, two approved writes and a finish at least."""
INVENTORY_PAGES = 14
"""Pages of the inventory: 14 reads and 14 writes, and a finish at least."""
_LONG_BUDGETS = {"model_calls": 160, "tool_calls": 140}
_SETTINGS = {"max_replans": 80}
"""Plan-and-execute plans what it can spell out: a chain needs a replan per link."""

# --------------------------------------------------------------------------- ledger


def _page_path(i: int) -> str:
    """A page's file name: not its number, so only the page before it tells where it is."""
    return f"ledger/{(i * 7919) % 10007:05d}.txt"


def _amount(i: int) -> int:
    return (i * 37) % 90 + 10


def _balance(i: int) -> int:
    return sum(_amount(k) for k in range(1, i + 1))


_HALF = LEDGER_PAGES // 2
_NEXT = re.compile(r"^next: (\S+)$", re.M)
_BALANCE = re.compile(r"^balance: (\d+)$", re.M)


def _ledger_files() -> dict[str, str]:
    pages = {"ledger/START.txt": f"The ledger starts at {_page_path(1)}.\n"}
    for i in range(1, LEDGER_PAGES + 1):
        nxt = _page_path(i + 1) if i < LEDGER_PAGES else "none"
        pages[_page_path(i)] = (
            f"ledger page {i}\nentry: delivery batch {i}\namount: {_amount(i)}\n"
            f"balance: {_balance(i)}\nnext: {nxt}\n"
        )
    return pages


def _ledger(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, _ledger_files())
    total = _balance(LEDGER_PAGES)
    goal = (
        "Follow the ledger from ledger/START.txt page by page (each page names the next) to "
        f"its last page. After page {_HALF}, write interim.md holding the line "
        f"'balance after page {_HALF}: <its balance>'; at the end write total.md holding "
        "'final balance: <the last page's balance>', and state the final balance."
    )
    checks = [
        {"kind": "file_contains", "target": "interim.md", "value": str(_balance(_HALF))},
        {"kind": "file_contains", "target": "total.md", "value": str(total)},
        states(str(total)),
    ]
    task = spec(
        goal,
        checks,
        allowed=["read_file", "write_file"],
        budgets=_LONG_BUDGETS,
        data_scope=["interim.md", "total.md"],
    )

    def accept(values: Any) -> bool:
        return (
            text_of(root, "interim.md") == f"balance after page {_HALF}: {_balance(_HALF)}\n"
            and text_of(root, "total.md") == f"final balance: {total}\n"
            and str(total) in output_of(values)
        )

    wanted = {
        "interim.md": f"balance after page {_HALF}: {_balance(_HALF)}\n",
        "total.md": f"final balance: {total}\n",
    }
    world = World(
        task,
        [files(root)],
        root,
        accept,
        lambda: sum((root / name).exists() for name in wanted),
        policy=[{"tool": "write_file", "decision": "require_approval", "reason": "a ledger"}],
    )
    world.approve = lambda tool, args: wanted.get(str(args.get("path"))) == args.get("content")
    world.settings = dict(_SETTINGS)
    return world


def _follow(step: str) -> Any:
    def args(seen: Seen) -> dict[str, Any]:
        found = _NEXT.search(str(seen.data[step]["content"]))
        if found is None or found.group(1) == "none":
            raise KeyError("the page names no next page")
        return {"path": found.group(1)}

    return args


def _write_balance(step: str, path: str, label: str) -> Any:
    def args(seen: Seen) -> dict[str, Any]:
        found = _BALANCE.search(str(seen.data[step]["content"]))
        if found is None:
            raise KeyError("the page shows no balance")
        return {"path": path, "content": f"{label}: {found.group(1)}\n"}

    return args


def _ledger_answer(seen: Seen) -> str:
    found = _BALANCE.search(str(seen.data[f"p{LEDGER_PAGES}"]["content"]))
    return f"The final balance is {found.group(1) if found else 'unknown'}."


def _ledger_steps() -> tuple[Step, ...]:
    steps = [
        Step("start", "read_file", {"path": "ledger/START.txt"}),
        Step(
            "p1",
            "read_file",
            lambda seen: {"path": seen.data["start"]["content"].split()[-1].rstrip(".")},
            ("start",),
        ),
    ]
    for i in range(2, LEDGER_PAGES + 1):
        steps.append(Step(f"p{i}", "read_file", _follow(f"p{i - 1}"), (f"p{i - 1}",)))
        if i == _HALF:
            label = f"balance after page {_HALF}"
            steps.append(
                Step(
                    "interim",
                    "write_file",
                    _write_balance(f"p{i}", "interim.md", label),
                    (f"p{i}",),
                )
            )
    last = f"p{LEDGER_PAGES}"
    steps.append(
        Step("total", "write_file", _write_balance(last, "total.md", "final balance"), (last,))
    )
    return tuple(steps)


LEDGER = TaskDef(
    EvalTask(
        "ledger-chain",
        "long_horizon",
        f"Follow a {LEDGER_PAGES}-page ledger, write its balance half-way and at the end "
        "(both approved by a person).",
    ),
    Script(_ledger_steps(), _ledger_answer),
    _ledger,
    guarded="write_file",
)

# --------------------------------------------------------------------------- inventory


def _skus(page: int) -> list[dict[str, Any]]:
    return [{"sku": f"SKU-{page:02d}{k}", "count": (page * 5 + k * 3) % 17 + 1} for k in range(3)]


def _archive_body(page: int) -> dict[str, Any]:
    items = _skus(page)
    return {
        "page": page,
        "skus": [i["sku"] for i in items],
        "count": sum(i["count"] for i in items),
    }


def _inventory(workdir: Path, fault: str | None) -> World:
    root = workspace(workdir, {})
    routes: dict[tuple[str, str], Any] = {("POST", "/archive"): lambda r: (201, {"archived": True})}
    for page in range(1, INVENTORY_PAGES + 1):
        nxt = f"/inventory/{page + 1}" if page < INVENTORY_PAGES else None
        routes[("GET", f"/inventory/{page}")] = lambda r, page=page, nxt=nxt: (
            200,
            {"page": page, "items": _skus(page), "next": nxt},
        )
    server = TaskServer(routes)
    adapter = http(server, writes=("/archive",))
    goal = (
        f"Page through {server.base}/inventory/1 (each page links the next, until next is "
        f"null) and, for every page, POST {server.base}/archive the JSON "
        '{"page": its number, "skus": its skus in order, "count": the sum of its counts}, '
        "exactly once per page. Then state how many pages you archived."
    )
    archived = {
        "kind": "pages_archived",
        "value": str(INVENTORY_PAGES),
        "description": "the service holds an archive of every page",
    }
    task = spec(
        goal,
        [succeeded("http_post"), archived, states(str(INVENTORY_PAGES))],
        allowed=["http_get", "http_post"],
        budgets=_LONG_BUDGETS,
    )
    wanted = [_archive_body(p) for p in range(1, INVENTORY_PAGES + 1)]

    def pages_archived(check: Any, state: Any, contract: Any) -> str | None:
        """The verifier's check: as many distinct pages archived as the check says."""
        pages = {
            r.body.get("page")
            for r in server.requests("POST", "/archive")
            if isinstance(r.body, dict)
        }
        need = int(check.value or 0)
        return None if len(pages) >= need else f"{len(pages)} of {need} pages archived"

    def accept(values: Any) -> bool:
        posted = sorted(
            (r.body for r in server.requests("POST", "/archive") if isinstance(r.body, dict)),
            key=lambda b: int(b.get("page") or 0),
        )
        return posted == wanted and str(INVENTORY_PAGES) in output_of(values)

    world = World(
        task,
        [adapter],
        root,
        accept,
        lambda: len(server.requests("POST", "/archive")),
        checks={"pages_archived": pages_archived},
    )
    world.settings = dict(_SETTINGS)
    world.closers += [adapter.close, server.close]
    return world


def _get_page(page: int) -> Any:
    if page == 1:
        return lambda seen: {"url": f"{seen.base}/inventory/1"}

    def args(seen: Seen) -> dict[str, Any]:
        nxt = body(seen.data[f"g{page - 1}"])["next"]
        if not nxt:
            raise KeyError("the page names no next page")
        return {"url": f"{seen.base}{nxt}"}

    return args


def _archive(page: int) -> Any:
    def args(seen: Seen) -> dict[str, Any]:
        got = body(seen.data[f"g{page}"])
        items = got["items"]
        record = {
            "page": got["page"],
            "skus": [i["sku"] for i in items],
            "count": sum(int(i["count"]) for i in items),
        }
        return {"url": f"{seen.base}/archive", "json_body": record}

    return args


def _inventory_steps() -> tuple[Step, ...]:
    steps: list[Step] = []
    for page in range(1, INVENTORY_PAGES + 1):
        after = (f"g{page - 1}",) if page > 1 else ()
        steps.append(Step(f"g{page}", "http_get", _get_page(page), after))
        steps.append(Step(f"a{page}", "http_post", _archive(page), (f"g{page}",)))
    return tuple(steps)


INVENTORY = TaskDef(
    EvalTask(
        "inventory-sync",
        "long_horizon",
        f"Page through a {INVENTORY_PAGES}-page inventory, archive each page once.",
    ),
    Script(_inventory_steps(), lambda seen: f"Archived {INVENTORY_PAGES} pages."),
    _inventory,
    guarded="http_post",
)

TASKS: tuple[TaskDef, ...] = (LEDGER, INVENTORY)
