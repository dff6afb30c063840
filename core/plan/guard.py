"""What the engine refuses from a model, whatever it answers: the guard judges effects, never words.

Page text is data, never instructions, and a page chooses every word it
shows: a control called "Trash", "Yes, do it", "Supprimer" or "Löschen" is
as able to write as one called "Delete".  So the guard reads no word list
and no verb of the goal; it asks what is *known* of the action's effect:

* an action that only edits the form (``input``, ``select``, ``check``,
  ``uncheck``) or acts on no control (``scroll``, ``wait``, ``back``,
  ``hover``) has a known effect;
* a click on a link with a real address (``href`` that is not ``#`` or
  ``javascript:``) is a page load (GET, which HTTP defines as safe), and a
  click on a tab, a checkbox or a radio button changes what is shown or
  chosen - unless the control's texts also carry a write word
  (:func:`may_write`: words may only *add* caution, never remove it);
* any other click (a button, a menu item, a control an icon names), a key
  pressed in a field (Enter submits its form), and any click while a dialog
  is open (it may answer a confirmation) has an **unknown** effect;
* what the run saw is known too (:class:`EffectBook`, fed after every step
  from the requests it sent, :mod:`core.act.writes`, and what the page kept,
  :mod:`core.perception.effects`): a control that wrote, or that opened a
  dialog, the last time it was used.

:func:`needs_approval` gives why an action waits for a person: unknown
effect, a control that opened a confirmation, a control that wrote.  The
flow file's goal step lifts the first two for exactly the controls it
names (``allow: [{role: button, name: "Save"}]``, or ``allow_irreversible:
true`` for all of them); a control that wrote is never used again in the
same run without a person, whatever the file allows.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Iterable, Literal, Sequence
from urllib.parse import urlsplit

from core.domain import Candidate

__all__ = ["DESTRUCTIVE_PHRASES", "WRITES", "MODEL_ACTIONS", "EDITS", "NO_TARGET", "Known", "EffectBook",
           "control_of", "is_allowed", "needs_approval", "may_write"]

#: Verbs that suggest a write (whole words, with -s / -es / -ing; case-insensitive).  Used only to *add*
#: caution (a link or a skill's target that says it writes), never to let an action through.
WRITES = ("submit", "save", "send", "confirm", "approve", "reject", "create", "add", "post", "publish", "order",
          "buy", "book", "apply", "update", "register", "archive", "cancel", "export", "import", "upload",
          "accept", "decline", "delete", "remove", "destroy", "erase", "purge", "drop", "wipe", "reset", "revoke",
          "deactivate", "unsubscribe", "terminate", "pay", "transfer", "withdraw", "discard", "clear", "forget")
#: Phrases that destroy though their verb alone does not ("close" also closes dialogs).
DESTRUCTIVE_PHRASES = ("close account", "close my account", "close your account", "cancel subscription",
                       "cancel my subscription", "empty trash", "empty the trash")
#: Actions a model may choose (P5 and its neighbours; no navigate to arbitrary URLs, no uploads).
MODEL_ACTIONS = ("click", "dblclick", "input", "select", "check", "uncheck", "press", "hover", "scroll", "wait",
                 "back")
#: Actions that only edit the form's values: their effect is the value shown (a write needs a submit).
EDITS = frozenset({"input", "select", "check", "uncheck"})
#: Actions that act on no control, or only point at one.
NO_TARGET = frozenset({"scroll", "wait", "back", "hover"})
#: Roles whose click changes what is shown or chosen, not the app's data.
_VIEW_ROLES = frozenset({"tab", "checkbox", "radio"})

#: What the run saw of a control's use: nothing kept changed, it wrote (requests or kept state), it opened a dialog.
Known = Literal["none", "wrote", "dialog"]


def _norm(text: str) -> str:
    return " ".join((text or "").split()).casefold()


def control_of(cand: Candidate) -> tuple[str, str]:
    """``(role, name)`` of a control, as the flow file's ``allow`` names it: role (the tag when it has none)
    and accessible name (label, text, title... when it has none), spaces collapsed, case ignored."""
    d = cand.descriptor
    return _norm(d.role or d.tag), _norm(d.label_text)


def is_allowed(cand: Candidate, allow: Iterable[tuple[str, str]]) -> bool:
    """True when ``(role, name)`` of ``cand`` is one of ``allow`` (the goal step's allowances), exactly."""
    key = control_of(cand)
    return bool(key[1]) and any((_norm(r), _norm(n)) == key for r, n in allow)


def _texts(c: Candidate) -> str:
    """Every text the element carries (accessible name, label, text, title, alt, placeholder), lower case."""
    d = c.descriptor
    return " ".join(" ".join((d.name, d.label, d.text, d.title, d.alt, d.placeholder)).split()).lower()


def _has(text: str, verb: str) -> bool:
    """``verb`` as a word of ``text`` (``delete``, ``deletes``, ``deleting``; not ``archived``, not ``address``)."""
    stem = verb[:-1] if verb.endswith("e") else verb
    return re.search(r"(?<![a-z])" + re.escape(stem) + r"(?:e|es|s|ing)?(?![a-z])", text) is not None


def may_write(cand: Candidate, kind: str) -> bool:
    """True when the words of ``cand`` suggest that ``kind`` on it writes: a write verb or a destructive phrase
    in any of its texts, an icon-only control, or a key pressed in a field.

    A hint only, for where no effect can be seen (a skill's target, checked before any run); the model's
    guard never lets an action through because this says False (:func:`needs_approval`).
    """
    if kind == "press" and cand.editable:
        return True
    if kind not in ("click", "dblclick", "press"):
        return False
    name = _texts(cand)
    if re.search(r"[^\W_]", name) is None:
        return True  # an icon-only control: what it does cannot be read
    return any(_has(name, verb) for verb in WRITES) or any(p in name for p in DESTRUCTIVE_PHRASES)


def _page_load(cand: Candidate) -> bool:
    """A link to a real address: its click loads a page (GET)."""
    d = cand.descriptor
    href = (d.href or "").strip()
    if (d.role or d.tag) not in ("link", "a") or not href or href.startswith("#"):
        return False
    scheme = urlsplit(href).scheme.lower()
    return scheme in ("", "http", "https")


def needs_approval(cand: Candidate, kind: str, *, known: Known | None = None, dialog_open: bool = False,
                   allowed: bool = False, allow_all: bool = False) -> str:
    """Why ``kind`` on ``cand`` waits for a person ("" when it may go on), by what is known of its effect.

    Parameters
    ----------
    cand : Candidate
        The control the model chose.
    kind : str
        The action kind (:data:`MODEL_ACTIONS`).
    known : "none" | "wrote" | "dialog" | None
        What using this control did earlier in the run (:class:`EffectBook`); None when it was never used.
    dialog_open : bool
        A dialog is open on the page (``Observation.modal_titles``): a click may answer a confirmation.
    allowed : bool
        The goal step names this exact control in ``allow``.
    allow_all : bool
        The goal step says ``allow_irreversible: true``.

    Returns
    -------
    str
        A plain clause ("its effect is unknown: ..."), or "".
    """
    if known == "wrote":  # never repeated without a person, whatever the flow allows
        return "it wrote data the last time it was used in this run, and an effect is never repeated unasked"
    if kind in NO_TARGET:
        return ""
    if kind in EDITS:
        return ""
    if allowed or allow_all:
        return ""
    if known == "dialog":
        return "it opened a dialog the last time it was used: a confirmation may follow"
    if kind == "press" and cand.editable:
        return "a key pressed in a field may submit its form"
    if dialog_open and known != "none":
        return "a dialog is open, and a click in it may confirm something"
    if known == "none":
        return ""
    role = cand.descriptor.role or cand.descriptor.tag
    if (_page_load(cand) or role in _VIEW_ROLES) and not may_write(cand, "click"):
        return ""
    return "its effect is unknown: it was not used earlier in this run"


@dataclass
class _Entry:
    known: Known
    path: str


class EffectBook:
    """What using each control did in one run: ``(role, name)`` -> the last effect seen, per page path.

    Thread-safe; keeps at most :attr:`LIMIT` controls per run and :attr:`RUNS` runs (oldest forgotten).
    A control that wrote or opened a dialog is known so on every page; one seen to do nothing is known
    harmless only on the page (URL path) where it was seen.
    """

    LIMIT = 500
    RUNS = 8

    def __init__(self) -> None:
        self._runs: dict[str, dict[tuple[str, str], list[_Entry]]] = {}
        self._lock = threading.Lock()

    def learn(self, run_id: str, control: tuple[str, str], known: Known, url: str = "") -> None:
        """Record that using ``control`` (:func:`control_of`) on ``url`` did ``known``."""
        if not control[1]:
            return
        path = urlsplit(url).path if url else ""
        with self._lock:
            book = self._runs.setdefault(run_id, {})
            while len(self._runs) > self.RUNS:
                self._runs.pop(next(iter(self._runs)))
            book.setdefault(control, []).append(_Entry(known, path))
            while len(book) > self.LIMIT:
                book.pop(next(iter(book)))

    def known(self, run_id: str, control: tuple[str, str], url: str = "") -> Known | None:
        """The strongest effect seen for ``control`` in the run: ``"wrote"`` over ``"dialog"`` over ``"none"``
        (``"none"`` only on the same URL path); None when nothing is known."""
        path = urlsplit(url).path if url else ""
        with self._lock:
            entries: Sequence[_Entry] = tuple(self._runs.get(run_id, {}).get(control, ()))
        kinds = {e.known for e in entries}
        if "wrote" in kinds:
            return "wrote"
        if "dialog" in kinds:
            return "dialog"
        if any(e.known == "none" and e.path == path for e in entries):
            return "none"
        return None
