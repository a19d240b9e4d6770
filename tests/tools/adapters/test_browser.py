"""BrowserAdapter driving the system Chromium against pages served on 127.0.0.1.

Two local servers: ``site`` is on the allow-list, ``other`` (another loopback port) is not.
Every test that could leak asserts that ``other`` saw no request at all. No traffic ever
leaves 127.0.0.1: names like ``example.invalid`` are refused before any lookup.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from execgraph.state.errors import (
    ObservationStatus,
    PermanentError,
    PolicyDenied,
    TargetNotFound,
    ToolCancelled,
    TransientError,
)
from execgraph.tools.adapters.browser import BrowserAdapter
from execgraph.tools.invocation import InvokeContext

PAGE = """<!doctype html><html><head><title>Shop</title></head><body>
<h1>Ready</h1>
<button id="go" onclick="document.getElementById('status').textContent = 'clicked'">Go</button>
<p id="status">idle</p>
<input id="name" oninput="document.getElementById('greeting').textContent = 'Hello, ' + this.value">
<p id="greeting"></p>
<button id="leak" onclick="fetch('http://127.0.0.1:OTHER/leak')
  .then(() => { document.getElementById('leak-result').textContent = 'leaked'; })
  .catch(() => { document.getElementById('leak-result').textContent = 'blocked'; })">Leak</button>
<p id="leak-result">pending</p>
<button id="ws" onclick="const s = new WebSocket('ws://127.0.0.1:OTHER/socket');
  s.onclose = () => { document.getElementById('ws-result').textContent = 'refused'; };
  s.onopen = () => { document.getElementById('ws-result').textContent = 'open'; };">Socket</button>
<p id="ws-result">pending</p>
<p id="data">loading</p>
<img src="http://127.0.0.1:OTHER/pixel.png">
<script>fetch('/data.json').then(r => r.json())
  .then(j => { document.getElementById('data').textContent = 'data: ' + j.ok; });</script>
