"""``run --trace on|off|retain-on-failure``: a Playwright trace of each flow run, without a secret in it.

One zip per flow run, recorded with Playwright's own tracing (``context.tracing.start(screenshots=...,
snapshots=True, sources=False)`` / ``stop(path=...)``) and kept at::

    <project>/.steadyhand/traces/<run id>.zip

beside the run's screenshots (``.steadyhand/screenshots/<run id>/``); ``playwright show-trace`` opens it.
:func:`trace_file` finds a run's trace by that rule, so the reports (JSON, JUnit, HTML) and the studio's History
link it without a store column.  ``retain-on-failure`` keeps the zip only for a run that did not pass.

Secrets.  A trace records what was typed (the ``fill`` call's value), the page's DOM with the fields' values,
the network (a sign-in's POST body) and, with ``screenshots``, the page as drawn.  So, when the run knows
secret values (:class:`core.secrets.Redactor`'s values: the project's and flow's declared secrets):

* every entry of the zip that is not an image has each secret value replaced by :data:`core.secrets.MASK`,
  in each form it takes there (as typed, URL-encoded, JSON- and HTML-escaped);
* the zip is then read again entry by entry, images too, for every form the secrets audit looks for
  (:class:`core.engine.audit.SecretPatterns`: those, base64 at every alignment as in an ``Authorization: Basic``
  header, hex, digests...); one found, or a secret shorter than
  :data:`core.secrets.MIN_SUBSTRING_LENGTH` characters (too short to be found for sure), and the zip is
  deleted: the run says "trace not kept" and why;
* the page's screenshots (screencast frames, JPEG, cannot be cleaned) are recorded only when every step that
  types a secret types it into a field recorded as a password field (drawn as dots); else the trace is
  recorded with the DOM snapshots alone.

Thread rule: :meth:`RunTrace.begin` and :meth:`RunTrace.end` call Playwright's synchronous API and are called
only on the thread that owns the driver (the engine's: :meth:`core.engine.session.ProjectSession.run_flow`).
A trace that cannot be started or written never fails the run: it becomes a note.
"""
from __future__ import annotations

import html
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Iterable, Sequence
from urllib.parse import quote, quote_plus

from core.domain import Flow
from core.project.params import placeholders
from core.secrets import MASK, MIN_SUBSTRING_LENGTH

__all__ = ["TRACE_MODES", "TRACES_DIR", "RunTrace", "trace_path", "trace_file", "scrub_trace", "secret_forms",
           "types_secret_in_clear"]

#: The values of ``run --trace``: ``off`` (the default), ``on`` (every run), ``retain-on-failure``.
TRACE_MODES = ("off", "on", "retain-on-failure")
#: Folder of the traces, relative to the project's data folder (``.steadyhand/``).
TRACES_DIR = "traces"
#: Zip entries that are images (screencast frames): read for a secret, never rewritten.
_IMAGE_SUFFIXES = (".jpeg", ".jpg", ".png", ".webp", ".gif")


def trace_path(data_dir: Path, run_id: str) -> Path:
    """``<data_dir>/traces/<run_id>.zip`` (the run id checked to be a safe file name; ValueError else)."""
    from core.store.media import check_run_id

    return Path(data_dir) / TRACES_DIR / f"{check_run_id(run_id)}.zip"


def trace_file(data_dir: Path, run_id: str) -> Path | None:
    """The absolute path of the trace kept for ``run_id`` under ``data_dir``, or None when there is none."""
    try:
        path = trace_path(data_dir, run_id)
    except ValueError:
        return None
    return path.resolve() if path.is_file() else None


def secret_forms(value: str) -> list[bytes]:
    """The byte strings a secret ``value`` may take inside a trace: as typed (UTF-8), URL-encoded (``quote`` and
    ``quote_plus``), JSON-escaped (``ensure_ascii`` on and off) and HTML-escaped; longest first, no repeats."""
    forms = {value, quote(value, safe=""), quote_plus(value), json.dumps(value)[1:-1],
             json.dumps(value, ensure_ascii=False)[1:-1], html.escape(value, quote=True)}
    return sorted({f.encode("utf-8") for f in forms if f}, key=lambda b: (-len(b), b))


