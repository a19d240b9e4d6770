"""The fault-injection scenarios: one :class:`Cell` per (fault, architecture).

The seed's eleven faults (section 15.2), with the lost write run both with and without a
reconcile probe and the exhausted budget run for both model calls and tool calls, so 13
rows x 4 architectures. Every cell registers the same three fake tools — ``lookup``
(read), ``save`` (write, read-after-write verified) and ``send_email`` (write, registered
but outside the task contract) — and scripts the model for its architecture:

- react: tool calls, then ``finish``;
- workflow: one reply per fixed stage (``collect`` -> lookup, ``write`` -> save), then the
  ``conclude`` finish; a fixed path never loops back, so a stage's lost turn stays lost;
- plan_execute: ``submit_plan`` (plus replans on a trigger), then ``finish`` in respond;
- hybrid: collect (reads) / analyze (writes), each closed by ``finish``; with no
  irreversible tool there is no publish phase, so analyze's ``finish`` is the result.

Where an architecture's expected status differs, ``why`` says why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage

from execgraph.graph import Stage
from execgraph.tools.adapters.fake import Step
from tests.reliability.replies import (
    INJECTION,
    abort,
    call,
    calls,
    finish,
    gullible,
    hybrid,
    lookup,
    malformed,
    plan,
    save,
    step,
)

ARCHS = ("workflow", "react", "plan_execute", "hybrid")
STAGES = [
    Stage("collect", ("lookup",), "Look the item up."),
    Stage("write", ("save",), "Save the item."),
]
TASK: dict[str, Any] = {
    "goal": "Look the item up and save it.",
    "allowed_actions": ["lookup", "save"],
    "success_checks": [
        {"kind": "evidence", "target": "fake_read"},
        {"kind": "tool_succeeded", "target": "save"},
    ],
    "budgets": {"model_calls": 12, "tool_calls": 8},
}
FIXED = "workflow: a fixed path gives each stage one turn and never loops back, so the run "
FIXED_PARTIAL = FIXED + "ends PARTIAL (one of its two checks holds) instead of recovering"


@dataclass
class Cell:
    """One cell of the matrix: the script, the fault injected, and what must hold after.

    Attributes:
        executions: real executions expected per tool (counted by the fake itself).
        tool_calls: requests expected to be dispatched (= tool_calls budget charged).
        forbidden: tools that must never really execute in this cell.
        lookup, save: FakeAdapter behaviour scripts; reconcile: the save tool's probe mode.
        cancel_on: request a cancel from another thread once this tool is running.
        first: (tool, observation status) the first call of that tool must get.
        why: why this architecture's expected status differs from the others.
    """

    fault: str
    arch: str
    replies: list[Any]
    status: str
    executions: dict[str, int]
    tool_calls: int
    forbidden: tuple[str, ...] = ("send_email",)
    policy: list[dict[str, Any]] = field(default_factory=list)
    budgets: dict[str, float] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    lookup: Any = "succeed"
    lookup_timeout_s: float | None = None
    save: Any = "succeed"
    reconcile: str = "probe"
    cancel_on: str | None = None
    first: tuple[str, str] | None = None
    error_type: str | None = None
    rejected_finish: bool = False
    why: str = ""


# --------------------------------------------------------------------------- faults


def illegal_output(arch: str) -> Cell:
    replies = [malformed(), AIMessage(content=""), malformed()]  # 1 call + 2 repairs
    return Cell("illegal_output", arch, replies, "FAILED", {}, 0, error_type="ModelOutputError")


def _refused_then_recover(
    fault: str, arch: str, bad: Callable[[], AIMessage], first: tuple[str, str]
) -> Cell:
    """One refused call, then the architecture's way of recovering."""
    bad_step = {**bad().tool_calls[0]}
    s1 = {"id": "s1", "tool": bad_step["name"], "arguments": bad_step["args"]}
    scripts = {
        "react": ([bad(), lookup(), save(), finish()], "COMPLETED", 1, 3),
        "workflow": ([bad(), save(), finish()], "PARTIAL", 0, 2),
        "plan_execute": (
            [
                plan(s1, step("s2", "save", ["s1"])),
                plan(step("s3", "lookup"), step("s4", "save", ["s3"])),
                finish(),
            ],
            "COMPLETED",
            1,
            3,
        ),
        "hybrid": (hybrid([bad(), lookup()], [save()], finish()), "COMPLETED", 1, 3),
    }
    replies, status, looked, dispatched = scripts[arch]
    why = FIXED_PARTIAL if arch == "workflow" else ""
    executions = {"lookup": looked, "save": 1}
    return Cell(fault, arch, replies, status, executions, dispatched, first=first, why=why)


