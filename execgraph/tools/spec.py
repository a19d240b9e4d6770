"""ToolSpec: everything the executor must know about a tool before it may act.

A tool is a name, an exact version, an input model, an effect class (``read``, ``write``
or ``irreversible``), the resource locks it needs, and optional hooks: ``verify``
(read-after-write evidence), ``reconcile`` (a probe that tells whether an interrupted or
unknown call took effect) and ``read_state`` (current values for ``expected_state``
compare-and-swap checks, for the ``targets`` the tool names). :func:`tool_spec` builds one
from a plain function.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, SecretBytes, SecretStr, create_model

from execgraph.state.contracts import Evidence
from execgraph.state.errors import ToolDeclarationError, ToolTypeError
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.provenance import OutputProvenance
from execgraph.tools.requirements import Requirement
from execgraph.tools.retry import DEFAULT_READ_RETRY, RetryPolicy
from execgraph.tools.runners import Runner, function_runner, isolated_runner

__all__ = [
    "DEFAULT_MAX_RESULT_BYTES",
    "EFFECT_RANK",
    "CallEffect",
    "Effect",
    "Isolation",
    "ReadState",
    "Reconcile",
    "Runner",
    "ToolSpec",
    "Verify",
    "tool_spec",
]

Effect = Literal["read", "write", "irreversible"]
Isolation = Literal["thread", "process"]
Verify = Callable[[BaseModel, AdapterOutput, InvokeContext], list[Evidence]]
Reconcile = Callable[[BaseModel, InvokeContext], AdapterOutput | None]
ReadState = Callable[[str, BaseModel, Path], str | None]
CallEffect = Callable[[Mapping[str, Any]], Effect]
"""``(normalized arguments) -> effect`` of one call (see ``ToolSpec.call_effect``)."""

#: Effects from the mildest to the most severe.
EFFECT_RANK: dict[str, int] = {"read": 0, "write": 1, "irreversible": 2}

_EFFECTS = ("read", "write", "irreversible")

DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024
"""The most of one result (its JSON text) a store keeps: 8 MiB (``ToolSpec.max_result_bytes``)."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class ToolSpec:
    """A versioned, typed, effect-classified tool.

    Attributes:
        name: Registry name the model calls.
        version: Exact semantic version (``"1.2.0"``); approvals bind to it.
        description: What the model is told the tool does.
        input_model: Pydantic model the arguments must satisfy (extra keys are refused).
        effect: ``read``, ``write`` or ``irreversible``; drives the default policy.
        run: ``(args, ctx) -> AdapterOutput``; raises typed errors from ``execgraph.state.errors``.
        locks: Lock-key templates formatted with the normalized arguments (``file:{path}``).
        path_args: Argument names holding workspace paths (normalized and confined).
        aliases: Accepted alternative argument names -> canonical names.
        verify: Read-after-write probe returning evidence.
        reconcile: Probe for an interrupted or unknown call; None from it means "cannot tell".
        read_state: Current value for an ``expected_state`` key, for compare-and-swap: a
            state name (``sha256``) or one of the call's ``targets``; None if it cannot tell.
        targets: Templates formatted with the normalized arguments (as ``locks`` are) that
            name what the tool acts on, spelled as the ``source_id`` of the evidence that
            observes it (``file:{path}``). With ``read_state`` answering those names, an
            approval shows their state and is asked again if it changes, and a write
            carries what the run observed of them as its ``expected_state``.
        timeout_s: Default deadline for one call when the request gives none.
        cost_usd: What one call costs in USD (a paid API), charged to the run's
            ``cost_usd`` budget when the call runs; a refused call costs nothing.
        idempotent: A write that hands the call's ``ctx.idempotency_key`` to the far side,
            so doing it twice acts once: it may then be retried like a read.
        retry: How retryable failures are tried again (:mod:`execgraph.tools.retry`).
            ``"default"``: a small backoff for a read or an idempotent write, none for any
            other write; None: never retried.
        disabled: A disabled tool resolves to an error.
        deprecated: Still resolvable; flagged in resolution events.
        origin: Who offers the tool: ``"application"`` (declared in this process), or
            ``"mcp:<server>"``. A name belongs to one origin: a graph refuses two tools
            of one name from different origins, so a server cannot shadow a tool.
        sensitive_args: Arguments whose value decides where an effect goes or what it
            destroys (a recipient, an account, a URL, an id to delete, a password). By
            default a policy refuses such a value when it was read only from a tool's
            output text (:mod:`execgraph.tools.policy`, :mod:`execgraph.tools.provenance`).
        call_effect: The effect of one call, from its normalized arguments, when it
            depends on them (a calendar event with participants shares data: it is
            ``irreversible`` while one without is a ``write``). It can only raise the
            declared ``effect``, never lower it (:meth:`effect_of`).
        output_provenance: What the tool's output is, for provenance: the user's own data
            (trusted), or which of its fields hold free text (every string, if undeclared).
        max_result_bytes: The most of one result (its JSON text, in bytes) the execution
            store keeps. A larger result is stored cut at this bound, with its full size
            and SHA-256, and marked truncated: a tool cannot fill the disk with one answer.
        open_world: The tool reaches systems outside the application (the web, a
            third-party API, other people's inboxes): what its arguments say leaves. The
            policy treats every call of it as egress (:mod:`execgraph.tools.policy`): a
            write asks a person by default, and a read's arguments are checked as an
            irreversible call's are (the user's secrets, text copied from a tool's output).
        secret_args: Arguments whose value is a secret (an API key, a password): the
            tool receives the real value, but the event log, the execution store and the
            checkpoints keep ``"[redacted]"`` in its place. An argument typed
            ``SecretStr``/``SecretBytes`` in the input model is secret without being named.
        requires: What the tool needs from the world (a database that answers, a server,
            a binary: :mod:`execgraph.tools.requirements`), checked when a run that may
            use the tool is admitted; a need not met refuses the task there.
        return_direct: The tool's output is the answer (LangChain's ``return_direct``): in
            a ReAct run, a turn whose calls are all of such tools and all succeeded ends
            the run with their output, without asking the model again
            (:mod:`execgraph.nodes.direct_answer`).
    """

    name: str
    version: str
    description: str
    input_model: type[BaseModel]
    effect: Effect
    run: Runner
    locks: tuple[str, ...] = ()
    path_args: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    verify: Verify | None = None
    reconcile: Reconcile | None = None
    read_state: ReadState | None = None
    targets: tuple[str, ...] = ()
    timeout_s: float | None = None
    cost_usd: float = 0.0
    idempotent: bool = False
    retry: RetryPolicy | Literal["default"] | None = "default"
    disabled: bool = False
    deprecated: bool = False
    origin: str = "application"
    sensitive_args: tuple[str, ...] = ()
    call_effect: CallEffect | None = field(default=None, compare=False, hash=False)
    output_provenance: OutputProvenance = field(default_factory=OutputProvenance)
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    secret_args: tuple[str, ...] = ()
    open_world: bool = False
    requires: tuple[Requirement, ...] = field(default=(), compare=False, hash=False)
    return_direct: bool = False

    def __post_init__(self) -> None:
        redo_safe = self.effect == "read" or self.idempotent
        if self.retry == "default":
            object.__setattr__(self, "retry", DEFAULT_READ_RETRY if redo_safe else None)
        elif self.retry is not None and not redo_safe:
            raise ToolDeclarationError(
                f"tool {self.name!r}: a {self.effect} is retried only when doing it twice "
                "acts once: declare idempotent=True (and pass ctx.idempotency_key on) or "
                "drop retry"
            )
        if self.effect not in _EFFECTS:
            raise ToolDeclarationError(f"effect must be one of {_EFFECTS}, got {self.effect!r}")
        if not _NAME.fullmatch(self.name):
            raise ToolDeclarationError(
                f"tool name {self.name!r} is not usable: use ASCII letters, digits, '_' and "
                "'-', at most 64, starting with a letter or '_' (what model providers accept; "
                "a lookalike letter from another script cannot pass for a tool's name)"
            )
        unknown = [a for a in self.sensitive_args if a not in self.input_model.model_fields]
        if unknown:
            raise ToolDeclarationError(
                f"tool {self.name!r}: sensitive_args {unknown} are not arguments of the tool"
            )
        if not (isinstance(self.cost_usd, int | float) and 0 <= self.cost_usd < math.inf):
            raise ToolDeclarationError(f"cost_usd must be a number >= 0, got {self.cost_usd!r}")
        if not (isinstance(self.max_result_bytes, int) and self.max_result_bytes > 0):
            raise ToolDeclarationError(
                f"max_result_bytes must be an int > 0, got {self.max_result_bytes!r}"
            )
        if not isinstance(self.open_world, bool):
            raise ToolDeclarationError(
                f"tool {self.name!r}: open_world must be True or False, got {self.open_world!r}"
            )
        unknown = [a for a in self.secret_args if a not in self.input_model.model_fields]
        if unknown:
            raise ToolDeclarationError(
                f"tool {self.name!r}: secret_args {unknown} are not arguments of the tool"
            )

    @property
    def secrets(self) -> frozenset[str]:
        """The arguments redacted at rest: ``secret_args`` and every ``SecretStr`` or
        ``SecretBytes`` field of the input model."""
        return self.secret_args_of(self.input_model, self.secret_args)

    @staticmethod
    @functools.cache
    def secret_args_of(model: type[BaseModel], named: tuple[str, ...]) -> frozenset[str]:
        """``named`` and the fields of ``model`` typed as a pydantic secret (cached: the
        executor asks for every call)."""
        typed = {n for n, f in model.model_fields.items() if _is_secret_type(f.annotation)}
        return frozenset(named) | typed

    def effect_of(self, arguments: Mapping[str, Any]) -> Effect:
        """This call's effect: the declared one, raised by ``call_effect`` if it says so."""
        if self.call_effect is None:
            return self.effect
        said = self.call_effect(arguments)
        if said not in _EFFECTS:
            raise ToolDeclarationError(
                f"tool {self.name!r}: call_effect returned {said!r}, not one of {_EFFECTS}"
            )
        return said if EFFECT_RANK[said] > EFFECT_RANK[self.effect] else self.effect

    @property
    def key(self) -> str:
        """``name@version``: the exact identity approvals and records bind to."""
        return f"{self.name}@{self.version}"

    def with_(self, **changes: Any) -> ToolSpec:
        """A copy with some fields changed (a new version, a disabled flag)."""
        return replace(self, **changes)

    def json_schema(self) -> dict[str, Any]:
        """OpenAI-style function schema, for ``bind_tools``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": copy.deepcopy(_parameters(self.input_model)),
            },
        }


def _is_secret_type(annotation: Any) -> bool:
    """Whether ``annotation`` is ``SecretStr``/``SecretBytes``, or holds one (``| None``)."""
    if annotation in (SecretStr, SecretBytes):
        return True
    return any(_is_secret_type(a) for a in getattr(annotation, "__args__", ()))


@functools.cache
def _parameters(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema, built once: every turn offers the same tools again."""
    return model.model_json_schema()


