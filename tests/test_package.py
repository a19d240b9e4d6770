"""The wheel: one top-level import package, ``execgraph``, that a user's own files cannot shadow.

A LangGraph project ordinarily keeps ``state.py``, ``tools.py``, ``nodes.py`` and
``graph.py`` beside its code. The wheel is built from a copy of the repository, installed
into a fresh virtual environment (its dependencies are this environment's, reached through
a path entry, so nothing is downloaded), and used from a directory holding exactly those
files.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_SKIP = shutil.ignore_patterns(
    ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".execgraph"
)

USER_FILES = {
    "state.py": "class State:  # the user's own state\n    pass\n",
    "tools.py": "TOOLS = ['the users own tools']\n",
    "nodes.py": "def node(state):\n    return state\n",
    "graph.py": "GRAPH = 'the users own graph'\n",
}

USE = """
import importlib.util, json, sys
import execgraph
from execgraph import ScriptedChatModel, build_graph, tool_spec
from langchain_core.messages import AIMessage

@tool_spec(effect="read")
def add(a: int, b: int) -> int:
    "Add two numbers."
    return a + b

def call(name, args, id_):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id_}])

model = ScriptedChatModel(
    [call("add", {"a": 2, "b": 3}, "c1"), call("finish", {"output": "5"}, "c2")]
)
app = build_graph("react", model=model, tools=[add], home=sys.argv[1])
task = {"goal": "add 2 and 3", "success_checks": [{"kind": "tool_succeeded", "target": "add"}]}
out = app.invoke({"task": task}, {"configurable": {"thread_id": "wheel-1"}})
import state, tools, nodes, graph
print(json.dumps({
    "execgraph": execgraph.__file__,
    "status": out["status"],
    "version": execgraph.__version__,
    "user_modules": [m.__file__ for m in (state, tools, nodes, graph)],
}))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("source") / "execgraph"
    shutil.copytree(REPO, source, symlinks=True, ignore=_SKIP)
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    [built] = out.glob("execgraph-*.whl")
    return built


def test_the_wheel_has_exactly_one_top_level_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        [top_level] = [n for n in names if n.endswith("top_level.txt")]
        assert archive.read(top_level).decode().split() == ["execgraph"]
    roots = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert roots == {"execgraph"}
    for layer in ("graph", "nodes", "tools", "state", "cli", "demo"):
        assert f"execgraph/{layer}/__init__.py" in names
    assert "execgraph/py.typed" in names
    assert "execgraph/demo/documents/rag-cost.md" in names  # the demo corpus ships


def test_a_user_project_with_its_own_state_tools_nodes_and_graph(
    wheel: Path, tmp_path: Path
) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
    )
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # the dependencies, from this environment, after the fresh site-packages
    (site / "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    project = tmp_path / "project"
    project.mkdir()
    for name, text in USER_FILES.items():
        (project / name).write_text(text)
    (project / "use.py").write_text(USE)
    done = subprocess.run(
        [python, "use.py", str(tmp_path / "home")],
        cwd=project,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == "COMPLETED"
    assert report["execgraph"].startswith(str(site))
    with (REPO / "pyproject.toml").open("rb") as fh:
        assert report["version"] == tomllib.load(fh)["project"]["version"]
    assert report["user_modules"] == [str(project / n) for n in USER_FILES]
    # and the bare layer names are nobody's from the wheel
    bare = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; print([u.find_spec(n) for n in "
            "('graph', 'nodes', 'tools', 'state')])",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert bare.stdout.strip() == "[None, None, None, None]", bare.stderr