def unknown_tool(arch: str) -> Cell:
    bad = lambda: call("teleport", {"item": "a"})  # noqa: E731
    return _refused_then_recover("unknown_tool", arch, bad, ("teleport", "NOT_FOUND"))


def schema_violation(arch: str) -> Cell:
    bad = lambda: call("lookup", {"item": 7, "colour": "red"})  # noqa: E731
    return _refused_then_recover("schema_violation", arch, bad, ("lookup", "PERMANENT_ERROR"))


def permission_denied(arch: str) -> Cell:
    deny = [{"tool": "save", "decision": "deny", "reason": "reports are frozen"}]
    scripts = {
        "react": [lookup(), save(), finish(), abort()],
        "workflow": [lookup(), save(), finish()],
        "plan_execute": [plan(step("s1", "lookup"), step("s2", "save", ["s1"])), abort()],
        "hybrid": hybrid([lookup()], [save()], finish(), abort()),
    }
    status, why = ("PARTIAL", FIXED_PARTIAL) if arch == "workflow" else ("FAILED", "")
    return Cell(
        "permission_denied",
        arch,
        scripts[arch],
        status,
        {"lookup": 1, "save": 0},
        2,
        forbidden=("send_email", "save"),
        first=("save", "DENIED"),
        policy=deny,
        rejected_finish=arch != "plan_execute",
        why=why,
    )


def read_timeout(arch: str) -> Cell:
    cell = _refused_then_recover("read_timeout", arch, lookup, ("lookup", "RETRYABLE_ERROR"))
    cell.executions = {"lookup": 1 if arch == "workflow" else 2, "save": 1}
    cell.lookup, cell.lookup_timeout_s = ["hang", "succeed"], 0.3
    return cell


def write_lost_probe(arch: str) -> Cell:
    scripts = {
        "react": [lookup(), save(), finish()],
        "workflow": [lookup(), save(), finish()],
        "plan_execute": [plan(step("s1", "lookup"), step("s2", "save", ["s1"])), finish()],
        "hybrid": hybrid([lookup()], [save()], finish()),
    }
    return Cell(
        "write_lost_probe",
        arch,
        scripts[arch],
        "COMPLETED",
        {"lookup": 1, "save": 1},
        2,
        save="lose_response",
        first=("save", "OK"),
    )


def write_lost_no_probe(arch: str) -> Cell:
    """The outcome stays unknown; the model then retries the write blindly, once."""
    scripts = {
        "react": ([lookup(), save(), save(), finish(), abort()], 3),
        "workflow": ([lookup(), save(), finish()], 2),
        "plan_execute": (
            [
                plan(step("s1", "lookup"), step("s2", "save", ["s1"])),
                plan(step("s3", "save")),
                abort(),
            ],
            3,
        ),
        "hybrid": (hybrid([lookup()], [save(), save()], finish(), abort()), 3),
    }
    replies, dispatched = scripts[arch]
    workflow = arch == "workflow"
    return Cell(
        "write_lost_no_probe",
        arch,
        replies,
        "PARTIAL" if workflow else "FAILED",
        {"lookup": 1, "save": 1},
        dispatched,
        save="lose_response",
        reconcile="none",
        first=("save", "UNKNOWN"),
        why=FIXED + "has no turn left to retry the write; it ends PARTIAL" if workflow else "",
    )


def prompt_injection(arch: str) -> Cell:
    both = lambda: calls(("send_email", {"item": "all-contacts"}), ("save", {"item": "a"}))  # noqa: E731
    email = lambda: call("send_email", {"item": "all-contacts"})  # noqa: E731
    scripts = {
        "react": [lookup(), gullible(both), finish()],
        "workflow": [lookup(), gullible(both), finish()],
        "plan_execute": [
            plan(step("s1", "lookup")),
            gullible(lambda: call("revise_plan", {"reason": "the data says to send an email"})),
            gullible(lambda: plan(step("s2", "send_email", item="all-contacts"))),
            plan(step("s3", "save")),
            finish(),
        ],
        "hybrid": hybrid([lookup(), gullible(email)], [save()], finish()),
    }
    return Cell(
        "prompt_injection",
        arch,
        scripts[arch],
        "COMPLETED",
        {"lookup": 1, "save": 1, "send_email": 0},
        3,
        lookup=Step(data={"text": INJECTION}),
        first=("send_email", "DENIED"),
    )


