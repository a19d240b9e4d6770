"""What the developer gets of a foreign exception: the ``execgraph`` logger and a bounded,
credential-scrubbed description (type, message, innermost traceback frames).

A tool's or a provider's exception text never reaches the model (it may hold secrets), but
it must not be lost to the person debugging either. Both the event log and the logger get
the same record, cut to a few KB so a huge message or a deep recursion cannot bloat the
store, and scrubbed of what looks like a credential (bearer tokens, API keys, URL
userinfo, key-like query parameters) because the log outlives the process and is shared.

As a library, execgraph adds no handler to its logger but a ``NullHandler``; an
application shows the records with ``logging.basicConfig()`` or its own handler.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Mapping
from typing import Any, TypedDict
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "LOGGER_NAME",
    "MESSAGE_CHARS",
    "TRACEBACK_CHARS",
    "Described",
    "bounded",
    "describe",
    "http_problem",
    "logger",
    "safe_url",
    "scrub",
    "type_name",
]

LOGGER_NAME = "execgraph"
MESSAGE_CHARS = 2_000
TRACEBACK_CHARS = 6_000
LINE_CHARS = 400  # of one traceback line
PROBLEM_CHARS = 500  # of a provider's message, as a user reads it
REDACTED = "[redacted]"

logging.getLogger(LOGGER_NAME).addHandler(logging.NullHandler())


def logger(child: str = "") -> logging.Logger:
    """The ``execgraph`` logger, or one of its children (``execgraph.executor``)."""
    return logging.getLogger(f"{LOGGER_NAME}.{child}" if child else LOGGER_NAME)


class Described(TypedDict):
    """A foreign exception as the developer sees it (the ``tool.raised`` payload's core)."""

    type: str
    message: str
    traceback: str


_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
_KEY_NAMES = r"api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|passwd|pwd"
_KEY_PARAM = re.compile(
    rf"(?:{_KEY_NAMES}|auth|authorization|sig|signature|credential|session|key)",
    re.IGNORECASE,
)
_SECRETS = [
    (re.compile(r"(Authorization[\"']?\s*[:=]\s*[\"']?\w+\s+)[^\s\"',;]+", re.IGNORECASE), r"\1"),
    (re.compile(r"\b(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}", re.IGNORECASE), r"\1"),
    (re.compile(rf"((?:{_KEY_NAMES})[\"']?\s*[:=]\s*[\"']?)[^\s\"',;&)}}]+", re.IGNORECASE), r"\1"),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"), ""),  # OpenAI, Anthropic, Stripe
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), ""),  # GitHub
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), ""),  # Slack
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), ""),  # AWS access key id
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ""),  # Google API key
]


def safe_url(url: str) -> str:
    """``url`` without userinfo and with the values of key-like query parameters redacted."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        return REDACTED
    netloc = (f"[{host}]" if ":" in host else host) + port
    query = urlencode(
        [
            (name, REDACTED if _KEY_PARAM.search(name) else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ],
        safe="[]",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def scrub(text: str) -> str:
    """``text`` with what looks like a credential replaced by ``[redacted]``."""
    text = _URL.sub(lambda m: safe_url(m.group(0)), text)
    for pattern, keep in _SECRETS:
        text = pattern.sub(keep + REDACTED, text)
    return text


def bounded(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, saying so."""
    return text if len(text) <= limit else text[:limit] + f" …[{len(text) - limit} chars cut]"


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of a traceback from a line start: the innermost frames
    and the exception line, where the failure is."""
    if len(text) <= limit:
        return text
    tail = text[-limit:]
    cut = tail.find("\n")
    tail = tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail
    return f"…[{len(text) - len(tail)} chars of outer frames cut]\n{tail}"


def type_name(exc: BaseException) -> str:
    """``module.QualName`` of the exception's class (``RuntimeError`` for a builtin)."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def describe(
    exc: BaseException,
    *,
    message_chars: int = MESSAGE_CHARS,
    traceback_chars: int = TRACEBACK_CHARS,
) -> Described:
    """``exc``'s type, message and traceback (its chain included), scrubbed and bounded."""
    try:
        message = str(exc)
    except Exception:  # a broken __str__ must not hide the failure it describes
        message = "<unprintable message>"
    try:
        lines = "".join(traceback.format_exception(exc)).splitlines()
    except Exception:
        lines = []
    # A huge message repeats on the exception line; cut each line, so frames stay in view.
    trace = "\n".join(bounded(line, LINE_CHARS) for line in lines)
    return Described(
        type=type_name(exc),
        message=bounded(scrub(message), message_chars),
        traceback=_tail(scrub(trace), traceback_chars),
    )


def _attr(obj: Any, name: str) -> Any:
    """``obj.name``, or None: httpx raises on a request that was never set."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def _provider_message(exc: BaseException) -> str:
    """The provider's own message: the error body's ``message`` (OpenAI's, Anthropic's
    shape), else the exception's text."""
    body = _attr(exc, "body")
    if isinstance(body, Mapping):
        inner = body.get("error")
        for found in (
            body.get("message"),
            inner.get("message") if isinstance(inner, Mapping) else inner,
        ):
            if isinstance(found, str) and found:
                return found
    text = _attr(exc, "message")
    return text if isinstance(text, str) and text else str(exc)


def http_problem(exc: BaseException, limit: int = PROBLEM_CHARS) -> str | None:
    """What a user needs to debug a failed HTTP call to a provider, scrubbed and bounded::

        RateLimitError (HTTP 429, POST https://api.example/v1/chat/completions): Rate limit…

    None for an exception that carries no HTTP status, response or request (the OpenAI and
    Anthropic SDKs' errors and httpx's do), whose text may be anything.
    """
    response = _attr(exc, "response")
    request = _attr(exc, "request") or _attr(response, "request")
    status = _attr(exc, "status_code") or _attr(response, "status_code")
    if not isinstance(status, int) and request is None:
        return None
    details = [f"HTTP {status}"] if isinstance(status, int) else []
    url = _attr(request, "url")
    if url is not None:
        method = _attr(request, "method")
        details.append(f"{method} {safe_url(str(url))}" if method else safe_url(str(url)))
    message = bounded(scrub(" ".join(_provider_message(exc).split())), limit)
    where = f" ({', '.join(details)})" if details else ""
    return f"{type(exc).__name__}{where}: {message}"
