"""Round trip: the demo flows exported by `steadyhand export pytest` are pytest-playwright tests that run green.

Each run is a real pytest subprocess with pytest-playwright (Chromium found by the export's conftest.py: the
system's here, nothing downloaded) against a DemoSite served by this test (``--base-url``) or, without one, a
demo server the conftest starts per session and resets before each test.  The server's ground-truth log then
shows what the exported test did (one leave request written, no duplicate, the lockout's three failed
sign-ins).  The plugin's own options work: ``--tracing on`` writes a trace, ``--browser firefox`` asks for
Firefox (not Chromium under a Firefox label), and the exports share a session with a user's ordinary plugin
test under pytest-xdist.  The script style (the benches' plain-script baseline) runs as `python FILE`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from core.cli import main
from core.project import load_project
from core.sites.demo import DemoSite
from core.sites.server import CountingSite, Response

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


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEADYHAND_", "PYTEST_"))}
    env.update(STEADYHAND_SECRET_PASSWORD=SECRET, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    env.update(extra)
    return env


def _pytest(folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240):
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the repository's settings
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *args],
                          cwd=folder, env=env or _env(), capture_output=True, text=True, timeout=timeout)


def _export(folder: Path, flow: str) -> Path:
    out = folder / f"test_{flow}.py"
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", flow, "-o", str(out)]) == 0
    return out


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
def test_exported_test_runs_green_with_the_plugins_base_url_and_tracing(site: DemoSite, tmp_path: Path, flow: str,
                                                                       capsys) -> None:
    out = _export(tmp_path, flow)
    assert ("STEADYHAND_SECRET_PASSWORD" in capsys.readouterr().out) == (flow != "login_lockout")  # no password used
    src = out.read_text()
    assert SECRET not in src and "expect(" in src and "internal:" not in src
    assert (tmp_path / "conftest.py").is_file()
    site.reset()
    r = _pytest(tmp_path, "--base-url", site.base_url, "--browser", "chromium", "--tracing", "on",
                "--output", str(tmp_path / "results"), out.name)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    # warning-free: asking for the plugin's own base_url fixture gave a PytestRemovedIn10Warning under pytest 9
    assert "1 passed" in r.stdout and "warning" not in r.stdout.lower(), r.stdout[-3000:]
    _check_ground_truth(site, flow)
    traces = list((tmp_path / "results").rglob("trace.zip"))
    assert len(traces) == 1, list((tmp_path / "results").rglob("*"))
    with zipfile.ZipFile(traces[0]) as z:  # what `playwright show-trace` opens: the test's own actions
        names = z.namelist()
        events = z.read(next(n for n in names if n.endswith(".trace"))).decode("utf-8", "replace")
    assert "goto" in events and site.base_url in events
    # pytest-playwright's trace holds what the test typed, the password in clear (README says so; the
    # session's secrets audit, which looks inside zips, would rightly flag it): not kept
    shutil.rmtree(tmp_path / "results")


def test_a_failed_post_condition_fails_the_exported_test_where_the_replay_would_stop(site: DemoSite,
                                                                                     tmp_path: Path) -> None:
    """The recorded landing is checked: with a wrong password the sign-in stays on /login, and the exported
    leave_request fails on the URL the recording landed on, right after the step (as the replay's landing check
    stops there), not later on a link that is missing."""
    _export(tmp_path, "leave_request")
    site.reset()
    r = _pytest(tmp_path, "--base-url", site.base_url, env=_env(STEADYHAND_SECRET_PASSWORD="wrong-" + "pass"))
    assert r.returncode == 1, r.stdout[-3000:]
    assert "to_have_url" in r.stdout and "/requests/?" in r.stdout
    assert site.ground_truth_report()["writes"] == 0


def test_exports_mix_with_an_ordinary_plugin_test_under_xdist_with_a_server_per_session(tmp_path: Path) -> None:
    """A user's suite: an ordinary pytest-playwright test at its root (its own conftest gives Debian's Chromium)
    and every demo flow exported into e2e/.  One session, pytest-xdist -n 2, no --base-url: each worker's
    conftest starts a demo server of its own and resets it before each test, so the lockout of one test's
    account cannot reach the sign-ins of the others."""
    assert "login_lockout" in FLOWS
    suite = tmp_path / "suite"
    (suite / "e2e").mkdir(parents=True)
    for flow in FLOWS:
        _export(suite / "e2e", flow)
    (suite / "conftest.py").write_text(
        "import shutil\nimport pytest\n\n\n@pytest.fixture(scope='session')\n"
        "def browser_type_launch_args(browser_type_launch_args):\n"
        "    return {**browser_type_launch_args, 'executable_path': shutil.which('chromium')}\n", encoding="utf-8")
    (suite / "test_plain.py").write_text(
        "from playwright.sync_api import Page, expect\n\n\n"
        "def test_plain(page: Page) -> None:\n"
        "    page.set_content('<h1>Hello</h1>')\n"
        "    expect(page.get_by_role('heading', name='Hello')).to_be_visible()\n", encoding="utf-8")
    r = _pytest(suite, "-n", "2", ".", timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert f"{len(FLOWS) + 1} passed" in r.stdout and "error" not in r.stdout.lower()
    # none of the exported tests warns (they asked for the plugin's base_url fixture: PytestRemovedIn10Warning
    # under pytest 9); the ordinary plugin test still does, pytest-playwright 0.10's own base_url fixture
    warned = r.stdout.partition("warnings summary")[2].partition("-- Docs:")[0]
    assert "e2e/" not in warned and "e2e::" not in warned, r.stdout[-3000:]


def test_the_browser_option_is_the_plugins(site: DemoSite, tmp_path: Path) -> None:
    """`--browser firefox` asks Playwright for Firefox (not installed here: the test errors naming it) instead of
    running Chromium under a [firefox] label."""
    out = _export(tmp_path, "sort_table")
    r = _pytest(tmp_path, "--base-url", site.base_url, "--browser", "firefox", out.name)
    assert r.returncode != 0
    assert "test_sort_table[firefox]" in r.stdout, r.stdout[-2000:]
    assert "firefox" in r.stdout.split("test_sort_table[firefox]", 1)[1].lower()  # Playwright's own error names it
    assert "[chromium]" not in r.stdout


def test_exported_script_runs_green_and_fails_without_its_secret(site: DemoSite, tmp_path: Path, capsys,
                                                                  monkeypatch) -> None:
    out = tmp_path / "leave_request_script.py"
    monkeypatch.delenv("STEADYHAND_SECRET_PASSWORD", raising=False)
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "leave_request", "-o", str(out),
                 "--style", "script"]) == 0
    said = capsys.readouterr().out
    assert "secret 'password': from STEADYHAND_SECRET_PASSWORD (never written into the file); not set here" in said
    assert not (tmp_path / "conftest.py").exists()
    site.reset()
    env = _env(STEADYHAND_BASE_URL=site.base_url)
    r = subprocess.run([sys.executable, str(out)], env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("passed in ")
    _check_ground_truth(site, "leave_request")
    del env["STEADYHAND_SECRET_PASSWORD"]
    site.reset()
    r = subprocess.run([sys.executable, str(out)], env=env, capture_output=True, text=True, timeout=240)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr  # a clear error, not a crash
    assert r.stderr.startswith("error: secret 'password' is not set: set the environment variable "
                               "STEADYHAND_SECRET_PASSWORD"), r.stderr
    assert f"STEADYHAND_SECRET_PASSWORD=... python {out.name}" in r.stderr
    assert site.ground_truth_report()["login_attempts"] == 0


def test_export_refuses_to_overwrite_and_to_take_over_a_users_conftest(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t.py"
    out.write_text("# mine\n")
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "sort_table", "-o", str(out)]) == 2
    assert out.read_text() == "# mine\n"
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "nope", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "exists" in err and "no flow named nope" in err
    (tmp_path / "conftest.py").write_text("# the user's own\n")
    assert main(["export", "pytest", str(ROOT / "projects" / "demo"), "--flow", "sort_table",
                 "-o", str(tmp_path / "test_sort.py")]) == 2
    assert "not written by steadyhand export" in capsys.readouterr().err
    assert (tmp_path / "conftest.py").read_text() == "# the user's own\n" and not (tmp_path / "test_sort.py").exists()


def test_a_shared_server_is_what_made_the_lockout_unsafe_in_parallel(site: DemoSite, tmp_path: Path) -> None:
    """The reason for a fresh state per test: on one shared server given by --base-url (the conftest does not
    reset a server it did not start) the lockout locks the account the other flows sign in with."""
    for flow in ("login_lockout", "leave_request"):
        _export(tmp_path, flow)
    site.reset()
    for flow, code in (("login_lockout", 0), ("leave_request", 1)):
        r = _pytest(tmp_path, "--base-url", site.base_url, f"test_{flow}.py")
        assert r.returncode == code, r.stdout[-3000:]
    assert site.ground_truth_report()["writes_by_op"] == {}  # nothing was written by the locked-out user


def test_the_drift_bench_runs_the_export_as_its_script_baseline(site: DemoSite, tmp_path: Path) -> None:
    """`bench drift` times the exported test as the plain-script baseline (core.bench.drift_app_run.run_exported):
    it writes the folder's conftest.py too, and the test passes every step on the app it was recorded on."""
    from core.bench.drift_app_run import run_exported

    project = load_project(ROOT / "projects" / "demo")
    site.reset()
    got = run_exported(project, "leave_request", site.base_url, tmp_path / "script", password=SECRET)
    assert (got.status, got.passed) == ("passed", len(project.flows["leave_request"].steps)), got.error
    assert (tmp_path / "script" / "conftest.py").is_file()
    _check_ground_truth(site, "leave_request")