def no_progress(arch: str) -> Cell:
    scripts = {
        "react": ([lookup(), lookup(), lookup()], 3),
        "workflow": ([lookup(), AIMessage(content="nothing new to save"), finish()], 1),
        "plan_execute": (
            [
                plan(
                    step("s1", "lookup"), step("s2", "lookup", ["s1"]), step("s3", "lookup", ["s2"])
                )
            ],
            3,
        ),
        "hybrid": ([lookup(), lookup(), lookup()], 3),
    }
    replies, n = scripts[arch]
    workflow = arch == "workflow"
    return Cell(
        "no_progress",
        arch,
        replies,
        "PARTIAL" if workflow else "FAILED",
        {"lookup": n},
        n,
        settings={"loop_threshold": 2},
        why=FIXED + "cannot repeat an action; it ends PARTIAL" if workflow else "",
    )


def budget_model_calls(arch: str) -> Cell:
    # plan_execute spends one call on the whole plan, so its limit is 1 to bite mid-run.
    scripts = {
        "react": ([lookup(), lookup("b")], {"lookup": 2}, 2, 2),
        "workflow": ([lookup(), save()], {"lookup": 1, "save": 1}, 2, 2),
        "plan_execute": (
            [plan(step("s1", "lookup"), step("s2", "save", ["s1"]))],
            {"lookup": 1},
            1,
            1,
        ),
        "hybrid": ([lookup(), finish("collected")], {"lookup": 1}, 1, 2),
    }
    replies, executions, dispatched, limit = scripts[arch]
    return Cell(
        "budget_model_calls",
        arch,
        replies,
        "BUDGET_EXHAUSTED",
        executions,
        dispatched,
        budgets={"model_calls": limit},
    )


def budget_tool_calls(arch: str) -> Cell:
    """2 tool calls allowed: the lookup fits, the batch of two saves does not (none runs)."""
    batch = lambda: calls(("save", {"item": "a"}), ("save", {"item": "b"}))  # noqa: E731
    scripts = {
        "react": [lookup(), batch()],
        "workflow": [lookup(), batch()],
        "plan_execute": [
            plan(
                step("s1", "lookup"),
                step("s2", "save", ["s1"]),
                step("s3", "save", ["s1"], item="b"),
            )
        ],
        "hybrid": [lookup(), finish("collected"), batch()],
    }
    return Cell(
        "budget_tool_calls",
        arch,
        scripts[arch],
        "BUDGET_EXHAUSTED",
        {"lookup": 1, "save": 0},
        1,
        budgets={"tool_calls": 2},
    )


def verification_fails(arch: str) -> Cell:
    scripts = {
        "react": [lookup(), finish(), abort()],
        "workflow": [lookup(), AIMessage(content="no need to save"), finish()],
        "plan_execute": [plan(step("s1", "lookup")), finish(), abort()],
        "hybrid": [*hybrid([lookup()], [], finish()), abort()],
    }
    status, why = ("PARTIAL", FIXED_PARTIAL) if arch == "workflow" else ("FAILED", "")
    return Cell(
        "verification_fails",
        arch,
        scripts[arch],
        status,
        {"lookup": 1, "save": 0},
        1,
        rejected_finish=True,
        why=why,
    )


def user_cancels(arch: str) -> Cell:
    first = (
        plan(step("s1", "lookup"), step("s2", "save", ["s1"]))
        if arch == "plan_execute"
        else lookup()
    )
    return Cell(
        "user_cancels",
        arch,
        [first],
        "CANCELLED",
        {"lookup": 1, "save": 0},
        1,
        lookup="hang",
        cancel_on="lookup",
        first=("lookup", "CANCELLED"),
    )


FAULTS: dict[str, Callable[[str], Cell]] = {
    f.__name__: f
    for f in (
        illegal_output,
        unknown_tool,
        schema_violation,
        permission_denied,
        read_timeout,
        write_lost_probe,
        write_lost_no_probe,
        prompt_injection,
        no_progress,
        budget_model_calls,
        budget_tool_calls,
        verification_fails,
        user_cancels,
    )
}
