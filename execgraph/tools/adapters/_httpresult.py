"""The outcome side of the HTTP adapter: a finished exchange -> data, evidence, error.

Kept apart from the adapter so each file stays readable; nothing here sends a request.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field

import httpx

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    ExecGraphError,
    PermanentError,
    ResponseLostError,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.adapters._httpwire import REQUEST_ID_HEADERS, parse_retry_after, status_error
from execgraph.tools.adapters._streams import store_artifact
from execgraph.tools.invocation import AdapterOutput, InvokeContext, attach_output

__all__ = ["REDIRECTS", "Exchange", "build_outcome", "committed_from_status", "transport_error"]

REDIRECTS = (301, 302, 303, 307, 308)
_KEPT_HEADERS = ("content-type", "content-length", "location", "etag", "last-modified")


@dataclass
class Exchange:
    """One finished request/response, redirects included, body bounded."""

    method: str
    url: str
    status: int
    headers: httpx.Headers
    body: bytes
    truncated: bool
    redirects: list[str] = field(default_factory=list)
    interrupted: str | None = None  # "cancelled" | "deadline" | "dropped" while reading
    refused: str | None = None  # why the body was not decoded (over the cap, bad encoding)


def build_outcome(ex: Exchange, ctx: InvokeContext, *, write: bool) -> AdapterOutput:
    """Turn the exchange into data + evidence, or the typed error its status means."""
    response_id = next((ex.headers[h] for h in REQUEST_ID_HEADERS if h in ex.headers), None)
    now = time.time()
    ids = f"http:{ctx.call_id}"
    evidence = [
        Evidence(
            source_id=f"{ids}:status",
            kind="http_status",
            value=str(ex.status),
            call_id=ctx.call_id,
            verified=not write,  # a write's answer is the server's word, not a read-back
            observed_at=now,
        ),
        Evidence(
            source_id=f"{ids}:body",
            kind="body_prefix_sha256" if ex.truncated else "body_sha256",
            value=hashlib.sha256(ex.body).hexdigest(),
            ref=store_artifact(ctx, ex.body, "http_body")
            if len(ex.body) > ctx.output_budget
            else None,
            call_id=ctx.call_id,
            verified=not ex.truncated and not write,
            observed_at=now,
        ),
    ]
    if response_id:
        evidence.append(
            Evidence(
                source_id=f"{ids}:response_id",
                kind="response_id",
                value=response_id,
                call_id=ctx.call_id,
                verified=not write,
                observed_at=now,
            )
        )
    data = {
        "method": ex.method,
        "url": ex.url,
        "status_code": ex.status,
        "headers": {h: ex.headers[h] for h in _KEPT_HEADERS if h in ex.headers},
        "body": ex.body[: ctx.output_budget].decode("utf-8", "replace"),
        "body_bytes": len(ex.body),
        "truncated": ex.truncated,
        "interrupted": ex.interrupted,
        "redirects": ex.redirects,
        "response_id": response_id,
    }
    what = f"{ex.method} {ex.url}"
    if ex.status in REDIRECTS and not write:  # a followable one would have been followed
        raise attach_output(
            PermanentError(f"{what} answered {ex.status} without a usable Location"),
            AdapterOutput(data=data, committed=False, evidence=tuple(evidence)),
        )
    if ex.status in REDIRECTS:  # a write's 301/302/303 is reported, not followed
        committed = True if ex.status == 303 else None
        return AdapterOutput(
            data=data,
            committed=committed,
            summary=f"{what} answered {ex.status} (redirect not followed for a write)",
            evidence=tuple(evidence),
            truncated=ex.truncated,
        )
    retry_after = parse_retry_after(ex.headers.get("retry-after"))
    error = status_error(ex.status, write=write, what=what, retry_after=retry_after)
    if error is None and not write and ex.refused:
        error = PermanentError(f"{what}: {ex.refused}")
    if ex.refused:
        data["refused"] = ex.refused
    if error is None and not write and ex.interrupted == "cancelled":
        error = ToolCancelled(f"cancelled while reading the response of {what}")
    elif error is None and not write and ex.interrupted:
        error = TransientError(f"the response of {what} was cut off ({ex.interrupted})")
    ok = error is None
    output = AdapterOutput(
        data=data,
        committed=(ok if write else False) if not isinstance(error, ResponseLostError) else None,
        summary=f"{what} answered {ex.status}",
        evidence=tuple(evidence),
        truncated=ex.truncated,
    )
    if error is not None:
        raise attach_output(error, output)
    return output


def transport_error(write: bool, host: str, exc: httpx.HTTPError) -> ExecGraphError:
    """A transport failure after the request may have left: UNKNOWN for writes."""
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.LocalProtocolError):
        return PermanentError(f"the request to {host!r} could not be encoded; nothing was sent")
    if write:
        return ResponseLostError(
            f"the connection to {host!r} failed after the write was sent "
            f"({type(exc).__name__}); whether it took effect is unknown"
        )
    return TransientError(f"the connection to {host!r} failed ({type(exc).__name__})")


def committed_from_status(ex: Exchange) -> bool | None:
    """2xx -> True unless the body says otherwise; 404 -> False; anything else -> None."""
    if ex.status == 404:
        return False
    if not 200 <= ex.status < 300 or ex.interrupted:
        return None
    try:
        body = json.loads(ex.body) if ex.body else {}
    except ValueError:
        return True
    if isinstance(body, dict):
        if isinstance(body.get("committed"), bool):
            return bool(body["committed"])
        state = str(body.get("status", "")).lower()
        if state in ("pending", "processing", "in_progress", "unknown"):
            return None
        if state in ("failed", "rejected", "not_found", "absent"):
            return False
    return True
