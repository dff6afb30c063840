"""Failure capture as a plugin of the step kernel (K2): one failure record per failed step, for skills.

:class:`CapturePlugin` hands the kernel's ``failure_seen`` hook to
:func:`core.skills.capture.capture_failure` (the page, the target and the
error of a failed attempt, stored for the skills' learning) and its
``step_recorded`` hook to :func:`core.skills.capture.note_step_end` (a
failure a retry got past is transient; error signals of a passed step).
Best effort: whatever goes wrong is kept in ``Ports.store_errors``.
"""
from __future__ import annotations

from core.engine.hooks import FailureSeen, Ports, StepRecorded, hookimpl
from core.skills.capture import capture_failure, note_step_end

__all__ = ["CapturePlugin"]


class CapturePlugin:
    """Failure capture at the kernel's hooks; uses the ports' ``driver``, ``store``, ``redact``, ``project_name``."""

    def __init__(self, ports: Ports) -> None:
        self.ports = ports

    @hookimpl
    def failure_seen(self, p: FailureSeen) -> None:
        capture_failure(self.ports, p.step, p.failure)

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        note_step_end(self.ports, p.step)
