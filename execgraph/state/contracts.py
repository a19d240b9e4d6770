"""Pydantic models at execgraph's trust boundaries.

Everything that crosses a boundary (user -> runtime, model -> runtime, runtime -> tool,
runtime -> person) is one of these frozen models. Inside, code passes them around as is or
as plain dicts in graph state (``model_dump(mode="json")``) so checkpoints stay portable.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.errors import ObservationStatus, Phase
from execgraph.state.waits import OnExpiry, WaitPolicy, WaitRule

__all__ = [
    "DEFAULT_MAX_ARGUMENT_BYTES",
    "Actor",
    "ApprovalDecision",
    "ApprovalRequest",
    "BudgetKind",
    "Decision",
    "DecisionKind",
    "Evidence",
    "ObservationStatus",
    "Outcome",
    "PartialProgress",
    "RecoveryRef",
    "RunStatus",
    "SideEffect",
    "StopCondition",
    "SuccessCheck",
    "TaskContract",
    "TaskSpec",
    "Timing",
    "ToolError",
    "ToolExecutionRequest",
    "ToolRef",
    "ToolResult",
    "Workspace",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RunStatus(StrEnum):
    """Where a run stands. Only the verifier may set COMPLETED.

    * ``RUNNING``: under way. ``WAITING``: paused for a person (an approval, a question);
      neither is an end.
    * ``COMPLETED``: the verifier accepted the answer: every success check holds; for a
      task without checks, the model answered and every action it asked for (a call of
      a tool that is not a read) succeeded.
    * ``PARTIAL``: ended with some of what was needed, named in the verification and
      ``open_items``: a task without checks whose answer came after an action that never
      succeeded while another call did; a fixed workflow that passed some of its checks.
    * ``FAILED``: ended without the goal: aborted, refused at admission, stopped by the
      loop guard or a stop condition, an unusable model reply, or a task without checks
      with an action that never succeeded and no call that did.
    * ``BUDGET_EXHAUSTED``: a budget or the deadline ran out (the confirmed partial result
      and the open items are reported). ``CANCELLED``: cancelled on request.
    """

    RUNNING = "RUNNING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    WAITING = "WAITING"
    PARTIAL = "PARTIAL"

    @property
    def terminal(self) -> bool:
        """True for statuses a run never leaves (WAITING and RUNNING may move on)."""
        return self not in (RunStatus.RUNNING, RunStatus.WAITING)


class BudgetKind(StrEnum):
    """Budgets are counted per kind, never as one 'step' number."""

    MODEL_CALLS = "model_calls"
    TOOL_CALLS = "tool_calls"
    TOKENS_IN = "tokens_in"
    TOKENS_OUT = "tokens_out"
    WALL_TIME_S = "wall_time_s"
    COST_USD = "cost_usd"


class Outcome(StrEnum):
    """What happened to the world, as far as the runtime can prove."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    PARTIAL = "partial"
    UNKNOWN = "unknown"
    CANCELLED = "cancelled"


class DecisionKind(StrEnum):
    """What a model may propose. Every kind is a candidate, not an act."""

    TOOL_CALL = "tool_call"
    ANSWER = "answer"
    ASK_USER = "ask_user"
    REQUEST_APPROVAL = "request_approval"
    REVISE_PLAN = "revise_plan"
    WAIT = "wait"
    FINISH = "finish"
    ABORT = "abort"


# --------------------------------------------------------------------------- task

DEFAULT_MAX_ARGUMENT_BYTES = 1 << 20
"""The default bound on one call's arguments: 1 MiB of their normalized (canonical) JSON.
A call beyond it is refused before anything stores it (every turn would otherwise copy it
into the log and the checkpoints several times)."""


class Actor(_Frozen):
    """Who a run acts for."""

    user_id: str = "local-user"
    agent_id: str = "execgraph"


class Workspace(_Frozen):
    """The directory every file path of a run is confined to."""

    id: str = "default"
    root: str


