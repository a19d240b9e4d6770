"""The HTTP adapter against a real ThreadingHTTPServer on 127.0.0.1 (no mocks).

Every client used here sits on a transport that refuses anything but 127.0.0.1, so even a
guard bug could never send traffic to another address.
"""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import ValidationError

from execgraph.state.errors import (
    FencedOut,
    PermanentError,
    PolicyDenied,
    ResponseLostError,
    SchemaViolation,
    TargetNotFound,
    ToolCancelled,
    TransientError,
    VerificationError,
)
from execgraph.tools.adapters.http import HttpAdapter
from tests.tools.adapters._http_server import (
    STREAM_BLOCK,
    STREAM_BLOCKS,
    LoopbackOnly,
    Server,
    _adapter,
    _call,
    _ctx,
    _evidence,
    _observed,
    _tool,
)


@pytest.fixture
def server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture
def other_server() -> Iterator[Server]:
    srv = Server()
    yield srv
    srv.close()


@pytest.fixture
def transport() -> Iterator[LoopbackOnly]:
    t = LoopbackOnly()
    yield t
    t.close()


def test_tools_and_effects() -> None:
    tools = {t.name: t for t in HttpAdapter(["example.com"]).tools()}
    assert {n: t.effect for n, t in tools.items()} == {
        "http_get": "read",
        "http_post": "write",
        "http_put": "write",
        "http_delete": "write",
    }
    assert tools["http_post"].reconcile is not None


def test_get_success_with_evidence(server: Server, tmp_path: Path) -> None:
    adapter = _adapter(None)  # the adapter's own default client
    try:
        out = _call(adapter, "http_get", _ctx(tmp_path), url=server.url("/ok"))
    finally:
        adapter.close()
    assert out.data["status_code"] == 200 and json.loads(out.data["body"]) == {"hello": "world"}
    assert out.committed is False and not out.truncated
    ev = _evidence(out)
    assert ev["http_status"] == "200"
    assert ev["response_id"] == "req-42"
    assert ev["body_sha256"] == hashlib.sha256(b'{"hello": "world"}').hexdigest()
    assert server.state.hits == [("GET", "/ok")]


