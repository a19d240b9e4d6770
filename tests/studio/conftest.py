"""The Studio tests' servers: one ``langgraph dev`` over the repository's ``langgraph.json``
(the demo), one over a user's project; each started once for the module that uses it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.studio.user_project import USER_CONFIG, USER_GRAPH, USER_TOOLS, UserServer
from tests.support.openai_server import OpenAIServer
from tests.support.studio import REPO, Server, launch


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``langgraph dev`` over the repository's ``langgraph.json`` (the demo)."""
    home = tmp_path_factory.mktemp("execgraph-home")
    cwd = tmp_path_factory.mktemp("langgraph-dev")
    with launch(REPO / "langgraph.json", cwd, home, {}) as running:
        yield running


@pytest.fixture(scope="module")
def user_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserServer]:
    home = tmp_path_factory.mktemp("user-home")
    project = tmp_path_factory.mktemp("user-project")
    (project / "my_tools.py").write_text(USER_TOOLS)
    (project / "agent.py").write_text(USER_GRAPH)
    (project / "langgraph.json").write_text(json.dumps(USER_CONFIG))
    refunds = home / "refunds.txt"
    with OpenAIServer() as model:
        env = {
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-test-key",
            "REFUNDS_FILE": str(refunds),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }
        with launch(project / "langgraph.json", project, home, env) as running:
            yield UserServer(server=running, model=model, refunds=refunds)
        assert model.unexpected == []