class SuccessCheck(_Frozen):
    """One acceptance check, decided on evidence only.

    Built-in kinds: ``tool_succeeded`` (a call of tool ``target`` succeeded), ``evidence``
    (evidence of kind ``target`` exists; ``value="verified"`` demands read-after-write),
    ``min_evidence`` (at least ``count`` evidence items, of kind
    ``target`` if given, verified ones if ``value="verified"``), ``file_contains``
    (workspace file ``target`` holds ``value``), ``output_contains`` (the final output
    holds ``value``). ``build_graph(checks=...)`` adds kinds; admission rejects a kind
    nobody registered.
    """

    kind: str = Field(min_length=1)
    target: str | None = None
    value: str | None = None
    count: int | None = Field(default=None, ge=1)
    """How many items a counting check needs (``min_evidence``; None: one)."""
    description: str = ""


class StopCondition(_Frozen):
    """When a run must stop though it is not done; the stop controller checks it every turn.

    Goal, success checks and stop conditions are separate fields: a stop condition
    never makes a run COMPLETED, it ends it ``FAILED`` with its reason. Kinds:

    * ``tool_failed``: calls of tool ``target`` (of any tool when ``target`` is None)
      failed ``count`` times in the run (its whole record, not state's window).
    * ``unknown_outcome``: ``count`` calls ended ``unknown`` (a write whose response was
      lost): stop and let a person reconcile rather than act on a world in doubt.
    * ``denied``: a call was refused by the policy or a person (status ``DENIED``): a
      refusal is not to be worked around by another tool or another argument.
    """

    kind: Literal["tool_failed", "unknown_outcome", "denied"]
    target: str | None = None
    count: int = Field(default=1, ge=1)


class TaskSpec(_Frozen):
    """What a user asks for. Admission turns it into a :class:`TaskContract`."""

    goal: str = Field(min_length=1)
    deliverables: list[str] = Field(default_factory=list)
    allowed_actions: list[str] | None = None
    success_checks: list[SuccessCheck] = Field(default_factory=list)
    stop_conditions: list[StopCondition] = Field(default_factory=list)
    budgets: dict[BudgetKind, float] = Field(default_factory=dict)
    deadline_s: float | None = Field(default=None, gt=0)
    approval_rules: list[dict[str, Any]] = Field(default_factory=list)
    data_scope: list[str] = Field(default_factory=list)
    actor: Actor = Field(default_factory=Actor)
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200)
    """The logical request's stable identity: a task submitted again under
    a new run id with the same key reuses the writes the first submission committed —
    within one key, a write of one tool with the same normalized arguments happens once."""
    max_argument_bytes: int = Field(default=DEFAULT_MAX_ARGUMENT_BYTES, gt=0)
    """The most bytes of normalized JSON one call's arguments may take; a larger call is
    refused (``ArgumentsTooLarge``), reported to the model, and never stored."""
    release_ref: str | None = Field(default=None, min_length=1, max_length=200)
    """The release of the agent and its tools this task is meant for (``build_graph(...,
    release_ref=...)``); a graph of another release refuses it (``ReleaseMismatch``)."""
    required_slots: dict[str, str] = Field(default_factory=dict, max_length=10)
    """Facts the task cannot run without, each with the question that asks for it. A slot
    not in ``slots`` is asked of the user at admission, before any model or tool call."""
    slots: dict[str, str] = Field(default_factory=dict, max_length=10)
    """Values of ``required_slots`` already known."""
    waits: WaitPolicy = Field(default_factory=WaitPolicy)
    """How long the run waits for a person or an event, and what expiry does
    (:mod:`execgraph.state.waits`)."""


