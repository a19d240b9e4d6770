"""Hostile paths: symlinked policy bypass, a directory/symlink race, hard links, FIFOs, paging.

Each test builds the hostile world for real (symlinks, a thread renaming entries in a
tight loop, ``os.link``, ``os.mkfifo``) and drives the real FileAdapter, alone or through
the executor, asserting on the filesystem afterwards: nothing outside the workspace is
written or read, and every refusal is a typed error, never a raw ``OSError`` or a hang.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.contracts import ToolResult
from execgraph.state.errors import ExecGraphError, PathEscapeError, PermanentError
from execgraph.tools import PolicyEngine
from execgraph.tools.adapters import FileAdapter
from execgraph.tools.invocation import InvokeContext
from execgraph.tools.paths import confine_path
from tests.support.executor import config, make_deps, make_executor, request
from tests.support.hostile_fs import bounded_call, release_fifo, swapping
from tests.tools.adapters.file_helpers import call, ctx_for

SECRET = "outside secret\n"


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace and, next to it, an outside directory holding a secret."""
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    return ws, outside


def outside_untouched(outside: Path, names: tuple[str, ...] = ("secret.txt",)) -> bool:
    found = sorted(p.name for p in outside.iterdir())
    return found == sorted(names) and (outside / "secret.txt").read_text() == SECRET


def result_of(out: dict[str, Any], call_id: str) -> ToolResult:
    return ToolResult.model_validate(out["results"][call_id])


# ------------------------------------------------------------------ item 3: policy, scope


@pytest.fixture
def linked(world: tuple[Path, Path]) -> Path:
    """``public/assets -> ../private``: a link that stays inside the workspace."""
    ws, _ = world
    (ws / "public").mkdir()
    (ws / "private").mkdir()
    (ws / "private" / "keys.txt").write_text("key material\n")
    os.symlink("../private", ws / "public" / "assets")
    return ws


@pytest.mark.parametrize(
    ("rules", "scope"),
    [
        pytest.param([{"tool": "*", "path": "private/*", "decision": "deny"}], [], id="deny-rule"),
        pytest.param([], ["public/*"], id="data-scope"),
    ],
)
def test_policy_and_scope_match_where_a_symlinked_write_lands(
    linked: Path, tmp_path: Path, rules: list[dict[str, Any]], scope: list[str]
) -> None:
    deps = make_deps(tmp_path, [FileAdapter(linked)], policy=PolicyEngine(rules))
    app = make_executor(deps)
    args = {"path": "public/assets/keys.txt", "content": "overwritten"}
    out = app.invoke(
        {"request": request("write_file", args, root=linked, data_scope=scope)}, config()
    )
    result = result_of(out, "call-1")
    assert result.outcome == "failed" and result.error is not None
    assert result.error.type == "PolicyDenied", result.error
    assert (linked / "private" / "keys.txt").read_text() == "key material\n"
    # The same write to a real public path is still allowed by both.
    ok = {"path": "public/notes.txt", "content": "fine"}
    out = app.invoke(
        {"request": request("write_file", ok, root=linked, call_id="c2", data_scope=scope)},
        config("t-2"),
    )
    assert result_of(out, "c2").outcome == "succeeded"


def test_a_link_made_after_the_policy_decision_cannot_carry_a_write_out_of_scope(
    world: tuple[Path, Path],
) -> None:
    """The adapter re-checks the data scope where the write lands at the moment it lands."""
    ws, _ = world
    (ws / "public").mkdir()
    (ws / "private").mkdir()
    (ws / "private" / "keys.txt").write_text("key material\n")
    os.symlink("../private", ws / "public" / "assets")  # made after policy said yes
    ctx = ctx_for(ws, data_scope=("public/*",))
    with pytest.raises(PathEscapeError):
        call(FileAdapter(ws), "write_file", ctx, path="public/assets/keys.txt", content="x")
    assert (ws / "private" / "keys.txt").read_text() == "key material\n"
    call(FileAdapter(ws), "write_file", ctx, path="public/notes.txt", content="fine")


# ------------------------------------------------------------------ item 4: the race


