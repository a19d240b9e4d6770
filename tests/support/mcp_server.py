"""A small MCP server for the tests, run over stdio: ``python mcp_server.py NOTES_DIR``.

Its tools keep notes as files under ``NOTES_DIR``, so what a call did is visible to the
test after the server process (one per call) has exited. Each tool carries the MCP
annotations that decide its effect class in execgraph, or none (``touch``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import ToolAnnotations

NOTES = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
server = FastMCP("notes", log_level="WARNING")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_note(name: str) -> str:
    """Read a note by name."""
    path = NOTES / name
    if not path.exists():
        raise ValueError(f"no note named {name!r}")
    return path.read_text()


@server.tool(
    annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=True)
)
def put_note(name: str, text: str) -> str:
    """Write a note (the same note twice is one note)."""
    (NOTES / name).write_text(text)
    return f"saved {name}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def delete_note(name: str) -> str:
    """Delete a note."""
    (NOTES / name).unlink()
    return f"deleted {name}"


@server.tool()
def touch(name: str, mark: str | None = None) -> str:
    """Touch a note (no annotations: the server says nothing about its effect)."""
    with (NOTES / "touched.log").open("a") as log:
        log.write(f"{name}:{mark}\n")
    return f"touched {name}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def send_and_vanish(name: str) -> str:
    """Send a note out, then lose the reply: the server process ends before it answers."""
    (NOTES / name).write_text("sent")
    os._exit(1)


#: A 1x1 PNG: what ``snapshot`` answers with.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def snapshot(name: str) -> list[object]:
    """A picture of a note: a caption and an image."""
    return [f"snapshot of {name}", Image(data=PIXEL, format="png")]


if __name__ == "__main__":
    server.run("stdio")
