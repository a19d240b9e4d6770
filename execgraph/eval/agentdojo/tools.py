"""AgentDojo's environment functions as execgraph tools (and as LangChain tools).

Each AgentDojo ``Function`` becomes a :class:`~execgraph.tools.spec.ToolSpec` whose input
model is the function's own parameters, whose effect, sensitive arguments and effect by
call come from :mod:`execgraph.eval.agentdojo.declarations`, and whose run calls the
function through AgentDojo's ``FunctionsRuntime`` on the pair's environment, so the
benchmark's checkers see exactly what the tools did. The output is the function's result
as JSON-like data (what provenance reads field by field); an error the function raises is
the tool's message for the model, as AgentDojo shows it.

Free text in the outputs: every AgentDojo model's string fields that hold prose (a body,
a description, a content, a review, a subject) are declared text; the rest (ids,
addresses, names in lists, dates) are fields. Plain-string outputs (a file, a web page)
are text whole.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from execgraph.eval.agentdojo.declarations import DECLARATIONS, Declared
from execgraph.state.errors import ModelRetry
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.provenance import OutputProvenance
from execgraph.tools.spec import Effect, ToolSpec

if TYPE_CHECKING:
    from agentdojo.functions_runtime import Function, FunctionsRuntime

__all__ = ["TEXT_FIELDS", "EnvHolder", "langchain_tools", "to_data", "tool_specs"]

TEXT_FIELDS = (
    "body",
    "content",
    "description",
    "subject",
    "title",
    "reviews",
    "review",
    "message",
    "text",
    "notes",
    "note",
)
"""Output keys whose strings are prose a third party may have written."""


class EnvHolder:
    """The environment the tools act on; one per benchmark pair, swapped between runs."""

    def __init__(self, runtime: FunctionsRuntime, env: Any = None) -> None:
        self.runtime = runtime
        self.env = env

    def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Run AgentDojo's function ``name``; its error is the model's to read."""
        result, error = self.runtime.run_function(self.env, name, dict(arguments))
        if error is not None:
            raise ModelRetry(error)
        return result


def to_data(result: Any) -> Any:
    """A function's result as JSON-like data (models dumped, lists walked)."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, list | tuple):
        return [to_data(item) for item in result]
    if isinstance(result, dict):
        return {str(k): to_data(v) for k, v in result.items()}
    if isinstance(result, str | int | float | bool) or result is None:
        return result
    return str(result)


def _strict(model: type[BaseModel]) -> type[BaseModel]:
    """The function's parameters, refusing unknown keys (as every execgraph tool does)."""
    config = ConfigDict(extra="forbid", frozen=True)
    return type(model.__name__, (model,), {"model_config": config, "__module__": __name__})


def _call_effect(declared: Declared) -> Callable[[Mapping[str, Any]], Effect] | None:
    if not declared.shares:
        return None
    shares = declared.shares

    def effect(arguments: Mapping[str, Any]) -> Effect:
        return "irreversible" if any(arguments.get(a) for a in shares) else "write"

    return effect


def _spec(function: Function, declared: Declared, holder: EnvHolder, provenance: bool) -> ToolSpec:
    name = function.name
    committed = declared.effect != "read"

    def run(args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        data = to_data(holder.call(name, args.model_dump()))
        return AdapterOutput(data=data, committed=committed)

    output = OutputProvenance(
        trusted=declared.own_data, text_fields=TEXT_FIELDS, secret_fields=declared.secrets
    )
    return ToolSpec(
        name=name,
        version="1.0.0",
        description=function.description,
        input_model=_strict(function.parameters),
        effect=declared.effect,  # type: ignore[arg-type]
        run=run,
        retry=None,
        sensitive_args=declared.sensitive if provenance else (),
        call_effect=_call_effect(declared) if provenance else None,
        output_provenance=output,
    )


def tool_specs(
    suite_name: str, functions: list[Function], holder: EnvHolder, *, provenance: bool = True
) -> list[ToolSpec]:
    """Every function of a suite as a ToolSpec acting on ``holder``'s environment.

    A function the declaration table does not name is irreversible (an undeclared tool is
    never treated as a read). ``provenance=False`` leaves out what only provenance
    policies read (sensitive arguments, the effect by call): the tools as declared before
    those mechanisms, for the baseline configurations.
    """
    table = DECLARATIONS.get(suite_name, {})
    return [
        _spec(f, table.get(f.name, Declared("irreversible")), holder, provenance) for f in functions
    ]


def langchain_tools(functions: list[Function], holder: EnvHolder) -> list[Any]:
    """The same functions as LangChain tools (for ``create_agent``), output as AgentDojo
    shows a model: YAML, whole."""
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from langchain_core.tools import StructuredTool, ToolException

    def make(function: Function) -> Any:
        def run(**kwargs: Any) -> str:
            try:
                return tool_result_to_str(holder.call(function.name, kwargs))
            except ModelRetry as exc:
                raise ToolException(str(exc)) from None

        return StructuredTool.from_function(
            func=run,
            name=function.name,
            description=function.description,
            args_schema=function.parameters,
            handle_tool_error=True,
        )

    return [make(f) for f in functions]
