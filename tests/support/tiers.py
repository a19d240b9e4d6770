"""Pytest plugin: every test belongs to exactly one tier, ``unit``, ``integration`` or
``system``, so the fast part of the suite can run alone (``pytest -m unit``).

- ``unit``: no separate process, no server, no real network peer. Pure functions and
  in-process graphs on a temporary SQLite file are unit tests.
- ``integration``: real servers and processes (PostgreSQL, Chromium, the Temporal dev
  server, HTTP and MCP servers, the CLI in a subprocess).
- ``system``: the torture runs, the kill harness, the crash matrices, the benchmark's smoke
  runs.

A test's tier is its own tier marker (on the test, a parameter, its class or its module)
where it has one; else the highest of the tiers of the fixtures it uses
(:data:`FIXTURE_TIERS`) and of its file or closest folder (:data:`PATH_TIERS`); else
``unit``. Collection fails when a test has two tier markers.

A unit test is held to its tier: collection fails when its module imports an optional
extra at import time (directly or through the modules it imports), and the test fails
when it starts a process, connects a socket, listens on one or imports an extra. So a new
test that needs a server is told to say so, instead of slowing down or breaking the unit
run. Where an extra is not installed (a venv with only the ``dev`` extra), the modules
that need it are not collected: by the rule above they hold no unit test.
"""

from __future__ import annotations

import ast
import importlib.util
import multiprocessing.process
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest

__all__ = ["EXTRAS", "FIXTURE_TIERS", "PATH_TIERS", "TIERS"]

TIERS = ("unit", "integration", "system")

#: Modules the optional extras install (postgres, browser, openai, mcp, temporal).
EXTRAS = (
    "psycopg",
    "psycopg_pool",
    "langgraph.checkpoint.postgres",
    "playwright",
    "langchain_openai",
    "openai",
    "mcp",
    "langchain_mcp_adapters",
    "temporalio",
    "agentdojo",
)

#: Fixtures that start a server or a process: a test using one is at least integration.
FIXTURE_TIERS = {
    "postgres_dsn": "integration",
    "postgres_database": "integration",
    "temporal_address": "integration",
    "openai_server": "integration",
}

#: Files and folders (relative to the repository) whose tests are all of one tier.
PATH_TIERS = {
    # integration: servers
    "tests/studio": "integration",  # ``langgraph dev``
    "tests/journeys": "integration",  # a user's day: real HTTP, the CLI, the demo scripts
    "tests/engines/temporal": "integration",  # the Temporal dev server
    "tests/cli/test_temporal_cli.py": "integration",
    "tests/graph/test_postgres_database.py": "integration",  # PostgreSQL, or none reachable
    "tests/nodes/model/test_streamed.py": "integration",  # the OpenAI client
    "tests/tools/test_mcp.py": "integration",  # an MCP server
    "tests/middleware/test_mcp.py": "integration",  # an MCP server
    "tests/adversarial/test_mcp_servers.py": "integration",  # a hostile MCP server
    "tests/tools/adapters/test_browser.py": "integration",  # Chromium
    "tests/tools/adapters/test_http.py": "integration",  # HTTP servers
    "tests/eval/test_directions.py": "integration",  # the suite's task servers
    "tests/eval/test_agentdojo.py": "integration",  # the agentdojo extra
    "tests/notebooks/test_notebook.py": "integration",  # a Jupyter kernel
    "tests/docs/test_site_build.py": "integration",  # mkdocs, every generator and extra
    # integration: processes
    "tests/cli/test_commands.py": "integration",  # the CLI in subprocesses
    "tests/cli/test_startup.py": "integration",  # what a fresh CLI process imports
    "tests/cli/test_edges.py": "integration",
    "tests/cli/test_errors.py": "integration",
    "tests/cli/test_live.py": "integration",
    "tests/cli/test_replay.py": "integration",
    "tests/cli/test_trace.py": "integration",
    "tests/adversarial/test_child_processes.py": "integration",
    "tests/adversarial/test_concurrent_workers.py": "integration",
    "tests/adversarial/test_run_lease.py": "integration",
    "tests/adversarial/test_approval_binding.py": "integration",  # CLI and Temporal worker
    "tests/adversarial/test_private_files.py": "integration",  # the CLI, a worker process
    "tests/adversarial/test_run_id_reuse.py": "integration",  # PostgreSQL, Temporal
    "tests/adversarial/test_temporal_failures.py": "integration",  # a Temporal worker
    "tests/adversarial/test_terminal_text.py": "integration",  # the CLI on both engines
    "tests/cli/test_make_demo.py": "integration",  # make demo in a fresh clone
    "tests/graph/test_tool_isolation.py": "integration",  # tools in their own processes
    "tests/tools/adapters/test_process.py": "integration",
    "tests/test_package.py": "integration",  # builds and installs the wheel
    # system
    "tests/bench/test_bench_smoke.py": "system",
    "tests/bench/test_temporal_bench.py": "system",
    "tests/reliability/test_torture.py": "system",
    "tests/reliability/test_fault_matrix.py": "system",
    "tests/graph/test_executor_crash.py": "system",
    "tests/adversarial/test_temporal_stalled_worker.py": "system",  # SIGSTOP torture
    "tests/adversarial/test_fencing_embedded.py": "system",  # SIGSTOP torture, embedded
    "tests/engines/temporal/test_kill_harness.py": "system",
    "tests/middleware/test_kill_torture.py": "system",  # SIGKILL torture of create_agent
}

