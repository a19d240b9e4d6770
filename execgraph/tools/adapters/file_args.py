"""The arguments the file tools accept: what a model may ask of ``read_file`` and the rest.

Kept apart from the adapter so the input models (which tool specs and schemas are built
from) read on their own; every ``path`` is normalized and confined by the adapter, not here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "FileItem",
    "ListFilesArgs",
    "PatchFileArgs",
    "ReadFileArgs",
    "WriteFileArgs",
    "WriteFilesArgs",
]


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadFileArgs(_Args):
    """Arguments of ``read_file``; ``offset`` pages through files larger than the budget."""

    path: str = Field(description="workspace-relative file path")
    offset: int = Field(default=0, ge=0, description="byte offset to start reading at")


class ListFilesArgs(_Args):
    """Arguments of ``list_files``; ``**`` matches any number of directories."""

    pattern: str = Field(default="**/*", description="glob, e.g. 'src/**/*.py'")
    limit: int = Field(default=1000, ge=1, le=100_000, description="most names returned")


class WriteFileArgs(_Args):
    """Arguments of ``write_file``: the whole new UTF-8 content."""

    path: str = Field(description="workspace-relative file path")
    content: str = Field(description="complete new file content")


class PatchFileArgs(_Args):
    """Arguments of ``patch_file``: ``old`` must occur exactly once."""

    path: str = Field(description="workspace-relative file path")
    old: str = Field(min_length=1, description="exact text to replace (must be unique)")
    new: str = Field(description="replacement text")


class FileItem(_Args):
    """One file of ``write_files``."""

    path: str = Field(description="workspace-relative file path")
    content: str = Field(description="complete new file content")


class WriteFilesArgs(_Args):
    """Arguments of ``write_files``: files replaced one by one, in the order given."""

    files: list[FileItem] = Field(min_length=1, max_length=100, description="files to write")
