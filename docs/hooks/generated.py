"""mkdocs hook: fill each ``<!-- generated: NAME ARGS -->`` line of a page at build time.

A page asks for generated content with one line, for example::

    <!-- generated: cli-reference -->
    <!-- generated: bench-table data=bench.json exclude="9 temporal" -->

The line is replaced by what the generator of that name renders (the ``gen_*`` modules
beside this file). An unknown name, a missing data file or a generator that fails stops
the build, so ``mkdocs build --strict`` never publishes a page whose generated part is
missing.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import gen_api
import gen_cli
import gen_defaults
import gen_evidence
import gen_graphs
import gen_layout
import gen_tests
from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- generated: (?P<name>[\w-]+)(?P<args>[^\n]*?) -->$", re.MULTILINE)
"""One generated block: a line of its own, naming the generator and its arguments."""

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "data"


@cache
def _data(name: str) -> Mapping[str, Any]:
    path = DATA / name
    if not path.is_file():
        raise PluginError(f"docs/data/{name} does not exist (scripts/docs_evidence.py writes it)")
    return json.loads(path.read_text(encoding="utf-8"))


def _split(values: str | None) -> tuple[str, ...]:
    return tuple(v.strip() for v in (values or "").split(",") if v.strip())


def _bench(args: Mapping[str, str]) -> str:
    data = _data(args.get("data", "bench.json"))
    only, exclude = _split(args.get("only")), _split(args.get("exclude"))
    return gen_evidence.bench_table(data, only=only, exclude=exclude)


GENERATORS: dict[str, Callable[[Mapping[str, str]], str]] = {
    "cli-reference": lambda args: gen_cli.cli_reference(),
    "public-api": lambda args: gen_api.public_api(args.get("module", "execgraph")),
    "budget-defaults": lambda args: gen_defaults.budget_defaults(),
    "run-settings": lambda args: gen_defaults.run_settings(),
    "executor-limits": lambda args: gen_defaults.limits(),
    "graph-mermaid": lambda args: gen_graphs.mermaid(args["arch"]),
    "packages": lambda args: gen_layout.packages(ROOT),
    "layers": lambda args: gen_layout.layers(ROOT),
    "measured": lambda args: gen_evidence.measured_line(_data(args["data"])),
    "bench-table": _bench,
    "temporal-config": lambda args: gen_evidence.temporal_config(
        _data(args.get("data", "bench.json"))
    ),
    "eval-tables": lambda args: gen_evidence.eval_tables(_data(args.get("data", "eval.json"))),
    "fault-matrix": lambda args: gen_evidence.fault_matrix(
        _data(args.get("data", "fault-matrix.json"))
    ),
    "torture-table": lambda args: gen_evidence.torture_table(
        _data(args.get("data", "torture.json"))
    ),
    "negative-tests": lambda args: gen_tests.negative_tests(ROOT, args["folder"]),
    "agentdojo-table": lambda args: gen_evidence.agentdojo_tables(
        _data(args.get("data", "agentdojo.json")), args.get("suite", "all")
    ),
    "agentdojo-reached": lambda args: gen_evidence.agentdojo_reached(
        _data(args.get("data", "agentdojo.json"))
    ),
    "agentdojo-list": lambda args: gen_evidence.agentdojo_lists(
        _data(args.get("data", "agentdojo.json")), args["config"], args.get("which", "lost")
    ),
}
"""Generator name -> a function of the marker's ``key=value`` arguments."""


def parse_arguments(text: str) -> dict[str, str]:
    """``data=bench.json exclude="9 temporal"`` -> a dict (shell quoting)."""
    args = {}
    for word in shlex.split(text):
        key, eq, value = word.partition("=")
        if not eq:
            raise PluginError(f"generated block argument {word!r} is not key=value")
        args[key] = value
    return args


def render(markdown: str, where: str = "a page") -> str:
    """``markdown`` with every generated block filled in."""

    def fill(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATORS:
            raise PluginError(f"{where}: no generator named {name!r} ({', '.join(GENERATORS)})")
        try:
            return GENERATORS[name](parse_arguments(match.group("args")))
        except PluginError:
            raise
        except Exception as exc:  # a generator's failure fails the build, naming the page
            raise PluginError(f"{where}: generator {name!r} failed: {exc!r}") from exc

    return MARKER.sub(fill, markdown)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """mkdocs event: a page's markdown before it is rendered."""
    return render(markdown, page.file.src_uri)