class TaskContract(_Frozen):
    """An admitted task: the fixed frame a run works inside."""

    run_id: str
    actor: Actor
    goal: str
    deliverables: list[str]
    allowed_actions: list[str]
    success_checks: list[SuccessCheck]
    stop_conditions: list[StopCondition]
    budgets: dict[BudgetKind, float]
    deadline: float | None
    approval_rules: list[dict[str, Any]]
    data_scope: list[str]
    workspace: Workspace
    idempotency_key: str | None = None
    max_argument_bytes: int = DEFAULT_MAX_ARGUMENT_BYTES
    release_ref: str | None = None
    """The release the run is bound to: a resume under another is refused."""
    slots: dict[str, str] = Field(default_factory=dict)
    """The task's required slots, filled (given, or answered at admission)."""
    waits: WaitPolicy = Field(default_factory=WaitPolicy)


# --------------------------------------------------------------------------- decisions


class Decision(_Frozen):
    """One parsed model proposal."""

    decision_id: str
    kind: DecisionKind
    tool_name: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None
    tool_call_id: str | None = None
    content: str = ""
    reason_code: str = ""


# --------------------------------------------------------------------------- execution


class ToolRef(_Frozen):
    """The tool a request names; ``requested_version`` None means the newest enabled."""

    name: str
    requested_version: str | None = None


class ToolExecutionRequest(_Frozen):
    """A normalized candidate action, bound to run, actor, workspace and deadline.

    ``expected_state`` holds compare-and-swap conditions checked at validate (key: a state
    name or a target's name, value: what ``read_state`` must still report). The run graphs
    fill it for a write from what the run observed of its targets (``nodes/expected_state.py``).
    """

    run_id: str
    turn_id: str
    call_id: str
    tool: ToolRef
    arguments: dict[str, Any] = Field(default_factory=dict)
    actor: Actor = Field(default_factory=Actor)
    workspace: Workspace
    deadline: float | None = None
    cancellation_token: str = ""
    """A second name that cancels this one call besides its ``call_id``
    (:func:`~execgraph.nodes.cancel.request_call_cancel`): several calls may share one."""
    idempotency_key: str | None = None
    task_key: str | None = None
    approval_token: str | None = None
    expected_state: dict[str, str] = Field(default_factory=dict)
    data_scope: list[str] = Field(default_factory=list)
    allowed_actions: list[str] | None = None
    approval_rules: list[dict[str, Any]] = Field(default_factory=list)
    step_id: str | None = None
    decision_id: str | None = None
    retry_allowance: int | None = Field(default=None, ge=0)
    """How many retries this call may spend of the run's tool-call budget (None: no limit)."""
    tool_call_id: str | None = None
    """The id the model gave this call in its reply (None for a call no model asked for,
    such as a plan step): the call's ``ToolMessage`` answers it."""
    max_argument_bytes: int = Field(default=DEFAULT_MAX_ARGUMENT_BYTES, gt=0)
    """The bound validate holds ``arguments`` to (the run's, from its task)."""
    wait: WaitRule | None = None
    """How long a person's approval of this call may take, and what its expiry does (the
    contract's rule for the tool; None: the executor's default TTL, then rejected)."""
    approval_asked: str | None = None
    """Why the model asked that a person approve this call first (``request_approval``):
    the executor asks even where the policy would allow it (None: the policy decides)."""


class ToolError(_Frozen):
    """A typed failure; ``message`` is always written by execgraph."""

    type: str
    phase: Phase
    retryable: bool = False
    message: str
    retry_after_s: float | None = None


class SideEffect(_Frozen):
    """Whether the world was touched. ``committed`` None means nobody can tell yet."""

    attempted: bool = False
    committed: bool | None = False
    summary: str = ""


class Evidence(_Frozen):
    """What a tool observed about the world, keyed by ``source_id`` (newer version wins).

    An observation is not the fact: ``verified`` is True only where the
    runtime checked it (a read-after-write, a hash it computed itself). Its text fields
    (``source_id``, ``kind``, ``value``, ``ref``) are a tool's words, so the model sees
    evidence only as untrusted tool output, never in a system message.
    """

    source_id: str
    kind: str
    value: str = ""
    ref: str | None = None
    version: int = 1
    call_id: str | None = None
    verified: bool = False
    observed_at: float = 0.0


