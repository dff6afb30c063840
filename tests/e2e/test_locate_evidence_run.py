"""Heals on evidence that exists (issue 19), end to end in real Chromium on pages written for it.

Each target is taken from release 1 of a page as a recording keeps it: the
observer's descriptor and the recorder's own anchor (its ``anchorOf``, run
in the page); the flow then runs on release 2 through ``steadyhand run`` or
the session the command uses (:class:`~core.engine.session.ProjectSession`).

* RELATIVE on the run path: an irreversible "Confirm delivery" renamed
  "Confirm the delivery" (its neighbour renamed too, so no other evidence
  agrees) is healed only because the section heading it was recorded by is
  found on the page and the button sits at the recorded offset from it (the
  previous code never handed the page's headings to the locator and
  abstained);
* a submit ``input`` that became a ``button`` with the same role and name,
  restyled, is the same control (the previous code abstained: "no second
  independent level agrees");
* radios whose labels are new and random, with the same positional ids, are
  never clicked (the previous code checked the sibling at the recorded
  place); the same step with its name as a parameter finds the option named;
* two "Export" buttons tied after a release are never pressed: the step
  abstains and the resolution shows both.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from core.domain import Action, Anchor, Assertion, BrowserSettings, ElementDescriptor, Flow, Step
from core.engine.session import ProjectSession
from core.perception.driver import PlaywrightDriver
from core.project import load_flow, load_project, save_flow
from core.project.params import escape_target
from core.record.listener import RECORDER_LIB
from core.secrets import Redactor
from core.sites.server import StaticSite
from core.store import Store, store_path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures" / "locate"

pytestmark = pytest.mark.browser

#: The recorder's script with its anchor function reachable from the test (the recording's own rule).
_ANCHOR_LIB = RECORDER_LIB.replace("window.__steadyhandRec = { flush,", "window.__steadyhandRec = { anchorOf, flush,")
assert _ANCHOR_LIB != RECORDER_LIB
_ANCHOR_OF = """(xp) => {
  const el = document.evaluate(xp, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null).singleNodeValue;
  return el ? window.__steadyhandRec.anchorOf(el) : null;
}"""


@pytest.fixture(scope="module")
def site():
    s = StaticSite(FIXTURES)
    s.start()
    yield s
    s.stop()


def recorded(site: StaticSite, page: str, name: str, href_has: str = "") -> ElementDescriptor:
    """The element named ``name`` on ``page`` (whose link holds ``href_has``) as a recording keeps it
    (descriptor and anchor)."""
    d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, redactor=Redactor(()), headless=True)
    d.open()
    try:
        d.goto(page)
        obs = d.observe(screenshot=False)
        (c,) = [c for c in obs.candidates if c.descriptor.name == name and href_has in c.descriptor.href]
        d.evaluate(f"() => {{ {_ANCHOR_LIB} }}")
        a = d.evaluate(_ANCHOR_OF, c.descriptor.xpath)
    finally:
        d.close()
    desc = escape_target(c.descriptor)
    if a and a.get("text"):
        desc = desc.with_(anchor=Anchor(a["text"], a.get("role", ""), float(a["dx"]), float(a["dy"])))
    return desc


def project(tmp: Path, site: StaticSite, flow: Flow) -> Path:
    root = tmp / "proj"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Evidence", "base_url": site.base_url}))
    save_flow(flow, root / "flows" / f"{flow.name}.yaml")
    return root


def test_relative_heals_an_irreversible_rename_through_steadyhand_run(site, tmp_path) -> None:
    target = recorded(site, "/relative_v1.html", "Confirm delivery")
    assert target.anchor is not None and (target.anchor.text, target.anchor.role) == ("Delivery", "heading")
    flow = Flow("confirm", "/relative_v2.html", (
        Step(id="s1", name="Confirm the delivery", action=Action("click"), target=target, reversible=False,
             assertions=(Assertion("text_appears", "Delivery confirmed"),)),))
    root = project(tmp_path, site, flow)
    out = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(root), "--flow", "confirm", "--headless",
                        "--json", str(out)], cwd=ROOT, env=dict(os.environ), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (result,) = json.loads(out.read_text())["flows"]
    assert result["passed"], result
    store = Store.open(store_path(root), read_only=True)
    try:
        (run,) = store.list_runs(limit=1)
        (res,) = store.run_detail(run.id).resolutions
    finally:
        store.close()
    assert not res.abstained and res.strategy != "exact"
    assert "confirmed by relative" in res.reason, res.reason  # the heading on the page, at the recorded offset


def test_a_submit_input_that_became_a_restyled_button_is_pressed(site, tmp_path) -> None:
    target = recorded(site, "/signin_v1.html", "Sign in")
    assert target.tag == "input"
    flow = Flow("sign_in", "/signin_v2.html", (
        Step(id="s1", name="Sign in", action=Action("click"), target=target, reversible=False,
             assertions=(Assertion("text_appears", "Welcome back"),)),))
    root = project(tmp_path, site, flow)
    with ProjectSession(load_project(root), headless=True, use_store=False, screenshots=False) as session:
        result = session.run_flow(load_flow(root / "flows" / "sign_in.yaml"))
    assert result.status == "passed", result.error
    res = result.steps[0].resolution
    assert "identity" in res.confirmed_by and "the same control" in res.reason


def test_radios_with_new_labels_are_never_clicked_by_place_and_a_bound_name_is(site, tmp_path) -> None:
    target = recorded(site, "/options_v1.html", "Xwvr")
    assert target.id == "ch1"
    guessed = Flow("pick", "/options_v2.html", (
        Step(id="s1", name="Pick Xwvr", action=Action("click"), target=target,
             assertions=(Assertion("text_appears", "chose"),)),))
    named = Flow("pick_named", "/options_v2.html", (
        Step(id="s1", name="Pick {option}", action=Action("click"),
             target=target.with_(name="{option}", text="{option}", label="{option}"),
             assertions=(Assertion("text_appears", "chose {option}"),)),), params={"option": "Xwvr"})
    root = project(tmp_path, site, guessed)
    save_flow(named, root / "flows" / "pick_named.yaml")
    with ProjectSession(load_project(root), headless=True, use_store=False, screenshots=False) as session:
        result = session.run_flow(load_flow(root / "flows" / "pick.yaml"))
        assert result.status != "passed"
        res = result.steps[0].resolution
        assert res.abstained and res.ref is None, res.reason
        assert "chose" not in session.driver.observe(screenshot=False).visible_text  # nothing was checked
        bound = session.run_flow(load_flow(root / "flows" / "pick_named.yaml"), params={"option": "Mufo"})
        assert bound.status == "passed", bound.error
        assert "chose Mufo" in session.driver.observe(screenshot=False).visible_text


def test_two_buttons_tied_after_a_release_are_never_pressed_and_both_are_shown(site, tmp_path) -> None:
    target = recorded(site, "/tie_v1.html", "Export")
    flow = Flow("export", "/tie_v2.html", (
        Step(id="s1", name="Export", action=Action("click"), target=target,
             assertions=(Assertion("text_appears", "exported"),)),))
    root = project(tmp_path, site, flow)
    with ProjectSession(load_project(root), headless=True, use_store=False, screenshots=False) as session:
        result = session.run_flow(load_flow(root / "flows" / "export.yaml"))
        assert "exported" not in session.driver.observe(screenshot=False).visible_text
    assert result.status != "passed"
    res = result.steps[0].resolution
    assert res.abstained and "tie" in res.reason, res.reason
    assert [s.label for s in res.top[:2]] == ["Export", "Export"] and len({s.ref for s in res.top[:2]}) == 2


def test_a_look_alike_at_the_recorded_place_is_never_pressed_when_the_levels_disagree(site, tmp_path) -> None:
    """A new release puts a second "Add" button (type button, clears the list) where the recorded submit
    button was, the real one just after it.  The text levels tie or rank the submit button higher; the
    relative level prefers the look-alike by its place.  The levels disagree about which control it is:
    the step abstains and nothing is pressed (a new user's trial clicked the look-alike and passed)."""
    target = recorded(site, "/decoy_v1.html", "Add")
    item = recorded(site, "/decoy_v1.html", "New item")
    flow = Flow("add", "/decoy_v2.html", (
        Step(id="s1", name="Type the item", action=Action("input", value="milk"), target=item),
        Step(id="s2", name="Add", action=Action("click"), target=target),))
    root = project(tmp_path, site, flow)
    with ProjectSession(load_project(root), headless=True, use_store=False, screenshots=False) as session:
        result = session.run_flow(load_flow(root / "flows" / "add.yaml"))
        seen = session.driver.observe(screenshot=False).visible_text
    assert "the decoy was pressed" not in seen
    assert result.status != "passed"
    res = result.steps[-1].resolution
    assert res is not None and res.abstained, res
    assert "look" in res.reason or "tie" in res.reason, res.reason


def test_an_accepted_heal_renews_the_anchor_offset_and_the_crop(site, tmp_path) -> None:
    """A heal accepted after a restyle writes the element as the release shows it: the anchor's offset measured
    on that page and the crop cut from the heal's before screenshot. Before, the accepted target kept the
    recorded offset and picture, so the relative and visual levels disagreed with the page on every later run."""
    import io

    from PIL import Image

    from core.state.crop import crop_png

    d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, redactor=Redactor(()), headless=True)
    d.open()
    try:
        d.goto("/signin_v1.html")
        obs = d.observe(screenshot=True)
        (c,) = [c for c in obs.candidates if c.descriptor.name == "Sign in" and c.descriptor.tag == "input"]
        old_crop = crop_png(obs.screenshot_png, c.descriptor.bbox, obs.device_pixel_ratio)
    finally:
        d.close()
    target = recorded(site, "/signin_v1.html", "Sign in").with_(crop="sign_in.crops/s1.png")
    now = recorded(site, "/signin_v2.html", "Sign in")  # the same control on release 2, as a recording keeps it
    assert target.anchor is not None and now.anchor is not None and target.anchor.text == now.anchor.text
    assert (target.anchor.dx, target.anchor.dy) != (now.anchor.dx, now.anchor.dy)  # release 2 moved it
    flow = Flow("sign_in", "/signin_v2.html", (
        Step(id="s1", name="Sign in", action=Action("click"), target=target, reversible=False,
             assertions=(Assertion("text_appears", "Welcome back"),)),))
    root = project(tmp_path, site, flow)
    (root / "flows" / "sign_in.crops").mkdir()
    crop_file = root / "flows" / "sign_in.crops" / "s1.png"
    crop_file.write_bytes(old_crop)

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                              capture_output=True, text=True, timeout=300)

    run = cli("run", str(root), "--flow", "sign_in", "--headless")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "heal proposed #1" in run.stderr, run.stderr
    accepted = cli("heals", "accept", str(root), "1")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    healed = load_flow(root / "flows" / "sign_in.yaml").steps[0].target
    assert healed.tag == "button" and healed.anchor is not None and healed.anchor.text == now.anchor.text
    assert abs(healed.anchor.dx - now.anchor.dx) <= 1.0 and abs(healed.anchor.dy - now.anchor.dy) <= 1.0
    new_crop = crop_file.read_bytes()
    assert new_crop != old_crop
    with Image.open(io.BytesIO(new_crop)) as im:  # the release's button, padded by the crop margin
        assert abs(im.width - (healed.bbox.width + 8) * healed.device_pixel_ratio) <= 2
        assert abs(im.height - (healed.bbox.height + 8) * healed.device_pixel_ratio) <= 2
    assert cli("run", str(root), "--flow", "sign_in", "--headless").returncode == 0  # and it still runs


