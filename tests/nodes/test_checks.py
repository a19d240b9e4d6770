"""The built-in success checks, alone: what each accepts and the reason it gives when not."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from execgraph.nodes.checks import BUILTIN_CHECKS, check_min_evidence
from execgraph.state.contracts import Actor, SuccessCheck, TaskContract, Workspace


def _contract() -> TaskContract:
    return TaskContract(
        run_id="r",
        actor=Actor(),
        goal="g",
        deliverables=[],
        allowed_actions=[],
        success_checks=[],
        stop_conditions=[],
        budgets={},
        deadline=None,
        approval_rules=[],
        data_scope=[],
        workspace=Workspace(root="/tmp"),
    )


def _view(*items: tuple[str, str, bool]) -> dict[str, Any]:
    return {
        "evidence": {
            source: {"source_id": source, "kind": kind, "value": "v", "verified": verified}
            for source, kind, verified in items
        }
    }


SEARCH = ("search:1f2e", "observation", False)
READ = ("read:paper-a", "observation", False)
DOC = ("doc:paper-a", "document", True)


def test_min_evidence_is_a_builtin_check() -> None:
    assert BUILTIN_CHECKS["min_evidence"] is check_min_evidence


def test_min_evidence_counts_items() -> None:
    two = SuccessCheck(kind="min_evidence", count=2)
    assert check_min_evidence(two, _view(SEARCH, READ), _contract()) is None
    assert check_min_evidence(two, _view(SEARCH), _contract()) == (
        "only 1 of 2 evidence item(s) so far"
    )
    one = SuccessCheck(kind="min_evidence")  # no count: one item
    assert check_min_evidence(one, _view(SEARCH), _contract()) is None
    assert check_min_evidence(one, _view(), _contract()) == "only 0 of 1 evidence item(s) so far"


def test_min_evidence_may_ask_for_verified_items_or_one_kind() -> None:
    verified = SuccessCheck(kind="min_evidence", count=1, value="verified")
    assert check_min_evidence(verified, _view(SEARCH, READ), _contract()) == (
        "only 0 of 1 verified evidence item(s) so far"
    )  # an observation is not the fact
    assert check_min_evidence(verified, _view(SEARCH, DOC), _contract()) is None
    docs = SuccessCheck(kind="min_evidence", count=2, target="document")
    assert check_min_evidence(docs, _view(SEARCH, READ, DOC), _contract()) == (
        "only 1 of 2 evidence item(s) of kind document so far"
    )


def test_a_count_below_one_is_refused() -> None:
    with pytest.raises(ValidationError):
        SuccessCheck(kind="min_evidence", count=0)
