"""Accepting a heal keeps what the page did not say again (tester's report, item 5).

On the ``tweaked`` demo the leave type's <select> is a custom combobox whose
shown text is a placeholder ("Select a type…") until a choice is made.  The
run heals step 5 to it; accepting the heal (``steadyhand heals accept``) wrote
the target without ``exact: false`` and with the placeholder as its ``text``.
Now ``exact`` survives, no placeholder is stored as text, and the healed flow
replays green.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from takeover_project import ROOT, cli

pytestmark = pytest.mark.browser


def test_an_accepted_heal_keeps_exact_and_stores_no_placeholder_as_text(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    cfg = project / "steadyhand.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace('latency_ms: "800"', 'latency_ms: "0"')
                   .replace("variant: baseline", "variant: tweaked"), encoding="utf-8")
    run = cli("run", str(project), "--flow", "leave_request", "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    (heal_id,) = re.findall(r"heal proposed #(\d+): flows/leave_request\.yaml step s5 ", run.stderr)
    shown = cli("heals", "show", str(project), heal_id)
    assert shown.returncode == 0 and "Select a type" not in shown.stdout, shown.stdout
    accepted = cli("heals", "accept", str(project), heal_id)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    steps = yaml.safe_load((project / "flows" / "leave_request.yaml").read_text(encoding="utf-8"))["steps"]
    target = steps[4]["target"]
    assert target["role"] == "combobox" and target["id"] == "leave-type-combo"  # the heal itself was written
    assert target["exact"] is False
    assert "text" not in target
    again = cli("run", str(project), "--flow", "leave_request", "--headless", "--no-store")
    assert again.returncode == 0, again.stdout + again.stderr
