"""Heals as reviewed proposals, end to end: the demo app's ``tweaked`` variant in real Chromium, through the CLI.

The flow ``export_report`` was recorded on the unchanged app; on the tweaked
one its Sign in button moved and got another id and "Export report" became
"Export report (E)" (``core/sites/demo.py``).  Run 1 heals and proposes; run 2
reuses the pending heals (flagged, counted, nothing new); accepting writes
the flow file as shown; run 3 resolves exact.  A rejected heal is never
reused nor proposed again.  The flow file changes only on ``heals accept``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.heal import unified_diff
from core.heal.review import HealReview
from core.project import load_flow
from core.store import Store, store_path

ROOT = Path(__file__).resolve().parents[2]
FLOW = "export_report"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def tweaked(tmp_path) -> Path:
    dst = tmp_path / "demo-tweaked"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    settings = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    settings["site_options"]["variant"] = "tweaked"
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
    return dst


def _run(project: Path, tmp: Path, n: int) -> tuple[dict, str]:
    out = tmp / f"run{n}.json"
    r = _cli("run", str(project), "--flow", FLOW, "--headless", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    (flow,) = json.loads(out.read_text())["flows"]
    return flow, r.stderr


def _last_resolutions(project: Path) -> dict[int, str]:
    """Step index -> strategy of the last resolution of the most recent run, read from the store."""
    store = Store.open(store_path(project), read_only=True)
    try:
        (run,) = store.list_runs(limit=1)
        detail = store.run_detail(run.id)
        return {r.index: r.strategy for r in detail.resolutions}
    finally:
        store.close()


def test_a_heal_is_proposed_reused_accepted_and_then_resolves_exact(tweaked, tmp_path) -> None:
    flow_file = tweaked / "flows" / f"{FLOW}.yaml"
    original = flow_file.read_text()

    first, err1 = _run(tweaked, tmp_path, 1)
    assert first["heals"] > 0
    assert flow_file.read_text() == original  # a heal is a proposal, not a rewrite
    with HealReview(tweaked) as review:
        pending = review.list_pending()
        assert len(pending) == first["heals"]
        for p in pending:
            assert (p.flow, p.kind, p.seen, p.reused) == (FLOW, "heal", 1, 0) and p.strategy != "exact"
            assert f"heal proposed #{p.id}: flows/{FLOW}.yaml step {p.step_id}" in err1
            ev = review.evidence(p.id)
            assert ev.before_screenshot and ev.before_screenshot.is_file() and ev.after_screenshot.is_file()
            assert ev.top and ev.score > 0 and ev.margin > 0
        export = next(p for p in pending if p.new_target.get("name") == "Export report (E)")
        assert export.old_target["name"] == "Export report"
    ids = sorted(p.id for p in pending)

    second, err2 = _run(tweaked, tmp_path, 2)
    assert second["heals"] == first["heals"]  # a reused heal still counts as a heal
    for i in ids:
        assert f"pending heal #{i} reused at step" in err2
    assert "heal proposed" not in err2
    strategies = _last_resolutions(tweaked)
    assert sorted(s for s in strategies.values() if s == "pending_heal") == ["pending_heal"] * len(ids)
    with HealReview(tweaked) as review:
        assert sorted((p.id, p.seen, p.reused) for p in review.list()) == [(i, 1, 1) for i in ids]
    assert flow_file.read_text() == original

    # -q: no line per reused heal, one line after the summary (quiet, never silent)
    quiet = _cli("run", str(tweaked), "--flow", FLOW, "--headless", "-q")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "reused at step" not in quiet.stdout + quiet.stderr
    heals = "heal" if len(ids) == 1 else "heals"  # it said "heal(s)"
    assert f"{len(ids)} pending {heals} reused, not yet reviewed" in quiet.stdout

    listed = _cli("heals", "list", str(tweaked))
    assert listed.returncode == 0 and all(f"#{i}  pending  heal" in listed.stdout for i in ids), listed.stdout
    shown = _cli("heals", "show", str(tweaked), str(export.id))
    assert shown.returncode == 0, shown.stderr
    assert "old (flow file)" in shown.stdout and "Export report (E)" in shown.stdout
    assert f"--- a/flows/{FLOW}.yaml" in shown.stdout and "+    name: Export report (E)" in shown.stdout

    flow_file.write_text(original + "# edited by hand\n")  # changed on disk since the proposal: refused
    refused = _cli("heals", "accept", str(tweaked), str(export.id))
    assert refused.returncode == 2 and "changed on disk since heal" in refused.stderr
    assert flow_file.read_text() == original + "# edited by hand\n"
    flow_file.write_text(original)

    accepted = _cli("heals", "accept", str(tweaked), str(export.id))
    assert accepted.returncode == 0, accepted.stderr
    applied = unified_diff(original, flow_file.read_text(), f"flows/{FLOW}.yaml")
    assert applied and accepted.stdout.startswith(applied)  # the file changed exactly as printed
    assert applied in shown.stdout  # ... and as shown before
    assert load_flow(flow_file).steps[3].target.name == "Export report (E)"
    for i in ids:
        if i != export.id:
            assert _cli("heals", "accept", str(tweaked), str(i)).returncode == 0
    again = _cli("heals", "accept", str(tweaked), str(export.id))
    assert again.returncode == 2 and f"heal #{export.id} was already accepted" in again.stderr

    third, err3 = _run(tweaked, tmp_path, 3)
    assert third["heals"] == 0 and "pending heal" not in err3 and "heal proposed" not in err3
    assert set(_last_resolutions(tweaked).values()) <= {"exact"}
    unknown = _cli("heals", "show", str(tweaked), "999")
    assert unknown.returncode == 2 and "no heal proposal #999" in unknown.stderr


def test_a_rejected_heal_is_not_reused_nor_proposed_again(tweaked, tmp_path) -> None:
    flow_file = tweaked / "flows" / f"{FLOW}.yaml"
    original = flow_file.read_text()
    first, _ = _run(tweaked, tmp_path, 1)
    with HealReview(tweaked) as review:
        ids = sorted(p.id for p in review.list_pending())
    for i in ids:
        r = _cli("heals", "reject", str(tweaked), str(i), "--reason", "not the same control")
        assert r.returncode == 0 and f"rejected heal #{i}" in r.stdout, r.stderr

    out = tmp_path / "run2.json"
    r2 = _cli("run", str(tweaked), "--flow", FLOW, "--headless", "--json", str(out))
    (second,) = json.loads(out.read_text())["flows"]
    err2 = r2.stderr
    # a person called that element the wrong control: the engine does not press it again, it stops and says so
    assert r2.returncode != 0 and not second["passed"], r2.stdout + err2
    assert f"rejected heal #{ids[0]}" in second["stop"]["reason"] and "not the same control" in second["stop"]["reason"]
    assert "reused" not in err2 and "heal proposed" not in err2
    assert "pending_heal" not in _last_resolutions(tweaked).values()
    with HealReview(tweaked) as review:
        assert review.list_pending() == [] and sorted(p.id for p in review.list()) == ids
        assert {p.reason for p in review.list()} == {"not the same control"}
    r = _cli("heals", "accept", str(tweaked), str(ids[0]))
    assert r.returncode == 2 and "already rejected" in r.stderr
    assert flow_file.read_text() == original
