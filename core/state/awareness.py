"""State awareness (S2, S3): signatures in a ring buffer and a belief about the current page.

Pure logic over observations (architecture rule 3), tested without a browser.

- **Light signature every step** - the observation's :class:`~core.domain.StateSignature`
  (URL, title, key text digests, interactive count, modal state; S2).
- **Heavy signature at key points** (:func:`heavy_signature`): the run's start,
  a dialog opening or closing, before and after a submit.  It keeps what the
  light one only digests: every interactive element as role, a digest of its
  name and its relative position in the viewport (5 % steps), the focus, the
  dialog stack, the loading evidence and the validation error count (S2).
- **Ring buffer** of the last :data:`RING_SIZE` states (30, S2 "the last 20-30
  states") as :class:`StateEntry` rows, the studio shows it.
- **Belief** (:func:`derive_belief`): what the page is doing, with a
  confidence and its evidence, from the observation and the history (S3):
  "Submit is disabled because Reason is empty", "a spinner after 'Submit':
  waiting for the server", "dialog 'Export report' is open", "the last action
  changed nothing".  Pre-checks (S4) explain a refusal with it, the settle
  wait (S7) waits for the server when it says so.

Confidences: a rule gives its own (0.55 for a guess from a few signals up to
0.95 for a fact the DOM states); a belief seen again in the next state gains
0.05 (at most 0.99) - the belief is updated, not recomputed from nothing.
"""
from __future__ import annotations

import hashlib
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from core.domain import Candidate, Observation
from core.domain.belief import Belief

from .normalize import normalize_text

__all__ = ["RING_SIZE", "HeavySignature", "heavy_signature", "ActionNote", "StateEntry", "derive_belief",
           "StateAwareness", "is_submit"]

#: States kept (S2: "a ring buffer of the last 20-30 states").
RING_SIZE = 30
#: Relative positions are rounded to this step of the viewport (5 %): a 1-2 px shift is the same place.
_POS_STEP = 0.05
#: Confidence gained by a belief seen again in the next state, and its cap.
_REINFORCE, _CAP = 0.05, 0.99
#: Words of a control that sends data (a submit); with type=submit or an irreversible step.
_SUBMIT_WORDS = ("submit", "save", "send", "confirm", "approve", "reject", "delete", "remove", "sign in", "log in",
                 "login", "pay", "apply", "create", "register", "book", "order")
_FIELD_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "listbox"})


def _digest(parts: Iterable[str]) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode("utf-8", "replace"))
        h.update(b"\x1f")
    return h.hexdigest()


def _name(c: Candidate) -> str:
    d = c.descriptor
    return normalize_text(d.label_text or d.name or d.label or d.placeholder or d.text or d.id or d.tag)[:60]


@dataclass(frozen=True, slots=True)
class HeavySignature:
    """The heavy state signature of one page (S2), taken at key points.

    Attributes
    ----------
    url, title : str
        Page URL (no fragment) and title, volatile text normalized.
    elements : tuple[tuple[str, str, float, float], ...]
        Every visible interactive element as ``(role, name digest (8 hex),
        x, y)``, x and y the box centre relative to the viewport (0..1, in
        steps of 0.05), sorted.
    focus : str
        The active element (the light signature's description).
    modals : tuple[str, ...]
        Titles of the open dialogs, outermost first.
    loading : tuple[str, ...]
        Loading evidence (spinner, ``aria-busy``, progress bar).
    errors : int
        Visible validation / error messages.
    disabled : int
        Visible disabled controls.
    digest : str
        SHA1 over all the above.
    """

    url: str
    title: str
    elements: tuple[tuple[str, str, float, float], ...]
    focus: str
    modals: tuple[str, ...]
    loading: tuple[str, ...]
    errors: int
    disabled: int
    digest: str


