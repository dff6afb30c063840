"""Which control of a popup dismisses it - never the one that confirms (issue 9, failure kind 14).

A popup that opens when a field gets focus, a cookie banner, an unexpected
modal: recovery closes it by its close or cancel control, or Escape, and
goes on.  Pressing its confirming button ("OK", "Accept", "Delete",
"Save"...) would be a wrong click - the worst outcome there is - so a
control is chosen only when its own name (or a dismiss attribute such as
Bootstrap's ``data-bs-dismiss``) says it dismisses, and a name that also
carries a confirming word ("Cancel order", "Close account") is never
chosen.  Disabled controls are never chosen.  Pure: the overlays come from
:func:`core.perception.pagefacts.overlays`.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

__all__ = ["DismissChoice", "choose_dismiss", "DISMISS_NAMES", "CONFIRM_WORDS"]

#: Names that dismiss, by preference (normalised: case-folded, punctuation dropped).
DISMISS_NAMES: tuple[tuple[str, ...], ...] = (
    ("close", "close dialog", "close this dialog", "close modal", "close window", "close popup", "dismiss", "x",
     "×", "✕", "✖", "╳"),
    ("cancel", "abbrechen", "annuler", "cancelar"),
    ("no thanks", "no thank you", "not now", "maybe later", "later", "skip", "not interested"),
    ("reject", "reject all", "decline", "decline all", "deny", "refuse", "necessary only", "only necessary",
     "use necessary cookies only"),
)
#: Words that make a control a confirming (or destructive) one: never pressed by recovery.
CONFIRM_WORDS = frozenset({
    "ok", "okay", "yes", "confirm", "accept", "agree", "allow", "submit", "save", "delete", "remove", "continue",
    "proceed", "apply", "send", "sign", "buy", "pay", "order", "account", "subscription", "subscribe", "approve",
    "publish", "discard", "leave", "logout", "log", "install", "enable", "update", "upgrade", "register", "all",
})
_CLOSE_CLASSES = ("btn-close", "close", "modal-close", "dialog-close", "mat-dialog-close", "ui-dialog-titlebar-close")


def _norm(text: str) -> str:
    t = unicodedata.normalize("NFKC", text or "").casefold()
    t = re.sub(r"[^\w\s×✕✖╳]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


@dataclass(frozen=True, slots=True)
class DismissChoice:
    """The control to press (``key``, its ``name``) or Escape (``key`` ""), and why."""

    key: str
    name: str
    reason: str

    @property
    def escape(self) -> bool:
        """True when no safe control was found: press Escape."""
        return not self.key


def _rank(control: Mapping[str, Any]) -> int | None:
    """Preference of a control (0 best) when it dismisses, else None."""
    if not control.get("enabled", True):
        return None
    name = _norm(str(control.get("name", "")))
    words = set(name.split())
    allowed_all = name in ("reject all", "decline all")
    if words & CONFIRM_WORDS and not allowed_all:
        return None
    for rank, names in enumerate(DISMISS_NAMES):
        if name in names:
            return rank
    if name.startswith("close ") and len(words) <= 3:
        return 0
    classes = set(str(control.get("cls", "")).split())
    if not name and (control.get("dismiss") or classes & set(_CLOSE_CLASSES)):
        return 0  # an icon-only close button (Bootstrap's btn-close has aria-label "Close" - named above)
    if control.get("dismiss") and not words & CONFIRM_WORDS and name in ("", "back", "go back"):
        return 1
    return None


def choose_dismiss(overlay: Mapping[str, Any]) -> DismissChoice:
    """The dismissing control of one overlay, or Escape.

    Parameters
    ----------
    overlay : Mapping
        ``{"key", "name", "controls": [{"key", "name", "cls", "dismiss", "enabled"}]}``
        (:data:`core.perception.pagefacts.OVERLAYS_JS`).

    Returns
    -------
    DismissChoice
        The best-ranked control (close > cancel > "no thanks" > reject; the
        first in document order among equals), else Escape.
    """
    best: tuple[int, int, Mapping[str, Any]] | None = None
    controls: Sequence[Mapping[str, Any]] = overlay.get("controls", ()) or ()
    for i, c in enumerate(controls):
        rank = _rank(c)
        if rank is not None and (best is None or (rank, i) < best[:2]):
            best = (rank, i, c)
    what = f" {overlay.get('name')!r}" if overlay.get("name") else ""
    if best is None:
        return DismissChoice("", "Escape", f"no close or cancel control in the popup{what}: pressed Escape")
    name = str(best[2].get("name", "")) or "close"
    return DismissChoice(str(best[2].get("key", "")), name, f"dismissed the popup{what} by {name!r}")
