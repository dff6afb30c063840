"""A human on the engine's own page: record what they do, and keep it as a correction after the hand-back.

A plugin of the step kernel (:class:`TakeoverPlugin`).  When a takeover begins
(hook ``takeover_begins``, from :func:`core.engine.pipeline._take_over`), the
recording listener (:class:`core.record.listener.RecordingListener`) is
attached to the page the engine drives, on the engine thread (architecture
rule 1): every action a person does there - clicked in the studio's live
view and forwarded (:data:`TAKEOVER_INPUTS`), done in the real Chromium
window of a headed run, or done by a script connected over CDP - becomes a
step with the same full descriptor as a recording (role, accessible name,
label, text, anchor, crop, signatures before and after).  While the
takeover lasts the run control pumps the listener between commands
(:meth:`TakeoverRecording.pump`), so the page's events are delivered and the
live view gets fresh frames (:class:`~core.engine.events.TakeoverFrame`).

At the hand-back (hooks ``takeover_ends``, ``takeover_handed_back``) the
listener is detached and the manual segment is stored
as a correction (:class:`core.store.corrections.CorrectionTable`): the run,
the flow, the failed step (index and id), the page at the takeover, the
actions as flow-file steps, what the hand-back said they were for and the
flow-file edit offered from them (:func:`core.heal.corrections.correction_edit`,
shown as a diff; applied only when accepted).  Typed secrets are
placeholders (``{password}``) from the recorder, and the store redacts
again.  A correction is never applied by the run itself.
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.progress import counted
from core.domain import Checkpoint, Observation
from core.engine.control import continue_target
from core.engine.events import (
    CorrectionOffered, RollBackStep, TakeoverActionRecorded, TakeoverFrame, TakeoverRolledBack,
)
from core.engine.hooks import Ports, TakeoverBegins, TakeoverEnds, TakeoverHandedBack, hookimpl
from core.engine.step import StepContext
from core.record.events import (
    ForwardClick, ForwardKey, ForwardMove, ForwardScroll, ForwardType, LiveFrame, RecorderError, StepRecorded,
    StepRemoved,
)

if TYPE_CHECKING:
    from core.record.listener import Recording, RecordingListener

__all__ = ["TAKEOVER_INPUTS", "TakeoverPlugin", "TakeoverRecording", "begin_takeover", "end_takeover", "continue_target",
           "store_correction", "PUMP_MS"]

#: Commands that put the human's input on the engine's page during a takeover (CSS px of the viewport), and the
#: person's request to roll the page back to before the step (:class:`RollBackStep`, never done by itself).
TAKEOVER_INPUTS = (ForwardClick, ForwardMove, ForwardType, ForwardKey, ForwardScroll, RollBackStep)
#: How long one pump lets Playwright deliver the page's events, ms (the command queue is looked at in between).
PUMP_MS = 50


class TakeoverRecording:
    """The listener on the engine's page while a human has it; used on the engine thread only.

    Parameters
    ----------
    ex : Ports
        The ports: the driver whose page is recorded, the event sink, the redactor.
    ctx : StepContext
        The step the takeover began at.
    """

    def __init__(self, ex: Ports, ctx: StepContext) -> None:
        self.ex = ex
        self.ctx = ctx
        self.listener: RecordingListener | None = None
        self.titles: list[str] = []
        self.errors: list[str] = []
        self.page: Observation | None = ctx.before
        self._spool: Path | None = None
        self._cp: Checkpoint | None = None
        self._cp_obs: Observation | None = None

    def start(self) -> bool:
        """Attach the listener to the driver's page; False (and nothing attached) when it cannot be.

        The page is handed over as the escalation showed it: nothing here
        reloads, closes a dialog or clears a field.  When the step has no
        checkpoint yet (it failed before acting), the page as it is now - the
        step's start, since the engine had not acted - is kept as one, so that
        :class:`RollBackStep` can bring it back.
        """
        from core.perception.driver import PlaywrightDriver

        driver = self.ex.driver
        if not isinstance(driver, PlaywrightDriver) or driver.page is None:
            return False
        try:
            if self.page is None:
                self.page = driver.observe(screenshot=True)
        except Exception as exc:  # noqa: BLE001 - a page we cannot look at: the takeover goes on unrecorded
            self.errors.append(self.ex.redact(f"the takeover is not recorded: {type(exc).__name__}: {exc}"))
            return False
        self._keep_start()
        return self._attach()

    def _secrets_and_params(self) -> tuple[dict[str, str], dict[str, str]]:
        driver, run = self.ex.driver, self.ctx.run
        secret_values = set(getattr(driver, "secret_values", ()) or ())
        secrets = {k: v for k, v in run.params.items() if v and (v in secret_values or k in run.flow.secrets)}
        return secrets, {k: v for k, v in run.params.items() if k not in secrets}

    def _attach(self) -> bool:
        from core.record.listener import RecordingListener

        driver, run = self.ex.driver, self.ctx.run
        secrets, params = self._secrets_and_params()
        self._spool = Path(tempfile.mkdtemp(prefix="steadyhand-takeover-"))
        try:
            self.listener = RecordingListener(driver.page, flow_name=run.flow.name, base_url=driver.base_url,
                                              spool=self._spool, driver=driver, on_event=self._on_event,
                                              secrets=secrets, params=params, live_frames=True)
            self.listener.attach()
        except Exception as exc:  # noqa: BLE001 - a page we cannot listen to: the takeover goes on unrecorded
            self.errors.append(self.ex.redact(f"the takeover is not recorded: {type(exc).__name__}: {exc}"))
            self.listener = None
            shutil.rmtree(self._spool, ignore_errors=True)
            self._spool = None
            return False
        return True

    def _keep_start(self) -> None:
        """The checkpoint a rollback returns to: the step's own (it acted), else the page as handed over."""
        from core.recover.rollback import take_checkpoint

        run, ctx = self.ctx.run, self.ctx
        cp = ctx.cp or (run.checkpoints[-1] if run.checkpoints and run.checkpoints[-1].index == ctx.index else None)
        self._cp, self._cp_obs = cp, ctx.before
        step = ctx.step if ctx.step is not None else (
            run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None)
        if cp is not None or step is None or self.page is None or self.page.signature is None:
            return
        known = list(getattr(self.ex.driver, "secret_values", ()) or ())
        known += [run.params[n] for n in run.flow.secrets if run.params.get(n)]
        try:
            self._cp = take_checkpoint(self.ex.driver, run_id=run.run_id, flow=run.flow.name, index=ctx.index,
                                       step=step, before=self.page, reversible=step.reversible,
                                       side_effects=tuple(run.side_effects),
                                       secrets=tuple(v for v in dict.fromkeys(known) if v))
            self._cp_obs = self.page
        except Exception as exc:  # noqa: BLE001 - no checkpoint: the rollback says it cannot
            self.errors.append(self.ex.redact(f"no state kept to roll back to: {type(exc).__name__}: {exc}"))

    def roll_back(self) -> TakeoverRolledBack:
        """The person asked: put the page back as it was before the step, say what was done (emitted too).

        Recording stops while the engine acts (its clicks are not the
        person's), what was recorded is dropped, and recording starts again
        on the rolled-back page.  Refused when the step acted and may have
        written data (S6), or when no state before the step is known.
        """
        from core.project.params import bind_step
        from core.recover.rollback import roll_back

        ctx, run = self.ctx, self.ctx.run
        step = ctx.step if ctx.step is not None else (
            run.flow.steps[ctx.index] if 0 <= ctx.index < len(run.flow.steps) else None)

        def said(ok: bool, detail: str, dropped: int = 0) -> TakeoverRolledBack:
            event = TakeoverRolledBack(run.run_id, run.flow.name, ctx.index, ok, self.ex.redact(detail), dropped)
            self.ex.emit(event)
            return event

        if step is None or self._cp is None:
            return said(False, "nothing was rolled back: the state before this step is not known")
        if ctx.acted and not ctx.effective_reversible:
            return said(False, "nothing was rolled back: this step's action was performed and may have written "
                               "data, which a rollback cannot undo")
        dropped = len(self.titles)
        self.finish()  # the engine's own clicks and reloads are not the person's actions
        self.listener, self.titles = None, []
        driver = self.ex.driver
        try:
            result = roll_back(driver, self._cp, step, cp_obs=self._cp_obs, params=run.params,
                               observe=lambda: driver.observe(screenshot=False),
                               bind=lambda s: bind_step(s, run.params, where=ctx.where))
            ok, done = result.ok, [*result.done, result.reason]
        except Exception as exc:  # noqa: BLE001 - a page that would not cooperate: said, the takeover goes on
            ok, done = False, [f"the rollback failed: {type(exc).__name__}: {exc}"]
        if run.checkpoints and run.checkpoints[-1] is self._cp:
            from dataclasses import replace

            run.checkpoints[-1] = replace(self._cp, step_state="rolled_back" if ok else "failed")
        try:
            self.page = driver.observe(screenshot=True)
        except Exception:  # noqa: BLE001 - the correction keeps the page as it was handed over
            pass
        self._attach()
        self.ex.emit(TakeoverActionRecorded(run.run_id, run.flow.name, ctx.index, ()))
        what = "; ".join(d for d in done if d) or "nothing needed undoing"
        if dropped:
            what += f"; your {counted(dropped, 'recorded action')} before it {'was' if dropped == 1 else 'were'} dropped"
        return said(ok, ("rolled back to before this step: " if ok else "the rollback was not complete: ") + what,
                    dropped)

    def _on_event(self, event: Any) -> None:
        run, index = self.ctx.run, self.ctx.index
        if isinstance(event, LiveFrame):
            self.ex.emit(TakeoverFrame(run.run_id, run.flow.name, index, event.png, event.device_pixel_ratio,
                                       self.ex.redact(event.url), event.candidates))
        elif isinstance(event, StepRecorded):
            self.titles[event.index:] = [self.ex.redact(event.step.title)]
            self.ex.emit(TakeoverActionRecorded(run.run_id, run.flow.name, index, tuple(self.titles)))
        elif isinstance(event, StepRemoved):
            del self.titles[event.index:event.index + 1]
            self.ex.emit(TakeoverActionRecorded(run.run_id, run.flow.name, index, tuple(self.titles)))
        elif isinstance(event, RecorderError):
            self.errors.append(self.ex.redact(event.message))

    def pump(self, wait_ms: int = PUMP_MS) -> None:
        """Let the page's events in for ``wait_ms`` ms and turn them into steps (sleeps when not recording)."""
        import time

        if self.listener is None or not self.listener.attached:
            time.sleep(wait_ms / 1000.0)
            return
        try:
            if not self.listener.pump(wait_ms):
                time.sleep(wait_ms / 1000.0)  # the page closed: nothing more to record
        except Exception as exc:  # noqa: BLE001 - one event we could not record never ends the takeover
            self.errors.append(self.ex.redact(f"{type(exc).__name__}: {exc}"))

    def forward(self, command: Any) -> None:
        """Put one forwarded input (:data:`TAKEOVER_INPUTS`) on the page; failures are kept in :attr:`errors`.

        :class:`RollBackStep` rolls the page back (:meth:`roll_back`)."""
        if isinstance(command, RollBackStep):
            self.roll_back()
            return
        if self.listener is None or not self.listener.attached:
            return
        try:
            self.listener.handle(command)
        except Exception as exc:  # noqa: BLE001 - a click outside the page, a closed page: reported, not fatal
            self.errors.append(self.ex.redact(f"could not forward {type(command).__name__}: {exc}"))

    def finish(self) -> "Recording | None":
        """Detach the listener (pending typing flushed) and return what was recorded; the journal is removed."""
        try:
            if self.listener is None:
                return None
            try:
                return self.listener.detach()
            except Exception as exc:  # noqa: BLE001 - a journal that cannot be read back: nothing recorded
                self.errors.append(self.ex.redact(f"the takeover's actions were lost: {exc}"))
                return None
        finally:
            if self._spool is not None:
                shutil.rmtree(self._spool, ignore_errors=True)
                self._spool = None


