"""The review of a recording: steps whose target name needs a second look, while the user remembers the page.

Pure functions, tested without a browser.  The recorder computes, at
record time, how many other elements of the page shared the target's role
and name (:func:`same_named`, from the snapshot taken before the action);
:func:`review_flags` turns the recorded steps and those counts into flags
the ``record`` command prints after its step list and the studio's
recorder dock shows per step.  A flag is advice, never a change: the step
stays as recorded.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, Sequence

from core.domain import Candidate, ElementDescriptor, Step

__all__ = ["FlagKind", "ReviewFlag", "same_named", "review_flags", "flags_by_step", "format_review"]

#: ``empty_name``: the target has no accessible name; ``duplicate_name``: other elements of the page had the
#: same role and name at record time; ``name_differs``: the name is not the element's visible text.
FlagKind = Literal["empty_name", "duplicate_name", "name_differs"]


@dataclass(frozen=True, slots=True)
class ReviewFlag:
    """One thing to check about one recorded step.

    Attributes
    ----------
    step_id : str
        The step's id (``"s3"``).
    step_name : str
        The step's title as saved.
    kind : FlagKind
        What was found.
    message : str
        One line for the user: what was found and why it matters.
    """

    step_id: str
    step_name: str
    kind: FlagKind
    message: str


def _norm(text: str) -> str:
    return " ".join((text or "").split()).casefold()


def _same_element(a: ElementDescriptor, b: ElementDescriptor) -> bool:
    return bool(a.css_path) and (a.frame, a.shadow, a.css_path) == (b.frame, b.shadow, b.css_path)


def same_named(desc: ElementDescriptor, candidates: Iterable[Candidate]) -> int:
    """How many candidates other than ``desc`` itself have its role and accessible name.

    Names compare with whitespace collapsed and case folded (what a reader
    of the page would call the same name); the element itself (same frame,
    shadow path and CSS path) is not counted.  0 when ``desc`` has no role
    or no name.
    """
    role, name = desc.role, _norm(desc.name)
    if not role or not name:
        return 0
    return sum(1 for c in candidates
               if c.descriptor.role == role and _norm(c.descriptor.name) == name
               and not _same_element(c.descriptor, desc))


def _names_a_target(step: Step) -> bool:
    """True for steps that act on or check one element (page-level checks, keys and scrolls have no name)."""
    return not step.target.is_empty and step.action.kind not in ("navigate", "scroll")


def review_flags(steps: Sequence[Step], same_name_counts: Mapping[str, int] | None = None) -> list[ReviewFlag]:
    """The flags of a recording, in step order (a step may have several).

    Parameters
    ----------
    steps : Sequence[Step]
        The recorded steps, as saved.
    same_name_counts : Mapping[str, int] | None
        Step id -> number of other elements of the page with the target's
        role and name at record time (:func:`same_named`); a step missing
        here is not checked for duplicates (a recovered journal has none).

    Returns
    -------
    list[ReviewFlag]
        For each step with a target: ``empty_name`` when its accessible name
        is empty; ``duplicate_name`` when its count is 1 or more;
        ``name_differs`` when it has both a name and a visible text and,
        whitespace collapsed and case folded, neither contains the other.
    """
    counts = same_name_counts or {}
    out: list[ReviewFlag] = []
    for s in steps:
        if not _names_a_target(s):
            continue
        d = s.target
        name, text = " ".join(d.name.split()), " ".join(d.text.split())
        if not name:
            what = f"a {d.role}" if d.role else f"a <{d.tag}>" if d.tag else "the element"
            out.append(ReviewFlag(s.id, s.name, "empty_name",
                                  f"{what} without an accessible name: replay can find it by its place and "
                                  "attributes only; give it a name in the flow (or in the page)"))
            continue
        others = int(counts.get(s.id, 0))
        if others > 0:
            out.append(ReviewFlag(s.id, s.name, "duplicate_name",
                                  f"{others + 1} elements on the page are a {d.role} named {name!r}: check the "
                                  "recorded one is the one meant (its anchor and place tell them apart)"))
        if text and _norm(name) not in _norm(text) and _norm(text) not in _norm(name):
            out.append(ReviewFlag(s.id, s.name, "name_differs",
                                  f"named {name!r} but shows {text[:60]!r}: check the name is this element's"))
    return out


def flags_by_step(flags: Iterable[ReviewFlag]) -> dict[str, list[ReviewFlag]]:
    """The flags grouped by step id, in their order."""
    out: dict[str, list[ReviewFlag]] = {}
    for f in flags:
        out.setdefault(f.step_id, []).append(f)
    return out


def format_review(flags: Sequence[ReviewFlag], flow_file: str) -> str:
    """The review summary the ``record`` command prints after its step list (``""`` without flags)."""
    if not flags:
        return ""
    n = len({f.step_id for f in flags})
    lines = [f"Review {n} step{'s' if n != 1 else ''} of {flow_file} while you remember the page:"]
    lines += [f"  {f.step_id:<4} {f.step_name}: {f.message}" for f in flags]
    return "\n".join(lines)