_REPO = Path(__file__).resolve().parents[2]
_OWN_PACKAGES = ("execgraph", "tests", "bench")


class TierError(Exception):
    """A unit test did what only an integration or system test may."""


# -- which tier ----------------------------------------------------------------------------


def _tier(item: pytest.Item) -> str:
    marked = {mark.name for mark in item.iter_markers() if mark.name in TIERS}
    if len(marked) > 1:
        raise pytest.UsageError(f"{item.nodeid} has {len(marked)} tier markers: {sorted(marked)}")
    if marked:
        return marked.pop()
    found = ["unit"]
    found.extend(FIXTURE_TIERS[n] for n in getattr(item, "fixturenames", ()) if n in FIXTURE_TIERS)
    relative = item.path.relative_to(_REPO).as_posix()
    for prefix in sorted(PATH_TIERS, key=len, reverse=True):  # the closest folder decides
        if relative == prefix or relative.startswith(prefix.rstrip("/") + "/"):
            found.append(PATH_TIERS[prefix])
            break
    return max(found, key=TIERS.index)


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by the markers added here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = []
    for item in items:
        tier = _tier(item)
        if not any(mark.name == tier for mark in item.iter_markers()):
            item.add_marker(tier)
        if tier == "unit":
            extra = _needs_extra(item.path)
            if extra is not None:
                problems.append(
                    f"{item.nodeid} is a unit test, but its module needs {extra} (an optional "
                    "extra) at import time: give it the integration marker, or import the "
                    "extra inside the test"
                )
    if problems:
        raise pytest.UsageError("\n".join(problems))
    _heaviest_first(items)


def _heaviest_first(items: list[pytest.Item]) -> None:
    """Modules holding a system test first, then those holding an integration test, each
    module's tests kept together and in order. pytest-xdist hands modules out in this
    order (``--dist loadscope --no-loadscope-reorder``, as ``make test`` runs it; its
    default order, most tests first, puts a module of one long test last): the long ones
    start at once instead of keeping a worker busy after the others are done."""
    rank: dict[str, int] = {}
    for item in items:
        module = item.nodeid.partition("::")[0]
        rank[module] = max(rank.get(module, 0), TIERS.index(_marked_tier(item)))
    items.sort(key=lambda item: -rank[item.nodeid.partition("::")[0]])  # stable


def _marked_tier(item: pytest.Item) -> str:
    return next(mark.name for mark in item.iter_markers() if mark.name in TIERS)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out the modules whose extra is not installed (none of them holds unit tests)."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    extra = _needs_extra(collection_path)
    if extra is not None and not _installed(extra):
        return True
    return None


