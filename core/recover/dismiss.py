"""Which control of a popup closes it - a close, never a choice (issues 9 and 25, failure kind 14).

A popup that opens when a field gets focus, a "what's new" note, an
unexpected modal: recovery closes it by a control whose *meaning* is
"close" or "dismiss" (an X, "Close", "Dismiss", "Not now", their French,
German and Spanish forms, an icon button the markup marks as closing), or
by Escape, and goes on.  It never answers a question for the person: a
popup that offers a choice between options (Accept all / Reject all,
Keep / Delete, OK / Cancel) is left open - the step escalates, or a skill
the person approved answers it.  So "Reject all", "Decline", "No thanks"
and a bare "Cancel" are never pressed by recovery: each records an answer
the person did not give.  A "Cancel" the markup itself declares as only
closing the dialog (Bootstrap's ``data-bs-dismiss``, a ``<dialog>`` form's
``formmethod="dialog"`` / ``value="cancel"``) is the page's own close and
may be pressed.  A name that also carries a confirming word ("Close
account", "Cancel order") is never chosen; disabled controls are never
chosen.  Pure: the overlays come from :func:`core.perception.pagefacts.overlays`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = ["DismissChoice", "choose_dismiss", "CLOSE_NAMES", "CLOSE_VERBS", "DISMISS_NAMES", "CONFIRM_WORDS",
           "choice_names"]

#: Names whose meaning is "close" / "dismiss" (normalised: case-folded, punctuation dropped), by preference:
#: close first, then "not now" (which postpones and records nothing).  English, French, German, Spanish.
#: Source: compiled by hand for this rule; the close verbs match jQuery UI's datepicker i18n ``closeText``
#: ("Fermer", "Schließen", "Cerrar"), sweetalert2's default ``closeButtonAriaLabel`` ("Close this dialog")
#: and micromodal's ``aria-label="Close modal"``; the "not now" forms are the everyday translations
#: ("Pas maintenant" / "Plus tard", "Nicht jetzt" / "Später", "Ahora no" / "Más tarde").
CLOSE_NAMES: tuple[tuple[str, ...], ...] = (
    ("close", "close dialog", "close this dialog", "close modal", "close window", "close popup", "close banner",
     "close message", "close notification", "dismiss", "dismiss dialog", "dismiss message", "x", "×", "✕", "✖",
     "╳", "⨯",
     "fermer", "fermer la fenêtre", "fermer la boîte de dialogue", "fermer le message", "fermer la fenetre",
     "schließen", "schliessen", "dialog schließen", "fenster schließen", "hinweis schließen",
     "cerrar", "cerrar diálogo", "cerrar dialogo", "cerrar ventana", "cerrar mensaje"),
    ("not now", "maybe later", "later", "remind me later",
     "pas maintenant", "plus tard", "nicht jetzt", "jetzt nicht", "später", "spater",
     "ahora no", "más tarde", "mas tarde", "quizás más tarde"),
)
#: Kept for callers of the first version: the names recovery may press (now close / "not now" only).
DISMISS_NAMES = CLOSE_NAMES
#: A name starting with one of these verbs and at most 3 words long ("Close the tour", "Fermer la bannière")
#: closes too - unless it carries a confirming word ("Close account").
CLOSE_VERBS = ("close", "dismiss", "fermer", "schließen", "schliessen", "cerrar")
#: Names a control declared closing by its markup may carry (a ``data-bs-dismiss`` "Cancel", a dialog
#: form's cancel button): the page's own close.
_DECLARED_CLOSE = ("cancel", "abbrechen", "annuler", "cancelar", "back", "go back", "")
#: Words that make a control a confirming (or destructive) one: never pressed by recovery.
CONFIRM_WORDS = frozenset({
    "ok", "okay", "yes", "confirm", "accept", "agree", "allow", "submit", "save", "delete", "remove", "continue",
    "proceed", "apply", "send", "sign", "buy", "pay", "order", "account", "subscription", "subscribe", "approve",
    "publish", "discard", "leave", "logout", "log", "install", "enable", "update", "upgrade", "register", "all",
    "trial", "start", "reject", "decline", "deny", "refuse", "keep",
    "accepter", "refuser", "supprimer", "akzeptieren", "ablehnen", "löschen", "aceptar", "rechazar", "eliminar",
})
_CLOSE_CLASSES = ("btn-close", "close", "modal-close", "dialog-close", "mat-dialog-close", "ui-dialog-titlebar-close",
                  "swal2-close", "modal__close")


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = re.sub(r"[^\w\s×✕✖╳⨯]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


@dataclass(frozen=True, slots=True)
class DismissChoice:
    """The control to press (``key``, its ``name``) or Escape (``key`` ""), why, and the options offered."""

    key: str
    name: str
    reason: str
    choices: tuple[str, ...] = ()

    @property
    def asks(self) -> bool:
        """True when the popup has no close control and offers two or more options: a choice for a person."""
        return not self.key and len(self.choices) >= 2

    @property
    def escape(self) -> bool:
        """True when no safe control was found: press Escape."""
        return not self.key


_CLOSE_SETS = tuple(frozenset(_norm(n) for n in names) for names in CLOSE_NAMES)
_CLOSE_VERBS = tuple(_norm(v) for v in CLOSE_VERBS)
_DECLARED = frozenset(_norm(n) for n in _DECLARED_CLOSE)
_CONFIRM = frozenset(_norm(w) for w in CONFIRM_WORDS)


def _rank(control: Mapping[str, Any]) -> int | None:
    """Preference of a control (0 best) when its meaning is close / dismiss, else None (a choice, or unknown)."""
    if not control.get("enabled", True):
        return None
    name = _norm(str(control.get("name", "")))
    words = set(name.split())
    if words & _CONFIRM:
        return None
    for rank, names in enumerate(_CLOSE_SETS):
        if name in names:
            return rank
    if len(words) <= 3 and any(name.startswith(v + " ") for v in _CLOSE_VERBS):
        return 0
    classes = set(str(control.get("cls", "")).split())
    if not name and classes & set(_CLOSE_CLASSES):
        return 0  # an icon-only close button (Bootstrap's btn-close has aria-label "Close" - named above)
    if control.get("dismiss") and name in _DECLARED:
        return 1  # the markup says it only closes the dialog (data-bs-dismiss, a <dialog> form's cancel)
    return None


def choice_names(overlay: Mapping[str, Any]) -> list[str]:
    """Names of the enabled controls of ``overlay`` that are not a close: the options it offers."""
    return [str(c.get("name", "")) for c in overlay.get("controls", ()) or ()
            if c.get("enabled", True) and _rank(c) is None and _norm(str(c.get("name", "")))]


def choose_dismiss(overlay: Mapping[str, Any]) -> DismissChoice:
    """The closing control of one overlay, or Escape.

    Parameters
    ----------
    overlay : Mapping
        ``{"key", "name", "controls": [{"key", "name", "cls", "dismiss", "enabled"}]}``
        (:data:`core.perception.pagefacts.OVERLAYS_JS`).

    Returns
    -------
    DismissChoice
        The best-ranked close control (close > "not now"; the first in
        document order among equals), else Escape.  ``choices`` lists the
        options the popup offers (:func:`choice_names`): with no close
        control and two or more of them, the popup asks for a choice.
    """
    best: tuple[int, int, Mapping[str, Any]] | None = None
    controls: Sequence[Mapping[str, Any]] = overlay.get("controls", ()) or ()
    for i, c in enumerate(controls):
        rank = _rank(c)
        if rank is not None and (best is None or (rank, i) < best[:2]):
            best = (rank, i, c)
    what = f" {overlay.get('name')!r}" if overlay.get("name") else ""
    choices = tuple(choice_names(overlay))
    if best is None:
        return DismissChoice("", "Escape", f"no close control in the popup{what}: pressed Escape", choices)
    name = str(best[2].get("name", "")) or "close"
    return DismissChoice(str(best[2].get("key", "")), name, f"dismissed the popup{what} by {name!r}", choices)