@pytest.mark.timeout(120)
def test_directory_symlink_race_never_writes_or_reads_outside(world: tuple[Path, Path]) -> None:
    ws, outside = world
    (ws / "d").mkdir()
    (ws / "d" / "secret.txt").write_text("inside\n")
    (outside / "marker.txt").write_text("only outside")
    adapter, ctx = FileAdapter(ws), ctx_for(ws)
    raw: list[BaseException] = []
    read_back: set[str] = set()
    listed: set[str] = set()
    with swapping(ws, "d", outside) as swapper:
        for i in range(400):
            for name, kw in (
                ("write_file", {"path": "d/written.txt", "content": f"write {i}"}),
                ("write_file", {"path": "d/deep/new.txt", "content": f"deep {i}"}),
                ("read_file", {"path": "d/secret.txt"}),
                ("patch_file", {"path": "d/secret.txt", "old": "inside", "new": "inside"}),
                ("list_files", {"pattern": "d/*"}),
            ):
                try:
                    out = call(adapter, name, ctx, **kw)
                except ExecGraphError:
                    continue
                except Exception as exc:  # a raw OS error is the bug
                    raw.append(exc)
                    continue
                if name == "read_file":
                    read_back.add(out.data["content"])
                if name == "list_files":
                    listed.update(out.data["files"])
        cycles = swapper.cycles
    assert cycles > 50, "the race did not really run"
    assert outside_untouched(outside, ("marker.txt", "secret.txt")), list(outside.iterdir())
    assert "d/marker.txt" not in listed, "list_files listed the outside directory"
    assert SECRET not in read_back and read_back <= {"inside\n"}
    assert raw == [], f"raw exceptions escaped: {raw[:3]!r}"
    strays = [p for p in ws.rglob("*") if p.name.endswith(".tmp")]
    assert strays == [], strays


@pytest.mark.timeout(120)
def test_symlink_race_through_the_executor_gives_typed_results(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    """Validate's confinement meets the race too: a raw OSError there crashed the invoke."""
    ws, outside = world
    (ws / "d").mkdir()
    (ws / "d" / "secret.txt").write_text("inside\n")
    app = make_executor(make_deps(tmp_path, [FileAdapter(ws)]))
    crashes: list[BaseException] = []
    contents: set[str] = set()
    with swapping(ws, "d", outside):
        for i in range(150):
            for tool, args in (
                ("write_file", {"path": "d/x.txt", "content": f"v{i}"}),
                ("read_file", {"path": "d/secret.txt"}),
            ):
                call_id = f"{tool}-{i}"
                try:
                    out = app.invoke(
                        {"request": request(tool, args, root=ws, call_id=call_id)},
                        config(call_id),
                    )
                except Exception as exc:  # the crash of the issue
                    crashes.append(exc)
                    continue
                result = result_of(out, call_id)
                assert result.error is None or result.error.type != "ToolRaised", result.error
                if tool == "read_file" and result.outcome == "succeeded":
                    assert isinstance(result.data, dict)
                    contents.add(result.data["content"])
    assert crashes == [], f"invoke crashed: {crashes[:3]!r}"
    assert contents <= {"inside\n"}
    assert outside_untouched(outside)


@pytest.mark.timeout(120)
def test_path_resolution_under_the_race_raises_only_typed_errors(
    world: tuple[Path, Path],
) -> None:
    """What validate calls: a raw OSError(EINVAL) from realpath crashed the whole invoke."""
    ws, outside = world
    (ws / "d").mkdir()
    real_root = Path(os.path.realpath(ws))
    raw: list[BaseException] = []
    landed: set[Path] = set()
    with swapping(ws, "d", outside):
        for _ in range(5000):
            try:
                landed.add(confine_path(ws, "d/x.txt"))
            except ExecGraphError:
                continue
            except Exception as exc:  # the crash of the issue
                raw.append(exc)
    assert raw == [], f"raw exceptions escaped: {raw[:3]!r}"
    assert all(real_root in p.parents for p in landed), landed


# ------------------------------------------------------------------ item 4: hard links


def test_hard_link_to_an_outside_file_is_refused(world: tuple[Path, Path]) -> None:
    ws, outside = world
    os.link(outside / "secret.txt", ws / "linked.txt")
    adapter, ctx = FileAdapter(ws), ctx_for(ws)
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("read_file", {"path": "linked.txt"}),
        ("write_file", {"path": "linked.txt", "content": "pwned"}),
        ("patch_file", {"path": "linked.txt", "old": "outside", "new": "pwned"}),
    ]
    for name, kw in attempts:
        with pytest.raises(PathEscapeError) as info:
            call(adapter, name, ctx, **kw)
        assert SECRET.strip() not in info.value.message
    assert outside_untouched(outside)
    assert os.stat(ws / "linked.txt").st_ino == os.stat(outside / "secret.txt").st_ino


