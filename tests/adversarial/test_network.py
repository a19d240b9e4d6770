"""Hostile HTTP servers and addresses against the HTTP adapter (issue 20, items 7, 8, 13).

Real raw-socket servers on 127.0.0.1 (tests/support/hostile_servers.py): one drips its
headers a byte at a time, one sends a gzip-inside-gzip bomb, one redirects to a Location no
parser accepts. Waits are bounded by generous join timeouts, never asserted as durations.
"""

from __future__ import annotations

import ipaddress
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import (
    DeadlineExceeded,
    ExecGraphError,
    PermanentError,
    PolicyDenied,
    ResponseLostError,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.adapters.netguard import address_forbidden
from tests.support.hostile_servers import BOMB_DECODED, PLAIN, HostileServer, gzip_gzip_bomb
from tests.tools.adapters._http_server import LoopbackOnly, _adapter, _call, _ctx

_JOIN_S = 20.0  # generous: the calls below are meant to end within a couple of seconds


@pytest.fixture
def transport() -> Iterator[LoopbackOnly]:
    t = LoopbackOnly()
    yield t
    t.close()


def _hostile(mode: str) -> Iterator[HostileServer]:
    srv = HostileServer(mode)
    yield srv
    srv.close()


@pytest.fixture
def drip() -> Iterator[HostileServer]:
    yield from _hostile("drip")


@pytest.fixture
def bomb() -> Iterator[HostileServer]:
    gzip_gzip_bomb()  # built (and cached) before any test measures memory
    yield from _hostile("bomb")


@pytest.fixture
def bad_redirect() -> Iterator[HostileServer]:
    yield from _hostile("bad_redirect")


def _in_thread(fn: Any) -> tuple[threading.Thread, dict[str, BaseException]]:
    """Run ``fn`` on a daemon thread; its exception lands in the returned dict."""
    outcome: dict[str, BaseException] = {}

    def body() -> None:
        try:
            fn()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, outcome


# ---------------------------------------------------------------------- item 7: total deadline


@pytest.mark.integration
@pytest.mark.timeout(60)
@pytest.mark.parametrize("own_client", [True, False], ids=["own-client", "given-client"])
def test_dripping_headers_end_at_the_total_deadline(
    drip: HostileServer, transport: LoopbackOnly, tmp_path: Path, own_client: bool
) -> None:
    """A byte every 0.2 s keeps every per-read timeout happy; the call's 1 s total ends it."""
    adapter = _adapter(None if own_client else transport)
    thread, outcome = _in_thread(
        lambda: _call(adapter, "http_get", _ctx(tmp_path), url=drip.url, timeout_s=1)
    )
    thread.join(_JOIN_S)
    assert not thread.is_alive(), "http_get still reading a dripping server past its deadline"
    error = outcome.get("error")
    assert isinstance(error, TransientError)
    assert "deadline" in str(error)
    assert drip.client_gone.wait(_JOIN_S), "the connection was abandoned, not closed"
    adapter.close()


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_dripping_write_at_the_deadline_is_unknown(
    drip: HostileServer, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport)
    thread, outcome = _in_thread(
        lambda: _call(adapter, "http_post", _ctx(tmp_path), url=drip.url, body="x", timeout_s=1)
    )
    thread.join(_JOIN_S)
    assert not thread.is_alive()
    assert isinstance(outcome.get("error"), ResponseLostError)  # it was sent: never "not done"


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_cancel_ends_a_dripping_request_promptly(
    drip: HostileServer, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport)
    ctx = _ctx(tmp_path)
    thread, outcome = _in_thread(
        lambda: _call(adapter, "http_get", ctx, url=drip.url, timeout_s=300)
    )
    assert drip.dripping.wait(_JOIN_S)
    ctx.cancel.set()
    thread.join(_JOIN_S)
    assert not thread.is_alive(), "a cancelled http_get kept reading"
    assert isinstance(outcome.get("error"), ToolCancelled)
    assert drip.client_gone.wait(_JOIN_S)


@pytest.mark.timeout(60)
def test_a_hung_name_lookup_ends_at_the_deadline(transport: LoopbackOnly, tmp_path: Path) -> None:
    release = threading.Event()

    def hung_resolver(*args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        release.wait(120)  # a resolver that never answers (until the test ends)
        raise OSError("gave up")

    adapter = _adapter(transport, allowed_hosts=["*"], resolver=hung_resolver)
    try:
        thread, outcome = _in_thread(
            lambda: _call(adapter, "http_get", _ctx(tmp_path), url="http://slow.test/", timeout_s=1)
        )
        thread.join(_JOIN_S)
        assert not thread.is_alive(), "http_get waited on a hung name lookup past its deadline"
        assert isinstance(outcome.get("error"), DeadlineExceeded)
        assert transport.seen == []
    finally:
        release.set()


# ---------------------------------------------------------------------- item 8: bomb


@pytest.mark.integration
@pytest.mark.timeout(120)
@pytest.mark.parametrize("own_client", [True, False], ids=["own-client", "given-client"])
def test_gzip_gzip_bomb_is_refused_at_the_decoded_cap_with_bounded_memory(
    bomb: HostileServer, transport: LoopbackOnly, tmp_path: Path, own_client: bool
) -> None:
    cap = 1024 * 1024
    adapter = _adapter(None if own_client else transport, max_response_bytes=cap)
    tracemalloc.start()
    try:
        with pytest.raises(ExecGraphError) as info:
            _call(adapter, "http_get", _ctx(tmp_path), url=bomb.url, timeout_s=60)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        adapter.close()
    assert isinstance(info.value, PermanentError)
    assert f"{cap} bytes" in str(info.value)
    # 256 MiB would have been decoded; a few cap-sized buffers are all that may exist.
    assert peak < 32 * 1024 * 1024, f"peak {peak} bytes while decoding a {BOMB_DECODED} bomb"


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["gzip", "deflate-raw", "deflate-zlib"])
def test_honest_encoded_bodies_are_decoded(
    mode: str, transport: LoopbackOnly, tmp_path: Path
) -> None:
    srv = HostileServer(mode)
    try:
        out = _call(_adapter(transport), "http_get", _ctx(tmp_path, output_budget=len(PLAIN) * 2),
                    url=srv.url)  # fmt: skip
    finally:
        srv.close()
    assert out.data["body"].encode() == PLAIN
    assert not out.truncated


@pytest.mark.integration
def test_an_encoding_the_adapter_cannot_decode_is_refused(
    transport: LoopbackOnly, tmp_path: Path
) -> None:
    srv = HostileServer("br")
    try:
        with pytest.raises(PermanentError, match="'br'"):
            _call(_adapter(transport), "http_get", _ctx(tmp_path), url=srv.url)
    finally:
        srv.close()


# ---------------------------------------------------------------------- item 13: redirects


@pytest.mark.integration
def test_unparseable_redirect_location_is_a_typed_redirect_error(
    bad_redirect: HostileServer, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport)
    with pytest.raises(PermanentError) as info:
        _call(adapter, "http_get", _ctx(tmp_path), url=bad_redirect.url)
    assert "redirect" in str(info.value).lower()
    assert "Location cannot be parsed" in str(info.value)


@pytest.mark.parametrize(
    ("tool", "error"), [("http_get", PermanentError), ("http_post", ResponseLostError)]
)
@pytest.mark.integration
def test_a_redirect_to_a_host_only_the_http_client_refuses_is_typed(
    tool: str, error: type[Exception], transport: LoopbackOnly, tmp_path: Path
) -> None:
    srv = HostileServer("idna_redirect")
    try:
        with pytest.raises(error, match="Location cannot be parsed"):
            body = {"body": "x"} if tool == "http_post" else {}
            _call(_adapter(transport), tool, _ctx(tmp_path), url=srv.url, **body)
    finally:
        srv.close()


@pytest.mark.integration
def test_unparseable_redirect_after_a_write_is_unknown_not_failed(
    bad_redirect: HostileServer, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport)
    with pytest.raises(ResponseLostError, match="Location cannot be parsed"):
        _call(adapter, "http_post", _ctx(tmp_path), url=bad_redirect.url, body="x")


# ---------------------------------------------------------------------- item 13: SSRF


SPECIAL = [
    "0.1.2.3", "10.1.1.1", "100.64.0.1", "127.0.0.2", "169.254.169.254", "172.16.0.1",
    "192.0.0.8", "192.0.0.9", "192.0.0.170", "192.0.2.1", "192.88.99.1", "192.168.0.1",
    "198.18.0.1", "198.51.100.1", "203.0.113.1", "224.0.0.1", "240.0.0.1",
    "255.255.255.255",
    "::", "::1", "::ffff:10.0.0.1", "::ffff:192.0.0.8", "64:ff9b::a00:1", "64:ff9b:1::1",
    "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe",  # IPv4-translated: loopback, cloud metadata
    "100::1", "2001::1", "2001:2::1", "2001:db8::1", "2002:a00:1::", "2002:7f00:1::",
    "fc00::1", "fd12::1", "fe80::1", "fec0::1", "ff02::1",
]  # fmt: skip
PUBLIC = [
    "8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450::1",
    "64:ff9b::808:808",  # NAT64 of a public address: IPv6-only networks reach IPv4 so
    "2002:808:808::",  # 6to4 of a public address
]  # fmt: skip


@pytest.mark.parametrize("text", SPECIAL)
def test_special_purpose_addresses_are_forbidden(text: str) -> None:
    assert address_forbidden(ipaddress.ip_address(text))


@pytest.mark.parametrize("text", PUBLIC)
def test_public_addresses_pass(text: str) -> None:
    assert not address_forbidden(ipaddress.ip_address(text))


@pytest.mark.parametrize("host", ["192.0.0.8", "[fec0::1]", "[2001:2::1]"])
def test_special_hosts_refused_before_connecting(
    host: str, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport, allowed_hosts=["*"], allow_private=False)
    with pytest.raises(PolicyDenied):
        _call(adapter, "http_get", _ctx(tmp_path), url=f"http://{host}/")
    assert transport.seen == []
