"""Fixtures for the model tests: the local OpenAI-compatible server."""

from tests.support.openai_server import openai_server

__all__ = ["openai_server"]