def begin_takeover(ex: Ports, ctx: StepContext) -> TakeoverRecording:
    """Start recording the human's actions and hand the recording to the run control (if it takes one)."""
    rec = TakeoverRecording(ex, ctx)
    rec.start()
    attach = getattr(ex.control, "attach_takeover", None)
    if attach is not None:
        attach(rec)
    return rec


def end_takeover(ex: Ports, rec: TakeoverRecording) -> "Recording | None":
    """Take the recording back from the run control and detach it; what the human did (None: nothing known)."""
    attach = getattr(ex.control, "attach_takeover", None)
    if attach is not None:
        attach(None)
    return rec.finish()


def store_correction(ex: Ports, ctx: StepContext, rec: TakeoverRecording, recording: "Recording | None",
                     meaning: str | None, target: int, reason: str = "") -> CorrectionOffered:
    """Store the manual segment as a correction and emit :class:`CorrectionOffered` (also without a store).

    The flow edit is offered (state ``offered``) for ``replace`` and
    ``insert`` when at least one action was recorded and the flow file can
    be edited; otherwise the correction is ``kept`` with a note saying why.
    """
    from core.heal.corrections import correction_edit, flow_digest_of, steps_as_mappings

    run = ctx.run
    meaning = meaning or "done"
    steps = recording.steps if recording is not None else ()
    mappings = steps_as_mappings(run.flow.name, "", steps)
    crops = dict(recording.crops) if recording is not None else {}
    secrets = tuple(recording.secrets) if recording is not None else ()
    step = ctx.step if ctx.step is not None else (run.flow.steps[ctx.index] if ctx.index < len(run.flow.steps) else None)
    step_id = step.id if step is not None else ""
    state, diff, note = "kept", "", ""
    source = run.flow.source
    if meaning == "done":
        note = "the step was done by hand; the flow file stays as it is"
    elif not mappings:
        note = "no action was recorded during the takeover" + (f" ({rec.errors[-1]})" if rec.errors else "")
    elif not source or not step_id:
        note = "the flow has no file to edit"
    else:
        path = Path(source)
        try:
            edit = correction_edit(path.read_text(encoding="utf-8"), step_id=step_id, meaning=meaning,
                                   steps=mappings, crops={k: "" for k in crops}, secrets=secrets,
                                   path=f"{path.parent.name}/{path.name}")
            state, diff = "offered", edit.diff
        except Exception as exc:  # noqa: BLE001 - FlowEditError, ProjectError, OSError: kept, not offered
            note = f"no flow edit offered: {exc}"
    page = rec.page
    page_state = ({"url": page.url, "title": page.title, "signature": page.signature.digest if page.signature else "",
                   "viewport": list(page.viewport)} if page is not None else {})
    correction_id = 0
    if ex.store is not None:
        from core.store.corrections import CorrectionTable

        try:
            row = CorrectionTable(ex.store).add({
                "run_id": run.run_id, "project": ex.project_name, "flow": run.flow.name,
                "flow_file": str(Path(source).resolve()) if source else "", "step_index": ctx.index,
                "step_id": step_id, "step_title": ctx.title, "reason": reason or "taken over by the user (no escalation)", "page": page_state,
                "steps": mappings, "params": dict(recording.params) if recording is not None else {},
                "secrets": list(secrets), "meaning": meaning, "continue_from": target, "state": state,
                "flow_digest": flow_digest_of(source) if source else "", "diff": diff,
            }, screenshot_png=(page.screenshot_png or b"") if page is not None else b"", crops=crops)
            correction_id = row.id
        except Exception as exc:  # noqa: BLE001 - the store never breaks a run
            errors = getattr(ex, "store_errors", None)
            if isinstance(errors, list):
                errors.append(f"correction not stored: {type(exc).__name__}: {exc}")
            note = note or f"the correction could not be stored: {type(exc).__name__}"
    event = CorrectionOffered(run.run_id, run.flow.name, ctx.index, correction_id, meaning, state, ex.redact(diff),
                              tuple(ex.redact(s.title) for s in steps), ex.redact(note))
    ex.emit(event)
    return event


class TakeoverPlugin:
    """Records what a person does during a takeover and keeps it as a correction (see the module doc).

    Parameters
    ----------
    ports : Ports
        Uses ``driver``, ``control`` (``attach_takeover``), ``store``, ``emit`` and ``redact``.
    """

    def __init__(self, ports: Ports) -> None:
        self.ports = ports
        self.recording: TakeoverRecording | None = None
        self.manual: Recording | None = None

    @hookimpl
    def takeover_begins(self, p: TakeoverBegins) -> None:
        self.recording, self.manual = None, None
        self.recording = begin_takeover(self.ports, p.step)  # the human's actions on this page, recorded as steps

    @hookimpl
    def takeover_ends(self, p: TakeoverEnds) -> "Recording | None":
        if self.recording is None:
            return None
        self.manual = end_takeover(self.ports, self.recording)
        return self.manual

    @hookimpl
    def takeover_handed_back(self, p: TakeoverHandedBack) -> None:
        if self.recording is not None:
            store_correction(self.ports, p.step, self.recording, self.manual, p.meaning, p.target, p.reason)
        self.recording, self.manual = None, None
