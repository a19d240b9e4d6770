"""A LangGraph user's first day, driven as that user would drive it.

Every journey uses what a user has: ``ChatOpenAI`` pointed at an OpenAI-compatible server
(a scripted one on 127.0.0.1, real HTTP, streaming included), ordinary LangChain ``@tool``s,
``invoke``/``ainvoke``/``stream``, and the embedded default store under a fresh home.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.openai_server import OpenAIServer, isolate_from_network

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

__all__ = ["chat_model", "home", "openai_server"]


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    """A running scripted OpenAI-compatible server (``server.add(...)`` its replies)."""
    isolate_from_network(monkeypatch)
    with OpenAIServer() as server:
        yield server


@pytest.fixture
def chat_model(openai_server: OpenAIServer) -> Callable[..., ChatOpenAI]:
    """``ChatOpenAI`` as a user configures it, against the scripted server."""
    from langchain_openai import ChatOpenAI  # the openai extra: only where a journey runs

    def make(**kwargs: Any) -> ChatOpenAI:
        return ChatOpenAI(
            model=kwargs.pop("model", "gpt-4o-mini"),
            base_url=openai_server.base_url,
            api_key="sk-test-key",  # type: ignore[arg-type]
            max_retries=0,
            **kwargs,
        )

    return make


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$EXECGRAPH_HOME``: the embedded default store and checkpoints live here."""
    path = tmp_path / "home"
    monkeypatch.setenv("EXECGRAPH_HOME", str(path))
    monkeypatch.chdir(tmp_path)
    return path
