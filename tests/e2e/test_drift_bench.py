"""The drift benchmark's instruments against real Chromium and real processes, without the datasette venvs.

* The server wrapper binds to 127.0.0.1 only (read back from the kernel's socket table), answers, and is
  stopped (the port is refused afterwards); a command that exits is an error with its exit code.
* The ground truth's locators find exactly one element on every release's captured page
  (``tests/fixtures/drift``, the markup the releases served, see ``index.json``), and a ground-truth
  script that lands elsewhere or meets two matches raises instead of becoming a reference.
* The locator chain on those pages, given the step's recorded descriptor (``projects/datasette``), picks
  the intended element or abstains - never another element - and resolves every step on the release the
  flow was recorded on.
"""
from __future__ import annotations

import json
import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.bench.drift_env import DatasetteServer, DriftEnvError, free_port
from core.bench.drift_truth import INTENDED, GroundTruthError, IntendedAction, ground_truth, locate
from core.domain import BrowserSettings
from core.locate.chain import resolve
from core.project import load_flow
from core.sites.server import StaticSite
from browser_fixtures import open_driver

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "drift"
INDEX = json.loads((FIXTURES / "index.json").read_text(encoding="utf-8"))
FLOW = load_flow(ROOT / "projects" / "datasette" / "flows" / "books_tour.yaml")
RECORDED_ON = "0.59.4"
CASES = [(sid, v) for sid, e in INDEX.items() for v in e["pages"]]


def _listening_addresses(port: int) -> set[str]:
    """Local IPv4 addresses with a socket listening on ``port`` (``/proc/net/tcp``, state 0A)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        addr, p = local.split(":")
        if state == "0A" and int(p, 16) == port:
            found.add(socket.inet_ntoa(bytes.fromhex(addr)[::-1]))
    return found


def _http_server(tmp_path: Path) -> list[str]:
    (tmp_path / "index.html").write_text("<h1>up</h1>", encoding="utf-8")
    return [sys.executable, "-m", "http.server", "{port}", "--bind", "{host}", "--directory", str(tmp_path)]


def test_the_server_binds_loopback_answers_and_is_stopped(tmp_path):
    server = DatasetteServer(Path("unused"), tmp_path / "x.db", command=_http_server(tmp_path))
    with server:
        assert server.base_url.startswith("http://127.0.0.1:")
        assert _listening_addresses(server.port) == {"127.0.0.1"}
        with urllib.request.urlopen(server.base_url + "/index.html", timeout=5) as resp:
            assert b"up" in resp.read()
        port = server.port
    assert server.proc is None
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5)
    server.stop()  # idempotent


def test_datasette_is_started_on_loopback_with_its_database():
    argv = DatasetteServer(Path("/venv/bin/datasette"), Path("/tmp/library.db"), port=8123).argv()
    assert argv[:3] == ["/venv/bin/datasette", "serve", "/tmp/library.db"]
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and argv[argv.index("--port") + 1] == "8123"
    with pytest.raises(ValueError, match="loopback"):
        DatasetteServer(Path("/venv/bin/datasette"), Path("/tmp/library.db"), host="0.0.0.0").start()


def test_a_server_that_exits_is_an_error_with_its_code(tmp_path):
    server = DatasetteServer(Path("unused"), tmp_path / "x.db",
                             command=[sys.executable, "-c", "import sys; print('no db'); sys.exit(3)"])
    with pytest.raises(DriftEnvError, match="exited with 3: no db"):
        server.start(timeout_s=20)


def test_free_port_is_free_on_loopback():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


@pytest.mark.parametrize("step_id,version", CASES)
def test_the_ground_truth_finds_one_intended_element_on_each_release(driver, sites, step_id, version):
    chromium_page = driver.page
    action = INTENDED[[s.id for s in FLOW.steps].index(step_id)]
    chromium_page.goto(f"{sites[version].base_url}/{INDEX[step_id]['pages'][version]['file'].split('/', 1)[1]}")
    el = locate(chromium_page, action)
    assert el.count() == 1 and el.is_visible()


def test_a_ground_truth_that_lands_elsewhere_or_meets_twins_raises(driver, tmp_path):
    chromium_page = driver.page
    (tmp_path / "index.html").write_text(
        '<section class="content"><h2><a href="/other.html">library</a></h2></section>'
        '<p><a href="/a.html">Next page</a> <a href="/b.html">Next page</a></p>', encoding="utf-8")
    (tmp_path / "other.html").write_text("<h1>other</h1>", encoding="utf-8")
    with StaticSite(tmp_path) as site:
        with pytest.raises(GroundTruthError, match="expected '/library'"):
            ground_truth(chromium_page, site.base_url, (IntendedAction("db", "db", "click", "h2 > a",
                                                                      check=INTENDED[0].check),))
        with pytest.raises(GroundTruthError, match="2 elements"):
            ground_truth(chromium_page, site.base_url, (IntendedAction("next", "Next", "click", "a", text="Next page"),))
        states = ground_truth(chromium_page, site.base_url,
                              (IntendedAction("db", "db", "click", "h2 > a", check=lambda b, a: ""),))
        assert states[0].after.path == "/other.html" and states[0].after.heading == "other"
        assert states[0].before.path == "/" and "library" in states[0].element_html
        # the release's own page for the intended action is an error page: no intended state to judge by
        (tmp_path / "other.html").write_text("<h1>Error 404</h1>", encoding="utf-8")
        with pytest.raises(GroundTruthError, match="reaches the release's error page"):
            ground_truth(chromium_page, site.base_url, (IntendedAction("db", "db", "click", "h2 > a",
                                                                      check=lambda b, a: ""),))


@pytest.fixture(scope="module")
def sites():
    opened = {v: StaticSite(FIXTURES / v) for v in {v for _, v in CASES}}
    for s in opened.values():
        s.start()
    try:
        yield opened
    finally:
        for s in opened.values():
            s.stop()


@pytest.fixture(scope="module")
def driver(sites):
    with open_driver("http://127.0.0.1", BrowserSettings(viewport_width=1280, viewport_height=800)) as d:
        yield d


@pytest.mark.parametrize("step_id,version", CASES)
def test_the_locator_picks_the_intended_element_or_abstains_on_each_release(driver, sites, step_id, version):
    k = [s.id for s in FLOW.steps].index(step_id)
    step = FLOW.steps[k]
    page_file = INDEX[step_id]["pages"][version]["file"].split("/", 1)[1]
    driver.goto(f"{sites[version].base_url}/{page_file}")
    obs = driver.observe(screenshot=False)
    res = resolve(step.target, obs.candidates)
    if version == RECORDED_ON:
        assert res.ref is not None, (step_id, res.reason)  # the release it was recorded on: always found
    if res.ref is None:
        assert res.abstained
        return
    intended = locate(driver.page, INTENDED[k]).element_handle()
    same = intended.evaluate("(e, h) => e === h", driver._handle(res.ref))
    assert same, (step_id, version, res.strategy, res.score, res.reason)