def heavy_signature(obs: Observation) -> HeavySignature:
    """The heavy signature of ``obs`` (S2); candidate boxes in viewport CSS px."""
    vw, vh = (max(1, obs.viewport[0]), max(1, obs.viewport[1])) if obs.viewport else (1, 1)
    elems = []
    for c in obs.candidates:
        if not c.visible:
            continue
        d, b = c.descriptor, c.descriptor.bbox
        x = y = 0.0
        if b is not None:
            x = round(round((b.x + b.width / 2) / vw / _POS_STEP) * _POS_STEP, 2)
            y = round(round((b.y + b.height / 2) / vh / _POS_STEP) * _POS_STEP, 2)
        elems.append((d.role or d.tag, hashlib.sha1(_name(c).encode()).hexdigest()[:8], x, y))
    elems.sort()
    sig = obs.signature
    modals = tuple(normalize_text(t) for t in obs.modal_titles)
    disabled = sum(1 for c in obs.candidates if c.visible and not c.enabled)
    digest = _digest([sig.url, sig.title, repr(elems), sig.focus, repr(modals), repr(obs.loading),
                      str(sig.error_count), str(disabled)])
    return HeavySignature(sig.url, sig.title, tuple(elems), sig.focus, modals, tuple(obs.loading),
                          sig.error_count, disabled, digest)


def is_submit(kind: str, cand: Candidate | None, *, reversible: bool = True) -> bool:
    """Does this action send data (a submit, S2's key point)?

    True for an irreversible step, a click on ``type=submit``, or a click on
    a button named like one (Submit, Save, Send, Confirm, Delete, Sign in...).
    """
    if not reversible:
        return True
    if kind != "click" or cand is None:
        return False
    d = cand.descriptor
    if d.type == "submit" and d.tag in ("button", "input"):
        return True
    name = _name(cand).lower()
    return (d.role or d.tag) in ("button", "link") and any(w in name for w in _SUBMIT_WORDS)


@dataclass(frozen=True, slots=True)
class ActionNote:
    """The action that led to a state: its kind, the target's label, whether it was a submit, when (ms)."""

    kind: str
    label: str = ""
    submit: bool = False
    t_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class StateEntry:
    """One state of the ring buffer.

    Attributes
    ----------
    seq : int
        1-based order of the entry in the run.
    index : int
        The step (0-based) it was observed at; -1 before the first step.
    moment : str
        ``"before"`` or ``"after"`` the step's action.
    t_ms : float
        Wall-clock time of the observation (ms since the epoch).
    url, title, digest : str
        The light signature's URL, title and digest (S2).
    key_point : str
        Why a heavy signature was taken (``"run start"``, ``"dialog opened: Export report"``,
        ``"dialog closed"``, ``"before submit"``, ``"after submit"``), ``""`` for a light-only entry.
    heavy : HeavySignature | None
        The heavy signature at key points.
    belief : Belief
        The belief derived with this state.
    action : ActionNote | None
        The action that led to this state (for ``"after"`` entries).
    modal_count : int
        Depth of the dialog stack.
    """

    seq: int
    index: int
    moment: str
    t_ms: float
    url: str
    title: str
    digest: str
    key_point: str
    heavy: HeavySignature | None
    belief: Belief
    action: ActionNote | None = None
    modal_count: int = 0

    @property
    def line(self) -> str:
        """One line for a list: ``"#4 step 2 after 'Submit' [after submit] waiting_server (0.90)"``."""
        act = f" {self.action.kind} '{self.action.label}'" if self.action and self.action.label else ""
        kp = f" [{self.key_point}]" if self.key_point else ""
        step = f"step {self.index + 1}" if self.index >= 0 else "start"
        return f"#{self.seq} {step} {self.moment}{act}{kp} {self.belief.state} ({self.belief.confidence:.2f})"


def _same_form(a: Candidate, b: Candidate) -> bool:
    ca, cb = a.descriptor.container, b.descriptor.container
    return not ca or not cb or ca == cb


def _is_field(c: Candidate) -> bool:
    d = c.descriptor
    return c.editable or d.tag in ("select", "textarea") or d.role in _FIELD_ROLES


def _names(fields: Sequence[Candidate]) -> str:
    names = [_name(f) for f in fields[:3]]
    more = f" and {len(fields) - 3} more" if len(fields) > 3 else ""
    if len(names) == 1:
        return names[0] + more
    return ", ".join(names[:-1]) + (" and " if not more else ", ") + names[-1] + more


