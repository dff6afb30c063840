"""From recorded browser events to flow steps: pure functions, tested without a browser.

The in-page recorder (``recorder_lib.js``) reports one event per user
action (``{"kind", "desc", "value", ...}``); :class:`StepBuilder` turns each
into a :class:`~core.domain.Step` with a name, a secret-safe value and the
expected delta observed while recording (S5), and merges two clicks and a
double click into one ``dblclick`` step.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from core.act.space import spec
from core.domain import Action, Assertion, ElementDescriptor, Step, StepEvidence
from core.project.schema import MAX_SCROLL_PX
from core.project.params import display, escape, escape_target, is_placeholder, placeholder

__all__ = [
    "SecretPolicy", "StepBuilder", "slug", "expect_from_observed", "relative_url", "step_name",
    "assertion_step", "SUGGESTED_ASSERTIONS", "DISAPPEARANCE_KINDS", "ASSERTION_LABELS", "suggested_assertions",
]

#: Deltas that say clearly what an action does; others leave ``expect: auto`` (S5).
_DECISIVE = ("navigation", "overlay_open", "overlay_close")
#: Seconds within which two clicks and a double click on one element merge.
DOUBLE_CLICK_S = 1.0


def slug(text: str, default: str = "value", *, digit_prefix: str = "p") -> str:
    """A parameter name from a label: ``"User name"`` -> ``"user_name"``; ``default`` when empty.

    Accents are folded to ASCII (``"Prénom"`` -> ``"prenom"``); a name that
    would start with a digit gets ``digit_prefix + "_"`` in front; 40 chars at most.
    """
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^0-9a-z]+", "_", ascii_text.lower()).strip("_")[:40].strip("_")
    if not s:
        return default
    return f"{digit_prefix}_{s}" if s[0].isdigit() else s


def relative_url(url: str, base_url: str) -> str:
    """``url`` relative to ``base_url`` (``"/login"``, ``"/?q=1"``) when it is under it, else unchanged."""
    base = base_url.rstrip("/")
    if not base or not url.startswith(base):
        return url
    rest = url[len(base):]
    if rest == "":
        return "/"
    if rest[0] in "/?#":
        return rest if rest[0] == "/" else "/" + rest
    return url  # another host that merely starts alike (":80001")


def expect_from_observed(kind: str, observed: Iterable[str], *, reliable: bool = True) -> str:
    """The ``expect`` of a recorded step from the deltas observed while recording (S5).

    Only decisive deltas (navigation, an overlay opening or closing) are
    written down; for anything else, or when the after-state was taken too
    late to be trusted (the user acted again first), ``"auto"`` lets replay
    use the action's default expectation.  Only kinds whose default
    expectation is vague (``"any"`` in the action table: click, double click,
    press) get a recorded one.  A click that changed nothing real gets ``"none"``.

    Raises
    ------
    KeyError
        When ``kind`` is outside the closed action space.
    """
    obs = tuple(observed)
    if not reliable or spec(kind).expected != "any":
        return "auto"
    for d in _DECISIVE:
        if d in obs:
            return d
    real = [d for d in obs if d not in ("focus", "loading")]
    if not real and kind in ("click", "dblclick"):
        return "none"
    return "auto"


def step_name(kind: str, desc: ElementDescriptor, value: str = "") -> str:
    """A readable step title: ``"Click Sign in"``, ``"Fill User name"``, ``"Press Enter in Password"``."""
    label = desc.label_text or desc.anchor.text if desc.anchor else desc.label_text
    label = label or desc.tag or "the page"
    if kind == "click":
        return f"Click {label}"
    if kind == "dblclick":
        return f"Double-click {label}"
    if kind == "input":
        return f"Fill {label}"
    if kind == "select":
        return f"Choose {value} in {label}" if value and not is_placeholder(value) else f"Choose {label}"
    if kind in ("check", "uncheck"):
        return f"{kind.capitalize()} {label}"
    if kind == "press":
        return f"Press {value} in {label}" if not desc.is_empty else f"Press {value}"
    if kind == "hover":
        return f"Hover {label}"
    if kind == "upload":
        return f"Upload to {label}"
    if kind == "navigate":
        return f"Go to {value}"
    if kind == "scroll":
        return f"Scroll {value}" if value else "Scroll"
    return f"{kind} {label}"


@dataclass(frozen=True, slots=True)
class SecretPolicy:
    """Which typed values become secret parameters.

    Attributes
    ----------
    declared : Mapping[str, str]
        Declared secrets of the project: name -> resolved value.  A typed
        value equal to one becomes ``{name}``.
    password_param : str
        The parameter a password field's value becomes when no declared
        secret is named after the field: the only declared secret when the
        project declares exactly one, else the field label's slug.
    """

    declared: Mapping[str, str]

    def for_password(self, desc: ElementDescriptor) -> str:
        """Parameter name for a password field."""
        label = slug(desc.label_text, "password")
        if label in self.declared:
            return label
        if len(self.declared) == 1:
            return next(iter(self.declared))
        return label

    def mask_within(self, value: str) -> str:
        """The typed ``value`` as flow text: braces doubled (literal), every declared secret of 3+ chars
        inside it replaced by ``{name}``."""
        out = escape(value)
        for name, secret in sorted(self.declared.items(), key=lambda kv: -len(kv[1] or "")):
            if secret and len(secret) >= 3 and secret in value:
                out = out.replace(escape(secret), placeholder(name))
        return out

    def for_value(self, value: str) -> str | None:
        """Name of the declared secret whose value is ``value``, if any."""
        if not value:
            return None
        for name, secret in self.declared.items():
            if secret and value == secret:
                return name
        return None


SUGGESTED_ASSERTIONS = {
    "textbox": ("value", "visible", "enabled", "disabled"),
    "combobox": ("value", "visible", "enabled"),
    "button": ("visible", "enabled", "disabled", "text_equals"),
    "link": ("visible", "text_equals"),
    "checkbox": ("visible", "enabled"),
}
#: Kinds that check that something went away: checked after the user's next action, since what is
#: picked is on the page when it is picked (P7).
DISAPPEARANCE_KINDS = ("hidden", "text_absent")


def suggested_assertions(role: str, text: str, *, interactive: bool, count: int = 1) -> tuple[str, ...]:
    """Assertion kinds offered for a picked element, best first (P7).

    A control gets the kinds of its role (:data:`SUGGESTED_ASSERTIONS`);
    any other element its text (``text_equals``, ``text_contains``) and
    visibility.  Every element is offered ``hidden`` (it disappears after
    the next action), and ``count`` when ``count`` > 1 elements look like it.
    """
    if interactive:
        kinds = SUGGESTED_ASSERTIONS.get(role, ("text_equals", "visible", "text_contains") if text else ("visible",))
    else:
        kinds = ("text_equals", "text_contains", "visible") if text else ("visible",)
    kinds = tuple(kinds) + tuple(k for k in ("hidden",) if k not in kinds)
    return kinds + (("count",) if count > 1 else ())


#: What each assertion kind checks, as the recorder offers it (front ends show these labels).
ASSERTION_LABELS = {
    "text_equals": "its text is exactly", "text_contains": "its text contains", "visible": "it is visible",
    "hidden": "it disappears after the next action", "enabled": "it is enabled", "disabled": "it is disabled",
    "value": "its value is", "count": "the number of elements like it is",
    "text_appears": "this text is on the page", "text_absent": "this text is gone after the next action",
    "url_contains": "the URL contains",
}


def assertion_step(step_id: str, kind: str, expected: str, desc: ElementDescriptor, *,
                   count_selector: str = "", selector: str = "") -> Step:
    """An ``assert`` step added in inspect mode (P7).

    ``text_appears`` / ``text_absent`` / ``url_contains`` are page level
    (no target); ``count`` counts the elements matching ``count_selector``;
    the other kinds check the picked element: through ``selector`` when
    given (an element the observer does not list, such as a status line,
    or one that must be gone: ``hidden`` passes when nothing matches), else
    the step's target ``desc``, which the locator chain resolves (R2).

    Raises
    ------
    ValueError
        For an unknown assertion kind.
    """
    page_level = kind in ("text_appears", "text_absent", "url_contains")
    if kind not in ("visible", "hidden", "text_equals", "text_contains", "enabled", "disabled", "value", "count",
                    "text_appears", "text_absent", "url_contains"):
        raise ValueError(f"unknown assertion kind {kind!r}")
    by_selector = bool(selector) and not page_level and kind != "count"
    label = desc.label_text or (desc.anchor.text if desc.anchor else "") or "the element"
    if by_selector and kind != "hidden" and desc.text and label == desc.text:  # named by its own text: say what it is
        label = (desc.anchor.text if desc.anchor else "") or f"the {desc.role or desc.tag or 'element'}"
    if len(label) > 40:
        label = label[:39].rstrip() + "\u2026"
    shown = display(expected)
    words = {"visible": f"{label} is visible", "hidden": f"{label} is hidden",
             "text_equals": f"{label} reads {shown!r}", "text_contains": f"{label} contains {shown!r}",
             "enabled": f"{label} is enabled", "disabled": f"{label} is disabled",
             "value": f"{label} holds {shown!r}", "count": f"{expected} items like {label}",
             "text_appears": f"{shown!r} appears", "text_absent": f"{shown!r} is absent",
             "url_contains": f"URL contains {shown!r}"}
    where = escape(count_selector if kind == "count" else (selector if by_selector else ""))
    return Step(
        id=step_id, name="Check that " + words[kind], action=Action("assert"),
        target=ElementDescriptor() if page_level or kind == "count" or by_selector else escape_target(desc),
        assertions=(Assertion(kind, expected, where),),  # type: ignore[arg-type]
        read_only=True,
    )


@dataclass
class _Tail:
    step: Step
    t: float
    key: tuple[str, str]
    focus: bool = False  # a click that moved the focus into a text field


class StepBuilder:
    """Turns recorder events into steps; holds only the last few steps (flat memory).

    Parameters
    ----------
    base_url : str
        Navigation URLs are stored relative to it.
    secrets : SecretPolicy
        Which values become secret parameters.
    """

    def __init__(self, *, base_url: str, secrets: SecretPolicy, known_params: Mapping[str, str] | None = None) -> None:
        self.base_url = base_url
        self.secrets = secrets
        #: The project's parameters: a typed value equal to one (3+ chars) becomes ``{name}``.
        self.known_params = {k: v for k, v in (known_params or {}).items() if v and len(v) >= 3}
        self.count = 0
        self.params: dict[str, str] = {}
        self.flow_secrets: list[str] = []
        self._tail: list[_Tail] = []

    def next_id(self) -> str:
        """Id of the next step (``"s<n>"``, 1-based, contiguous)."""
        return f"s{self.count + 1}"

    def _param_for(self, value: str) -> str | None:
        return next((name for name, v in self.known_params.items() if v == value), None)

    def _value(self, kind: str, event: Mapping[str, Any], desc: ElementDescriptor) -> str:
        if kind == "input":
            if event.get("is_password"):
                name = self.secrets.for_password(desc)
                if name not in self.secrets.declared and name not in self.flow_secrets:
                    self.flow_secrets.append(name)
                return placeholder(name)
            raw = str(event.get("value", ""))
            declared = self.secrets.for_value(raw) or self._param_for(raw)
            return placeholder(declared) if declared else self.secrets.mask_within(raw)
        if kind == "select":
            raw = str(event.get("value", ""))
            declared = self.secrets.for_value(raw) or self._param_for(raw)
            return placeholder(declared) if declared else escape(raw)
        if kind == "press":
            return str(event.get("value", ""))
        if kind == "upload":
            files = [str(f) for f in event.get("stored") or event.get("files", ()) if f]
            name = slug(desc.label_text, "file")
            self.params[name] = files[0] if files else ""
            return placeholder(name)
        if kind == "navigate":
            return escape(relative_url(str(event.get("url", "")), self.base_url))
        return ""

    def build(self, event: Mapping[str, Any], desc: ElementDescriptor, *, evidence: StepEvidence | None,
              observed: tuple[str, ...] | None = None, reliable: bool = True, wrote: bool = False,
              t: float = 0.0) -> tuple[Step, list[int]]:
        """Build the step for one event.

        Parameters
        ----------
        event : Mapping
            The recorder event (``kind`` one of click, dblclick, input,
            select, check, uncheck, hover, press, scroll, upload, navigate).
        desc : ElementDescriptor
            Its target (empty for targetless events).
        evidence : StepEvidence | None
            Signatures and deltas observed around it.
        observed : tuple[str, ...] | None
            Deltas to derive ``expect`` from (default: ``evidence.observed``).
        reliable : bool
            False when the after-state was taken after the user acted again.
        wrote : bool
            A network write (non-GET request) happened during the step: the
            step is irreversible (S6).
        t : float
            Event time in seconds (any monotonic origin).

        Returns
        -------
        (Step, list[int])
            The step and the indexes of earlier steps it replaces (two
            clicks merged into a double click), highest first.
        """
        kind = str(event["kind"])
        removed: list[int] = []
        key = (desc.frame, desc.shadow + "|" + desc.css_path)
        if kind == "dblclick":  # two clicks and a double click on one element: one step
            removed, evidence = self._merge(evidence, lambda x: x.step.action.kind == "click" and x.key == key
                                            and t - x.t <= DOUBLE_CLICK_S, limit=2)
        elif kind == "input":
            # typing resumed in the same field: one step with the final value; the click that
            # focused the field for the typing is part of it (filling focuses the field at replay)
            removed, evidence = self._merge(evidence, lambda x: x.key == key and (
                x.step.action.kind == "input" or (x.step.action.kind == "click" and x.focus)), limit=2)
        value = self._value(kind, event, desc)
        action = Action(kind)  # type: ignore[arg-type]
        if kind == "scroll":
            dx, dy = float(event.get("dx", 0)), float(event.get("dy", 0))
            direction = ("down" if dy > 0 else "up") if abs(dy) >= abs(dx) else ("right" if dx > 0 else "left")
            distance = int(round(max(abs(dx), abs(dy))))
            if event.get("end"):  # scrolled to the end: as far as the whole extent, whatever the start
                distance = max(distance, int(float(event.get("extent", 0))))
            distance = min(distance, MAX_SCROLL_PX)  # what a flow file may hold: the recording always loads
            action = Action("scroll", direction=direction, distance=distance)
            value = ""
        elif value:
            action = Action(kind, value=value)  # type: ignore[arg-type]
        if observed is None:
            observed = evidence.observed if evidence else ()
        name_value = action.direction if kind == "scroll" else value
        expect = expect_from_observed(kind, observed, reliable=reliable)
        selector = ""
        if kind == "scroll" and not desc.is_empty and desc.css_path:
            # a scrolled box (not the window): replay wheels over that box, found by its selector; the
            # observer follows the window's scroll only, so the step expects no change it could see (S5)
            selector = escape(" >> ".join(p for p in (desc.shadow, desc.css_path) if p))
            expect = "none"
        step = Step(
            id=self.next_id(), name=step_name(kind, desc, display(name_value)), action=action,
            target=escape_target(desc), selector=selector, expect=expect,
            reversible=spec(kind).reversible and not wrote, reversible_declared=wrote,
            read_only=spec(kind).read_only or (kind == "press" and value in ("Tab", "Shift+Tab")),
            recorded=evidence,
        )
        self.count += 1
        self._tail.append(_Tail(step, t, key, focus=kind == "click" and bool(event.get("focus"))))
        del self._tail[:-3]
        return step, removed

    def _merge(self, evidence: StepEvidence | None, same: Any, *, limit: int) -> tuple[list[int], StepEvidence | None]:
        """Withdraw up to ``limit`` trailing steps for which ``same(tail)`` holds; keep the first one's before-state."""
        removed: list[int] = []
        while self._tail and same(self._tail[-1]) and len(removed) < limit:
            gone = self._tail.pop()
            self.count -= 1
            removed.append(self.count)
            if evidence is not None and gone.step.recorded is not None:
                evidence = replace(evidence, state_before=gone.step.recorded.state_before)
        return removed, evidence

    def add(self, step: Step) -> Step:
        """Append a step built elsewhere (an assertion) and return it with its id."""
        step = replace(step, id=self.next_id())
        self.count += 1
        self._tail.append(_Tail(step, 0.0, ("", "")))
        del self._tail[:-3]
        return step