# ------------------------------------------------------------------ item 7: FIFOs


@pytest.mark.timeout(60)
@pytest.mark.parametrize("tool", ["read_file", "write_file", "patch_file"])
def test_a_fifo_is_refused_at_once_not_waited_on(world: tuple[Path, Path], tool: str) -> None:
    ws, _ = world
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    adapter = FileAdapter(ws)
    ctx = ctx_for(ws)
    kw: dict[str, Any] = {"path": "pipe"}
    if tool == "write_file":
        kw["content"] = "x"
    if tool == "patch_file":
        kw.update(old="a", new="b")
    try:
        finished, outcome = bounded_call(lambda: call(adapter, tool, ctx, **kw), timeout_s=20)
    finally:
        release_fifo(fifo)
    assert finished, f"{tool} blocked on a FIFO"
    assert isinstance(outcome, PermanentError), outcome
    assert "regular file" in outcome.message
    assert fifo.is_fifo()  # never replaced or written through


@pytest.mark.timeout(60)
def test_a_fifo_read_through_the_executor_ends_within_its_deadline(
    world: tuple[Path, Path], tmp_path: Path
) -> None:
    ws, _ = world
    fifo = ws / "pipe"
    os.mkfifo(fifo)
    app = make_executor(make_deps(tmp_path, [FileAdapter(ws)]))
    payload = {"request": request("read_file", {"path": "pipe"}, root=ws)}
    try:
        finished, out = bounded_call(lambda: app.invoke(payload, config()), timeout_s=30)
    finally:
        release_fifo(fifo)
    assert finished, "read_file on a FIFO blocked the executor"
    assert not isinstance(out, BaseException), out
    result = result_of(out, "call-1")
    assert result.outcome == "failed" and result.error is not None
    assert result.error.type == "PermanentError"


# ------------------------------------------------------------------ item 10: paging


def page_count(adapter: FileAdapter, ctx: InvokeContext, path: str, cap: int) -> tuple[int, str]:
    """Pages ``path`` to its end (at most ``cap`` calls); (calls made, text read)."""
    offset: int | None = 0
    calls, text = 0, []
    while offset is not None and calls < cap:
        out = call(adapter, "read_file", ctx, path=path, offset=offset)
        calls += 1
        text.append(out.data["content"])
        offset = out.data["next_offset"]
    return calls, "".join(text)


@pytest.mark.parametrize("fill", ["\n", "\t", "\x00", "\r\n", "\\"])
@pytest.mark.parametrize("budget", [500, 64 * 1024])
def test_whitespace_and_nul_text_pages_in_few_calls(
    world: tuple[Path, Path], fill: str, budget: int
) -> None:
    ws, _ = world
    body = fill * (20_000 // len(fill))
    (ws / "blank.txt").write_text(body, newline="")
    adapter = FileAdapter(ws)
    ctx = ctx_for(ws, output_budget=budget)
    # Each file byte costs at most 6 JSON bytes ("\u0000"); ~200 bytes go to the envelope.
    bound = len(body) // ((budget - 200) // 6) + 2
    calls, text = page_count(adapter, ctx, "blank.txt", cap=bound + 1)
    assert calls <= bound, f"{calls} calls for {len(body)} bytes (bound {bound})"
    assert text == body