def pytest_collection_finish(session: pytest.Session) -> None:
    """A conftest is imported by every run, the unit run too: it must not need an extra."""
    for conftest in _REPO.joinpath("tests").rglob("conftest.py"):
        extra = _needs_extra(conftest)
        if extra is not None:
            raise pytest.UsageError(
                f"{conftest.relative_to(_REPO)} needs {extra} (an optional extra) at import "
                "time: import it inside the fixture that uses it"
            )


# -- what a module imports when it is imported ---------------------------------------------


@cache
def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _needs_extra(path: Path) -> str | None:
    """The first optional extra importing ``path`` would import, if any."""
    for module in _imports_closure(_module_name(path)):
        for extra in EXTRAS:
            if module == extra or module.startswith(extra + "."):
                return extra
    return None


def _module_name(path: Path) -> str:
    parts = list(path.resolve().relative_to(_REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _imports_closure(module: str) -> frozenset[str]:
    """Every module importing ``module`` imports at once: its own top-level imports and,
    for the repository's modules, theirs, their packages' ``__init__`` included."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # the packages
        path = _own_file(name)
        if path is not None:
            todo.extend(_top_level_imports(path, name))
    return frozenset(seen)


@cache
def _own_file(module: str) -> Path | None:
    if module.split(".")[0] not in _OWN_PACKAGES:
        return None
    base = _REPO.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@cache
def _top_level_imports(path: Path, module: str) -> tuple[str, ...]:
    """The modules ``path`` imports when it runs: not in functions, not for type checking."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[str] = []

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found.append(base)
                for alias in node.names:  # ``from package import module``
                    if _own_file(f"{base}.{alias.name}"):
                        found.append(f"{base}.{alias.name}")
            elif isinstance(node, ast.If) and not _type_checking(node.test):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            elif isinstance(node, ast.With | ast.ClassDef):
                visit(node.body)

    visit(ast.parse(path.read_text(), str(path)).body)
    return tuple(found)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


# -- a unit test stays a unit test ---------------------------------------------------------


@contextmanager
def _unit_only(item: pytest.Item) -> Iterator[list[str]]:
    """Refuse, and note, every process started and every socket connected or listening."""
    seen: list[str] = []
    patch = pytest.MonkeyPatch()

    def refuse(what: str, original: Any) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            seen.append(what)
            raise TierError(
                f"{item.nodeid} {what}, which a unit test may not: give it the integration "
                "marker (or list its file in tests/support/tiers.py)"
            )

        refused.__wrapped__ = original  # type: ignore[attr-defined]
        return refused

    for owner, name, what in (
        (subprocess.Popen, "_execute_child", "started a process"),
        (os, "fork", "forked a process"),
        (os, "posix_spawn", "started a process"),
        (os, "posix_spawnp", "started a process"),
        (multiprocessing.process.BaseProcess, "start", "started a process"),
        (socket.socket, "connect", "connected a socket"),
        (socket.socket, "connect_ex", "connected a socket"),
        (socket.socket, "listen", "listened on a socket"),
    ):
        patch.setattr(owner, name, refuse(what, getattr(owner, name)))
    try:
        yield seen
    finally:
        patch.undo()


def _loaded_extras() -> set[str]:
    """The extras imported in this process (a test may set one to None: "not installed")."""
    return {extra for extra in EXTRAS if sys.modules.get(extra) is not None}


@cache
def _fonts_cached() -> None:
    """matplotlib lists the machine's fonts with ``fc-list`` the first time it is imported
    on a machine (and again when its cache is unreadable). Done here, before a unit test is
    guarded, so a plot on a fresh machine is not taken for a test starting a process."""
    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib.font_manager  # noqa: F401


def _guarded(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("unit") is None:
        return (yield)
    _fonts_cached()
    loaded = _loaded_extras()
    with _unit_only(item) as seen:
        result = yield
    seen.extend(f"imported {extra} (an optional extra)" for extra in _loaded_extras() - loaded)
    if seen:
        raise TierError(
            f"{item.nodeid} {seen[0]}, which a unit test may not: give it the integration "
            "marker (or list its file in tests/support/tiers.py)"
        )
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item))
