"""A finished call as the conversation shows it: one LangChain ``ToolMessage``.

The model sees a call as its observation text: status, error and bounded data, wrapped
as untrusted tool output. The same text is the ``content`` of the call's ``ToolMessage``
in state's ``messages`` channel, so what LangGraph users, Studio's chat view and
``stream_mode="messages"`` show is what the model saw; ``artifact`` is the whole
ToolResult and ``status`` is ``success`` only for an OK observation.

:func:`observation_text` is also the text :mod:`execgraph.nodes.context.projection` puts into the
model's input (the context imports it from here: the executor, which builds the message,
may not import the context projection). Both wrap it with
:func:`execgraph.nodes.untrusted.wrap_untrusted`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from execgraph.nodes.untrusted import wrap_untrusted
from execgraph.state.errors import MODEL_RETRY_CHARS, ModelRetry

__all__ = ["observation_content", "observation_text", "tool_message", "tool_message_id"]


def observation_text(result: Mapping[str, Any], limit: int) -> str:
    """A ToolResult as the model sees it: status, error, bounded data, wrapped as untrusted."""
    body: dict[str, Any] = {"status": result.get("status"), "outcome": result.get("outcome")}
    if result.get("error"):
        error = result["error"]
        body["error"] = {"type": error.get("type"), "message": error.get("message")}
        if error.get("type") == ModelRetry.__name__:  # the tool's own words, not the runtime's
            message = str(error.get("message") or "")[:MODEL_RETRY_CHARS]
            body["error"] = {"type": error.get("type"), "by": "tool", "message": message}
    if result.get("data") is not None:
        body["data"] = _described(result["data"])
    if result.get("truncated"):
        body["truncated"] = True
    text = json.dumps(body, ensure_ascii=False, default=str)
    if len(text) > limit:
        text = text[:limit] + " …[truncated]"
    return wrap_untrusted(text, tool=str(result.get("tool_name") or ""))


def _image_blocks(data: Any) -> list[dict[str, Any]]:
    """The images a tool answered with (an MCP tool's image content: LangChain's image
    blocks), as blocks the model is given beside the text, the way ``ToolNode`` passes
    them: base64 data or a URL, and its MIME type."""
    if not isinstance(data, list):
        return []
    return [
        {k: block[k] for k in _IMAGE_KEYS if block.get(k)} for block in data if _is_image(block)
    ]


_IMAGE_KEYS = ("type", "base64", "url", "mime_type")


def _is_image(block: Any) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "image"
        and isinstance(block.get("base64") or block.get("url"), str)
    )


def _described(data: Any) -> Any:
    """``data`` as the text shows it: an image by its type and size, not its bytes (the
    image itself goes beside the text, :func:`_image_blocks`)."""
    if not isinstance(data, list) or not any(_is_image(b) for b in data):
        return data
    return [
        {
            "type": "image",
            "mime_type": b.get("mime_type"),
            "bytes": len(b.get("base64") or "") * 3 // 4,
            "shown": "as an image beside this text",
        }
        if _is_image(b)
        else b
        for b in data
    ]


def observation_content(result: Mapping[str, Any], limit: int) -> str | list[str | dict[str, Any]]:
    """A ToolMessage's content for ``result``: its :func:`observation_text`, and the images
    the tool answered with beside it as image blocks."""
    text = observation_text(result, limit)
    images = _image_blocks(result.get("data"))
    return [{"type": "text", "text": text}, *images] if images else text


def tool_message_id(call_id: str) -> str:
    """The id of a call's message: one per call, so a later result for it (a settled
    unknown) replaces the message instead of adding a second answer."""
    return f"tool:{call_id}"


def tool_message(result: Mapping[str, Any], limit: int) -> ToolMessage | None:
    """The ``ToolMessage`` answering the model's call ``result`` came from, or None for a
    call no model asked for (a plan step has no ``tool_call_id`` to answer)."""
    tool_call_id = result.get("tool_call_id")
    if not tool_call_id:
        return None
    return ToolMessage(
        content=observation_content(result, limit),
        tool_call_id=str(tool_call_id),
        name=str(result.get("tool_name") or "") or None,
        id=tool_message_id(str(result["call_id"])),
        artifact=dict(result),
        status="success" if result.get("status") == "OK" else "error",
    )
