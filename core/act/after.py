"""Where a step landed: the recorded after-state and its comparison at replay (S5, issue 9 item 3).

"A navigation happened" is not enough when the page reached is another
page than the one recorded (a confirmation page instead of the list);
"the page changed" is not evidence that a double click opened the editor it
was meant to open; a fill the page undid is not "as expected".  These pure
functions say what the page looked like after a step (:func:`observed_after`)
and what of a recorded :class:`~core.domain.AfterState` does not hold
(:func:`compare_after`), and whether a fill was undone (:func:`fill_undone`).
No browser: observations come in, reasons go out.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Mapping
from urllib.parse import unquote, urlsplit

from rapidfuzz import fuzz

from core.domain import AfterState, Candidate, Observation

__all__ = [
    "url_pattern", "whole_token_sub", "control_key", "changed_fields", "appeared_fields", "observed_after", "Mismatch",
    "compare_after", "fill_undone", "same_text", "TEXT_SIMILARITY", "target_state",
]

#: Two texts (title, heading, label) are the same when their normalised similarity is at least this
#: (rapidfuzz ratio, 0..100), or one contains the other: a suffix ("Query (Q)"), a typographic apostrophe
#: or a changed count do not make another page (R1's tweaks).
TEXT_SIMILARITY = 85.0
#: Roles and tags of editable fields (an inline editor that a double click opens).
_EDITABLE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton"})
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_HEX = re.compile(r"^[0-9a-f]{12,}$", re.I)
_PLACEHOLDER = re.compile(r"^\{[^{}]*\}$")


def _segment(seg: str) -> str:
    if _PLACEHOLDER.match(seg):
        return seg
    if seg.isdigit():
        return "{n}"
    if _UUID.match(seg):
        return "{uuid}"
    if _HEX.match(seg) or (len(seg) >= 8 and sum(ch.isdigit() for ch in seg) >= 2
                           and any(ch.isalpha() for ch in seg) and re.fullmatch(r"[\w-]+", seg)):
        return "{id}"
    return seg


def url_pattern(url: str, base: str = "") -> str:
    """The path of ``url`` with its ids generalised: ``/requests/42/edit`` -> ``/requests/{n}/edit``.

    Numbers become ``{n}``, UUIDs ``{uuid}``, hex tokens of 12+ chars and
    mixed tokens of 8+ chars with 2+ digits ``{id}``.  Query and fragment
    are dropped; an empty path is ``/``.  With ``base`` (the path of the
    project's base URL, ``"/examples/a/"``) the path is relative to it
    (``/examples/a/list`` -> ``/list``; a path outside it stays whole), so
    that one flow runs under another host or path prefix (issue 19).

    A parameter's value is never made a placeholder in a path: a segment
    equal to a typed value (``/admin/`` with ``user: admin``) is a
    coincidence, not the value (issue 19, failure kind 4).
    """
    path = unquote(urlsplit(url).path) or "/"
    b = unquote(base or "").rstrip("/")
    if b and (path == b or path.startswith(b + "/")):
        path = path[len(b):] or "/"
    segs = path.split("/")
    return "/".join(_segment(s) if s else s for s in segs) or "/"


def whole_token_sub(text: str, params: Mapping[str, str]) -> str:
    """``text`` with each parameter value (3+ chars) that stands as a whole word replaced by ``{name}``.

    ``"Signed in as admin"`` -> ``"Signed in as {user}"``, but ``"Site administration"`` stays literal:
    a value inside another word is a coincidence (issue 19, failure kind 4).  Longer values go first.
    """
    out = text
    for name, value in sorted(params.items(), key=lambda kv: -len(kv[1] or "")):
        if value and len(value) >= 3:
            out = re.sub(r"(?<!\w)" + re.escape(value) + r"(?!\w)", lambda _m, n=name: "{" + n + "}", out)
    return out


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'").replace("\u2018", "'")
    t = re.sub(r"\d+", "#", t.casefold())
    return re.sub(r"\s+", " ", t).strip()


def same_text(recorded: str, actual: str) -> bool:
    """True when ``actual`` reads as ``recorded`` (case, digits, spacing, quotes folded;
    :data:`TEXT_SIMILARITY`; ``{name}`` in ``recorded`` matches any text)."""
    r, a = _norm(recorded), _norm(actual)
    if "{" in r:
        pattern = "".join(".+" if _PLACEHOLDER.match(p) else re.escape(p) for p in re.split(r"(\{[^{}]*\})", r))
        if re.fullmatch(pattern, a):
            return True
    if r == a:
        return True
    if len(r) >= 4 and len(a) >= 4 and (r in a or a in r):
        return True
    return fuzz.ratio(r, a) >= TEXT_SIMILARITY


def _same_path(recorded: str, actual: str) -> bool:
    r, a = recorded.rstrip("/").split("/"), actual.rstrip("/").split("/")
    return len(r) == len(a) and all(x == y or _PLACEHOLDER.match(x) for x, y in zip(r, a, strict=True))


def control_key(c: Candidate) -> tuple[str, ...]:
    """Identity of a form control across two observations (refs renumber): frame, id, name, role, label."""
    d = c.descriptor
    return (d.frame, d.id, d.name_attr, d.role, d.label_text)


def _label(c: Candidate) -> str:
    d = c.descriptor
    return d.label_text or d.name_attr or d.id or d.role or d.tag


def _is_field(c: Candidate) -> bool:
    d = c.descriptor
    return (c.editable or d.role in _EDITABLE_ROLES or d.tag in ("input", "textarea", "select")
            or c.checked is not None)


def changed_fields(before: Observation, after: Observation) -> list[str]:
    """Labels of the form controls present in both observations whose value or checked state changed."""
    b = {control_key(c): (c.value, c.checked) for c in before.candidates if _is_field(c)}
    return [_label(c) for c in after.candidates if _is_field(c)
            and control_key(c) in b and b[control_key(c)] != (c.value, c.checked)]


def appeared_fields(before: Observation, after: Observation) -> list[str]:
    """Labels (else roles) of editable fields in ``after`` that ``before`` did not have: an editor opened."""
    b = {control_key(c) for c in before.candidates}
    return [_label(c) for c in after.candidates
            if (c.editable or c.descriptor.role in _EDITABLE_ROLES) and control_key(c) not in b]


def observed_after(before: Observation | None, after: Observation, *, heading: str = "",
                   params: Mapping[str, str] | None = None, target: Candidate | None = None,
                   base: str = "") -> AfterState:
    """The after-state of a step as seen now (what the recorder stores, what replay compares).

    Parameters
    ----------
    before, after : Observation
        The page before and after the action (``before`` may be None: no field facts then).
    heading : str
        The main heading's text (read in the page, :mod:`core.perception.pagefacts`).
    params : Mapping[str, str]
        Parameter values that generalise the heading's whole words to ``{name}`` (:func:`whole_token_sub`).
    target : Candidate | None
        The acted element: when several fields changed, it is the one named.
    base : str
        The path of the base URL: ``url_pattern`` is relative to it (:func:`url_pattern`).
    """
    params = params or {}
    # the fields of a page that was left are not "changed" and those of a new page did not "appear"
    same_page = before is not None and urlsplit(before.url).path == urlsplit(after.url).path
    changed = changed_fields(before, after) if before is not None and same_page else []
    appeared = appeared_fields(before, after) if before is not None and same_page else []
    field = ""
    if target is not None and _label(target) in changed:
        field = _label(target)
    elif changed:
        field = changed[0]
    head = whole_token_sub(heading.strip()[:200], params)
    dialogs = after.modal_titles
    own = target_state(before, after, target) if same_page else ""
    return AfterState(url_pattern=url_pattern(after.url, base), title=after.title[:200], heading=head,
                      dialog=bool(dialogs) or after.signature.modal_count > 0,
                      dialog_name=(dialogs[-1] if dialogs else "")[:200], field_changed=field,
                      field_appeared=appeared[0] if appeared else "", target_state=own)


def target_state(before: Observation | None, after: Observation, target: Candidate | None) -> str:
    """The acted element's own state the step set (``AfterState.target_state``): ``checked`` /
    ``unchecked`` when its checked state (a checkbox, radio or switch) differs after the step from before;
    ``""`` when it did not change, or the element is not found on both pages by :func:`control_key`."""
    if target is None or before is None or target.checked is None:
        return ""
    key = control_key(target)
    was = next((c for c in before.candidates if control_key(c) == key), target)
    now = next((c for c in after.candidates if control_key(c) == key), None)
    if now is None or now.checked is None or now.checked == was.checked:
        return ""
    return "checked" if now.checked else "unchecked"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One part of the recorded after-state that does not hold.

    ``code``: ``page`` (another page: URL pattern, or heading / title),
    ``dialog_missing``, ``dialog_other``, ``dialog_unexpected`` (a dialog is
    open that was not when recorded - a popup recovery may dismiss),
    ``field`` (the recorded field did not change), ``editor`` (the recorded
    editor did not appear), ``list`` (a list did not change by the recorded
    number of items: :func:`core.act.landing.list_change`).  ``reason`` is one plain sentence.
    """

    code: str
    reason: str


def compare_after(recorded: AfterState, actual: AfterState, *, changed: list[str] | None = None,
                  appeared: list[str] | None = None, modal_titles: tuple[str, ...] = (),
                  heading_known: bool = True) -> list[Mismatch]:
    """What of ``recorded`` does not hold in ``actual`` (empty list: it holds).

    Parameters
    ----------
    recorded : AfterState
        From the flow file; its empty fields are not compared.
    actual : AfterState
        :func:`observed_after` of the replayed step.
    changed, appeared : list[str]
        All the fields that changed and the editors that appeared
        (:func:`changed_fields`, :func:`appeared_fields`); default: the one of ``actual``.
    modal_titles : tuple[str, ...]
        Every open dialog's title now (nested dialogs: the recorded one may be any of them).
    heading_known : bool
        False when the heading could not be read: it is not compared.

    The page is another page when the URL pattern differs, or - with the
    same path - when the recorded heading does not read as the heading now
    (the title when no heading was recorded).  Texts compare by
    :func:`same_text`.
    """
    out: list[Mismatch] = []
    if recorded.url_pattern and not _same_path(recorded.url_pattern, actual.url_pattern):
        out.append(Mismatch("page", f"the step reached {actual.url_pattern} instead of {recorded.url_pattern}"
                            + (f" ({actual.heading!r})" if actual.heading else "")))
    elif recorded.heading and heading_known and not same_text(recorded.heading, actual.heading):
        out.append(Mismatch("page", f"the step reached a page headed {actual.heading!r} instead of "
                                    f"{recorded.heading!r}"))
    elif recorded.title and not (recorded.heading and heading_known) and not same_text(recorded.title, actual.title):
        out.append(Mismatch("page", f"the step reached a page titled {actual.title!r} instead of {recorded.title!r}"))
    titles = modal_titles or ((actual.dialog_name,) if actual.dialog_name else ())
    if recorded.dialog is True and not actual.dialog:
        what = f" {recorded.dialog_name!r}" if recorded.dialog_name else ""
        out.append(Mismatch("dialog_missing", f"the dialog{what} was expected to be open after the step; none is"))
    elif (recorded.dialog is True and recorded.dialog_name and titles
          and not any(same_text(recorded.dialog_name, t) for t in titles)):
        out.append(Mismatch("dialog_other", f"the dialog {titles[-1]!r} is open instead of {recorded.dialog_name!r}"))
    elif recorded.dialog is False and actual.dialog:
        what = f" {actual.dialog_name!r}" if actual.dialog_name else ""
        out.append(Mismatch("dialog_unexpected", f"a dialog{what} opened that was not there when the step "
                                                 "was recorded"))
    changed = changed if changed is not None else ([actual.field_changed] if actual.field_changed else [])
    if recorded.field_changed and not any(same_text(recorded.field_changed, f) for f in changed):
        now = f" (changed: {', '.join(changed[:3])})" if changed else ""
        out.append(Mismatch("field", f"the field {recorded.field_changed!r} did not change{now}"))
    appeared = appeared if appeared is not None else ([actual.field_appeared] if actual.field_appeared else [])
    if recorded.field_appeared and not any(same_text(recorded.field_appeared, f) for f in appeared):
        now = f" (appeared: {', '.join(appeared[:3])})" if appeared else ""
        out.append(Mismatch("editor", f"the editor {recorded.field_appeared!r} did not appear{now}"))
    return out


def fill_undone(typed: str, before: Candidate | None, after: Candidate | None) -> str:
    """Why a fill did not stay, or "" (issue 9, failure kind 13).

    Parameters
    ----------
    typed : str
        The value typed, as the observation shows it (secrets masked the same way).
    before, after : Candidate | None
        The field in the observations before and after the fill (found by
        :func:`control_key`); None when it is not listed.

    A non-empty fill is undone when the field now is empty or holds what it
    held before (a popup stole the focus, a script cleared it).  A field that
    holds something else (a date or phone mask reformatted it) is not
    judged here; a password field's value is never read back (its value is
    checked by digest elsewhere); a field no longer listed is not judged.
    """
    if not typed or after is None or after.extra.get("is_password"):
        return ""
    if after.value == typed:
        return ""
    label = _label(after)
    if after.value == "":
        return f"the field {label!r} is empty after the fill: the page undid it"
    if before is not None and after.value == before.value:
        return f"the field {label!r} still holds its old value after the fill: the page undid it"
    return ""
