"""Round trip: every demo flow exported by `steadyhand export pytest` runs green against the demo app.

Each exported file runs in its own pytest subprocess (the system Chromium, nothing downloaded) against a
DemoSite served by this test and reset before each file; the server's ground-truth log then shows what the
exported test did (one leave request written, no duplicate, the lockout's three failed sign-ins).
The script style (the bench's plain-script baseline) runs as `python FILE` the same way.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.project import load_project
from core.sites.demo import DemoSite

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FLOWS = sorted(load_project(ROOT / "projects" / "demo").flows)
SECRET = "demo-" + "pass"


@pytest.fixture(scope="module")
def site():
    s = DemoSite(latency_ms=300)
    s.start()
    yield s
    s.close()


def _env(site: DemoSite) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env.update(STEADYHAND_BASE_URL=site.base_url, STEADYHAND_SECRET_PASSWORD=SECRET,
               PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    return env


def _check_ground_truth(site: DemoSite, flow: str) -> None:
    gt = site.ground_truth_report()
    assert gt["duplicate_writes"] == 0, gt["duplicates"]
    if flow == "leave_request":
        assert gt["writes_by_op"] == {"create_request": 1}
    if flow == "login_lockout":
        assert gt["failed_logins"] == 3
    if flow == "export_report":
        assert gt["exports"] == 1
    if flow == "sort_table":
        assert gt["activations_by_gt"].get("requests.sort.employee") == 2


@pytest.mark.parametrize("flow", FLOWS)
def test_exported_pytest_file_runs_green(site: DemoSite, tmp_path: Path, flow: str, capsys) -> None:
    out = tmp_path / f"test_{flow}_exported.py"
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", flow, "-o", str(out)]) == 0
    assert ("STEADYHAND_SECRET_PASSWORD" in capsys.readouterr().out) == (flow != "login_lockout")  # no password used
    src = out.read_text()
    assert SECRET not in src and "expect(" in src
    site.reset()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        str(out)], cwd=tmp_path, env=_env(site), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout
    _check_ground_truth(site, flow)


def test_exported_script_runs_green_and_fails_without_its_secret(site: DemoSite, tmp_path: Path) -> None:
    out = tmp_path / "leave_request_script.py"
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "leave_request", "-o", str(out),
                 "--style", "script"]) == 0
    site.reset()
    r = subprocess.run([sys.executable, str(out)], env=_env(site), capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("passed in ")
    _check_ground_truth(site, "leave_request")
    env = _env(site)
    del env["STEADYHAND_SECRET_PASSWORD"]
    site.reset()
    r = subprocess.run([sys.executable, str(out)], env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode != 0 and "STEADYHAND_SECRET_PASSWORD" in r.stderr
    assert site.ground_truth_report()["login_attempts"] == 0


def test_export_refuses_to_overwrite_and_names_a_missing_flow(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.py"
    out.write_text("# mine\n")
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "sort_table", "-o", str(out)]) == 2
    assert out.read_text() == "# mine\n"
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "nope", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "exists" in err and "no flow named nope" in err


def test_exported_files_run_green_in_parallel_under_xdist(tmp_path: Path) -> None:
    """Every flow of the project at once (pytest-xdist, 4 workers), login_lockout included: without
    STEADYHAND_BASE_URL each exported test starts a demo server of its own, so the lockout of one test's account
    cannot reach the sign-ins of the others, and each server's own log must show no duplicate write (the
    fixture fails the test otherwise)."""
    assert "login_lockout" in FLOWS
    for flow in FLOWS:
        assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", flow,
                     "-o", str(tmp_path / f"test_{flow}.py")]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    env.update(STEADYHAND_SECRET_PASSWORD=SECRET, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "4", str(tmp_path)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert f"{len(FLOWS)} passed" in r.stdout and "error" not in r.stdout.lower()


def test_a_shared_server_is_what_made_the_lockout_unsafe_in_parallel(site: DemoSite, tmp_path: Path) -> None:
    """The reason for a server per test: on one shared server the lockout locks the account the other flows sign
    in with.  Run login_lockout against the shared server, then leave_request there: the sign-in is refused."""
    for flow in ("login_lockout", "leave_request"):
        assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", flow,
                     "-o", str(tmp_path / f"test_{flow}.py")]) == 0
    site.reset()
    for flow, code in (("login_lockout", 0), ("leave_request", 1)):
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                            str(tmp_path / f"test_{flow}.py")], cwd=tmp_path, env=_env(site), capture_output=True,
                           text=True, timeout=240)
        assert r.returncode == code, r.stdout[-3000:]
    assert site.ground_truth_report()["writes_by_op"] == {}  # nothing was written by the locked-out user