def scrub_trace(path: Path, secrets: Iterable[str]) -> str:
    """Remove every secret of ``secrets`` from the trace zip at ``path``, in place; ``""`` when the zip is clean
    afterwards, else why it is not (then the caller deletes it).

    Text entries (every entry but images) have each form of :func:`secret_forms` replaced by :data:`MASK`; the
    whole zip, images too, is then searched for those forms and for the base64 encodings of each value.
    """
    values = sorted({s for s in secrets if isinstance(s, str) and s}, key=lambda s: (-len(s), s))
    if not values:
        return ""
    if any(len(v) < MIN_SUBSTRING_LENGTH for v in values):
        return (f"a secret value is shorter than {MIN_SUBSTRING_LENGTH} characters, too short to be found in the "
                "trace for sure")
    forms = [f for v in values for f in secret_forms(v)]
    mask = MASK.encode("utf-8")
    with zipfile.ZipFile(path) as zin:
        entries = [(info, zin.read(info)) for info in zin.infolist()]
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".zip", dir=Path(path).parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zout:
            for info, data in entries:
                if not info.filename.lower().endswith(_IMAGE_SUFFIXES):
                    for form in forms:
                        data = data.replace(form, mask)
                zout.writestr(info, data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    from core.engine.audit import SecretPatterns  # the audit's forms: base64 at every alignment, digests...

    patterns = SecretPatterns({str(i): v for i, v in enumerate(values)})
    with zipfile.ZipFile(path) as zcheck:
        for info in zcheck.infolist():
            found = patterns.find(zcheck.read(info))
            if found:
                return f"a secret value is still in {info.filename} ({found[0][1]})"
    return ""


def types_secret_in_clear(flow: Flow, secret_names: Iterable[str]) -> bool:
    """True when a step of ``flow`` types a secret (its value has a ``{placeholder}`` naming one of
    ``secret_names``) into a field not recorded as a password field (``target.type`` is not ``password``)."""
    names = set(secret_names)
    for st in flow.steps:
        value = st.action.value or ""
        if not set(placeholders(value)) & names:
            continue
        if (st.target.type or "").lower() != "password":
            return True
    return False


class RunTrace:
    """Records one Playwright trace per flow run on the driver's browser context (see the module doc).

    Parameters
    ----------
    mode : str
        One of :data:`TRACE_MODES`.
    data_dir : Path
        The project's data folder (``.steadyhand/``); traces go to its ``traces/``.

    Attributes
    ----------
    notes : dict[str, list[str]]
        Per run id: what became of its trace ("trace not kept: ..."), for the run's notes.
    """

    def __init__(self, mode: str, data_dir: Path) -> None:
        if mode not in TRACE_MODES:
            raise ValueError(f"--trace expects one of {', '.join(TRACE_MODES)}, got {mode!r}")
        self.mode = mode
        self.data_dir = Path(data_dir)
        self.notes: dict[str, list[str]] = {}
        self._context: Any = None
        self._problem = ""

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    def begin(self, driver: Any, flow: Flow, secret_names: Sequence[str]) -> None:
        """Start tracing the driver's current context (call after the flow's fresh context is made)."""
        self._context, self._problem = None, ""
        if not self.enabled:
            return
        context = getattr(driver, "context", None)
        if context is None:
            self._problem = "the browser has no context to trace"
            return
        try:
            context.tracing.start(screenshots=not types_secret_in_clear(flow, secret_names), snapshots=True,
                                  sources=False, title=flow.name)
        except Exception as exc:  # noqa: BLE001 - a trace never fails the run
            self._problem = f"tracing could not start: {str(exc).strip().splitlines()[0] if str(exc).strip() else exc}"
            return
        self._context = context

    def end(self, run_id: str, passed: bool, secrets: Iterable[str]) -> Path | None:
        """Stop tracing; keep the zip (``mode`` ``on``, or ``retain-on-failure`` and not ``passed``) at
        :func:`trace_path`, cleaned of ``secrets`` (:func:`scrub_trace`).  Returns the kept zip, else None."""
        context, self._context = self._context, None
        if not self.enabled:
            return None
        if context is None:
            if self._problem:
                self.notes.setdefault(run_id, []).append(f"trace not kept: {self._problem}")
            return None
        keep = self.mode == "on" or not passed
        try:
            target = trace_path(self.data_dir, run_id)
        except ValueError:
            keep, target = False, None
        try:
            if not keep or target is None:
                context.tracing.stop()
                return None
            target.parent.mkdir(parents=True, exist_ok=True)
            context.tracing.stop(path=str(target))
        except Exception as exc:  # noqa: BLE001 - the context closed under it (a crash): no trace, a note
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            self.notes.setdefault(run_id, []).append(f"trace not kept: {first}")
            return None
        try:
            why = scrub_trace(target, secrets)
        except (OSError, zipfile.BadZipFile) as exc:
            why = f"it could not be cleaned of secrets ({exc})"
        if why:
            target.unlink(missing_ok=True)
            self.notes.setdefault(run_id, []).append(f"trace not kept: {why}")
            return None
        return target.resolve()
