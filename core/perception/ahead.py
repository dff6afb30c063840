"""The next flow's fresh browser context, made while the session ends the current flow.

Every flow of a bundled site starts in a fresh context (no cookies, no
storage) with the page library and the network watch's keepalive hook in
its init script (:meth:`core.perception.driver.PlaywrightDriver.new_context_page`).
Making one is four round trips to Chromium - ``Browser.newContext``,
``exposeBinding``, ``addInitScript`` and ``newPage`` - of which ``newPage``
starts a renderer process: about 200 ms on the 2-core test machine, paid
between two flows.  :class:`ContextAhead` sends those four calls as one
task on Playwright's own event loop instead, without waiting for it, once a
flow's steps are over (:meth:`~core.perception.driver.PlaywrightDriver.prepare_next_context`):
Chromium starts the renderer while the session keeps the run's records and
resets the site, and the task goes on whenever the engine thread is inside
any Playwright call.  The next flow takes the context when it is ready
(:meth:`take`), or waits for the rest of it.  Not made while a flow's steps
run: a second page being made then slowed the flow's steps by more than it
saved on the 2-core test machine.

The context is unused until taken: never navigated, no page script run, so
it is as fresh as one made at the flow's start.  Used from the one thread
that owns Playwright (architecture rule 10).
"""
from __future__ import annotations

import asyncio
import inspect
from typing import Any, Callable, Mapping

__all__ = ["ContextAhead", "Prepared", "impl_call", "close_later"]

#: ``(context, page, exposed)``: Playwright's sync objects of a context made ahead and its first page, and
#: whether the keepalive binding was exposed in it.
Prepared = tuple[Any, Any, bool]


def impl_call(obj: Any, method: str, **kwargs: Any) -> Any:
    """The coroutine of Playwright's own (async) ``obj.<method>``, for a sync API object ``obj``.

    The sync wrapper passes every parameter of the async method by name, unset ones as None; so does this
    (Playwright's sync objects convert arguments the same way, ``mapping.to_impl``).
    """
    from playwright.sync_api._generated import mapping

    fn = getattr(obj._impl_obj, method)  # noqa: SLF001 - the one way to call Playwright without waiting
    names = inspect.signature(fn).parameters
    return fn(**{n: mapping.to_impl(kwargs.get(n)) for n in names})


class ContextAhead:
    """One fresh context with its first page, being made on Playwright's loop (see the module doc).

    Parameters
    ----------
    browser : playwright.sync_api.Browser
        The browser to make it in.
    options : Mapping[str, Any]
        ``Browser.new_context`` keywords (viewport, device scale factor, locale, time zone).
    script : str
        The init script of the context when ``binding`` is exposed (the page library and the keepalive hook).
    plain_script : str
        The init script when the binding could not be exposed (the page library alone).
    binding : tuple[str, Callable] | None
        ``(name, callback)`` of the keepalive binding, exposed before the init script and the page.
    """

    def __init__(self, browser: Any, options: Mapping[str, Any], script: str, plain_script: str,
                 binding: tuple[str, Callable[..., Any]] | None) -> None:
        from playwright.sync_api._generated import mapping

        self._browser = browser
        self._mapping = mapping
        self._loop: asyncio.AbstractEventLoop = browser._loop  # noqa: SLF001
        self._options = dict(options)
        self._script, self._plain_script, self._binding = script, plain_script, binding
        #: The context's sync object once ``Browser.newContext`` answered (to close it when discarded).
        self.context: Any = None
        #: The close sent by :meth:`discard` (a task on Playwright's loop), None before.
        self.closing: Any = None
        self._discarded = False
        self._task: asyncio.Task[Prepared] = self._loop.create_task(self._make())
        self._task.add_done_callback(_retrieve)

    async def _make(self) -> Prepared:
        ctx_impl = await impl_call(self._browser, "new_context", **self._options)
        context = self._mapping.from_impl(ctx_impl)
        self.context = context
        script, exposed = self._plain_script, False
        if self._binding is not None:
            name, callback = self._binding
            try:
                await impl_call(context, "expose_binding", name=name, callback=self._mapping.wrap_handler(callback))
                script, exposed = self._script, True
            except Exception:  # noqa: BLE001 - exposed already: the page library alone, as NetHook.install does
                pass
        await impl_call(context, "add_init_script", script=script)
        page_impl = await impl_call(context, "new_page")
        return context, self._mapping.from_impl(page_impl), exposed

    @property
    def ready(self) -> bool:
        """Whether the context and its page are made (or the making failed)."""
        return self._task.done()

    def take(self, limit_ms: float) -> Prepared | None:
        """The context, its page and whether the binding was exposed, waiting up to ``limit_ms`` for the
        rest of the making; None when it failed, the browser went away, or it was not done in time (then it is
        discarded: closed once made)."""
        task = self._task
        if not task.done():
            try:
                self._browser._sync(asyncio.wait_for(asyncio.shield(task), limit_ms / 1000.0))  # noqa: SLF001
            except Exception:  # noqa: BLE001 - too slow or the connection closed: made the usual way instead
                self.discard()
                return None
        if task.cancelled() or task.exception() is not None:
            self.discard()
            return None
        return task.result()

    def discard(self) -> None:
        """Close the context once made (never waits, never raises; once)."""
        task = self._task
        if self._discarded:
            return
        self._discarded = True

        def close(_: Any = None) -> None:
            if self.context is not None:
                self.closing = close_later(self.context)

        if task.done():
            close()
        else:
            task.add_done_callback(close)


def close_later(context: Any) -> "asyncio.Task[Any] | None":
    """Send ``context``'s close to Chromium without waiting for it (it goes on during the next Playwright
    calls); the task, None when it could not be sent.  Never raises."""
    try:
        loop = context._loop  # noqa: SLF001
        if loop.is_closed():
            return None
        task = loop.create_task(impl_call(context, "close"))
        task.add_done_callback(_retrieve)
        return task
    except Exception:  # noqa: BLE001 - a context whose browser is gone
        return None


def _retrieve(task: "asyncio.Future[Any]") -> None:
    """Read a finished background task's error (so that asyncio never reports it as never retrieved)."""
    if not task.cancelled():
        task.exception()
