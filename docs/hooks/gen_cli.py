"""The command-line reference, generated from the commands themselves.

The ``execgraph`` console script's entry point is loaded and its Typer app turned into the
click-style command tree it runs as (Typer's own copy of click: the tree is read by duck
typing, so either copy works), so the reference shows each command's own help, arguments,
options, defaults and environment variables as the installed CLI has them: nothing here
is copied from the CLI, and a renamed option changes the page at the next build.
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import entry_points
from typing import Any

__all__ = ["cli_reference", "command_tree", "option_names"]


def command_tree() -> Any:
    """The ``execgraph`` command as a click command (from the installed entry point)."""
    (entry,) = entry_points(group="console_scripts", name="execgraph")
    app = entry.load()
    if hasattr(app, "params"):  # already a click command
        return app
    import typer.main

    return typer.main.get_command(app)


def _is_option(param: Any) -> bool:
    return param.param_type_name == "option"


def _walk(
    command: Any, path: tuple[str, ...], parent: Any
) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    ctx = command.context_class(command, info_name=path[-1], parent=parent)
    yield path, command, ctx
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, (*path, name), ctx)


def option_names(root: Any = None) -> dict[tuple[str, ...], set[str]]:
    """Every command path (``("execgraph", "run")``) with the option names it takes."""
    root = root or command_tree()
    names: dict[tuple[str, ...], set[str]] = {}
    for path, command, _ in _walk(root, ("execgraph",), None):
        taken = {"--help"}
        for param in command.params:
            if _is_option(param):
                taken.update(param.opts)
                taken.update(param.secondary_opts)
        names[path] = taken
    return names


def _cell(text: str) -> str:
    """Text safe inside a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")


def _default(param: Any) -> str:
    value: Any = param.default
    if value is None or value is False or value == () or callable(value):
        return ""
    if getattr(param, "is_flag", False) and value is True:
        return "on"
    return f"`{value}`"


def _params_table(command: Any) -> list[str]:
    rows: list[list[str]] = []
    for param in command.params:
        if getattr(param, "hidden", False):
            continue
        if _is_option(param):
            name = ", ".join(f"`{o}`" for o in [*param.opts, *param.secondary_opts])
        else:
            name = f"`{(param.name or '').upper()}`" + ("" if param.required else " (optional)")
        if param.multiple:
            name += " (repeatable)"
        env = param.envvar if isinstance(param.envvar, str) else ", ".join(param.envvar or ())
        help_text = getattr(param, "help", None) or ""
        rows.append([name, _cell(help_text), _default(param), f"`{env}`" if env else ""])
    if not rows:
        return []
    lines = ["| argument or option | meaning | default | environment |", "|---|---|---|---|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def _text(text: str | None) -> list[str]:
    """A help text as markdown paragraphs (click's ``\\b`` marks are dropped)."""
    if not text:
        return []
    return [text.replace("\b", "").strip(), ""]


def cli_reference(root: Any = None) -> str:
    """The reference page's body: the top command, then one section per subcommand."""
    root = root or command_tree()
    lines: list[str] = []
    for path, command, ctx in _walk(root, ("execgraph",), None):
        usage = " ".join([*path, *command.collect_usage_pieces(ctx)])
        if len(path) > 1:
            lines += [f"## `{' '.join(path[1:])}`", ""]
        lines += _text(command.help)
        lines += ["```text", usage, "```", ""]
        table = _params_table(command)
        if table:
            lines += [*table, ""]
        if len(path) == 1:  # the subcommands repeat the top command's epilog
            lines += _text(command.epilog)
    return "\n".join(lines).rstrip() + "\n"
