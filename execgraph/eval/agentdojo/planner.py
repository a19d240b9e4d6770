"""The honest planner's answer under the least-privilege contract.

The compromised model is compromised only by what it reads; the planner reads nothing
but the user's request, so it answers as a model that knows how to solve the task would:
the tools of the task's solution, and for each sensitive argument either the values the
request names or the call whose output the value is read from (the tool and the
arguments the request names for it, and whether the value is a structured field of that
output or inside its text). It finds those the way such a model reasons: it solves the
task on the environment *without* any injection and labels each value with
:mod:`execgraph.tools.provenance` — so it never learns an attacker's value.

A value it cannot attribute to the request or to one source (the model composes it, or
several tools say it) gets no planned constraint: the tool's default rule then applies.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from execgraph.eval.agentdojo.declarations import DECLARATIONS
from execgraph.eval.agentdojo.tools import TEXT_FIELDS, EnvHolder, to_data
from execgraph.tools.provenance import Observation, OutputProvenance, TrustedInputs
from execgraph.tools.provenance_labels import label_arguments

__all__ = ["plan_capabilities"]


def plan_capabilities(suite: Any, user: Any, clean_env: Any) -> dict[str, Any]:
    """The capabilities an honest planner submits for ``user``'s request."""
    from agentdojo.functions_runtime import FunctionsRuntime

    table = DECLARATIONS.get(suite.name, {})
    env = user.init_environment(clean_env)
    calls = user.ground_truth(env)
    holder = EnvHolder(FunctionsRuntime(suite.tools), env)
    trusted = TrustedInputs(texts={"request": str(user.PROMPT)})
    seen: list[Observation] = []
    values: dict[tuple[str, str], list[Any]] = defaultdict(list)
    sources: dict[tuple[str, str], set[tuple[str, str, str]]] = defaultdict(set)
    unplannable: set[tuple[str, str]] = set()
    for i, call in enumerate(calls):
        declared = table.get(call.function)
        sensitive = [a for a in (declared.sensitive if declared else ()) if a in call.args]
        labels = label_arguments(call.args, trusted, seen, only=sensitive)
        for name, label in labels.items():
            key = (call.function, name)
            for atom in label.atoms:
                if atom.label == "trusted":
                    values[key].append(atom.value)
                elif atom.label == "untrusted":
                    where = "field" if any(s.where == "field" for s in atom.sources) else "text"
                    for read in {s.call_id for s in atom.sources if s.where == where}:
                        sources[key].add((read, where, ""))
                else:
                    unplannable.add(key)
        try:
            data = to_data(holder.call(call.function, call.args))
        except Exception:  # a failing ground-truth call observes nothing
            data = None
        own = bool(declared and declared.own_data)
        seen.append(
            Observation(
                str(i),
                call.function,
                data,
                dict(call.args),
                OutputProvenance(trusted=own, text_fields=TEXT_FIELDS),
            )
        )
    arguments: list[dict[str, Any]] = []
    for key in sorted({*values, *sources} - unplannable):
        tool, argument = key
        if key not in sources:
            arguments.append({"tool": tool, "argument": argument, "values": values[key]})
            continue
        origins = [seen[int(origin)] for origin in sorted({o for o, _, _ in sources[key]})]
        wheres = {where for _, where, _ in sources[key]}
        if len({o.tool for o in origins}) != 1 or len(wheres) != 1:
            continue  # read from several tools: no single planned source
        source = origins[0]
        named = {
            k: v
            for k, v in source.arguments.items()
            if all(a.label == "trusted" for a in label_arguments({k: v}, trusted, [])[k].atoms)
        }
        common = {k: v for k, v in named.items() if all(o.arguments.get(k) == v for o in origins)}
        arguments.append(
            {
                "tool": tool,
                "argument": argument,
                "from_tool": source.tool,
                "from_arguments": common,
                "read_from": wheres.pop(),
            }
        )
    return {"tools": sorted({c.function for c in calls}), "arguments": arguments}
