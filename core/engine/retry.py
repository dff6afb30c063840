"""``run --retries N``: whether a flow run that did not pass may be run once more (never repeating an effect).

A retry runs the whole flow again from its start page.  That is safe only when the failed run wrote nothing,
judged by the engine's own record in the store (:class:`core.store.resumes.RunState`, the rows
:mod:`core.engine.resume` reads), never by the run's status alone:

* an action that may write (``step_acts``, :func:`core.engine.acting.note_acting`: a click, key press,
  navigation or upload not declared reversible, or any action of a step declared irreversible) was about to
  be performed: refused, unless the run saw that step write nothing (``seen``, from
  :mod:`core.engine.plugins.writes_seen`: its requests were watched, none that writes was accepted - a 4xx
  answer is the server's refusal, not a write - and the page keeps nothing new), or the step is a sign-in
  (:func:`core.engine.resume._is_sign_in`: a click right after a secret was typed), since a new session is
  no user data;
* a checkpoint found a step not reversible, or lists data already written (S6): refused;
* the failure is bad input, a broken environment, a person's stop or the step budget (``error_kind``
  ``parameter``, ``unreachable``, ``internal``, ``stopped``, ``budget``): refused, a second run says the same;
* the run is not in a store (``--no-store``): refused, nothing says what it wrote.

:func:`retry_refusal` returns ``""`` when the run may be retried, else the reason in plain words.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from core.domain import Flow, RunResult
from core.engine.resume import _is_sign_in

__all__ = ["NOT_RETRIED_KINDS", "retry_refusal"]

#: Error kinds a second run would only repeat: bad input, the environment, a person's stop, the step budget.
NOT_RETRIED_KINDS = ("parameter", "unreachable", "internal", "stopped", "budget")


def retry_refusal(store: Any, result: RunResult, flow: Flow, secrets: Sequence[str] = (),
                  seen: Mapping[int, str] | None = None) -> str:
    """Why ``result`` (a run of ``flow``) must not be run again; ``""`` when it may.

    Parameters
    ----------
    store : core.store.Store or None
        The open store the run was recorded in (None: ``--no-store``).
    secrets : sequence of str
        The project's declared secret names (a click after one of them was typed is a sign-in).
    seen : mapping step index -> str, optional
        What the run saw each step that acted write (``"wrote"``, ``"none"``, ``""`` unknown;
        :class:`core.engine.plugins.writes_seen.WritesSeenPlugin`); None: not watched (every action that may
        write counts as a write).
    """
    if result.passed:
        return "it passed"
    if result.error_kind in NOT_RETRIED_KINDS:
        return f"a failure of kind {result.error_kind!r} is not one a second run changes"
    if store is None:
        return "the run was not recorded (--no-store), so nothing says what it wrote"
    from core.store.resumes import ResumeTable

    try:
        state = ResumeTable(store).state(result.run_id)
    except Exception as exc:  # noqa: BLE001 - an unreadable record: unsure, so no retry
        return f"the store's record of the run cannot be read ({exc})"
    if state is None:
        return "the store has no record of the run"
    for i in sorted(state.acts):
        if i < len(flow.steps) and _is_sign_in(i, flow, tuple(secrets)):
            continue
        if seen is not None and seen.get(i) == "none":
            continue  # watched: nothing accepted by the server, nothing kept by the page
        title = flow.steps[i].title if i < len(flow.steps) else ""
        return f"step {i + 1}{f' ({title})' if title else ''} performed an action that may write"
    # a sign-in's write is a new session, which a resume replays as a re-login: not the user's data
    sign_ins = tuple(f"step {i + 1} " for i in range(len(flow.steps)) if _is_sign_in(i, flow, tuple(secrets)))
    for i in sorted(state.checkpoints):
        if i < len(flow.steps) and _is_sign_in(i, flow, tuple(secrets)):
            continue
        cp = state.checkpoints[i]
        written = [str(line) for line in cp.get("side_effects", ()) if not str(line).startswith(sign_ins)]
        if written:
            return f"the run wrote data: {written[0]}"
        if not cp.get("reversible", True):
            return f"step {i + 1} was found to write"
    return ""
