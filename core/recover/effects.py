"""Never repeat an effect (issue 19, failure kind 2): did a failed attempt have one, and may it be retried - pure.

Before a retry of a step whose action was performed, the engine compares
the page's kept state right before the action with the state now
(:class:`core.perception.effects.EffectSnapshot`):

- a storage write: a ``localStorage`` / ``sessionStorage`` key added,
  removed or changed, a cookie set or changed, an IndexedDB store whose
  record count changed;
- a DOM delta: list-like items (``li``, rows, options, articles...) or
  elements added or removed, a dialog shown or hidden, a form control's
  value changed;
- a navigation: the URL changed;
- a write to the app: the attempt's server writes (:func:`core.act.writes.server_writes`,
  beacons and background endpoints already left out).

Keys seen to change while no action was in flight (a heartbeat, a clock,
a poller rendering rows) are background and never an effect; the watch
that learns them starts only after the attempt's own reaction had time to
end (:func:`core.engine.norepeat.no_repeat`).

:func:`decide_repeat` then says what follows (rules in its docstring): a
retry only when the attempt had no effect, or when a rollback can undo it
and is then checked to have undone it (:func:`undone`); otherwise the step
is verified again as it stands (the effect may be the one the recording
expects, only late) and, failing that, escalated - never repeated.

An action is non-idempotent by default (:func:`non_idempotent`) when it is
Enter (or a space on a button), or a click on a submit button or on a
control whose name says it adds, creates, saves, sends or submits: for
those, a page that changed at all counts as an effect, and a page that
cannot be read counts as one too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Literal

from core.perception.effects import EffectSnapshot

__all__ = ["Effect", "RepeatDecision", "changed_keys", "effect_of", "undone", "non_idempotent", "decide_repeat",
           "BACKGROUND_WATCH_MS", "ADD_WORDS"]

#: How long (ms) the page is watched with no action before an effect made only of storage or DOM changes is
#: believed: a key or count that changes meanwhile is the page's own (timers, heartbeats, polling renders).
#: 1000 ms sees a timer of up to 1 s period once - the same bound as the network probe
#: (:data:`core.engine.pipeline.IDLE_PROBE_MS`).
BACKGROUND_WATCH_MS = 1000

#: Words in a control's name that say a click adds or submits (lower case, whole words; English and the
#: other languages of the project's test pages: French, German, Spanish, Italian, Dutch, Portuguese).
ADD_WORDS = frozenset({
    "add", "create", "new", "save", "submit", "send", "post", "publish", "confirm", "book", "order", "buy",
    "pay", "apply", "register", "sign", "upload", "insert", "append", "duplicate", "copy", "import", "plus",
    "ajouter", "créer", "enregistrer", "envoyer", "valider", "hinzufügen", "erstellen", "speichern", "senden",
    "añadir", "agregar", "crear", "guardar", "enviar", "aggiungi", "crea", "salva", "invia", "toevoegen",
    "opslaan", "verzenden", "adicionar", "salvar",
})
_PLUS = frozenset({"+", "＋", "➕"})
#: Plain names of the item counts of :class:`core.perception.effects.EffectSnapshot`.
_ITEM_NAMES = {"li": "list item", "tr": "table row", "listitem": "list item", "row": "row", "option": "option",
               "article": "article", "treeitem": "tree item", "elements": "element", "dialog": "dialog"}


@dataclass(frozen=True, slots=True)
class Effect:
    """What one attempt changed that a retry would change again (empty: nothing seen).

    Each field lists plain descriptions, e.g. ``"localStorage 'items' changed"``, ``"1 li added"``.

    Attributes
    ----------
    storage : tuple[str, ...]
        localStorage, sessionStorage, cookies and IndexedDB changes: a rollback cannot undo them.
    writes : tuple[str, ...]
        Write requests to the app (``"POST /api/items 201"``): a rollback cannot undo them.
    items : tuple[str, ...]
        List-like items or elements added or removed.
    values : tuple[str, ...]
        Form controls whose value or checked state changed.
    navigation : str
        ``"went to <url>"`` when the URL changed, else "".
    unknown : str
        Why the page's state could not be compared ("" when it could).
    """

    storage: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    items: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    navigation: str = ""
    unknown: str = ""

    @property
    def seen(self) -> bool:
        """True when the attempt changed something a retry would change again."""
        return bool(self.storage or self.writes or self.items or self.values or self.navigation)

    @property
    def lasting(self) -> bool:
        """True when part of it outlives a rollback to the checkpoint (storage, cookies, server writes)."""
        return bool(self.storage or self.writes)

    def describe(self, limit: int = 4) -> str:
        """One plain line: ``"localStorage 'items' changed; 1 li added"`` (at most ``limit`` parts)."""
        parts = [*self.writes, *self.storage, *self.items, *self.values] + ([self.navigation] if self.navigation
                                                                           else [])
        more = len(parts) - limit
        return "; ".join(parts[:limit]) + (f" and {more} more" if more > 0 else "")


def _diff_map(where: str, a: dict, b: dict) -> list[tuple[str, str]]:
    """(key, description) for each key of two digest maps that was added, removed or changed."""
    out = []
    for k in sorted(set(a) | set(b)):
        if k not in a:
            out.append((f"{where} {k}", f"{where} {k!r} written"))
        elif k not in b:
            out.append((f"{where} {k}", f"{where} {k!r} removed"))
        elif a[k] != b[k]:
            out.append((f"{where} {k}", f"{where} {k!r} changed"))
    return out


def changed_keys(a: EffectSnapshot, b: EffectSnapshot) -> list[tuple[str, str, str]]:
    """Every difference between two snapshots as ``(group, key, description)``.

    ``group`` is ``storage``, ``items``, ``values`` or ``navigation``; ``key`` names the thing that changed
    (what :attr:`core.perception.effects.EffectWatch.background` holds), e.g. ``"localStorage items"``.
    """
    out: list[tuple[str, str, str]] = []
    for where, x, y in (("localStorage", a.local, b.local), ("sessionStorage", a.session, b.session),
                        ("cookie", a.cookies, b.cookies), ("IndexedDB", a.idb, b.idb)):
        out += [("storage", k, d) for k, d in _diff_map(where, dict(x), dict(y))]
    items = []
    for k in sorted(set(a.items) | set(b.items), key=lambda k: (k == "elements", k)):
        n0, n1 = int(a.items.get(k, 0)), int(b.items.get(k, 0))
        if n0 != n1:
            n, what = abs(n1 - n0), _ITEM_NAMES.get(k, k)
            done = ("opened" if n1 > n0 else "closed") if k == "dialog" else ("added" if n1 > n0 else "removed")
            items.append(("items", f"items {k}", f"{n} {what}{'s' if n != 1 else ''} {done}"))
    if len(items) > 1:  # a list item is an element too: the specific kind says it
        items = [(g, k, d if k != "items elements" else "") for g, k, d in items]
    out += items
    changed = [k for k in sorted(set(a.values) | set(b.values)) if a.values.get(k) != b.values.get(k)]
    out += [("values", f"value {k}", f"the value of {k!r} changed") for k in changed]
    if a.url.split("#")[0] != b.url.split("#")[0]:
        out.append(("navigation", "url", f"went to {b.url.split('?')[0]}"))
    return out


def effect_of(before: EffectSnapshot | None, now: EffectSnapshot | None, *, writes: Iterable[str] = (),
              background: Iterable[str] = ()) -> Effect:
    """The effect of an attempt: what changed from ``before`` (right before the action) to ``now``.

    Parameters
    ----------
    before, now : EffectSnapshot | None
        None when the page could not be read: the effect is ``unknown`` (writes still count).
    writes : Iterable[str]
        The attempt's server writes, as shown (``"POST /api/items 201"``).
    background : Iterable[str]
        Keys that change on their own (:func:`changed_keys`' second element): left out.
    """
    writes = tuple(writes)
    if before is None or now is None:
        return Effect(writes=writes, unknown="the page's state could not be read")
    skip = set(background)
    groups: dict[str, list[str]] = {"storage": [], "items": [], "values": [], "navigation": []}
    for group, key, desc in changed_keys(before, now):
        if key not in skip and desc:
            groups[group].append(desc)
    return Effect(storage=tuple(groups["storage"]), writes=writes, items=tuple(groups["items"]),
                  values=tuple(groups["values"]), navigation=(groups["navigation"] or [""])[0])


def undone(before: EffectSnapshot | None, now: EffectSnapshot | None, *, background: Iterable[str] = ()) -> list[str]:
    """What still differs from the state before the action after a rollback (empty: provably undone).

    Compares everything a snapshot holds - storage included - except the background keys; a page that
    cannot be read is never "undone".
    """
    if before is None or now is None:
        return ["the page's state could not be read"]
    skip = set(background)
    return [desc or key for _, key, desc in changed_keys(before, now) if key not in skip]


_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def non_idempotent(kind: str, value: str = "", *, name: str = "", input_type: str = "", role: str = "") -> bool:
    """True when doing the action twice is likely to act twice (issue 19: non-idempotent by default).

    Parameters
    ----------
    kind : str
        The action kind (``press``, ``click``...).
    value : str
        The key of a ``press``.
    name, input_type, role : str
        The target's accessible name (else text), its ``type`` attribute and role.

    ``press`` of Enter (alone or with a modifier) and of a space on a button; a click or double click on a
    submit control or on one whose name holds a word of :data:`ADD_WORDS` or is a plus sign.
    """
    if kind == "press":
        key = value.split("+")[-1] if value not in _PLUS else value
        return key == "Enter" or (key in (" ", "Space") and role == "button")
    if kind not in ("click", "dblclick"):
        return False
    if input_type.lower() == "submit":
        return True
    text = name.strip().lower()
    if text in _PLUS or text.startswith("+"):
        return True
    return any(w in ADD_WORDS for w in _WORD.findall(text))


RepeatKind = Literal["retry", "roll_back_then_check", "reverify"]


@dataclass(frozen=True, slots=True)
class RepeatDecision:
    """What may follow a failed attempt that acted, given its effect.

    ``retry``: no effect seen, the policy's retry or rollback goes ahead as planned;
    ``roll_back_then_check``: the effect is one a rollback can undo - roll back, then retry only if
    :func:`undone` finds nothing left; ``reverify``: the step is never done again - verify the page as it
    stands (the effect may be the expected one, late), else escalate with ``reason``.
    """

    kind: RepeatKind
    reason: str


def decide_repeat(effect: Effect, *, idempotent: bool, page_changed: bool, can_roll_back: bool,
                  compensations: bool) -> RepeatDecision:
    """Whether a failed attempt may be done again (issue 19), first match wins.

    1. the page could not be read: a non-idempotent action is never repeated (``reverify``); another is
       retried as the policy planned;
    2. no effect seen: ``retry`` - unless the action is non-idempotent and the page changed at all
       (``page_changed``: any real delta between the observations before and after), which is an effect
       of its own (``reverify``);
    3. a lasting effect (storage, cookies, IndexedDB, server writes) without compensations: a rollback
       cannot undo it: ``reverify``;
    4. with a checkpoint to roll back to: ``roll_back_then_check``;
    5. otherwise ``reverify``.
    """
    if effect.unknown and not effect.seen:
        if idempotent:
            return RepeatDecision("retry", "")
        return RepeatDecision("reverify", f"{effect.unknown}, and the action may have had an effect")
    if not effect.seen:
        if not idempotent and page_changed:
            return RepeatDecision("reverify", "the page changed after an action that adds or submits")
        return RepeatDecision("retry", "")
    what = effect.describe()
    if effect.lasting and not compensations:
        return RepeatDecision("reverify", f"its attempt had an effect a rollback cannot undo ({what})")
    if can_roll_back:
        return RepeatDecision("roll_back_then_check", f"its attempt had an effect ({what})")
    return RepeatDecision("reverify", f"its attempt had an effect ({what}) and there is no checkpoint to undo it")
