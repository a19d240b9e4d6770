"""The thread that owns Playwright for :mod:`execgraph.tools.adapters.browser` (private helper).

Playwright's sync API is bound to the thread (greenlet) that started it, while the executor
calls tools from a pool. So one worker thread per adapter owns Playwright, the browser and
every session; actions are queued to it and their futures awaited by the calling thread,
which stays free to notice a cancel or a passed deadline and then close the page.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from execgraph.state.errors import (
    ExecGraphError,
    PermanentError,
    ResponseLostError,
    TargetNotFound,
    ToolCancelled,
    ToolRaised,
    TransientError,
)
from execgraph.tools.adapters._browser_policy import HostPolicy
from execgraph.tools.invocation import AdapterOutput, InvokeContext

__all__ = ["LAUNCH_ARGS", "BrowserWorker", "Call", "Session"]

LAUNCH_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
_GRACE_S = 5.0  # how long a caller waits for the worker beyond the deadline


@dataclass
class Session:
    context: Any
    page: Any = None
    blocked: list[str] = field(default_factory=list)


@dataclass
class Call:
    """One queued action; ``interrupted`` tells its failure apart from a real one."""

    session: str
    page: Any = None
    interrupted: str = ""  # why the caller closed the page: "cancel" or "deadline"
    effect: str = "read"


class BrowserWorker:
    """One Chromium with one isolated context and page per session, on one thread."""

    def __init__(self, policy: HostPolicy, executable_path: str, headless: bool) -> None:
        self.policy = policy
        self.executable_path = executable_path
        self.headless = headless
        self._queue: queue.Queue[tuple[Callable[[], Any], Future[Any]] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._closed = False
        self._active: Call | None = None
        # Owned by the worker thread only:
        self._pw: Any = None
        self._browser: Any = None
        self._sessions: dict[str, Session] = {}

    def close(self) -> None:
        """Close every session, the browser and Playwright, then stop the thread."""
        with self._start_lock:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is None:
            return
        done: Future[Any] = Future()
        self._queue.put((self._shutdown, done))
        self._queue.put(None)
        with suppress(Exception):
            done.result(timeout=30)
        thread.join(timeout=30)

    def run(
        self, session: str, ctx: InvokeContext, effect: str, action: Callable[[Call], Any]
    ) -> AdapterOutput:
        """Queue ``action`` on the worker and wait, watching cancel and deadline."""
        if ctx.cancel.is_set():
            raise ToolCancelled("the call was cancelled before the browser acted")
        call = Call(session)
        future = self._submit(lambda: self._run_on_worker(call, action))
        limit = None if ctx.deadline is None else ctx.deadline + _GRACE_S
        interrupted_at: float | None = None
        while True:
            try:
                result: AdapterOutput = future.result(timeout=0.05)
                return result
            except FutureTimeout:
                pass
            now = time.time()
            cancelled = ctx.cancel.is_set()
            if interrupted_at is None and (cancelled or (limit is not None and now > limit)):
                if future.cancel():  # still queued behind other sessions: nothing happened
                    if cancelled:
                        raise ToolCancelled("the call was cancelled before the browser acted")
                    raise TransientError("the browser stayed busy until the deadline")
                interrupted_at = now
                call.effect = effect
                self._interrupt(call, "cancel" if cancelled else "deadline")
            elif interrupted_at is not None and now > interrupted_at + _GRACE_S:
                if effect == "write":
                    raise ResponseLostError("the browser did not answer; the action may have run")
                raise TransientError("the browser did not answer in time")

    def _submit(self, fn: Callable[[], Any]) -> Future[Any]:
        with self._start_lock:
            if self._closed:
                raise PermanentError("the browser adapter is closed")
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="execgraph-browser", daemon=True
                )
                self._thread.start()
            future: Future[Any] = Future()
            self._queue.put((fn, future))
            return future

    def _loop(self) -> None:
        while (item := self._queue.get()) is not None:
            fn, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except BaseException as exc:  # handed to the waiting caller
                future.set_exception(exc)

    def _run_on_worker(self, call: Call, action: Callable[[Call], Any]) -> Any:
        from playwright.sync_api import Error as PlaywrightError

        self._active = call
        try:
            return action(call)
        except ExecGraphError:
            raise
        except PlaywrightError as exc:
            if call.interrupted == "cancel":
                raise ToolCancelled(
                    "the call was cancelled and its page closed; a started action may have run"
                ) from None
            if call.interrupted and call.effect == "write":
                raise ResponseLostError("the page was closed at the deadline mid-action") from None
            if call.interrupted:
                raise TransientError("the page was closed at the deadline") from None
            raise ToolRaised.from_exception(exc) from None
        finally:
            self._active = None

    def _interrupt(self, call: Call, why: str) -> None:
        """Close the page of a running call from the caller's thread.

        Playwright objects belong to the worker, but while it waits inside a sync call its
        asyncio loop is running, so the close is scheduled onto that loop; it only fires if
        the same call is still the active one.
        """
        call.interrupted = why
        page = call.page
        loop = getattr(page, "_loop", None)
        impl = getattr(page, "_impl_obj", None)
        if loop is None or impl is None:
            return

        def close_page() -> None:
            if self._active is call and not impl.is_closed():
                task = loop.create_task(impl.close(run_before_unload=False, reason="cancelled"))
                task.add_done_callback(lambda t: t.cancelled() or t.exception())

        with suppress(RuntimeError):  # loop already closed: nothing left to interrupt
            loop.call_soon_threadsafe(close_page)

    def _ensure_browser(self) -> Any:
        if self._browser is not None:
            return self._browser
        if not Path(self.executable_path).exists():
            raise PermanentError(
                "Chromium was not found; install the system package (apt-get install "
                "chromium) or pass executable_path. execgraph never downloads a browser."
            )
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        try:
            # launch() gives every browser a new, empty user-data-dir (Playwright's temp
            # profile, deleted on close); the resolver rule is the outermost allow-list.
            self._browser = self._pw.chromium.launch(
                executable_path=self.executable_path,
                headless=self.headless,
                args=[*LAUNCH_ARGS, f"--host-resolver-rules={self.policy.resolver_rules()}"],
            )
        except Exception:
            self._pw.stop()
            self._pw = None
            raise PermanentError("Chromium could not be started") from None
        return self._browser

    def _session(self, name: str, create: bool) -> Session:
        session = self._sessions.get(name)
        if session is None:
            if not create:
                raise TargetNotFound(f"browser session {name!r} has no page; navigate first")
            context = self._ensure_browser().new_context(
                service_workers="block", accept_downloads=False
            )
            session = Session(context)
            context.route("**/*", lambda route: self._route(session, route))
            context.route_web_socket("**/*", lambda ws: self._route_ws(session, ws))
            self._sessions[name] = session
        if session.page is None or session.page.is_closed():
            if not create:
                raise TargetNotFound(f"browser session {name!r} has no page; navigate first")
            session.page = session.context.new_page()
        return session

    def _route(self, session: Session, route: Any) -> None:
        url = route.request.url
        if self.policy.allows_request(url):
            route.continue_()
        else:
            session.blocked.append(self.policy.describe(url))
            route.abort("blockedbyclient")

    def _route_ws(self, session: Session, ws: Any) -> None:
        if self.policy.allows_request(ws.url):
            ws.connect_to_server()
        else:
            session.blocked.append(self.policy.describe(ws.url))
            ws.close()

    def _shutdown(self) -> None:
        for session in self._sessions.values():
            with suppress(Exception):
                session.context.close()
        self._sessions.clear()
        if self._browser is not None:
            with suppress(Exception):
                self._browser.close()
        if self._pw is not None:
            with suppress(Exception):
                self._pw.stop()
        self._browser = self._pw = None

    def page(self, call: Call, create: bool = False) -> tuple[Session, Any]:
        """The session and page of ``call`` (worker thread only); a navigation creates them."""
        session = self._session(call.session, create)
        call.page = session.page
        session.blocked.clear()
        return session, session.page

    def settle(self, session: Session, page: Any) -> None:
        """If the page ended up somewhere not allowed (a redirect hop), leave at once."""
        if not self.policy.allows_request(page.url):
            session.blocked.append(self.policy.describe(page.url))
            page.goto("about:blank")
