"""Takeover corrections as flow edits: what a person did by hand, offered as a change of the flow file.

A correction (:mod:`core.store.corrections`) holds the steps a person did
during a takeover, recorded with full descriptors, and what the hand-back
said they were for:

* ``replace`` - the manual steps replace the failed step, keeping what of it still
  applies (its checks, expected effect, after-state, selector: :func:`_keep_from_replaced`);
* ``insert`` - they go before it (the step itself stays and runs after them);
* ``done`` - the step was done by hand this once; nothing to change in the file
  (the correction is ``kept`` as material for heals and skills).

:func:`correction_edit` turns one into the new flow-file text: the failed
step's list item is replaced (or preceded) by the new steps, written with the
stable key order of :func:`core.project.loader.flow_to_mapping`, through
ruamel.yaml's round trip (:func:`core.heal.flowfile.round_trip_edit`): every
other step, comment and line stays byte for byte.  The result must parse to
the old data with only that change and load as a flow; a layout the round
trip cannot keep is rewritten from the parsed data.
New step ids are ``<failed id>_h<n>`` (unique in the file); the crops of
the recorded elements are written beside the flow as a recording's are
(``<flow>.crops/<id>.png``) when the edit is accepted.

:func:`list_corrections`, :func:`correction_diff`, :func:`accept_correction`
and :func:`reject_correction` are the review API (the heal-review queue, the
CLI).  Errors: :class:`CorrectionReviewError` with a message that says what
to do; nothing is written when one is raised.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml
from ruamel.yaml.comments import CommentedMap

from core.domain import Flow, Step
from core.project.loader import flow_from_mapping, flow_to_mapping, load_flow, write_atomic
from core.store import Store
from core.store.corrections import CorrectionConflictError, CorrectionRecord, CorrectionTable

from .flowfile import FlowEditError, _Dumper, digest, round_trip_edit, to_round_trip, unified_diff

__all__ = ["CorrectionReviewError", "CorrectionEdit", "correction_edit", "steps_as_mappings", "new_step_ids",
           "list_corrections", "correction_diff", "accept_correction", "reject_correction", "flow_path_of"]


class CorrectionReviewError(RuntimeError):
    """A correction could not be previewed or reviewed; the message says why (nothing was written)."""


@dataclass(frozen=True, slots=True)
class CorrectionEdit:
    """The flow file before and after a correction's edit, and the unified diff between them.

    ``not_kept`` is one plain line naming what of a replaced step the new
    steps do not keep ("" when they keep all of it: its checks always, its
    expected effect, after-state and selector where they still apply); when
    there is one, ``diff`` begins with it, above the ``---`` line, so every
    review of the diff (CLI, studio, heal queue) shows it first.
    """

    old: str
    new: str
    diff: str
    not_kept: str = ""


def steps_as_mappings(flow_name: str, start_url: str, steps: Sequence[Step]) -> list[dict[str, Any]]:
    """Steps as the flow file holds them (stable key order, :func:`core.project.loader.flow_to_mapping`)."""
    return list(flow_to_mapping(Flow(flow_name, start_url, tuple(steps)))["steps"])


def new_step_ids(existing: Sequence[str], failed_id: str, count: int) -> list[str]:
    """``count`` ids ``<failed_id>_h1``, ``_h2``... that are not in ``existing``."""
    taken, out, n = set(existing), [], 0
    while len(out) < count:
        n += 1
        cand = f"{failed_id}_h{n}"
        if cand not in taken:
            out.append(cand)
            taken.add(cand)
    return out


def _renamed(steps: Sequence[Mapping[str, Any]], ids: Sequence[str], crops: Mapping[str, str],
             flow_name: str) -> list[dict[str, Any]]:
    """The steps with their new ids; a target's ``crop`` names the file it will be written to (or is dropped)."""
    out = []
    for s, new_id in zip(steps, ids, strict=True):
        d = copy.deepcopy(dict(s))
        old_id = str(d.get("id", ""))
        d = {"id": new_id, **{k: v for k, v in d.items() if k != "id"}}
        target = d.get("target")
        if isinstance(target, dict):
            if old_id in crops:
                target["crop"] = f"{flow_name}.crops/{new_id}.png"
            else:
                target.pop("crop", None)
        out.append(d)
    return out


