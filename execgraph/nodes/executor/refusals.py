"""A refusal sticks: a later call may not do by another way what the run was refused.

A model that is refused ``send_email`` can send the same message with ``send_sms``, to
the same person with another tool, or the same file through another writer. The policy
judges each call alone, so each of those would pass; this module holds them to the
earlier refusal. The rule, deterministic and read from the run's event log:

- **Which refusals stick.** A call a policy rule or default denied (``tool.denied`` with
  ``sticks``), and a call a person rejected (``approval.resolved`` ``reject``) — if the
  refused call acts (a ``write`` or ``irreversible`` effect). A refusal written for the
  model to correct the call (an argument rule's ``refuse``), a tool not offered at this
  step, and a hold itself do not.
- **Which calls are held.** A later call that acts, and either
  (a) *the same target*: its effect class is at least the refused call's
  (``write`` < ``irreversible``) and one of its argument values is, or mentions, one of
  the refused call's targets — its path arguments, its sensitive arguments, and the
  addresses, URL hosts and account numbers written in its arguments (a value that is the
  whole name of something a tool's output lists — an existing channel, picked by its
  name — goes to that thing, whatever its name mentions); or
  (b) *the refused content*: the refused call was ``irreversible`` (it would have left
  the workspace: a message, a payment, a post) and a string argument of one call holds a
  string argument of the other of at least :data:`PAYLOAD_MIN_CHARS` characters (as
  :class:`~execgraph.tools.value_match.Text` matches: up to case and space).

A call held to a policy's denial is refused (:class:`~execgraph.state.errors.RefusalUpheld`,
observed as ``DENIED``). A call held to a person's rejection goes back to a person, told
which call they rejected: it never runs on a rule's allow alone, and a person who said
"not now" or "text it instead" can still say yes. Reads are never held, so the run goes on
with other work.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from execgraph.state.contracts import ToolExecutionRequest
from execgraph.state.errors import ExecGraphError, RefusalUpheld
from execgraph.state.events import Event, EventType
from execgraph.state.store.base import ExecutionStore
from execgraph.tools.paths import normalize_relpath
from execgraph.tools.policy import PolicyDecision
from execgraph.tools.provenance import ArgumentProvenance
from execgraph.tools.registry import ToolRegistry
from execgraph.tools.spec import EFFECT_RANK, ToolSpec
from execgraph.tools.value_match import Text, atoms_of, links_in, same_value

__all__ = ["PAYLOAD_MIN_CHARS", "Refusal", "held_by", "may_ask_again", "run_refusals", "uphold"]

PAYLOAD_MIN_CHARS = 24
"""The shortest string argument that counts as refused content: a sentence's worth, not a
name, a subject or a greeting."""

_SOURCES = (EventType.TOOL_DENIED, EventType.APPROVAL_RESOLVED)


@dataclass(frozen=True)
class Refusal:
    """One call of the run that was refused, as later calls are compared with it."""

    call_id: str
    tool: str
    effect: str
    by: str  # "policy" or "a person"
    targets: tuple[str, ...]
    payloads: tuple[str, ...]


def run_refusals(store: ExecutionStore, registry: ToolRegistry, run_id: str) -> list[Refusal]:
    """The refusals of the run that stick, oldest first (none read: one small query)."""
    refused: dict[str, str] = {}
    for event in store.events(run_id, types=_SOURCES):
        if not event.call_id:
            continue
        if event.type == EventType.TOOL_DENIED and event.payload.get("sticks"):
            refused.setdefault(event.call_id, "policy")
        elif event.type == EventType.APPROVAL_RESOLVED and event.payload.get("action") == "reject":
            refused.setdefault(event.call_id, "a person")
    if not refused:
        return []
    found = []
    for call_id, by in refused.items():
        asked = store.events(run_id, call_id=call_id, types=[EventType.TOOL_REQUESTED])
        requested = _requested(asked)
        if requested is None:
            continue
        tool, arguments = requested
        refusal = _refusal(registry, call_id, tool, arguments, by)
        if refusal is not None:
            found.append(refusal)
    return found


def _requested(events: Sequence[Event]) -> tuple[str, dict[str, Any]] | None:
    """The tool and arguments of a call's last request (a person's edit is a new round)."""
    if not events:
        return None
    payload = events[-1].payload
    return str(payload.get("tool", "")), dict(payload.get("arguments") or {})


def _refusal(
    registry: ToolRegistry, call_id: str, tool: str, arguments: dict[str, Any], by: str
) -> Refusal | None:
    try:
        spec = registry.resolve(tool)
        effect = spec.effect_of(arguments)
    except ExecGraphError:  # no longer offered: nothing to compare a call of it with
        return None
    if effect == "read":
        return None
    args = {spec.aliases.get(k, k): v for k, v in arguments.items()}
    strings = [a for a in atoms_of(args) if isinstance(a, str)]
    targets = [_path(args[n]) for n in spec.path_args if isinstance(args.get(n), str)]
    targets += [str(a) for n in spec.sensitive_args for a in atoms_of(args.get(n))]
    targets += [_host(link) for s in strings for link in links_in(s)]
    payloads = [s for s in strings if len(s.strip()) >= PAYLOAD_MIN_CHARS]
    return Refusal(
        call_id,
        spec.name,
        effect,
        by,
        tuple(dict.fromkeys(t for t in targets if t.strip())),
        tuple(payloads) if effect == "irreversible" else (),
    )


def _path(raw: str) -> str:
    try:
        return normalize_relpath(raw)
    except ExecGraphError:
        return raw


def _host(link: str) -> str:
    """A URL's host (a call to the same site is the same target); other links whole."""
    if "/" not in link:
        return link  # an address or an account number
    url = link if "://" in link else f"//{link}"
    return urlsplit(url).hostname or link