</body></html>"""


@dataclass
class Server:
    port: int
    hits: list[str] = field(default_factory=list)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def _serve(other_port: list[int]) -> tuple[http.server.ThreadingHTTPServer, Server]:
    record = Server(0)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.hits.append(self.path)
            if self.path.startswith("/redirect-to/"):
                self.send_response(302)
                self.send_header("Location", "http://" + self.path.removeprefix("/redirect-to/"))
                self.end_headers()
                return
            if self.path == "/slow":
                time.sleep(3)
            body, kind = PAGE.replace("OTHER", str(other_port[0])).encode(), "text/html"
            if self.path == "/data.json":
                body, kind = b'{"ok": "yes"}', "application/json"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, record


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[Server, Server]]:
    other_port: list[int] = []
    other_server, other = _serve(other_port)
    other_port.append(other.port)
    site_server, site = _serve(other_port)
    yield site, other
    for server in (site_server, other_server):
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(servers: tuple[Server, Server]) -> Iterator[BrowserAdapter]:
    site, _ = servers
    adapter = BrowserAdapter([f"127.0.0.1:{site.port}"], allow_private=True)
    yield adapter
    adapter.close()


@pytest.fixture(autouse=True)
def _other_untouched(servers: tuple[Server, Server]) -> Iterator[None]:
    yield
    assert servers[1].hits == [], "a host outside the allow-list was contacted"


class Artifacts(dict[str, tuple[bytes, str]]):
    def put(self, data: bytes, kind: str) -> str:
        ref = f"artifact:{hashlib.sha256(data).hexdigest()[:12]}"
        self[ref] = (data, kind)
        return ref


def make_ctx(tmp_path: Path = Path("."), **kw: Any) -> InvokeContext:
    return InvokeContext(run_id="run-1", call_id="call-1", attempt_id="att-1",
                         workspace_root=tmp_path, **kw)  # fmt: skip


def call(adapter: BrowserAdapter, tool: str, ctx: InvokeContext | None = None, **args: Any) -> Any:
    spec = next(t for t in adapter.tools() if t.name == tool)
    return spec.run(spec.input_model(**args), ctx or make_ctx())


def read(adapter: BrowserAdapter, session: str, selector: str, until_not: str = "") -> str:
    for _ in range(100):  # page scripts run asynchronously: poll, bounded
        text = call(adapter, "browser_read_text", session=session, selector=selector).data["text"]
        if text != until_not:
            return str(text)
        time.sleep(0.05)
    return str(text)


def test_tools_are_typed_and_locked_per_session(browser: BrowserAdapter) -> None:
    specs = {t.name: t for t in browser.tools()}
    assert {n: s.effect for n, s in specs.items()} == {
        "browser_navigate": "read", "browser_click": "write", "browser_fill": "write",
        "browser_read_text": "read", "browser_screenshot": "read",
    }  # fmt: skip
    assert all(s.locks == ("browser:{session}",) for s in specs.values())


def test_navigate_and_read_text(browser: BrowserAdapter, servers: tuple[Server, Server]) -> None:
    site, other = servers
    out = call(browser, "browser_navigate", url=site.url("/"), session="read")
    assert out.data["status"] == 200 and out.data["title"] == "Shop"
    (ev,) = out.evidence
    assert ev.kind == "browser_page" and ev.verified and ev.call_id == "call-1"
    assert json.loads(ev.value)["url"] == site.url("/")
    assert read(browser, "read", "#data", until_not="loading") == "data: yes"  # allowed fetch
    # The <img> on the other port was refused by routing and reported.
    assert f"127.0.0.1:{other.port}" in out.data["blocked_requests"]
    text = call(browser, "browser_read_text", make_ctx(output_budget=10), session="read")
    assert text.truncated and 0 < len(text.data["text"].encode()) <= 10
    assert text.data["text"].startswith("Ready")


def test_click_and_fill_change_the_page(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, _ = servers
    call(browser, "browser_navigate", url=site.url("/"), session="act")
    clicked = call(browser, "browser_click", selector="#go", session="act")
    assert clicked.committed is True and clicked.evidence[0].kind == "browser_action"
    assert read(browser, "act", "#status", until_not="idle") == "clicked"
    filled = call(browser, "browser_fill", selector="#name", value="Ada", session="act")
    assert filled.committed is True and filled.data["matches"] is True
    (ev,) = filled.evidence
    assert ev.verified and "Ada" not in ev.value  # the value is hashed, never echoed
    assert json.loads(ev.value)["value_sha256"] == hashlib.sha256(b"Ada").hexdigest()
    assert read(browser, "act", "#greeting") == "Hello, Ada"


def test_screenshot_is_stored_as_an_artifact(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, _ = servers
    call(browser, "browser_navigate", url=site.url("/"), session="shot")
    store = Artifacts()
    out = call(browser, "browser_screenshot", make_ctx(put_artifact=store.put), session="shot")
    png, kind = store[out.data["ref"]]
    assert kind == "screenshot" and png.startswith(b"\x89PNG\r\n\x1a\n")
    (ev,) = out.evidence
    assert ev.kind == "screenshot" and ev.ref == out.data["ref"] and ev.verified
    assert json.loads(ev.value)["png_sha256"] == hashlib.sha256(png).hexdigest()
    with pytest.raises(PermanentError, match="artifact store"):
        call(browser, "browser_screenshot", session="shot")  # default context has no store


@pytest.mark.parametrize(
    "url",
    ["http://example.invalid/", "OTHER", "file:///etc/passwd", "javascript:alert(1)",
     "http://127.0.0.1:SITE\\@example.invalid/", "chrome://settings"],
)  # fmt: skip
def test_navigation_outside_the_allow_list_is_refused(
    browser: BrowserAdapter, servers: tuple[Server, Server], url: str
) -> None:
    site, other = servers
    url = other.url("/") if url == "OTHER" else url.replace("SITE", str(site.port))
    with pytest.raises(PolicyDenied) as info:
        call(browser, "browser_navigate", url=url, session="deny")
    assert info.value.status is ObservationStatus.DENIED


def test_redirect_to_another_port_is_never_followed(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, other = servers
    for target in (f"127.0.0.1:{other.port}/hop", f"localhost:{other.port}/hop"):
        with pytest.raises(PolicyDenied, match="redirected"):
            call(browser, "browser_navigate", url=site.url(f"/redirect-to/{target}"),
                 session="redirect")  # fmt: skip


def test_sub_request_to_a_disallowed_host_is_blocked(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, other = servers
    call(browser, "browser_navigate", url=site.url("/"), session="leak")
    out = call(browser, "browser_click", selector="#leak", session="leak")
    assert read(browser, "leak", "#leak-result", until_not="pending") == "blocked"
    call(browser, "browser_click", selector="#ws", session="leak")
    assert read(browser, "leak", "#ws-result", until_not="pending") == "refused"
    assert out.committed is True
    assert other.hits == []


def test_private_addresses_need_allow_private(servers: tuple[Server, Server]) -> None:
    site, _ = servers
    adapter = BrowserAdapter([f"127.0.0.1:{site.port}"])
    try:
        hits = len(site.hits)
        with pytest.raises(PolicyDenied, match="loopback"):
            call(adapter, "browser_navigate", url=site.url("/"))
        assert len(site.hits) == hits
    finally:
        adapter.close()


def test_missing_element_and_deadline(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, _ = servers
    with pytest.raises(TargetNotFound, match="navigate first"):
        call(browser, "browser_click", selector="#go", session="fresh")
    call(browser, "browser_navigate", url=site.url("/"), session="late")
    with pytest.raises(TargetNotFound, match="no element"):
        call(browser, "browser_click", make_ctx(deadline=time.time() + 0.5),
             selector="#never", session="late")  # fmt: skip
    with pytest.raises(TransientError, match="deadline"):
        call(browser, "browser_navigate", make_ctx(deadline=time.time() + 0.5),
             url=site.url("/slow"), session="late")  # fmt: skip


def test_cancel_closes_the_page(browser: BrowserAdapter, servers: tuple[Server, Server]) -> None:
    site, _ = servers
    call(browser, "browser_navigate", url=site.url("/"), session="cancel")
    ctx = make_ctx()
    timer = threading.Timer(0.5, ctx.cancel.set)
    timer.start()
    try:
        with pytest.raises(ToolCancelled) as info:
            call(browser, "browser_click", ctx, selector="#never", session="cancel")
    finally:
        timer.cancel()
    assert info.value.status is ObservationStatus.CANCELLED
    with pytest.raises(TargetNotFound, match="navigate first"):  # the page is gone
        call(browser, "browser_read_text", session="cancel")
    assert (
        call(browser, "browser_navigate", url=site.url("/"), session="cancel").data["status"] == 200
    )


def test_calls_from_many_threads_share_one_browser(
    browser: BrowserAdapter, servers: tuple[Server, Server]
) -> None:
    site, _ = servers

    def visit(i: int) -> str:
        call(browser, "browser_navigate", url=site.url(f"/?n={i}"), session=f"pool{i}")
        return str(
            call(browser, "browser_read_text", selector="h1", session=f"pool{i}").data["text"]
        )

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(visit, range(4))) == ["Ready"] * 4


def test_no_browser_is_ever_downloaded(tmp_path: Path) -> None:
    adapter = BrowserAdapter(["127.0.0.1"], allow_private=True,
                             executable_path=str(tmp_path / "no-chromium"))  # fmt: skip
    try:
        with pytest.raises(PermanentError, match="never downloads"):
            call(adapter, "browser_navigate", url="http://127.0.0.1:9/")
    finally:
        adapter.close()


def test_missing_playwright_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "playwright.sync_api", None)
    with pytest.raises(ImportError, match=r'pip install "execgraph\[browser\]"'):
        BrowserAdapter(["example.com"])
