"""The arguments the HTTP tools accept: what a model may ask of ``http_*``.

Kept apart from the adapter so the input models (which tool specs and schemas are built
from) read on their own; header rules live in :mod:`._httpwire`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from execgraph.state.errors import SchemaViolation
from execgraph.tools.adapters._httpwire import check_headers

__all__ = ["HttpGetArgs", "HttpWriteArgs"]


class HttpGetArgs(BaseModel):
    """Arguments of ``http_get``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(min_length=1, max_length=8192, description="Absolute http(s) URL")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers")
    timeout_s: float | None = Field(default=None, gt=0, description="Time limit in seconds")

    @field_validator("headers")
    @classmethod
    def _safe_headers(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value)


class HttpWriteArgs(HttpGetArgs):
    """Arguments of ``http_post`` / ``http_put`` / ``http_delete``: a text or JSON body."""

    body: str | None = Field(default=None, max_length=10_000_000, description="Raw body")
    json_body: Any = Field(default=None, description="Body sent as JSON")

    @model_validator(mode="after")
    def _one_body(self) -> HttpWriteArgs:
        if self.body is not None and self.json_body is not None:
            raise SchemaViolation("give either body or json_body, not both")
        return self
