"""Reads ahead: a step's reads before acting ride on its reuse check (issue 20, the fast step).

A step whose page did nothing since the previous step's after-look reuses
that look (R1, :meth:`core.engine.screen.ScreenTracker.reusable_before`):
one round trip reads the page's change token and compares it.  The same
round trip can read, when the token still matches, what the later phases of
the step would each fetch in a round trip of their own:

* the resolve phase's confirmation of the recorded locator (the page
  library's indices of the elements Playwright's selector matches,
  :func:`core.engine.fastpath.confirm_target`);
* the checkpoint and act phases' probe, kept state and form values
  (:func:`core.engine.acting.read_before_acting`, :func:`~core.engine.acting.act_read`).

The previous step's settle wait can take these reads itself, right after its look and in the same round
trip (:func:`next_reads`, ``wait_settled``'s ``then``): the driver then answers the reuse check without a
call into the page (:meth:`core.perception.driver.PlaywrightDriver.read_ahead`).

The selector and the action kind are the flow step's (its parameters bound)
- the step the decide chain gives on a replay.  Each later phase takes a
read made ahead only when it is for the same selector and kind, the
before-observation is the reused one (the refs the indices name are that
observation's), and the run did not pause since it was made
(:data:`core.engine.acting.PREREAD_PAUSE_S`); otherwise it reads as before.
Nothing acts on the page between the reuse check and the action on the
fast path (the kernel's phases between them only read), so the reads are
the page as the action finds it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Ahead", "UNREAD", "read", "next_reads", "first_reads", "indices", "take"]

#: What :func:`read` returns when the page could not be read (a token that equals none).
UNREAD = object()


@dataclass(frozen=True)
class Ahead:
    """Reads made with a step's reuse check: for ``selector`` (``""``: none) and action ``kind``; ``indices`` as
    :meth:`core.perception.driver.PlaywrightDriver.ref_indices`; ``probe`` as ``probe``; ``read`` what the
    checkpoint's script returned (``scripted``: one was read); ``waited`` the step's ``ctx.waited`` (s) then."""

    selector: str
    kind: str
    indices: tuple[int, ...]
    probe: dict[str, Any]
    read: Any
    scripted: bool
    waited: float


def _expected(ctx: Any, fast: bool) -> tuple[str, str]:
    """(recorded locator, action kind) of the flow step ``ctx`` runs, its parameters bound; ("", "") off it; no
    locator unless ``fast`` (a step looked at in full takes no fast path: its locator is never confirmed)."""
    return _expected_at(ctx.run, ctx.index, fast)


def _expected_at(run: Any, index: int, fast: bool) -> tuple[str, str]:
    """:func:`_expected` for flow step ``index`` of ``run``."""
    from core.engine import fastpath
    from core.project.params import bind_step

    steps = run.flow.steps
    if not 0 <= index < len(steps) or getattr(steps[index], "goal", ""):
        return "", ""
    step = steps[index]
    if not fast:
        return "", step.action.kind
    try:
        bound = bind_step(step, run.params, where=f"{run.flow.name} step {step.id!r}")
    except Exception:  # noqa: BLE001 - an unbound parameter is the decide phase's error to raise
        return "", step.action.kind
    return fastpath.fast_locator(bound, step)[0], step.action.kind


def _reads_for(ex: Any, selector: str, kind: str) -> tuple[str, str, str | None, Any]:
    """``(selector, token_js, script, arg)``: what :func:`read` asks the driver's ``read_ahead`` for."""
    from core.engine.acting import before_acting_script, reads_kind
    from core.perception.pagefacts import TOKEN_JS

    script, arg = before_acting_script() if kind and reads_kind(ex, kind) else (None, None)
    return selector, TOKEN_JS, script, arg


def next_reads(ex: Any, ctx: Any) -> tuple[str, str, str | None, Any] | None:
    """The reads :func:`read` will ask for at the next flow step, for the settle wait of the step ``ctx`` runs
    to take right after its look (``wait_settled``'s ``then``: the next step's reuse check then costs no round
    trip); None when there is no such step (the last one, a goal step, a step off the flow), ``ctx`` is not on
    the fast path, or the driver cannot take them.

    The settle wait ends only once nothing the action set off is pending and the page was calm; the reads are
    taken in that same task, when no DOM mutation came since the wait began.  Between them and the next
    step's action the engine only records and reads (a pause of the run, or anything else asked of the page,
    drops them: :meth:`core.perception.driver.PlaywrightDriver.read_ahead`).
    """
    from core.engine import fastpath

    if (not getattr(ctx, "fast", False) or ctx.source != "flow" or fastpath.full_wanted(ex)
            or not fastpath.accepts(getattr(ex.driver, "wait_settled", None), "then")):
        return None
    selector, kind = _expected_at(ctx.run, ctx.index + 1, True)
    if not kind:
        return None
    return _reads_for(ex, selector, kind)


def first_reads(ex: Any, run: Any) -> tuple[str, str, str | None, Any] | None:
    """The reads the flow's first step makes before acting, for the start page's settle wait to take right after
    its look (``goto``'s ``then``): that look is the first step's before-observation, so the driver answers the
    step's locator confirmation and its probe from them (``ref_indices``, ``probe_and_read``); None when the
    first step takes none (a goal step, no step)."""
    selector, kind = _expected_at(run, 0, True)
    return _reads_for(ex, selector, kind) if kind else None


def read(ex: Any, ctx: Any, token_js: str, last_token: Any, *, fast: bool = False) -> Any:
    """The page's change token (``token_js``) read now, with the reads ahead kept in ``ctx.ahead`` when it equals
    ``last_token`` (the locator's indices only when ``fast``: :func:`_expected`); None when the driver cannot read ahead (the caller reads the token itself); :data:`UNREAD`
    when the page could not be read (no reuse)."""
    driver = ex.driver
    fn = getattr(driver, "read_ahead", None)
    if fn is None or ctx.attempt != 1:
        return None
    selector, kind = _expected(ctx, fast)
    _, _, script, arg = _reads_for(ex, selector, kind)
    try:
        got = fn(selector, token_js, last_token, script, arg)
    except Exception:  # noqa: BLE001 - a page that breaks the read only loses the reuse
        return UNREAD
    if not isinstance(got, dict):
        return UNREAD
    if not got.get("same"):
        return got.get("token")
    ctx.ahead = Ahead(selector, kind, tuple(got.get("indices") or ()), dict(got.get("probe") or {}), got.get("read"),
                      script is not None, float(ctx.waited))
    return last_token


def indices(ctx: Any, selector: str) -> list[int] | None:
    """The indices read ahead for ``selector`` (the before-observation being the reused one), else None."""
    a = getattr(ctx, "ahead", None)
    if a is None or not selector or a.selector != selector or not ctx.reused:
        return None
    return list(a.indices)


def take(ctx: Any, *, scripted: bool) -> Ahead | None:
    """The reads ahead for the step's action, when they still stand: same kind, the reused before-observation,
    no pause since (:data:`core.engine.acting.PREREAD_PAUSE_S`), and a script read when ``scripted``."""
    from core.engine.acting import PREREAD_PAUSE_S

    a = getattr(ctx, "ahead", None)
    if (a is None or ctx.step is None or a.kind != ctx.step.action.kind or not ctx.reused or not a.probe
            or (scripted and not a.scripted) or float(ctx.waited) - a.waited > PREREAD_PAUSE_S):
        return None
    return a