#: Step entries that say how the replaced step's action is done; they go to the recorded step that does the same
#: action on the same element (else they are reported as not kept).
_SAME_ACTION_KEYS = ("selector", "timeout_ms", "compensations", "allow_irreversible", "allow", "key", "read_only",
                     "optional")


def _same_element(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True when ``new`` does ``old``'s action on ``old``'s element (same action; same element id or role and name)."""
    if old.get("action") != new.get("action"):
        return False
    a, b = old.get("target"), new.get("target")
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    if a.get("id") and b.get("id"):
        return a["id"] == b["id"]
    return bool(a.get("name")) and (a.get("role"), a.get("name")) == (b.get("role"), b.get("name"))


def _quoted(value: Any) -> str:
    return f"{value!r}" if isinstance(value, str) else str(value)


def _keep_from_replaced(old: Mapping[str, Any], new_steps: list[dict[str, Any]]) -> str:
    """Give the steps replacing ``old`` what they must keep of it; one plain line naming what was not kept ("").

    * ``assertions`` (checks after the step) go to the last new step, the one
      that completes the step: always kept.
    * ``expect`` and ``after`` (the effect and page expected after the step)
      go to the last new step where they agree with what its recording saw:
      an entry the recording saw differently is not kept (the recording saw
      the page; the file only expected it).  With nothing recorded they are kept.
    * ``selector`` and the other entries of :data:`_SAME_ACTION_KEYS` go to the
      new step that does the same action on the same element
      (:func:`_same_element`), which also keeps the old target's key order;
      none doing so: not kept.  A different value typed there, and a
      ``goal``, are named as not kept.
    * ``reversible: false`` is kept on that step, else on the last one (a step
      that may write stays marked so).
    """
    last = new_steps[-1]
    lost: list[str] = []
    checks = [a for a in (old.get("assertions") or []) if a not in (last.get("assertions") or [])]
    if checks:
        last["assertions"] = list(last.get("assertions") or []) + copy.deepcopy(checks)
    if old.get("expect"):
        if not last.get("expect"):
            last["expect"] = old["expect"]
        elif last["expect"] != old["expect"]:
            lost.append(f"expected effect {_quoted(old['expect'])} (the recording saw {_quoted(last['expect'])})")
    old_after = old.get("after") if isinstance(old.get("after"), dict) else {}
    if old_after:
        seen = last.get("after") if isinstance(last.get("after"), dict) else None
        if seen is None:
            last["after"] = copy.deepcopy(old_after)
        else:
            for k, v in old_after.items():
                if k not in seen:
                    lost.append(f"after-state {k} {_quoted(v)} (the recording did not see it)")
                elif seen[k] != v:
                    lost.append(f"after-state {k} {_quoted(v)} (the recording saw {_quoted(seen[k])})")
    same = next((s for s in new_steps if _same_element(old, s)), None)
    if old.get("goal"):
        lost.append(f"goal {_quoted(old['goal'])} (the recorded actions take its place)")
    if same is not None and old.get("value") and same.get("value") != old["value"]:
        lost.append(f"value {_quoted(old['value'])} (you typed {_quoted(same.get('value', ''))})")
    for k in _SAME_ACTION_KEYS:
        if k not in old:
            continue
        if same is None:
            lost.append(f"{k} {_quoted(old[k])} (no recorded step acts on the same element)")
        elif k not in same:
            same[k] = copy.deepcopy(old[k])
    if old.get("reversible") is False:
        (same or last)["reversible"] = False
    if same is not None and isinstance(old.get("target"), dict) and isinstance(same.get("target"), dict):
        order = list(old["target"])
        same["target"] = dict(sorted(same["target"].items(),
                                     key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))
    if not lost:
        return ""
    return (f"Not kept from the replaced step {old.get('id')} {_quoted(old.get('name') or old.get('action'))}: "
            + "; ".join(lost) + ".")


def _in_step_order(step: dict[str, Any]) -> dict[str, Any]:
    """``step`` with its entries in the flow file's stable order (:func:`core.project.loader.flow_to_mapping`)."""
    order = ("id", "name", "goal", "action", "value", "direction", "distance", "timeout_ms", "selector", "target",
             "assertions", "expect", "reversible", "compensations", "allow_irreversible", "allow", "key", "read_only",
             "optional", "after", "recorded")
    return dict(sorted(step.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order)))