class Timing(_Frozen):
    """Milliseconds spent waiting for a lock and in the adapter."""

    queued_ms: int = 0
    running_ms: int = 0


class RecoveryRef(_Frozen):
    """How a person or the runtime finishes or undoes a write that stopped midway.

    A multi-item write commits item by item (a file, a batch of rows in its own
    transaction), so a failure midway leaves a known prefix durable. This names it as data:
    ``ref`` is a stable handle (the files' recovery manifest in the workspace journal, or
    ``database:<adapter>:<tool>:<call_id>``), ``finish`` and ``undo`` say what to do, and
    ``backups`` maps each overwritten item to the copy of what it held before (``""``: the
    item did not exist, so undoing it means removing it).
    """

    kind: Literal["files", "database"]
    ref: str
    finish: str
    undo: str
    backups: dict[str, str] = Field(default_factory=dict)


class PartialProgress(_Frozen):
    """For a partial outcome: which items are done, which are not, and how to recover.

    ``stopped_by`` is the typed error that stopped the write (``"PermanentError: ..."``,
    the runtime's own words); ``recovery_ref`` says how to finish or undo (None when the
    tool cannot tell).
    """

    committed: list[str] = Field(default_factory=list)
    pending: list[str] = Field(default_factory=list)
    stopped_by: str | None = None
    recovery_ref: RecoveryRef | None = None


class ToolResult(_Frozen):
    """The normalized result of one call; the only thing a model ever observes of a tool."""

    call_id: str
    tool_name: str
    tool_version: str = ""
    outcome: Outcome
    status: ObservationStatus
    data: Any = None
    error: ToolError | None = None
    side_effect: SideEffect = Field(default_factory=SideEffect)
    evidence: list[Evidence] = Field(default_factory=list)
    timing: Timing = Field(default_factory=Timing)
    truncated: bool = False
    partial: PartialProgress | None = None
    idempotency_key: str | None = None
    attempt_id: str | None = None
    attempts: int = Field(default=1, ge=1)
    reconciled: bool = False
    tool_call_id: str | None = None
    """The model's id for the call (``ToolExecutionRequest.tool_call_id``)."""
    artifact: Any = None
    """What the tool returned for the application alone (a LangChain tool's
    ``content_and_artifact`` artifact), as JSON data; the model never reads it."""


# --------------------------------------------------------------------------- approval


class ApprovalRequest(_Frozen):
    """The interrupt payload: exactly what a person is asked to approve.

    ``target_state`` is the current state of each target the tool can read (its
    ``read_state`` of ``ToolSpec.targets``: ``{"file:plan.txt": "<sha256>"}``), read when
    the person is asked; if it differs when they answer, they are asked again.

    ``provenance`` says where each argument's value came from, per argument: its label
    (``trusted``: the user's request said it; ``untrusted``: read from a tool's output;
    ``new``: the model made it up) and, per value, the calls it was read from, where in
    their output, and an excerpt around it (:mod:`execgraph.tools.provenance`).
    """

    kind: Literal["approval"] = "approval"
    run_id: str
    call_id: str
    tool: str
    version: str
    effect: str
    arguments: dict[str, Any]
    args_hash: str
    reason: str
    expires_at: float | None = None
    target_state: dict[str, str] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)
    asked_at: float | None = None
    """When the person was asked (the store's clock)."""
    on_expiry: OnExpiry = "reject"
    """What happens when ``expires_at`` passes unanswered (:mod:`execgraph.state.waits`)."""
    escalated_to: str | None = None
    """Set on a question asked again after an expiry: who it is now asked of."""


class ApprovalDecision(_Frozen):
    """The resume value for an approval interrupt."""

    action: Literal["approve", "reject", "edit"]
    arguments: dict[str, Any] | None = None
    reason: str = ""
    approver: str = "human"
