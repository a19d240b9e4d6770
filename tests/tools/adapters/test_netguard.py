"""Network guards (tools.adapters.netguard) as the HTTP adapter applies them.

Every refusal here must happen before a connection: the client sits on a transport that
records every request and refuses anything but 127.0.0.1, and the assertions check that it
saw nothing.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import PolicyDenied, ToolDeclarationError, TransientError
from execgraph.tools.adapters.netguard import (
    address_forbidden,
    host_allowed,
    parse_host_patterns,
    parse_numeric_host,
)
from tests.tools.adapters._http_server import LoopbackOnly, Server, _adapter, _call, _ctx


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture
def transport() -> Iterator[LoopbackOnly]:
    t = LoopbackOnly()
    yield t
    t.close()


PRIVATE_URLS = [
    "http://10.0.0.1/",
    "http://10.255.1.2:8080/x",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://127.0.0.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[fe80::1]/",
    "http://[fd00::1]/",
    "http://2130706433/",
    "http://0177.0.0.1/",
    "http://0x7f.1/",
    "http://0x7f000001/",
    "http://127.1/",
    "http://0/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
    "http://localhost/",
]


@pytest.mark.parametrize("url", PRIVATE_URLS)
def test_private_addresses_refused_before_connecting(
    url: str, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport, allowed_hosts=["*"], allow_private=False)
    with pytest.raises(PolicyDenied):
        _call(adapter, "http_get", _ctx(tmp_path), url=url)
    with pytest.raises(PolicyDenied):
        _call(adapter, "http_post", _ctx(tmp_path), url=url, body="x")
    assert transport.seen == []


@pytest.mark.parametrize(
    ("host", "ip"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
    ],
)
def test_legacy_numeric_hosts_parse_like_inet_aton(host: str, ip: str) -> None:
    parsed = parse_numeric_host(host)
    assert str(parsed) == ip and parsed is not None and address_forbidden(parsed)


def test_host_off_the_allow_list_is_refused_without_a_lookup(
    transport: LoopbackOnly, tmp_path: Path
) -> None:
    lookups: list[str] = []

    def resolver(host: str, port: int, **kw: Any) -> list[Any]:
        lookups.append(host)
        return socket.getaddrinfo(host, port, **kw)

    adapter = _adapter(transport, resolver=resolver)
    for url in ("http://example.com/", "https://127.0.0.1.example.com/", "http://127.0.0.2/"):
        with pytest.raises(PolicyDenied):
            _call(adapter, "http_get", _ctx(tmp_path), url=url)
    assert lookups == [] and transport.seen == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/", "http://u:p@127.0.0.1/"])
def test_other_schemes_and_credentials_refused(
    url: str, transport: LoopbackOnly, tmp_path: Path
) -> None:
    with pytest.raises(PolicyDenied):
        _call(_adapter(transport), "http_get", _ctx(tmp_path), url=url)
    assert transport.seen == []


@pytest.mark.integration
def test_numeric_host_forms_connect_to_the_canonical_address(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    url = f"http://0x7f.1:{server.port}/ok"  # inet_aton spelling of 127.0.0.1
    out = _call(_adapter(transport), "http_get", _ctx(tmp_path), url=url)
    assert out.data["status_code"] == 200
    assert transport.seen == [server.url("/ok")]


def test_ipv6_literal_is_bracketed_when_connecting(transport: LoopbackOnly, tmp_path: Path) -> None:
    adapter = _adapter(transport, allowed_hosts=["::1"])
    with pytest.raises(TransientError):  # the safety-net transport refuses it: nothing sent
        _call(adapter, "http_get", _ctx(tmp_path), url="http://[::1]:9/ok")
    assert transport.seen == ["http://[::1]:9/ok"]


@pytest.mark.parametrize(
    ("entry", "host", "port", "allowed"),
    [
        ("example.com", "example.com", 443, True),
        ("example.com", "api.example.com", 443, False),
        ("*.example.com", "api.example.com", 443, True),
        ("*.example.com", "example.com", 443, False),
        ("*.example.com", "evilexample.com", 443, False),
        ("example.com:8443", "example.com", 443, False),
        ("[::1]:8080", "::1", 8080, True),
        ("127.0.0.1", "2130706433", 80, True),
        ("*", "anything.test", 1, True),
    ],
)
def test_allow_list_patterns(entry: str, host: str, port: int, allowed: bool) -> None:
    assert host_allowed(host, port, parse_host_patterns([entry])) is allowed


@pytest.mark.parametrize("ip", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(ip: str) -> None:
    parsed = parse_numeric_host(ip)
    assert parsed is not None and not address_forbidden(parsed)


@pytest.mark.parametrize("host", ["1.2.3.4.5", "09.1.1.1", "1.300.1.1", "4294967296"])
def test_a_malformed_numeric_host_is_a_policy_denial(host: str) -> None:
    with pytest.raises(PolicyDenied, match="numeric host address is malformed"):
        parse_numeric_host(host)
    assert host_allowed(host, 80, parse_host_patterns(["example.com"])) is False


@pytest.mark.parametrize("url", ["http://1.2.3.4.5/", "http://09.1.1.1/", "http://1.300.1.1/"])
def test_a_malformed_numeric_url_is_denied_before_connecting(
    url: str, transport: LoopbackOnly, tmp_path: Path
) -> None:
    adapter = _adapter(transport, allowed_hosts=["*"])
    with pytest.raises(PolicyDenied, match="numeric host address is malformed"):
        _call(adapter, "http_get", _ctx(tmp_path), url=url)
    assert transport.seen == []


def test_an_empty_allow_list_entry_is_a_declaration_error() -> None:
    with pytest.raises(ToolDeclarationError, match="empty"):
        parse_host_patterns(["example.com", " "])
    with pytest.raises(ToolDeclarationError, match="non-numeric port"):
        parse_host_patterns(["example.com:abc"])