def correction_edit(text: str, *, step_id: str, meaning: str, steps: Sequence[Mapping[str, Any]],
                    crops: Mapping[str, str] | None = None, secrets: Sequence[str] = (),
                    path: Path | str = "flow.yaml") -> CorrectionEdit:
    """The flow file ``text`` with a correction's ``steps`` put in place of (or before) step ``step_id``.

    Parameters
    ----------
    text : str
        The flow file's current text.
    step_id : str
        Id of the step the takeover began at.
    meaning : str
        ``replace`` or ``insert`` (``done`` changes nothing and is refused here).
    steps : Sequence[Mapping[str, Any]]
        The manual steps as file mappings (:func:`steps_as_mappings`); at least one.
    crops : Mapping[str, str] | None
        Recorded step id -> crop file (any value): those steps keep a ``crop`` entry.
    secrets : Sequence[str]
        Secret parameter names the steps use; those the flow does not
        declare yet are added to its ``secrets`` list.
    path : Path | str
        The file, named in errors and in the diff labels.

    Raises
    ------
    FlowEditError
        No such step, not a flow file, ``done``, or no steps.
    core.project.ProjectError
        The edited file would not load as a flow.
    """
    if meaning not in ("replace", "insert"):
        raise FlowEditError(f"a correction meant {meaning!r} edits nothing")
    if not steps:
        raise FlowEditError("no manual action was recorded: nothing to put in the flow")
    data = yaml.safe_load(text)
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        raise FlowEditError("not a flow file (no 'steps' list)")
    ids = [str(s.get("id")) for s in data["steps"] if isinstance(s, dict)]
    hits = [i for i, s in enumerate(data["steps"]) if isinstance(s, dict) and str(s.get("id")) == step_id]
    if len(hits) != 1:
        raise FlowEditError(f"no step with id {step_id!r}" if not hits else f"{len(hits)} steps with id {step_id!r}")
    flow_name = str(data.get("name") or Path(path).stem)
    new_steps = _renamed(steps, new_step_ids(ids, step_id, len(steps)), crops or {}, flow_name)
    i = hits[0]
    not_kept = ""
    if meaning == "replace":
        not_kept = _keep_from_replaced(data["steps"][i], new_steps)
        new_steps = [_in_step_order(s) for s in new_steps]
    expected = copy.deepcopy(data)
    plain = yaml.safe_load(yaml.dump(new_steps, Dumper=_Dumper, allow_unicode=True))
    expected["steps"][i:i + 1] = plain if meaning == "replace" else plain + [expected["steps"][i]]
    missing = [s for s in secrets if s not in (expected.get("secrets") or [])]
    if missing:
        expected["secrets"] = list(expected.get("secrets") or []) + missing

    def edit(doc: CommentedMap) -> None:
        seq = doc["steps"]
        at = next(j for j, s in enumerate(seq) if isinstance(s, Mapping) and str(s.get("id")) == step_id)
        rows = [to_round_trip(s) for s in new_steps]
        if meaning == "replace":
            del seq[at]
        for j, row in enumerate(rows):
            seq.insert(at + j, row)
        if missing:
            if isinstance(doc.get("secrets"), list):
                doc["secrets"].extend(missing)
            else:
                doc["secrets"] = to_round_trip(missing)

    leads = {new_steps[0]["id"]: step_id} if meaning == "replace" else {}
    kept = set(ids) - {step_id} if meaning == "replace" else set(ids)
    done = round_trip_edit(text, edit, kept=kept, leads=leads, top_changed=bool(missing), expected=expected)
    if done is None:
        rewritten = yaml.dump(expected, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
        done = rewritten, yaml.safe_load(rewritten)
    new = done[0]
    flow_from_mapping(done[1], path)
    diff = unified_diff(text, new, Path(path).name if Path(path).is_absolute() else str(path))
    return CorrectionEdit(text, new, f"{not_kept}\n{diff}" if not_kept else diff, not_kept)


# --- review ------------------------------------------------------------------------------------


def flow_path_of(rec: CorrectionRecord, project_root: Path | str | None) -> Path:
    """The correction's flow file, absolute (relative names are under ``project_root``)."""
    p = Path(rec.flow_file)
    if p.is_absolute() or project_root is None:
        return p
    return Path(project_root) / p


def list_corrections(store: Store, state: str | None = "offered", *, flow: str | None = None,
                     project: str | None = None) -> list[CorrectionRecord]:
    """Corrections newest first; ``state`` ``offered`` (default: the ones a review queue shows), None = all."""
    return CorrectionTable(store).list(state=state, flow=flow, project=project)


def _get(store: Store, correction_id: int) -> CorrectionRecord:
    rec = CorrectionTable(store).get(correction_id)
    if rec is None:
        raise CorrectionReviewError(f"no correction #{correction_id} in this project's store")
    return rec


def correction_diff(store: Store, correction_id: int, *, project_root: Path | str | None = None) -> CorrectionEdit:
    """The edit accepting would make to the flow file as it is now on disk; nothing is written.

    Raises
    ------
    CorrectionReviewError
        Unknown id, not offered, the file cannot be read or no longer has the step.
    """
    rec = _get(store, correction_id)
    if rec.state != "offered":
        why = f" ({rec.review_reason})" if rec.review_reason else ""
        raise CorrectionReviewError(f"correction #{rec.id} is {rec.state}{why}: nothing to do")
    path = flow_path_of(rec, project_root)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CorrectionReviewError(f"{rec.flow_file}: cannot read the flow file ({exc.strerror or exc}); "
                                    "nothing written") from None
    try:
        return correction_edit(text, step_id=rec.step_id, meaning=rec.meaning, steps=rec.steps, crops=rec.crops,
                               secrets=rec.secrets, path=rec.flow_file)
    except Exception as exc:  # noqa: BLE001 - FlowEditError, ProjectError: the file is never written then
        raise CorrectionReviewError(f"{rec.flow_file}: {exc}; nothing written") from None


def accept_correction(store: Store, correction_id: int, *, project_root: Path | str | None = None) -> str:
    """Write the correction's edit into the flow file (and its crops beside it); returns the diff applied.

    The edit is computed against the file as it is now (it may have changed
    since the takeover; the failed step must still be there).  The store is
    marked first, so a second accept of the same correction writes nothing.

    Raises
    ------
    CorrectionReviewError
        As :func:`correction_diff`, or another review came first.
    """
    rec = _get(store, correction_id)
    edit = correction_diff(store, correction_id, project_root=project_root)
    path = flow_path_of(rec, project_root)
    try:
        CorrectionTable(store).review(rec.id, "accepted", diff=edit.diff)
    except CorrectionConflictError as exc:
        raise CorrectionReviewError(str(exc)) from None
    new_flow = yaml.safe_load(edit.new)
    old_ids = {str(s.get("id")) for s in (yaml.safe_load(edit.old) or {}).get("steps", []) if isinstance(s, dict)}
    added = [s for s in new_flow["steps"] if str(s.get("id")) not in old_ids]
    for recorded, step in zip(rec.steps, added, strict=False):
        rel = rec.crops.get(str(recorded.get("id", "")))
        target = step.get("target") if isinstance(step.get("target"), dict) else {}
        if rel and target.get("crop"):
            src = store.media_path(rel)
            if src.is_file():
                dest = path.parent / str(target["crop"])
                dest.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(dest, src.read_bytes())
    write_atomic(path, edit.new.encode("utf-8"))
    load_flow(path)  # checked before writing; a failure here is a defect worth raising
    return edit.diff


def reject_correction(store: Store, correction_id: int, reason: str = "") -> CorrectionRecord:
    """Mark the correction rejected (with ``reason``); the flow file is not touched.

    Raises
    ------
    CorrectionReviewError
        Unknown id, or not offered any more.
    """
    rec = _get(store, correction_id)
    try:
        return CorrectionTable(store).review(rec.id, "rejected", reason=reason)
    except CorrectionConflictError as exc:
        raise CorrectionReviewError(str(exc)) from None


def flow_digest_of(path: Path | str) -> str:
    """SHA-256 hex of the flow file now ("" when it cannot be read)."""
    try:
        return digest(Path(path).read_bytes())
    except OSError:
        return ""
