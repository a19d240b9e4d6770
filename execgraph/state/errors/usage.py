"""Misuse: the developer declared or configured something execgraph cannot use.

These are raised while tools, policies, models, stores or graphs are declared, before any
call runs, and their messages say what to fix. Each is also a ``ValueError`` (or a
``TypeError``, where it replaces one), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from execgraph.state.errors.base import ExecGraphError, Phase

__all__ = [
    "CliError",
    "ModelConfigError",
    "PolicyRuleError",
    "ScriptedReplyError",
    "StoreConfigError",
    "ToolDeclarationError",
    "ToolTypeError",
    "UsageError",
]


class UsageError(ExecGraphError, ValueError):
    """The caller used execgraph wrongly: a bad declaration, configuration or argument.

    Raised at build or declaration time, before anything ran, and meant for the developer
    (its message says what to fix). It is no tool outcome; should one surface through a
    call after all, it reads as what it is: a validation failure a retry meets again.
    """

    phase = Phase.VALIDATE


class ToolDeclarationError(UsageError):
    """A tool cannot be declared as given: ``tool_spec``/``ToolSpec`` fields, an adapter's
    arguments (URLs, allow-lists, programs) or its declared statements."""


class ToolTypeError(ToolDeclarationError, TypeError):
    """An object of the wrong kind was declared as a tool (a ``*args`` function, an object
    that is no ToolSpec, LangChain tool or adapter)."""


class PolicyRuleError(UsageError):
    """A policy rule cannot be parsed (unknown decision or keys)."""


class ModelConfigError(UsageError):
    """The model argument cannot become a chat model; the message says how to fix it."""


class ScriptedReplyError(UsageError, TypeError):
    """A scripted model's reply is not an AI message (a test's script is wrong)."""


class StoreConfigError(UsageError):
    """An execution-store URL names no store execgraph can open durably."""


class CliError(UsageError):
    """A user-facing problem of the command line (bad input, unknown run): one line.

    ``code`` is the process exit code (2 unless said otherwise).
    """

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
