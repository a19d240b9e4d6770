"""What an evaluation runs: the config refuses unknown names, lists its cells in report
order, and the quick config covers every task class."""

from __future__ import annotations

import pytest

from execgraph.eval.ablations import ABLATIONS, BASELINE
from execgraph.eval.config import EvalConfig, quick_config, select_tasks
from execgraph.state.errors import UsageError
from tests.eval.helpers import FAULTS, FIRST, SUITE


def test_config_refuses_unknown_names_and_resolves_classes() -> None:
    with pytest.raises(UsageError, match="unknown architecture nope"):
        EvalConfig(architectures=("nope",))
    with pytest.raises(UsageError, match="unknown ablation"):
        EvalConfig(ablations=("no_gate",))
    with pytest.raises(UsageError, match="unknown fault"):
        EvalConfig(faults=("meteor",))
    with pytest.raises(UsageError, match="seeds"):
        EvalConfig(seeds=0)
    with pytest.raises(UsageError, match="noise"):
        EvalConfig(noise=1.5)
    with pytest.raises(UsageError, match="unknown task or task class"):
        select_tasks(["no-such-task"])
    klass = FIRST.task_class
    assert select_tasks([klass]) == tuple(t.id for t in SUITE if t.task_class == klass)
    assert select_tasks([FIRST.id, FIRST.id]) == (FIRST.id,)


def test_cells_cover_the_grid_and_faults_only_under_their_ablations() -> None:
    config = EvalConfig(seeds=2, ablations=tuple(ABLATIONS))
    cells = config.cells()
    clean = [c for c in cells if c.fault is None]
    assert len(clean) == len(SUITE) * len(config.architectures) * len(ABLATIONS) * 2
    faulted = [c for c in cells if c.fault is not None]
    assert faulted and {c.ablation for c in faulted} == {BASELINE}
    assert {c.fault for c in faulted} == {f for t in SUITE for f in t.faults}
    assert len({c.run_id for c in cells}) == len(cells)  # one run id per cell
    assert EvalConfig().seeds >= 5


def test_quick_config_covers_every_class_in_two_seeds() -> None:
    quick = quick_config()
    classes = {t.task_class for t in SUITE if t.id in quick.tasks}
    assert classes == {t.task_class for t in SUITE}
    assert quick.seeds == 2 and quick.ablations == tuple(ABLATIONS)
    assert set(quick.fault_names) <= set(FAULTS) and len(quick.fault_names) <= 3
    assert len(quick.tasks) == 9 and quick.fault_names  # 2 per class, 1 long task


def test_config_checks_the_world_and_the_person_and_hands_them_to_every_cell() -> None:
    with pytest.raises(UsageError, match="flaky"):
        EvalConfig(flaky=1.5)
    with pytest.raises(UsageError, match="unknown person"):
        EvalConfig(person="sleepy")
    with pytest.raises(UsageError, match="temperature applies"):
        EvalConfig(temperature=0.5)
    config = EvalConfig(tasks=(FIRST.id,), seeds=1, flaky=0.2, person="prompt", faults=False)
    assert {(c.flaky, c.person) for c in config.cells()} == {(0.2, "prompt")}
    described = EvalConfig(model="openai:x", temperature=0.1).described()
    assert described["temperature"] == 0.1 and described["flaky"] == 0.1
    assert described["person"] == "slow"
