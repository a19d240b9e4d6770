"""Lists of negative tests, read from the test files themselves.

The reliability page names what is proven by tests that try to break the runtime. Rather
than copy those names by hand, each test module under a named folder (``adversarial``,
``reliability``, wherever it sits below ``tests/``) is parsed — never imported — and
listed with the first paragraph of its docstring and its test functions, each with the
first line of its docstring when it has one, its name made readable when it has not.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TestModule", "negative_tests", "test_modules"]


@dataclass(frozen=True)
class TestModule:
    """One test file: where it is, what its docstring says, and its tests."""

    __test__ = False  # not a pytest class, though its name says Test

    path: str
    summary: str
    tests: tuple[tuple[str, str], ...]  # (function name, what it checks)


_CITATION = re.compile(r"\s*\((?:[^()]*\b(?:issue|section|seed)\b[^()]*)\)", re.IGNORECASE)
_ISSUE = re.compile(r"\bissue \d+'s\s+(\w)", re.IGNORECASE)
_SEED = re.compile(r"\b(?:the seed's|seed's|seed)\s+(?=\w)", re.IGNORECASE)


def _scrub(text: str) -> str:
    """Text a reader can use: citations of a project's issues or of its design notes, which
    do not ship, are dropped (``(issue 20, item 7)``, ``(section 15.2)``, ``Issue 19's``),
    and reStructuredText's double backquotes become markdown's single ones."""
    text = _CITATION.sub("", text)
    text = _ISSUE.sub(lambda m: "The " + m.group(1), text)  # "Issue 19's kill harness"
    text = _SEED.sub(lambda m: "the " if m.group(0)[:1] in "Tt" else "", text)
    return text.replace("``", "`")


def _first_paragraph(text: str | None) -> str:
    if not text:
        return ""
    return _scrub(" ".join(text.strip().split("\n\n")[0].split()))


def _first_sentence(text: str) -> str:
    paragraph = _first_paragraph(text)
    head, dot, _ = paragraph.partition(". ")
    return head + "." if dot else paragraph


def _readable(name: str) -> str:
    words = name.removeprefix("test_").replace("_", " ")
    return words[:1].upper() + words[1:] + "."


def _tests(tree: ast.Module) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for node in tree.body:
        functions = (
            [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test")
            else [node]
        )
        for fn in functions:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.name.startswith(
                "test"
            ):
                doc = ast.get_docstring(fn)
                what = _first_sentence(doc) if doc else _scrub(_readable(fn.name))
                found.append((fn.name, what))
    return found


def test_modules(root: Path, folder: str) -> list[TestModule]:
    """The test modules in every ``folder`` below ``root / "tests"``, by path."""
    modules = []
    for path in sorted((root / "tests").rglob(f"{folder}/test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        modules.append(
            TestModule(
                path=path.relative_to(root).as_posix(),
                summary=_first_paragraph(ast.get_docstring(tree)),
                tests=tuple(_tests(tree)),
            )
        )
    return modules


def negative_tests(root: Path, folder: str) -> str:
    """Markdown: one section per module, its summary, then its tests as a list."""
    modules = test_modules(root, folder)
    if not modules:
        raise FileNotFoundError(f"no test modules in any {folder}/ folder below tests/")
    lines: list[str] = []
    for module in modules:
        lines += [f"#### `{module.path}`", ""]
        if module.summary:
            lines += [module.summary, ""]
        lines += [f"- {what} (`{name}`)" for name, what in module.tests]
        lines.append("")
    return "\n".join(lines)
