"""Browser adapter: Debian's Chromium driven by Playwright, confined to a host allow-list.

Each session (the lock key ``browser:{session}``) is its own browser context and page, so
cookies and storage never cross sessions. Playwright's sync API is bound to one thread, so a
worker thread per adapter owns it (:mod:`execgraph.tools.adapters._browser_worker`); the executor's
pool threads queue actions to it and wait, watching cancel and deadline.

The allow-list is enforced in three places, outermost first: Chromium's own resolver maps
every host that is not allowed to "not found" (so redirect hops, workers, prefetches and
sockets cannot reach one either); every request the page makes goes through
``context.route`` and is aborted unless its scheme, host and port are allowed; and a
navigation is checked before it starts (refused, nothing contacted) and after it ends.
Needs ``playwright`` (``pip install "execgraph[browser]"``) and a system Chromium; a
browser is never downloaded.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from execgraph.state.contracts import Evidence
from execgraph.state.errors import (
    ExecGraphError,
    PermanentError,
    PolicyDenied,
    TargetNotFound,
    TransientError,
)
from execgraph.tools.adapters._browser_policy import HostPolicy
from execgraph.tools.adapters._browser_worker import LAUNCH_ARGS, BrowserWorker, Call
from execgraph.tools.invocation import AdapterOutput, InvokeContext
from execgraph.tools.spec import ToolSpec

__all__ = ["LAUNCH_ARGS", "BrowserAdapter"]

_BROWSER_HINT = 'pip install "execgraph[browser]"'
_DEFAULT_TIMEOUT_S = 30.0


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    session: str = Field(default="default", pattern=r"^[A-Za-z0-9_-]{1,64}$")


class NavigateArgs(_Args):
    """Open ``url`` in the session's page."""

    url: str = Field(min_length=1, max_length=4096)
    wait_until: Literal["load", "domcontentloaded", "networkidle", "commit"] = "load"


class SelectorArgs(_Args):
    """Act on the first element matching a Playwright selector."""

    selector: str = Field(min_length=1, max_length=1000)


class FillArgs(SelectorArgs):
    """Type ``value`` into an input."""

    value: str = Field(max_length=100_000)


class ReadTextArgs(_Args):
    """Read the visible text of an element (the whole page by default)."""

    selector: str = Field(default="body", min_length=1, max_length=1000)


class ScreenshotArgs(_Args):
    """Capture the page as PNG."""

    full_page: bool = False