def test_the_export_passes_where_codegens_script_does_on_a_release_that_appends_to_a_name(tmp_path: Path) -> None:
    """The `tweaked` release (its `suffix` tweak) renames "Export report" to "Export report (E)". Codegen's own script
    (``get_by_role("button", name="Export report")``, no exact) still finds the button; the export used to write
    ``exact=True`` on every role locator and failed there. Exact is now written only where the recording saw a
    name containing this one."""
    out = _export(tmp_path, "export_report")
    assert "exact=True" not in out.read_text()
    s = DemoSite(latency_ms=0, variant="tweaked")
    s.start()
    try:
        r = _pytest(tmp_path, "--base-url", s.base_url, out.name)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        assert s.ground_truth_report()["exports"] == 1
    finally:
        s.close()


DOWNLOAD_SCRIPT = '''from playwright.sync_api import Playwright, sync_playwright, expect


def run(playwright: Playwright) -> None:
    browser = playwright.chromium.launch(headless=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto("{base}/files")
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Get the report").click()
    download = download_info.value
    context.close()
    browser.close()


with sync_playwright() as playwright:
    run(playwright)
'''


def test_a_click_that_starts_a_download_is_exported_inside_expect_download(tmp_path: Path) -> None:
    """codegen's ``with page.expect_download():`` around a click is imported as the click (with a note) and the
    flow remembers the download; the exported test waits for it again and passes in Chromium."""
    page = '<!doctype html><title>f</title><a href="/report.csv" download>Get the report</a>'
    with CountingSite({"/files": page, "/report.csv": Response(200, b"a,b\n1,2\n", "text/csv")}) as site:
        base = site.base_url.rstrip("/")
        assert main(["init", str(tmp_path / "p"), "--url", base]) == 0
        script = tmp_path / "rec.py"
        script.write_text(DOWNLOAD_SCRIPT.replace("{base}", base), encoding="utf-8")
        assert main(["import-codegen", str(script), "--project", str(tmp_path / "p"), "--flow", "dl"]) == 0
        out = tmp_path / "t" / "test_dl.py"
        out.parent.mkdir()
        assert main(["export", "pytest", str(tmp_path / "p"), "--flow", "dl", "-o", str(out)]) == 0
        src = out.read_text()
        assert "with page.expect_download():" in src, src
        r = _pytest(out.parent, out.name)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        assert site.count("/report.csv") == 1  # the download was started, once


def test_the_conftest_leaves_a_users_own_tests_alone_and_the_secret_has_the_projects_default(tmp_path: Path) -> None:
    """A user's own test in the export folder keeps Playwright's defaults (expect timeout 5 s, 1280x720, no
    --no-sandbox unless root): the conftest's timeouts and context apply to the exported tests alone. The exported
    test runs without STEADYHAND_SECRET_PASSWORD: the project declares a default for it."""
    _export(tmp_path, "sort_table")
    (tmp_path / "test_mine.py").write_text(
        "from playwright.sync_api import Page, expect\n\n\n"
        "def test_mine(page: Page) -> None:\n"
        "    assert page.viewport_size == {'width': 1280, 'height': 720}\n"
        "    assert expect._timeout is None  # Playwright's own default\n", encoding="utf-8")
    env = _env()
    del env["STEADYHAND_SECRET_PASSWORD"]
    r = _pytest(tmp_path, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "2 passed" in r.stdout
    src = (tmp_path / "conftest.py").read_text()
    assert "os.geteuid() == 0" in src and "'--no-sandbox'," not in src
