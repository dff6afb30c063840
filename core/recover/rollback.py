"""Checkpoints and rollback to them (R3), and dismissing popups (failure kind 14).

:func:`take_checkpoint` keeps the state before a step acts: the state
signature, URL, dialogs, screenshot path and form values - a secret value
only by its keyed digest (HMAC-SHA-256, a random key per process), never in clear (architecture rule 7).

:func:`roll_back` undoes a reversible step's effect before it is retried:

1. close the dialogs and overlays opened since the checkpoint, each by a
   control whose meaning is close / dismiss
   (:func:`core.recover.dismiss.choose_dismiss`), else Escape - never one
   of the options it offers (first: a modal dialog makes the page behind it
   inert); one that asks for a choice and stays is left to a person;
2. run the step's compensations (actions of the closed action space), and
   close any popup they opened;
3. go back to the checkpoint's URL when the page left it;
4. set the form values back (a secret from the bound parameter with the same digest);
5. verify against the checkpoint's signature (URL, dialogs and form values);
6. reload the checkpoint's URL and restore the values again when it still differs;
   the result says whether the state now matches.

Every loop is bounded: at most :data:`MAX_DISMISS` popups closed, one reload.
Used by the step pipeline (:mod:`core.engine.pipeline`) through the driver's
public interface (``observe``, ``perform``, ``refs_for_selector``,
``evaluate``, ``goto``).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from core.progress import counted
from core.domain import Action, Candidate, Checkpoint, FieldValue, Observation, Step
from core.locate import resolve
from core.perception.driver import ActionError, NavigationError
from core.perception.pagefacts import form_values, overlays, restore_form

from .dismiss import choose_dismiss

__all__ = ["take_checkpoint", "digest", "RollbackResult", "roll_back", "dismiss_popups", "run_compensations",
           "same_state", "MAX_DISMISS", "QUIET_MS", "NOT_CLOSED", "popup_problem", "wait_gone"]

#: Most popups closed in one recovery (nested dialogs, a banner over a modal).
MAX_DISMISS = 4


#: The key of :func:`digest`: 32 random bytes drawn when the process starts and never written anywhere, so a
#: digest kept in a checkpoint (and in the store) cannot be checked against a word list (issue 21 item 5: an
#: unsalted SHA-256 of the password was cracked offline).  Checkpoints are compared within the run that took them.
_DIGEST_KEY = os.urandom(32)


def digest(value: str) -> str:
    """HMAC-SHA-256 hex (64 chars) of a secret value under this process's random key: how a checkpoint keeps it.

    The same value gives the same digest within one process (a rollback finds the bound parameter that restores a
    field); without the key, which is never written, the digest says nothing about the value.
    """
    return hmac.new(_DIGEST_KEY, value.encode("utf-8"), hashlib.sha256).hexdigest()


def take_checkpoint(driver: Any, *, run_id: str, flow: str, index: int, step: Step, before: Observation,
                    reversible: bool, side_effects: tuple[str, ...], secrets: tuple[str, ...] = (),
                    screenshot: str = "", values: list[dict[str, Any]] | None = None) -> Checkpoint:
    """The checkpoint before ``step`` acts (R3).

    Parameters
    ----------
    driver
        Reads the form values (``evaluate``); a driver that cannot gives none.
    before : Observation
        The page before the action (its signature digest, URL and dialogs).
    secrets : tuple[str, ...]
        Secret values in play (declared secrets, bound secret parameters): a
        field holding one, like a password field, keeps only its digest.
    screenshot : str
        Media path of the before screenshot in the store ("" when none).
    values : list[dict] | None
        The form values as :func:`core.perception.pagefacts.form_values` gives them, read by the caller in a
        round trip it made anyway (:func:`core.engine.acting.read_before_acting`); None reads them now.
    """
    fields: list[FieldValue] = []
    for item in (values if values is not None else form_values(driver)) or ():
        value = str(item.get("value", ""))
        secret = bool(item.get("password")) or (value != "" and value in secrets)
        fields.append(FieldValue(str(item.get("key", "")), str(item.get("label", "")), "" if secret else value,
                                 item.get("checked"), digest(value) if secret and value else ""))
    return Checkpoint(run_id, flow, index, step.id, before.url, before.signature.digest, reversible,
                      side_effects, screenshot=screenshot, modal_titles=tuple(before.modal_titles),
                      fields=tuple(fields), step_state="running")


def same_state(cp_obs: Observation | None, cp: Checkpoint, now: Observation) -> list[str]:
    """What differs between the checkpoint and ``now`` (empty: the same state).

    Compared: URL, the dialog stack and the form values (by digest) - what
    a rollback restores.  The page's other content (a list that grew, a
    clock) is not: a reload for it would lose the page's own state.
    ``cp_obs`` is the observation the checkpoint was taken on (None: URL and dialogs only).
    """
    out = []
    if now.url.split("#")[0] != cp.url.split("#")[0]:
        out.append(f"URL {now.url} instead of {cp.url}")
    if len(now.modal_titles) != len(cp.modal_titles):
        out.append(f"{counted(len(now.modal_titles), 'dialog')} open instead of {len(cp.modal_titles)}")
    if cp_obs is not None and now.signature.values_digest != cp_obs.signature.values_digest:
        out.append("form values differ")
    return out


@dataclass
class RollbackResult:
    """What a rollback did: ``ok`` when the page matches the checkpoint again; ``done`` lists the steps taken."""

    ok: bool
    done: list[str] = field(default_factory=list)
    reason: str = ""


def _press_escape(driver: Any) -> None:
    driver.perform(Action("press", value="Escape"), None, "Escape")


#: How long a dismissed popup may take to leave the page (a fade, a slide-out), in ms: its element must be
#: detached or hidden within it.  1,500 ms covers the libraries' own animations (Bootstrap's modal fade is
#: 300 ms, sweetalert2's hide ~150 ms, micromodal's demo 300 ms, a 1 s banner fade) with room to spare.
QUIET_MS = 1500
#: Time between two looks while waiting for a popup to leave, in ms.
QUIET_POLL_MS = 100
#: The line :func:`dismiss_popups` adds when a popup stays: the step escalates.
NOT_CLOSED = "the popup did not close"


def wait_gone(driver: Any, point: tuple[float, float] | None, count: int, *, limit_ms: float = QUIET_MS,
          sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]] | None:
    """The overlays once fewer than ``count`` are open, or as they stand after ``limit_ms`` (ms).

    Looks every :data:`QUIET_POLL_MS` after the driver's settle: a popup that
    fades or slides out is still drawn (opacity between 0 and 1) until its
    animation ends, then detached or hidden.  None when they cannot be read.
    """
    end = time.monotonic() + limit_ms / 1000.0
    after = overlays(driver, point)
    while after is not None and len(after) >= count and time.monotonic() < end:
        sleep(QUIET_POLL_MS / 1000.0)
        after = overlays(driver, point)
    return after


def dismiss_popups(driver: Any, *, keep: int = 0, point: tuple[float, float] | None = None,
                   observe: Callable[[], Observation], quiet_ms: float = QUIET_MS) -> list[str]:
    """Close the popups over the page, keeping the ``keep`` outermost dialogs (failure kind 14).

    Each is closed by a control whose meaning is close / dismiss, else
    Escape (:func:`core.recover.dismiss.choose_dismiss`): never one of the
    options a popup offers (Accept / Reject, Keep / Delete, OK / Cancel) -
    a popup that asks for a choice and does not close on Escape is left to
    a person (the line "the popup asks for a choice ..." and
    :data:`NOT_CLOSED`).  ``point`` (CSS px) also finds an overlay over that
    point (the target a pre-check found covered).  After each press the page
    is looked at again until the popup has left, at most ``quiet_ms`` (ms,
    :data:`QUIET_MS`): a popup that fades out is cleared, not "stuck".
    Returns what was done, one line each; stops after :data:`MAX_DISMISS`
    or when a popup does not close.
    """
    done: list[str] = []
    for _ in range(MAX_DISMISS):
        found = overlays(driver, point)
        if not found or len(found) <= keep:
            break
        top = found[-1]
        choice = choose_dismiss(top)
        try:
            if choice.escape:
                _press_escape(driver)
            else:
                matches = driver.refs_for_selector(f'[data-steadyhand-ov="{choice.key}"]')
                if len(matches) != 1:
                    _press_escape(driver)
                    choice = choose_dismiss({"name": top.get("name"), "controls": []})
                else:
                    driver.perform(Action("click"), matches[0].ref, "")
        except ActionError as exc:
            done.append(f"could not dismiss the popup: {exc}")
            break
        driver.wait_settled()
        done.append(choice.reason)
        after = wait_gone(driver, point, len(found), limit_ms=quiet_ms)
        if after is not None and len(after) >= len(found):
            if not choice.escape:  # the control did not close it: Escape once more, then give up
                _press_escape(driver)
                driver.wait_settled()
                after = wait_gone(driver, point, len(found), limit_ms=quiet_ms)
                done.append("pressed Escape")
            if after is not None and len(after) >= len(found):
                if choice.asks:
                    what = f" {top.get('name')!r}" if top.get("name") else ""
                    done.append(f"the popup{what} asks for a choice ("
                                + " / ".join(repr(c) for c in choice.choices[:4])
                                + "): the engine does not choose for you - answer it, or approve a skill that does")
                done.append(NOT_CLOSED)
                break
    observe()  # refresh the driver's refs for what follows
    return done


def popup_problem(done: list[str]) -> str:
    """Why the popups of a :func:`dismiss_popups` result are still in the way, for the person ("" when the
    page was cleared): the choice it asks for, else "the popup could not be dismissed"."""
    if NOT_CLOSED not in done and not any(d.startswith("could not") for d in done):
        return ""
    asks = next((d for d in done if " asks for a choice " in d), "")
    return asks or "the popup could not be dismissed"


def run_compensations(driver: Any, step: Step, *, params: Mapping[str, str],
                      observe: Callable[[], Observation], bind: Callable[[Step], Step]) -> list[str]:
    """Run ``step``'s compensations in order (R3); returns what was done.

    A compensation with a target is found by its selector (one match) or the
    locator chain on a fresh observation; one that cannot be found or fails
    stops the list (raises :class:`ActionError` naming it).
    """
    done: list[str] = []
    for comp in step.compensations:
        c = bind(comp)
        ref: str | None = None
        if c.selector or not c.target.is_empty:
            obs = observe()
            cand: Candidate | None = None
            if c.selector:
                matches = driver.refs_for_selector(c.selector)
                cand = matches[0] if len(matches) == 1 else None
            if cand is None and not c.target.is_empty:
                r = resolve(c.target, obs.candidates, anchors=obs.anchors)
                cand = next((x for x in obs.candidates if x.ref == r.ref), None) if not r.abstained else None
            if cand is None:
                raise ActionError(f"compensation {c.title!r}: its target was not found")
            ref = cand.ref
        driver.perform(c.action, ref, c.action.value)
        driver.wait_settled()
        done.append(f"compensation {c.title!r} done")
    return done


def _restore_values(driver: Any, cp: Checkpoint, params: Mapping[str, str]) -> int:
    by_digest = {digest(v): v for v in params.values() if v}
    items = []
    for f in cp.fields:
        if f.secret:
            if f.digest not in by_digest:
                continue  # a secret we cannot name again: left as it is
            items.append({"key": f.key, "value": by_digest[f.digest], "checked": None})
        else:
            items.append({"key": f.key, "value": f.value, "checked": f.checked})
    if items:
        restore_form(driver, items)
    return len(items)


def roll_back(driver: Any, cp: Checkpoint, step: Step, *, cp_obs: Observation | None, params: Mapping[str, str],
              observe: Callable[[], Observation], bind: Callable[[Step], Step]) -> RollbackResult:
    """Undo a reversible step's effect and return to its checkpoint (R3; steps in the module docstring).

    Never raises for a page that will not cooperate: the result's ``ok`` is
    False with the reason, and the caller escalates.  A
    :class:`~core.perception.driver.BrowserClosedError` propagates (the run ends).
    """
    res = RollbackResult(False)
    try:
        # popups first: a modal dialog makes the page behind it inert, so a compensation could not be pressed
        res.done += dismiss_popups(driver, keep=len(cp.modal_titles), observe=observe)
        if step.compensations:
            res.done += run_compensations(driver, step, params=params, observe=observe, bind=bind)
            res.done += dismiss_popups(driver, keep=len(cp.modal_titles), observe=observe)
        now = observe()
        if now.url.split("#")[0] != cp.url.split("#")[0]:
            driver.goto(cp.url)
            res.done.append(f"went back to {cp.url}")
        if _restore_values(driver, cp, params):
            driver.wait_settled()
            res.done.append("restored the form values")
        diff = same_state(cp_obs, cp, observe())
        if diff:
            driver.goto(cp.url)
            _restore_values(driver, cp, params)
            driver.wait_settled()
            res.done.append(f"reloaded {cp.url} ({'; '.join(diff)})")
            diff = same_state(cp_obs, cp, observe())
    except (ActionError, NavigationError) as exc:
        res.reason = f"rollback failed: {exc}"
        return res
    res.ok = not diff
    res.reason = "back at the checkpoint" if res.ok else "rollback did not restore the checkpoint: " + "; ".join(diff)
    return res