def _incomplete(obs: Observation) -> tuple[list[str], list[tuple[str, str]], float]:
    """Disabled submit buttons explained by empty required fields of their form."""
    evidence: list[str] = []
    blocked: list[tuple[str, str]] = []
    conf = 0.0
    buttons = [c for c in obs.candidates if c.visible and not c.enabled and not _is_field(c)
               and (c.descriptor.role == "button" or c.descriptor.tag == "button")]
    for b in buttons:
        empty = [f for f in obs.candidates if f.visible and f.enabled and _is_field(f) and not f.value.strip()
                 and _same_form(b, f)]
        required = [f for f in empty if f.extra.get("required")]
        if required:
            why = f"{_name(b)} is disabled because {_names(required)} {'is' if len(required) == 1 else 'are'} empty"
            conf = max(conf, 0.85)
        elif empty:
            why = f"{_name(b)} is disabled; {_names(empty)} {'is' if len(empty) == 1 else 'are'} still empty"
            conf = max(conf, 0.55)
        else:
            continue
        evidence.append(why)
        blocked.append((b.ref, why))
    return evidence, blocked, conf


def derive_belief(obs: Observation, history: Sequence[StateEntry] = (), action: ActionNote | None = None,
                  *, now_ms: float | None = None) -> Belief:
    """The belief about ``obs`` (S3), from the observation and the recent states.

    Parameters
    ----------
    obs : Observation
        The page now (secrets masked).
    history : Sequence[StateEntry]
        The ring buffer so far, oldest first.
    action : ActionNote | None
        The action just performed (for an observation after it), else None.
    now_ms : float | None
        Unused by the rules today; kept for rules on elapsed time.

    Returns
    -------
    Belief
        The first rule that holds gives the state (in this order): waiting
        for the server (loading after a submit, 0.9), loading (0.7), a form
        incomplete (0.85 when the fields say ``required``, else 0.55), a
        dialog open (0.95), validation errors (0.7), stuck (0.6: the last
        action changed nothing, or brought back the state before the previous
        one), else ready (0.6, 0.7 without any pending signal seen).  The
        evidence of every rule that holds is kept, the leading one first; a
        belief equal to the previous entry's gains 0.05 (at most 0.99).
    """
    found: list[tuple[str, float, list[str]]] = []
    blocked: list[tuple[str, str]] = []
    loading = tuple(obs.loading) or (("a loading indicator",) if obs.signature.loading else ())
    last_submit = action if action is not None and action.submit else None
    if last_submit is None and history and history[-1].action is not None and history[-1].action.submit \
            and history[-1].belief.state == "waiting_server":
        last_submit = history[-1].action  # still the same wait
    if loading:
        if last_submit is not None:
            found.append(("waiting_server", 0.9, [f"a spinner after '{last_submit.label or last_submit.kind}': "
                                                  f"waiting for the server ({loading[0]})"]))
        else:
            found.append(("loading", 0.7, [f"the page is loading ({loading[0]})"]))
    ev, bl, conf = _incomplete(obs)
    if ev:
        found.append(("incomplete", conf, ev))
        blocked += bl
    if obs.modal_titles:
        title = normalize_text(obs.modal_titles[-1])[:60]
        found.append(("dialog", 0.95, [f"dialog '{title}' is open: only its controls are reachable" if title
                                       else "a dialog is open: only its controls are reachable"]))
    if obs.signature.error_count:
        n = obs.signature.error_count
        found.append(("invalid", 0.7, [f"{n} validation message{'s are' if n != 1 else ' is'} shown"]))
    stuck = _stuck(obs, history, action)
    if stuck:
        found.append(("stuck", 0.6, [stuck]))
    if not found:
        found.append(("ready", 0.7 if not obs.signature.loading else 0.6, ["nothing pending: no spinner, no dialog, "
                                                                           "no validation message"]))
    state, conf, _ = found[0]
    evidence = tuple(e for _, _, es in found for e in es)
    prev = history[-1].belief if history else None
    if prev is not None and prev.state == state:
        conf = max(conf, min(_CAP, prev.confidence + _REINFORCE))
    return Belief(state, round(conf, 2), evidence, tuple(blocked))  # type: ignore[arg-type]