class BrowserAdapter:
    """Browser tools over one Chromium, one isolated context and page per session.

    Args:
        allowed_hosts: ``example.com``, ``*.example.com`` or ``host:port``; nothing else
            is ever contacted.
        executable_path: Chromium binary; default ``chromium`` on PATH or /usr/bin/chromium.
        allow_private: Allow loopback, private and link-local addresses (off by default).
        headless: Run without a window.
    """

    name = "browser"

    def __init__(
        self,
        allowed_hosts: Iterable[str],
        *,
        executable_path: str | None = None,
        allow_private: bool = False,
        headless: bool = True,
    ) -> None:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            raise ImportError(f"the browser adapter needs playwright: {_BROWSER_HINT}") from None
        self.policy = HostPolicy(allowed_hosts, allow_private=allow_private)
        self.executable_path = executable_path or shutil.which("chromium") or "/usr/bin/chromium"
        self._worker = BrowserWorker(self.policy, self.executable_path, headless)

    # ------------------------------------------------------------------ Adapter protocol

    def tools(self) -> list[ToolSpec]:
        """browser_navigate, browser_click, browser_fill, browser_read_text, browser_screenshot."""

        def spec(name: str, model: type[BaseModel], effect: Any, run: Any, doc: str) -> ToolSpec:
            return ToolSpec(name=name, version="1.0.0", description=doc, input_model=model,
                            effect=effect, run=run, locks=("browser:{session}",))  # fmt: skip

        return [
            spec("browser_navigate", NavigateArgs, "read", self._navigate,
                 "Open an http(s) URL on an allowed host in a browser session."),
            spec("browser_click", SelectorArgs, "write", self._click,
                 "Click the first element matching a selector."),
            spec("browser_fill", FillArgs, "write", self._fill,
                 "Fill an input matching a selector with a value."),
            spec("browser_read_text", ReadTextArgs, "read", self._read_text,
                 "Read the visible text of the page or of one element (bounded)."),
            spec("browser_screenshot", ScreenshotArgs, "read", self._screenshot,
                 "Capture the page as a PNG artifact."),
        ]  # fmt: skip

    def close(self) -> None:
        """Close every session, the browser and Playwright, then stop the worker thread."""
        self._worker.close()

    # ------------------------------------------------------------------ tools (caller side)

    def _navigate(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, NavigateArgs)
        self.policy.check_navigation(args.url)  # refused before anything is contacted
        return self._worker.run(
            args.session, ctx, "read", lambda c: self._do_navigate(args, ctx, c)
        )

    def _click(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, SelectorArgs)
        return self._worker.run(args.session, ctx, "write", lambda c: self._do_click(args, ctx, c))

    def _fill(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, FillArgs)
        return self._worker.run(args.session, ctx, "write", lambda c: self._do_fill(args, ctx, c))

    def _read_text(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, ReadTextArgs)
        return self._worker.run(args.session, ctx, "read", lambda c: self._do_read(args, ctx, c))

    def _screenshot(self, args: BaseModel, ctx: InvokeContext) -> AdapterOutput:
        assert isinstance(args, ScreenshotArgs)
        return self._worker.run(args.session, ctx, "read", lambda c: self._do_shot(args, ctx, c))

    # ------------------------------------------------------------------ actions (worker)

    def _missing(self, page: Any, selector: str, exc: Exception) -> ExecGraphError:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        if not isinstance(exc, PlaywrightTimeout):
            return PermanentError("the selector is invalid or the element cannot take this action")
        if page.locator(selector).count() == 0:
            return TargetNotFound("no element matches the selector")
        return TransientError("the element was not ready before the deadline")

    def _do_navigate(self, args: NavigateArgs, ctx: InvokeContext, call: Call) -> AdapterOutput:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        session, page = self._worker.page(call, create=True)
        failed: list[str] = []

        def on_failed(request: Any) -> None:
            failed.append(request.url)

        page.on("requestfailed", on_failed)
        try:
            response = page.goto(args.url, timeout=_timeout_ms(ctx), wait_until=args.wait_until)
        except PlaywrightTimeout:
            if call.interrupted:
                raise
            raise TransientError("the page did not load before the deadline") from None
        except PlaywrightError as exc:
            if call.interrupted:
                raise
            if session.blocked or not all(self.policy.allows_request(u) for u in failed):
                raise PolicyDenied(
                    "the navigation was redirected to a host outside the allow-list; that "
                    "host was not contacted"
                ) from None
            code = _NET_ERROR.search(str(exc))
            raise TransientError(
                f"the page could not be loaded ({code.group(0) if code else 'browser error'})"
            ) from None
        finally:
            page.remove_listener("requestfailed", on_failed)
        if not self.policy.allows_request(page.url):
            self._worker.settle(session, page)
            raise PolicyDenied("the navigation was redirected outside the allow-list; page cleared")
        status = response.status if response is not None else None
        value = {"url": page.url, "status": status, "title": page.title()}
        return AdapterOutput(
            data={**value, "blocked_requests": sorted(set(session.blocked))},
            committed=None,
            summary=f"opened {page.url} (HTTP {status})",
            evidence=(_evidence(ctx, f"browser:{args.session}:page", "browser_page", value,
                                verified=True),),
        )  # fmt: skip

    def _do_click(self, args: SelectorArgs, ctx: InvokeContext, call: Call) -> AdapterOutput:
        from playwright.sync_api import Error as PlaywrightError

        session, page = self._worker.page(call)
        try:
            page.locator(args.selector).first.click(timeout=_timeout_ms(ctx))
        except PlaywrightError as exc:
            if call.interrupted:
                raise
            raise self._missing(page, args.selector, exc) from None
        self._worker.settle(session, page)
        value = {"action": "click", "selector": args.selector, "url": page.url}
        return AdapterOutput(
            data={**value, "blocked_requests": sorted(set(session.blocked))},
            committed=True,
            summary=f"clicked {args.selector}",
            evidence=(_evidence(ctx, f"browser:{args.session}:action", "browser_action", value),),
        )

    def _do_fill(self, args: FillArgs, ctx: InvokeContext, call: Call) -> AdapterOutput:
        from playwright.sync_api import Error as PlaywrightError

        session, page = self._worker.page(call)
        locator = page.locator(args.selector).first
        try:
            locator.fill(args.value, timeout=_timeout_ms(ctx))
            # Read-after-write: the field holds the value now (not merely "fill returned").
            matches = locator.input_value(timeout=_timeout_ms(ctx)) == args.value
        except PlaywrightError as exc:
            if call.interrupted:
                raise
            raise self._missing(page, args.selector, exc) from None
        self._worker.settle(session, page)
        # The value may be a secret: evidence carries its hash, never the text.
        value = {"selector": args.selector, "value_sha256": _sha(args.value.encode()),
                 "matches": matches}  # fmt: skip
        return AdapterOutput(
            data={"filled": args.selector, "matches": matches, "url": page.url},
            committed=True,
            summary=f"filled {args.selector}" + ("" if matches else " (value did not stick)"),
            evidence=(_evidence(ctx, f"browser:{args.session}:input:{args.selector}",
                                "browser_input", value, verified=matches),),
        )  # fmt: skip

    def _do_read(self, args: ReadTextArgs, ctx: InvokeContext, call: Call) -> AdapterOutput:
        from playwright.sync_api import Error as PlaywrightError

        _, page = self._worker.page(call)
        try:
            text = page.locator(args.selector).first.inner_text(timeout=_timeout_ms(ctx))
        except PlaywrightError as exc:
            if call.interrupted:
                raise
            raise self._missing(page, args.selector, exc) from None
        raw = text.encode()
        shown = raw[: max(0, ctx.output_budget)].decode(errors="ignore")
        truncated = len(shown) < len(text)
        value = {"url": page.url, "selector": args.selector, "text_sha256": _sha(raw),
                 "chars": len(text)}  # fmt: skip
        return AdapterOutput(
            data={"text": shown, "url": page.url, "chars": len(text)},
            committed=None,
            summary=f"read {len(text)} characters" + (" (truncated)" if truncated else ""),
            evidence=(_evidence(ctx, f"browser:{args.session}:text:{args.selector}",
                                "browser_text", value, verified=True),),
            truncated=truncated,
        )  # fmt: skip

    def _do_shot(self, args: ScreenshotArgs, ctx: InvokeContext, call: Call) -> AdapterOutput:
        from playwright.sync_api import Error as PlaywrightError

        _, page = self._worker.page(call)
        try:
            png = page.screenshot(type="png", full_page=args.full_page, timeout=_timeout_ms(ctx))
        except PlaywrightError:
            if call.interrupted:
                raise
            raise TransientError("the screenshot was not taken before the deadline") from None
        try:
            ref = ctx.put_artifact(png, "screenshot")
        except RuntimeError:
            raise PermanentError("no artifact store is attached to store the screenshot") from None
        value = {"url": page.url, "png_sha256": _sha(png), "bytes": len(png)}
        return AdapterOutput(
            data={"ref": ref, **value},
            committed=None,
            summary=f"screenshot of {page.url} ({len(png)} bytes)",
            evidence=(_evidence(ctx, f"browser:{args.session}:screenshot", "screenshot", value,
                                ref=ref, verified=True),),
        )  # fmt: skip


_NET_ERROR = re.compile(r"net::ERR_[A-Z_]+")


def _timeout_ms(ctx: InvokeContext) -> float:
    remaining = ctx.remaining_s()
    return max(1.0, (_DEFAULT_TIMEOUT_S if remaining is None else remaining) * 1000)


def _evidence(
    ctx: InvokeContext, source: str, kind: str, value: dict[str, Any], **kw: Any
) -> Evidence:
    return Evidence(source_id=source, kind=kind, value=json.dumps(value, sort_keys=True),
                    call_id=ctx.call_id, observed_at=time.time(), **kw)  # fmt: skip


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
