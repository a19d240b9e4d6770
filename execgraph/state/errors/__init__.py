"""One error tree for execgraph.

Every failure the runtime can name is a subclass of :class:`ExecGraphError`. Each carries
the pipeline ``phase`` it belongs to, whether a retry may help, and the observation status
the model will see. Messages are written by execgraph itself, never copied from a foreign
exception, so no secret or stack trace can reach a model or a user through them (a foreign
exception's text goes to the developer instead: the event log and the ``execgraph`` logger).
Only :class:`ModelRetry` carries a tool's own words: a message written *for* the model.
Its classes are defined by concept (:mod:`.base`: the root; :mod:`.refusals`: nothing
happened; :mod:`.acting`: executing, verifying, recording; :mod:`.usage`: the
developer's misuse) and read here as one tree::

    ExecGraphError
    ├── AdmissionError            task cannot become a contract (no model call spent)
    │   ├── ReleaseMismatch       the run is bound to another release than this graph's
    │   └── DependencyUnavailable a tool's declared dependency is not there
    ├── ModelOutputError          model output cannot be parsed into decisions
    ├── ResolutionError           phase=resolve: nothing happened
    │   ├── UnknownToolError
    │   ├── ToolDisabledError
    │   └── IncompatibleVersionError
    ├── ArgumentError             phase=validate: nothing happened
    │   ├── SchemaViolation       also a ValueError, so pydantic validators may raise it
    │   ├── DomainViolation
    │   ├── StateGuardMismatch    expected_state (compare-and-swap) does not hold
    │   ├── DeadlineExceeded
    │   └── ArgumentsTooLarge     more normalized JSON than the run's bound allows
    ├── PolicyError               phase=policy: nothing happened
    │   ├── PolicyDenied
    │   │   └── RefusalUpheld     what an earlier refusal stopped, by another way
    │   ├── ApprovalRejected
    │   ├── ApprovalStale         approved request no longer matches the world
    │   ├── ApprovalTokenInvalid  forged, expired or already used token
    │   ├── ApprovalConflict      another answer to the same approval was recorded first
    │   └── UnresolvedOutcome     an identical earlier write is still unknown
    ├── AdapterError              phase=execute
    │   ├── PathEscapeError       outside the workspace / data scope
    │   ├── TargetNotFound
    │   ├── TransientError        retryable (rate limit, busy)
    │   ├── PermanentError
    │   ├── ResponseLostError     effect may have happened: outcome unknown
    │   ├── ToolCancelled
    │   ├── WaitExpired           a tool's own question expired unanswered: not completed
    │   ├── ToolRaised            a tool raised something unnamed (text withheld)
    │   └── ModelRetry            a tool's message for the model: what to change (bounded)
    ├── ToolBug                   a tool's bug, raised to the developer, never the model
    ├── VerificationError         phase=verify: read-after-write does not hold
    ├── StoreError                phase=commit
    │   ├── LockTimeout
    │   ├── CallInProgress        another live worker runs this call
    │   ├── FencedOut             this worker's lease was taken over: its result is not kept
    │   └── RunInProgress         another live worker holds this run's lease
    └── UsageError                the caller used execgraph wrongly; nothing ran (a ValueError)
        ├── ToolDeclarationError  a bad tool_spec / ToolSpec / adapter declaration
        │   └── ToolTypeError     an object of the wrong kind declared as a tool (a TypeError)
        ├── PolicyRuleError       a policy rule that cannot be parsed
        ├── ModelConfigError      the model argument cannot become a chat model
        ├── ScriptedReplyError    a scripted reply that is no AI message (a TypeError)
        ├── StoreConfigError      an execution-store URL that names no usable store
        └── CliError              a bad command line, task file or run id (exit code 2)

The tool-failure branches describe what a *model* is told about one call. ``UsageError``
is for the *developer*: raised while tools, policies, models, stores or graphs are
declared, before any call runs. One that only a call reveals (a tool returning a
``Command`` that updates state, a tool taking a store the graph was not given) is a bug in
the tool: the model is told only its type, and ``invoke`` raises it, as any tool's bug
(:mod:`~execgraph.state.errors.tool_bugs`). Each of its classes is also a ``ValueError`` (or a
``TypeError``, where it replaces one), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from execgraph.state.errors.acting import (
    MODEL_RETRY_CHARS,
    AdapterError,
    CallInProgress,
    FencedOut,
    LockTimeout,
    ModelRetry,
    PathEscapeError,
    PermanentError,
    ResponseLostError,
    RunInProgress,
    StoreError,
    TargetNotFound,
    ToolCancelled,
    ToolRaised,
    TransientError,
    VerificationError,
    WaitExpired,
)
from execgraph.state.errors.admission import DependencyUnavailable, ReleaseMismatch
from execgraph.state.errors.base import ExecGraphError, ObservationStatus, Phase
from execgraph.state.errors.refusals import (
    AdmissionError,
    ApprovalConflict,
    ApprovalRejected,
    ApprovalStale,
    ApprovalTokenInvalid,
    ArgumentError,
    ArgumentsTooLarge,
    DeadlineExceeded,
    DomainViolation,
    IncompatibleVersionError,
    ModelOutputError,
    PolicyDenied,
    PolicyError,
    RefusalUpheld,
    ResolutionError,
    SchemaViolation,
    StateGuardMismatch,
    ToolDisabledError,
    UnknownToolError,
    UnresolvedOutcome,
)
from execgraph.state.errors.tool_bugs import ToolBug
from execgraph.state.errors.usage import (
    CliError,
    ModelConfigError,
    PolicyRuleError,
    ScriptedReplyError,
    StoreConfigError,
    ToolDeclarationError,
    ToolTypeError,
    UsageError,
)

__all__ = [
    "MODEL_RETRY_CHARS",
    "AdapterError",
    "AdmissionError",
    "ApprovalConflict",
    "ApprovalRejected",
    "ApprovalStale",
    "ApprovalTokenInvalid",
    "ArgumentError",
    "ArgumentsTooLarge",
    "CallInProgress",
    "CliError",
    "DeadlineExceeded",
    "DependencyUnavailable",
    "DomainViolation",
    "ExecGraphError",
    "FencedOut",
    "IncompatibleVersionError",
    "LockTimeout",
    "ModelConfigError",
    "ModelOutputError",
    "ModelRetry",
    "ObservationStatus",
    "PathEscapeError",
    "PermanentError",
    "Phase",
    "PolicyDenied",
    "PolicyError",
    "PolicyRuleError",
    "RefusalUpheld",
    "ReleaseMismatch",
    "ResolutionError",
    "ResponseLostError",
    "RunInProgress",
    "SchemaViolation",
    "ScriptedReplyError",
    "StateGuardMismatch",
    "StoreConfigError",
    "StoreError",
    "TargetNotFound",
    "ToolBug",
    "ToolCancelled",
    "ToolDeclarationError",
    "ToolDisabledError",
    "ToolRaised",
    "ToolTypeError",
    "TransientError",
    "UnknownToolError",
    "UnresolvedOutcome",
    "UsageError",
    "VerificationError",
    "WaitExpired",
]

# Every error reports this package as its module, whichever file defines it: tracebacks,
# logged type names (``execgraph.state.errors.ModelRetry``) and pickles name one place.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
