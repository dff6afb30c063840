"""`steadyhand run` says what the engine did on the page that no step of the flow says: on the demo's
``popup`` variant a "What's new" popup covers the page, and the engine closes it with its close control before
the step goes on - the command line names that, with the popup and the control."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from core.cli import main

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.browser


def test_a_popup_the_engine_closed_is_named_on_the_command_line(tmp_path, capsys) -> None:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    doc = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    doc["site_options"].update({"variant": "popup", "latency_ms": "100"})
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    rc = main(["run", str(dst), "--flow", "leave_request", "--headless"])
    err = capsys.readouterr().err
    assert rc == 0, err
    closed = [line for line in err.splitlines() if "closed a popup in the way" in line]
    assert closed, err
    assert "leave_request step 4" in closed[0] and "LeaveDesk" in closed[0] and "'Close'" in closed[0]