def test_429_with_retry_after_seconds(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    with pytest.raises(TransientError) as info:
        _call(_adapter(transport), "http_get", _ctx(tmp_path), url=server.url("/limited"))
    assert info.value.retry_after_s == 7
    assert _observed(info.value).data["status_code"] == 429


def test_503_with_retry_after_http_date(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    with pytest.raises(TransientError) as info:
        _call(_adapter(transport), "http_get", _ctx(tmp_path), url=server.url("/unavailable"))
    assert info.value.retry_after_s is not None and 3000 < info.value.retry_after_s <= 3600


def test_redirect_within_allowed_host_is_followed(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    out = _call(_adapter(transport), "http_get", _ctx(tmp_path), url=server.url("/redirect?to=/ok"))
    assert out.data["status_code"] == 200
    assert out.data["redirects"] == [server.url("/ok")]


@pytest.mark.parametrize("form", ["port", "name"])
def test_redirect_to_disallowed_host_is_refused_and_never_contacted(
    server: Server, other_server: Server, transport: LoopbackOnly, tmp_path: Path, form: str
) -> None:
    if form == "port":  # same address, another port that the allow-list does not name
        allowed, target = [f"127.0.0.1:{server.port}"], other_server.url("/ok")
    else:  # a host name that is not on the allow-list (it would reach the other server)
        allowed, target = ["127.0.0.1"], f"http://localhost:{other_server.port}/ok"
    adapter = _adapter(transport, allowed_hosts=allowed)
    with pytest.raises(PolicyDenied):
        _call(adapter, "http_get", _ctx(tmp_path), url=server.url(f"/redirect?to={target}"))
    assert server.state.hits == [("GET", "/redirect")]
    assert other_server.state.hits == []


def test_redirect_loop_gives_up(server: Server, transport: LoopbackOnly, tmp_path: Path) -> None:
    with pytest.raises(PermanentError):
        _call(
            _adapter(transport, max_redirects=3),
            "http_get",
            _ctx(tmp_path),
            url=server.url("/loop"),
        )
    assert len(server.state.hits) == 4


def test_write_sends_idempotency_key(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    out = _call(
        _adapter(transport),
        "http_post",
        _ctx(tmp_path),
        url=server.url("/orders"),
        json_body={"sku": 7},
    )
    assert out.committed is True and out.data["status_code"] == 201
    assert server.state.keys == ["key-123"]
    assert json.loads(server.state.bodies[0]) == {"sku": 7}
    assert _evidence(out)["response_id"] == "req-order-1"


def test_a_write_carries_its_fence_and_a_stale_owner_sends_nothing(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    held = [True]
    ctx = _ctx(tmp_path, fence=3, holds_fence=lambda: held[0])
    adapter = _adapter(transport)
    out = _call(adapter, "http_post", ctx, url=server.url("/orders"), json_body={"sku": 7})
    assert out.committed is True
    assert server.state.keys == ["key-123"] and server.state.fences == ["3"]
    held[0] = False  # another worker took the call over while this one stalled
    with pytest.raises(FencedOut):
        _call(adapter, "http_post", ctx, url=server.url("/orders"), json_body={"sku": 7})
    assert server.state.fences == ["3"]  # the stale owner's request was never sent
    assert ctx.cancel.is_set()


def test_a_fence_header_cannot_be_given_as_an_argument() -> None:
    with pytest.raises(ValidationError):
        _tool(_adapter(None), "http_post").input_model(
            url="http://127.0.0.1/x", headers={"X-Execgraph-Fence": "99"}
        )


def test_write_dropped_after_commit_is_unknown_then_reconciled(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    prefix = server.url("/orders")
    adapter = _adapter(transport, status_endpoints={prefix: "/orders/status?key={idempotency_key}"})
    spec = _tool(adapter, "http_post")
    args = spec.input_model(url=server.url("/orders?drop=1"), body="one order")
    with pytest.raises(ResponseLostError):
        spec.run(args, _ctx(tmp_path))
    assert server.state.orders == {"key-123": b"one order"}
    assert spec.reconcile is not None
    probe = spec.reconcile(args, _ctx(tmp_path))
    assert probe is not None and probe.committed is True
    assert _evidence(probe)["reconcile"] == "committed"
    never_sent = spec.reconcile(args, _ctx(tmp_path, idempotency_key="key-other"))
    assert never_sent is not None and never_sent.committed is False
    blind = _tool(_adapter(transport), "http_post")
    assert blind.reconcile is not None and blind.reconcile(args, _ctx(tmp_path)) is None


def test_write_read_timeout_after_sending_is_unknown(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    with pytest.raises(ResponseLostError):
        _call(
            _adapter(transport),
            "http_put",
            _ctx(tmp_path),
            url=server.url("/orders?slow=1"),
            body="x",
            timeout_s=0.5,
        )
    assert server.state.orders == {"key-123": b"x"}


@pytest.mark.integration
def test_connect_failure_before_sending_is_transient(
    transport: LoopbackOnly, tmp_path: Path
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again below: nobody listens there
    with pytest.raises(TransientError) as info:
        _call(
            _adapter(transport),
            "http_post",
            _ctx(tmp_path),
            url=f"http://127.0.0.1:{port}/orders",
            body="x",
        )
    assert not isinstance(info.value, ResponseLostError)


def test_status_mapping(server: Server, transport: LoopbackOnly, tmp_path: Path) -> None:
    adapter = _adapter(transport)
    with pytest.raises(TargetNotFound):
        _call(adapter, "http_get", _ctx(tmp_path), url=server.url("/nope"))
    with pytest.raises(ResponseLostError) as info:
        _call(adapter, "http_delete", _ctx(tmp_path), url=server.url("/fail"))
    assert _observed(info.value).committed is None


def test_response_size_budget(server: Server, transport: LoopbackOnly, tmp_path: Path) -> None:
    artifacts: dict[str, bytes] = {}

    def put(data: bytes, kind: str) -> str:
        artifacts[f"artifact-{len(artifacts)}"] = data
        return f"artifact-{len(artifacts) - 1}"

    adapter = _adapter(transport, max_response_bytes=100_000)
    ctx = _ctx(tmp_path, output_budget=1000, put_artifact=put)
    out = _call(adapter, "http_get", ctx, url=server.url("/stream"))
    assert out.truncated and out.data["body_bytes"] == 100_000
    assert len(out.data["body"].encode()) <= 1000
    assert _evidence(out)["body_prefix_sha256"] == hashlib.sha256(b"y" * 100_000).hexdigest()
    (body_ev,) = [e for e in out.evidence if e.kind == "body_prefix_sha256"]
    assert body_ev.ref is not None and artifacts[body_ev.ref] == b"y" * 100_000
    assert server.state.stream_done.wait(30)
    assert server.state.stream_sent < STREAM_BLOCKS * len(STREAM_BLOCK)


def test_cancelled_before_sending(server: Server, transport: LoopbackOnly, tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ToolCancelled):
        _call(
            _adapter(transport),
            "http_post",
            _ctx(tmp_path, cancel=cancel),
            url=server.url("/orders"),
            body="x",
        )
    assert server.state.hits == [] and server.state.orders == {}


@pytest.mark.parametrize("name", ["Host", "host", "Idempotency-Key", "Content-Length", "Proxy-Foo"])
def test_runtime_headers_cannot_be_overridden(name: str) -> None:
    spec = _tool(HttpAdapter(["example.com"]), "http_post")
    with pytest.raises(ValidationError):
        spec.input_model(url="http://example.com/", headers={name: "x"})


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("http_get", {"headers": {"Host": "x"}}, "header 'Host' is set by the runtime"),
        ("http_get", {"headers": {"bad name": "x"}}, "invalid header name 'bad name'"),
        ("http_post", {"body": "a", "json_body": {"a": 1}}, "give either body or json_body"),
    ],
)
def test_argument_refusals_are_schema_violations_in_the_validation_error(
    tool: str, args: dict[str, object], message: str
) -> None:
    # Same text the model always saw ("Value error, ..."), now raised as SchemaViolation.
    spec = _tool(HttpAdapter(["example.com"]), tool)
    with pytest.raises(ValidationError) as info:
        spec.input_model(url="http://example.com/", **args)
    (error,) = info.value.errors()
    assert error["msg"].startswith(f"Value error, {message}")
    assert isinstance(error["ctx"]["error"], SchemaViolation)


def test_header_injection_refused() -> None:
    spec = _tool(HttpAdapter(["example.com"]), "http_get")
    with pytest.raises(ValidationError):
        spec.input_model(url="http://example.com/", headers={"X-A": "1\r\nHost: evil"})


def test_write_307_is_followed_with_the_same_key(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    out = _call(
        _adapter(transport), "http_post", _ctx(tmp_path), url=server.url("/moved"), body="b"
    )
    assert out.committed is True and out.data["redirects"] == [server.url("/orders")]
    assert server.state.hits == [("POST", "/moved"), ("POST", "/orders")]
    assert server.state.keys == ["key-123", "key-123"]


def test_write_303_is_not_followed_and_counts_as_committed(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    url = server.url("/orders?see_other=1")
    out = _call(_adapter(transport), "http_post", _ctx(tmp_path), url=url, body="b")
    assert out.data["status_code"] == 303 and out.committed is True
    assert out.data["headers"]["location"].startswith("/orders/status")
    assert server.state.hits == [("POST", "/orders")]


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for the NAME localhost only (no IP address in it)."""
    d = tmp_path_factory.mktemp("tls")
    cert, key = d / "cert.pem", d / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


def test_https_is_pinned_to_the_checked_address_and_verified_by_name(
    tls_files: tuple[Path, Path], tmp_path: Path
) -> None:
    cert, key = tls_files
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(cert, key)
    srv = Server(tls=server_ctx)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    transport = LoopbackOnly(httpx.HTTPTransport(verify=client_ctx))
    try:
        adapter = _adapter(transport, allowed_hosts=["localhost", "127.0.0.1"])
        url = f"https://localhost:{srv.port}/ok"
        out = _call(adapter, "http_get", _ctx(tmp_path), url=url)
        assert out.data["status_code"] == 200 and out.data["url"] == url
        # The socket went to the checked address; TLS was verified against the name.
        assert transport.seen == [f"https://127.0.0.1:{srv.port}/ok"]
        # Same server by address: the certificate does not name it, so nothing is sent.
        with pytest.raises(TransientError):
            _call(adapter, "http_get", _ctx(tmp_path), url=srv.url("/ok"))
        assert srv.state.hits == [("GET", "/ok")]
    finally:
        transport.close()
        srv.close()


def test_status_endpoint_template_is_checked_at_construction() -> None:
    with pytest.raises(ValueError):
        HttpAdapter(["example.com"], status_endpoints={"http://example.com/": "/s?k={secret}"})


def test_a_writes_own_answer_is_unverified_and_a_read_back_verifies_it(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    prefix = server.url("/orders")
    status = {prefix: "/orders/status?key={idempotency_key}"}
    for adapter, read_back in (
        (_adapter(transport), False),
        (_adapter(transport, status_endpoints=status), True),
    ):
        spec = _tool(adapter, "http_post")
        args = spec.input_model(url=server.url("/orders"), body="one order")
        out = spec.run(args, _ctx(tmp_path))
        assert out.committed is True
        assert not any(e.verified for e in out.evidence)  # the server's word about itself
        assert spec.verify is not None
        checked = tuple(spec.verify(args, out, _ctx(tmp_path)))
        assert [(e.kind, e.verified) for e in checked] == (
            [("read_back", True)] if read_back else []
        )
    # a read's status and body hash are the runtime's own observation: verified
    got = _call(_adapter(transport), "http_get", _ctx(tmp_path), url=server.url("/ok"))
    assert all(e.verified for e in got.evidence if e.kind in ("http_status", "body_sha256"))


def test_a_read_back_that_finds_no_write_fails_verification(
    server: Server, transport: LoopbackOnly, tmp_path: Path
) -> None:
    status = {server.url("/orders"): "/orders/status?key={idempotency_key}"}
    spec = _tool(_adapter(transport, status_endpoints=status), "http_post")
    args = spec.input_model(url=server.url("/orders"), body="one order")
    out = spec.run(args, _ctx(tmp_path))
    assert spec.verify is not None
    with pytest.raises(VerificationError):
        spec.verify(args, out, _ctx(tmp_path, idempotency_key="key-never-sent"))
