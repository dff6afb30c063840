"""A sample store for the state graph and run history previews: real rows, drawn pages.

:func:`sample_store` writes, into a project folder, what two runs of the
sample ``login_lockout`` flow would have stored: runs, steps, resolutions,
verdicts, observations with the rendered sample pages as screenshots, and
each step's transition in the flow's state graph (through the real
:class:`core.store.Store` and :class:`core.store.GraphTable`).  The second
run heals one step (found by ``fuzzy_text`` instead of ``exact``), is slower
on another and has one verdict changed, so a comparison has something to
show.  No Qt here.
"""
from __future__ import annotations

from pathlib import Path

from core.domain import Resolution, RunResult, StepOutcome, Verdict
from core.state.graph import StateSeen, Transition, flow_graph_name, target_summary
from core.store import GraphTable, Store, store_path

from .samples import sample_observation

__all__ = ["SAMPLE_STEPS", "sample_store", "preview_folder"]

#: ``(step id, title, action kind, target label, target role, page before, page after)`` of the sample flow.
SAMPLE_STEPS = (
    ("s1", "Open the login page", "navigate", "", "", "login", "login"),
    ("s2", "Type the user name", "input", "User name", "textbox", "login", "login_user"),
    ("s3", "Type a wrong password", "input", "Password", "textbox", "login_user", "login_filled"),
    ("s4", "Click Sign in", "click", "Sign in", "button", "login_filled", "login_error"),
    ("s5", "Click Sign in twice more", "click", "Sign in", "button", "login_error", "login_locked"),
    ("s6", "Click Unlock account", "click", "Unlock account", "link", "login_locked", "login"),
    ("s7", "Check the lockout message", "assert", "", "", "login", "login"),
)


def _run(store: Store, graphs: GraphTable, *, tweaked: bool) -> str:
    flow = "login_lockout"
    run_id = store.begin_run("demo", flow)
    outcomes = []
    for i, (sid, title, kind, label, role, pb, pa) in enumerate(SAMPLE_STEPS):
        before, after = sample_observation(pb), sample_observation(pa)
        wb = store.record_observation(run_id, i, "before", before)
        wa = store.record_observation(run_id, i, "after", after)
        strategy = "" if not label else ("fuzzy_text" if tweaked and sid == "s4" else "exact")
        res = Resolution(strategy=strategy, ref="0:1", score=0.81 if strategy == "fuzzy_text" else 1.0,
                         margin=0.3, ms=4.0) if strategy else None
        verdict = Verdict("as_expected", "navigation" if kind == "click" else "value")
        if tweaked and sid == "s6":
            verdict = Verdict("changed_unexpectedly", "navigation", ("content",),
                              "the page changed, but not as a navigation")
        ms = 420.0 + 60 * i + (900.0 if tweaked and sid == "s5" else 0.0)
        if res is not None:
            store.record_resolution(run_id, i, res)
        store.record_verdict(run_id, i, verdict)
        out = StepOutcome(i, sid, title, "passed", res, verdict, 1, ms)
        store.record_step(run_id, out)
        outcomes.append(out)
        rel = store.media_root
        t = Transition(
            StateSeen.of(before.signature, screenshot_png=before.screenshot_png,
                         screenshot=wb.relative_to(rel).as_posix() if wb else ""),
            StateSeen.of(after.signature, screenshot_png=after.screenshot_png,
                         screenshot=wa.relative_to(rel).as_posix() if wa else ""),
            kind, target_summary(role, label), sid, verdict.kind, run_id=run_id, step_index=i, start=i == 0)
        graphs.add_transition(flow_graph_name(flow), t)
    heals = 1 if tweaked else 0
    store.finish_run(run_id, RunResult(run_id=run_id, flow=flow, status="passed", steps=tuple(outcomes),
                                       heals=heals, invalid_actions=0, seconds=sum(o.ms for o in outcomes) / 1000,
                                       heals_by_strategy={"fuzzy_text": 1} if tweaked else {}))
    return run_id


def sample_store(project_root: Path) -> tuple[Path, str, str]:
    """Write the two sample runs under ``project_root``; returns ``(media root, baseline run, tweaked run)``."""
    db = store_path(project_root)
    with Store.open(db) as store:
        graphs = GraphTable(store)
        a = _run(store, graphs, tweaked=False)
        b = _run(store, graphs, tweaked=True)
        return store.media_root, a, b


def preview_folder() -> Path:
    """A fresh temporary project folder for a preview (removed when the process exits)."""
    import atexit  # noqa: PLC0415
    import shutil  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    root = Path(tempfile.mkdtemp(prefix="steadyhand-preview-"))
    atexit.register(shutil.rmtree, root, True)
    return root
