"""The developer's record of a foreign exception: bounded, credential-scrubbed, logged."""

from __future__ import annotations

import logging

import httpx
import pytest

from execgraph.state.diagnostics import (
    LOGGER_NAME,
    MESSAGE_CHARS,
    TRACEBACK_CHARS,
    describe,
    http_problem,
    logger,
    safe_url,
    scrub,
    type_name,
)

KEY = "sk-live-7e8f9a0b1c2d3e4f"


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_the_library_logger_has_only_a_null_handler() -> None:
    root = logging.getLogger(LOGGER_NAME)
    # the command line adds a handler of its own when EXECGRAPH_LOG asks (a CLI test run
    # before this one in the same process may have left it); the library adds none
    library = [h for h in root.handlers if not getattr(h, "_execgraph_cli", False)]
    assert [type(h) for h in library] == [logging.NullHandler]
    assert logger("executor").name == "execgraph.executor" and logger() is root


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (f"Authorization: Bearer {KEY}", "Authorization: Bearer [redacted]"),
        ('{"Authorization": "Basic dXNlcjpwYXNzd29yZA=="}', '"Authorization": "Basic [redacted]"'),
        (f"bearer {KEY}", "bearer [redacted]"),
        (f"the key {KEY} is revoked", "the key [redacted] is revoked"),
        ("password=hunter2, api_key: 'abc123'", "password=[redacted], api_key: '[redacted]'"),
        ("token=t0k3n&next=1", "token=[redacted]&next=1"),
        ("ghp_" + "a" * 36, "[redacted]"),
        ("AKIAABCDEFGHIJKLMNOP", "[redacted]"),
    ],
)
def test_scrub_redacts_what_looks_like_a_credential(text: str, kept: str) -> None:
    assert kept in scrub(text)


def test_scrub_leaves_ordinary_text_alone() -> None:
    text = "Invalid token provided; basic information about tokens_in=5 at /srv/a.txt line 3"
    assert scrub(text) == text


def test_safe_url_drops_userinfo_and_redacts_key_like_parameters() -> None:
    url = "https://bot:pw-9@api.test:8443/v1/chat?api_key=K1&api-version=2024&access_token=T&sig=S"
    assert safe_url(url) == (
        "https://api.test:8443/v1/chat"
        "?api_key=[redacted]&api-version=2024&access_token=[redacted]&sig=[redacted]"
    )
    assert scrub(f"GET {url} failed") == f"GET {safe_url(url)} failed"


def test_describe_bounds_the_message_and_keeps_the_innermost_frames() -> None:
    def innermost(n: int) -> None:
        if n <= 0:
            raise KeyError("k" * 50_000)
        outer(n - 1)

    def outer(n: int) -> None:
        innermost(n - 1)

    exc = _raised_from(lambda: outer(400))
    described = describe(exc)
    assert described["type"] == "KeyError"
    assert len(described["message"]) < MESSAGE_CHARS + 40
    trace = described["traceback"]
    assert len(trace) < TRACEBACK_CHARS + 60 and "outer frames cut" in trace.splitlines()[0]
    assert trace.splitlines()[-1].startswith("KeyError: 'kkk") and len(trace.splitlines()[-1]) < 500
    assert "in innermost" in "\n".join(trace.splitlines()[-5:])


def _raised_from(call: object) -> BaseException:
    try:
        call()  # type: ignore[operator]
    except BaseException as caught:
        return caught
    raise AssertionError("nothing raised")


def test_describe_keeps_the_chain_and_scrubs_it() -> None:
    def wrapped() -> None:
        try:
            raise ConnectionError(f"refused with Bearer {KEY}")
        except ConnectionError as exc:
            raise RuntimeError("upload failed") from exc

    described = describe(_raised_from(wrapped))
    assert described["message"] == "upload failed"
    assert "ConnectionError: refused with Bearer [redacted]" in described["traceback"]
    assert KEY not in str(described)


def test_describe_survives_a_broken_str() -> None:
    class Broken(Exception):
        def __str__(self) -> str:
            raise ValueError("no text")

    described = describe(_raised(Broken()))
    assert described["message"] == "<unprintable message>"
    assert type_name(Broken()).endswith("Broken")


def test_http_problem_names_status_message_and_safe_url() -> None:
    request = httpx.Request("POST", f"https://bot:pw@api.test/v1/chat?key={KEY}")
    response = httpx.Response(429, request=request, json={"error": {"message": "slow down"}})
    exc = httpx.HTTPStatusError(
        "Client error '429 Too Many Requests'", request=request, response=response
    )
    problem = http_problem(exc)
    assert problem == (
        "HTTPStatusError (HTTP 429, POST https://api.test/v1/chat?key=[redacted]): "
        "Client error '429 Too Many Requests'"
    )


def test_http_problem_of_a_connection_error_names_the_url() -> None:
    request = httpx.Request("GET", "http://127.0.0.1:9/v1/models")
    problem = http_problem(httpx.ConnectError("[Errno 111] Connection refused", request=request))
    assert (
        problem == "ConnectError (GET http://127.0.0.1:9/v1/models): [Errno 111] Connection refused"
    )


def test_http_problem_is_none_for_an_exception_without_http() -> None:
    assert http_problem(RuntimeError(f"key {KEY} is invalid")) is None
    assert http_problem(httpx.ConnectError("no request set")) is None  # .request raises