def _stuck(obs: Observation, history: Sequence[StateEntry], action: ActionNote | None) -> str:
    """The last action changed nothing, or went back to the state before the previous action (a toggle)."""
    if action is None or not history or action.kind in ("hover", "wait", "assert", "screenshot", "scroll"):
        return ""
    what = f"{action.kind} '{action.label}'" if action.label else action.kind
    digest = obs.signature.digest
    if history[-1].digest == digest:
        return f"the last action ({what}) changed nothing"
    befores = [e for e in history if e.moment == "before"]
    if len(befores) >= 2 and befores[-2].digest == digest:
        return f"the last action ({what}) brought back the state of two actions ago (a toggle going back and forth)"
    return ""


@dataclass
class StateAwareness:
    """The state module of one run: the ring buffer and the current belief (S2, S3).

    Parameters
    ----------
    capacity : int
        States kept (30, S2).
    """

    capacity: int = RING_SIZE
    ring: deque[StateEntry] = field(default_factory=deque)
    seq: int = 0

    def __post_init__(self) -> None:
        self.ring = deque(self.ring, maxlen=self.capacity)

    @property
    def belief(self) -> Belief | None:
        """The belief of the latest state; None before the first."""
        return self.ring[-1].belief if self.ring else None

    @property
    def last(self) -> StateEntry | None:
        return self.ring[-1] if self.ring else None

    def note(self, obs: Observation, *, index: int, moment: str, action: ActionNote | None = None,
             submit_next: bool = False) -> StateEntry:
        """Add the state of ``obs`` and derive its belief.

        Parameters
        ----------
        obs : Observation
            The page.
        index : int
            The step (0-based; -1 before the first).
        moment : str
            ``"before"`` or ``"after"`` the step's action.
        action : ActionNote | None
            For ``"after"``: the action performed.
        submit_next : bool
            For ``"before"``: the action about to be done is a submit (a key point).

        Returns
        -------
        StateEntry
            The new entry (also :attr:`last`).
        """
        history = list(self.ring)
        belief = derive_belief(obs, history, action)
        key = self._key_point(obs, history, moment, action, submit_next)
        self.seq += 1
        entry = StateEntry(self.seq, index, moment, obs.timestamp_ms or time.time() * 1000.0, obs.signature.url,
                           obs.signature.title, obs.signature.digest, key,
                           heavy_signature(obs) if key else None, belief, action, len(obs.modal_titles))
        self.ring.append(entry)
        return entry

    def mark_submit(self, obs: Observation) -> StateEntry | None:
        """The action about to be done on the latest state is a submit: give that state its heavy signature."""
        if not self.ring:
            return None
        e = self.ring[-1]
        if e.heavy is not None and "before submit" in e.key_point:
            return e
        kp = f"{e.key_point}; before submit" if e.key_point else "before submit"
        e2 = StateEntry(e.seq, e.index, e.moment, e.t_ms, e.url, e.title, e.digest, kp, heavy_signature(obs),
                        e.belief, e.action, e.modal_count)
        self.ring[-1] = e2
        return e2

    @staticmethod
    def _key_point(obs: Observation, history: Sequence[StateEntry], moment: str, action: ActionNote | None,
                   submit_next: bool) -> str:
        points = []
        if not history:
            points.append("run start")
        else:
            before, now = history[-1].modal_count, len(obs.modal_titles)
            if now > before:
                title = normalize_text(obs.modal_titles[-1])[:60]
                points.append(f"dialog opened: {title}" if title else "dialog opened")
            elif now < before:
                points.append("dialog closed")
        if moment == "before" and submit_next:
            points.append("before submit")
        if moment == "after" and action is not None and action.submit:
            points.append("after submit")
        return "; ".join(points)

    def recent(self, n: int = RING_SIZE) -> list[StateEntry]:
        """The last ``n`` states, oldest first."""
        return list(self.ring)[-n:]

    def reset(self) -> None:
        """Forget the states (a new run)."""
        self.ring.clear()
        self.seq = 0