def held_by(
    refusals: Iterable[Refusal],
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    call_id: str,
    names: Callable[[], Collection[str]] | None = None,
) -> tuple[Refusal, str] | None:
    """The first refusal ``arguments`` for ``spec`` would work around, and how.

    ``names`` gives (when asked: only a mention needs it) the argument values that are
    the whole name of something a tool's output lists; a mention inside one of those
    does not count.
    """
    effect = spec.effect_of(arguments)
    if effect == "read":
        return None
    atoms = atoms_of(dict(arguments))
    texts = [Text(a) for a in atoms if isinstance(a, str)]
    listed: Collection[str] | None = None
    for refusal in refusals:
        if refusal.call_id == call_id:
            continue
        if EFFECT_RANK[effect] >= EFFECT_RANK[refusal.effect]:
            for target in refusal.targets:
                if any(same_value(a, target) for a in atoms):
                    return refusal, f"it goes to {target!r} too"
                mentioned = [t for t in texts if t.contains(target)]
                if mentioned and names is not None:
                    listed = names() if listed is None else listed
                    mentioned = [t for t in mentioned if t.raw not in listed]
                if mentioned:
                    return refusal, f"it goes to {target!r} too"
        for payload in refusal.payloads:
            if any(_overlap(t, payload) for t in texts):
                return refusal, "it carries the same content"
    return None


def _overlap(text: Text, payload: str) -> bool:
    """Whether one string holds the other, both of refused-content length."""
    if len(text.raw.strip()) < PAYLOAD_MIN_CHARS:
        return False
    return text.contains(payload) or Text(payload).contains(text.raw)


def uphold(
    store: ExecutionStore,
    registry: ToolRegistry,
    request: ToolExecutionRequest,
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    provenance: Callable[[], Mapping[str, ArgumentProvenance]] | None = None,
) -> PolicyDecision | None:
    """Hold a call that would work around an earlier refusal of the run.

    ``provenance`` labels the call's arguments (computed only when a target is merely
    mentioned): a value that is the whole name of a listed thing is not a mention.

    Returns None when nothing holds it, or — when what it would work around is a person's
    rejection — a ``require_approval`` decision: the person is asked again, told which
    call they rejected (a "not now" may have become a yes, and a person who said "text
    it instead" can approve the text).

    Raises:
        RefusalUpheld: it would work around a policy's denial (see the module
            docstring); the message says which call was refused and what to do instead.
    """
    if spec.effect_of(arguments) == "read":
        return None
    names = None if provenance is None else (lambda: _listed_names(provenance()))
    held = held_by(
        run_refusals(store, registry, request.run_id), spec, arguments, request.call_id, names
    )
    if held is None:
        return None
    refusal, how = held
    if refusal.by == "a person":
        reason = (
            f"a person rejected {refusal.tool} #{refusal.call_id} earlier in this run, and "
            f"this {spec.name} call would do the same another way: {how}"
        )
        return PolicyDecision("require_approval", reason, f"refusal:{refusal.call_id}")
    raise RefusalUpheld(
        f"{refusal.tool} #{refusal.call_id} was refused earlier in this run (by the "
        f"policy) and this {spec.name} call would do the same another way: {how}. Do not "
        "try to achieve that effect by another tool or other arguments; tell the user it "
        "was refused, or go on with other work"
    )


def _listed_names(provenance: Mapping[str, ArgumentProvenance]) -> set[str]:
    """The argument values read whole as a name a tool's output lists (a field)."""
    return {
        atom.value
        for given in provenance.values()
        for atom in given.atoms
        if isinstance(atom.value, str) and any(s.where == "field" for s in atom.sources)
    }


def may_ask_again(store: ExecutionStore, run_id: str, spec: ToolSpec) -> bool:
    """Whether a call of ``spec`` could be held to a person's rejection in this run (a
    safe over-estimate, from the tool alone: it may act, and a person rejected a call of
    the run) — so a caller that skips the dry run of calls no rule could pause does not
    skip this one."""
    if spec.effect == "read" and spec.call_effect is None:
        return False
    answers = store.events(run_id, types=[EventType.APPROVAL_RESOLVED])
    return any(e.payload.get("action") == "reject" for e in answers)