def _input_model(func: Callable[..., Any], name: str) -> tuple[type[BaseModel], str | None]:
    """Build a strict pydantic model from ``func``'s signature.

    Returns the model and the name of the parameter that receives the InvokeContext
    (``ctx``, or any parameter typed ``InvokeContext``), which the model never sees.

    Raises:
        ToolTypeError: the function takes ``*args`` or ``**kwargs`` (no schema can describe
            them).
    """
    hints = get_type_hints(func)
    fields: dict[str, Any] = {}
    ctx_param: str | None = None
    for param in inspect.signature(func).parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise ToolTypeError(f"tool {name!r}: *args/**kwargs cannot be offered to a model")
        if param.name == "ctx" or hints.get(param.name) is InvokeContext:
            ctx_param = param.name
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (annotation, default)
    model = create_model(
        f"{name}_input",
        __config__=ConfigDict(extra="forbid", frozen=True),
        **fields,
    )
    return model, ctx_param


def tool_spec(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    version: str = "1.0.0",
    effect: Effect = "read",
    locks: list[str] | tuple[str, ...] = (),
    description: str | None = None,
    path_args: list[str] | tuple[str, ...] = (),
    aliases: Mapping[str, str] | None = None,
    verify: Verify | None = None,
    reconcile: Reconcile | None = None,
    read_state: ReadState | None = None,
    targets: list[str] | tuple[str, ...] = (),
    timeout_s: float | None = None,
    cost_usd: float = 0.0,
    isolation: Isolation = "thread",
    idempotent: bool = False,
    retry: RetryPolicy | Literal["default"] | None = "default",
    sensitive_args: list[str] | tuple[str, ...] = (),
    call_effect: CallEffect | None = None,
    output_provenance: OutputProvenance | None = None,
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
    secret_args: list[str] | tuple[str, ...] = (),
    open_world: bool = False,
    requires: list[Requirement] | tuple[Requirement, ...] = (),
    return_direct: bool = False,
) -> Any:
    """Declare a plain function as a tool; usable bare or with arguments.

    Example:
        >>> @tool_spec(effect="write", version="1.0.0", locks=["file:{path}"])
        ... def write_note(path: str, text: str) -> str:
        ...     "Write a note."
        ...     return "ok"
        >>> write_note.key
        'write_note@1.0.0'

    A parameter named ``ctx`` (or typed ``InvokeContext``) receives the call's context and
    is hidden from the model.

    ``isolation="process"`` runs each call in a child process that a deadline or a cancel
    kills (process group), for a tool that may hang or ignore its cancel signal; the
    default, ``"thread"``, runs it on the executor's worker pool, where a tool that
    ignores the signal runs on, holding its locks, until it ends
    (:mod:`execgraph.tools.isolation`).
    """

    if isolation not in ("thread", "process"):
        raise ToolDeclarationError(f"isolation must be 'thread' or 'process', got {isolation!r}")
    runner = isolated_runner if isolation == "process" else function_runner

    def build(fn: Callable[..., Any]) -> ToolSpec:
        tool_name = name or fn.__name__
        model, ctx_param = _input_model(fn, tool_name)
        return ToolSpec(
            name=tool_name,
            version=version,
            description=(description or inspect.getdoc(fn) or tool_name).strip(),
            input_model=model,
            effect=effect,
            run=runner(fn, effect, ctx_param),
            locks=tuple(locks),
            path_args=tuple(path_args),
            aliases=dict(aliases or {}),
            verify=verify,
            reconcile=reconcile,
            read_state=read_state,
            targets=tuple(targets),
            timeout_s=timeout_s,
            cost_usd=cost_usd,
            idempotent=idempotent,
            retry=retry,
            sensitive_args=tuple(sensitive_args),
            call_effect=call_effect,
            output_provenance=output_provenance or OutputProvenance(),
            max_result_bytes=max_result_bytes,
            secret_args=tuple(secret_args),
            open_world=open_world,
            requires=tuple(requires),
            return_direct=return_direct,
        )

    return build(func) if func is not None else build