def test_the_escalation_headline_of_two_look_alikes_says_so_through_steadyhand_run(site, tmp_path) -> None:
    """The same decoy release through the command: the first line a tester reads names the real cause (the
    page has two buttons that look the same), not "'Add' was not found" with the cause only in the detail."""
    target = recorded(site, "/decoy_v1.html", "Add")
    item = recorded(site, "/decoy_v1.html", "New item")
    flow = Flow("add", "/decoy_v2.html", (
        Step(id="s1", name="Type the item", action=Action("input", value="milk"), target=item),
        Step(id="s2", name="Add", action=Action("click"), target=target),))
    root = project(tmp_path, site, flow)
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(root), "--headless", "--no-screenshots"],
                       cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 3, r.stdout + r.stderr
    (headline,) = [ln for ln in r.stderr.splitlines() if "needs a human:" in ln]
    assert "'Add' is on the page 2 times" in headline and "look the same" in headline, headline
    assert "was not found" not in headline, headline


def test_two_links_to_one_page_that_differ_by_their_query_follow_the_recorded_query(site, tmp_path) -> None:
    """datasette 1.0a41's "genre" tie: the suggested facet "genre" (``?_sort=year&_facet=genre``) moved below
    the table, whose column header "genre" links to the same page (``?_sort=genre``).  Same role, name and
    path: the recorded link's query tells them apart (the previous code tied and abstained); the facet is
    followed, the sort link never."""
    target = recorded(site, "/books_v1.html", "genre", "_facet=genre")  # the suggested facet
    assert "_facet=genre" in target.href, target.href
    flow = Flow("facet", "/books_v2.html", (
        Step(id="s1", name="Facet by genre", action=Action("click"), target=target,
             assertions=(Assertion("text_appears", "Faceted by genre"),)),))
    root = project(tmp_path, site, flow)
    out = tmp_path / "run.json"
    r = subprocess.run([sys.executable, "-m", "core.cli", "run", str(root), "--flow", "facet", "--headless",
                        "--json", str(out)], cwd=ROOT, env=dict(os.environ), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    (result,) = json.loads(out.read_text())["flows"]
    assert result["passed"], result
    store = Store.open(store_path(root), read_only=True)
    try:
        (run,) = store.list_runs(limit=1)
        (res,) = store.run_detail(run.id).resolutions
    finally:
        store.close()
    assert not res.abstained and "query is the recorded link's" in res.reason, res.reason
