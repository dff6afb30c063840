"""A write the server refuses with its form shown again, under the site's constant title, is not "done".

The app (written for this test, served on 127.0.0.1) titles every page "Shop".  The flow is recorded with
`steadyhand record` driven over CDP: type a name, Save - the form posts and the server answers 303 to the
list.  Replayed with `steadyhand run` while the server refuses the write with 200 and the form again (what
sqlite-web 0.6.8 does on a failed insert), the route and the heading disagree and only the title agrees -
and the page had that title before the action too.  The irreversible step used to pass with "the page
changed since the recording" (one agreeing signal was enough); it must stop, and never send the write again.
"""
from __future__ import annotations

import html
import json
import time
from urllib.parse import parse_qs

import pytest
import yaml

from cdp_recording import record, replay
from core.project import load_flow
from core.sites.server import Response, StaticSite

pytestmark = pytest.mark.browser

PAUSE_S = 0.7


class Shop:
    def __init__(self, root) -> None:
        self.items: list[str] = []
        self.posts = 0
        self.refuse = False
        self.title = "Shop"  # every page's title (another deployment names itself otherwise)
        self.site = StaticSite(root)
        self.site.route("GET", "/items/new", lambda req: self._form(""))
        self.site.route("POST", "/items/new", self._save)
        self.site.route("GET", "/items/", self._list)

    def _page(self, heading: str, body: str) -> Response:
        # no <h1>, as sqlite-web's pages: the route and the title are the signals of where a step landed
        return Response.text(f"<!doctype html><html><head><title>{self.title}</title></head><body><nav>Shop</nav>"
                             f"<main><p class=crumb>{heading}</p>{body}</main></body></html>", 200,
                             "text/html; charset=utf-8")

    def _form(self, error: str) -> Response:
        # shown as sqlite-web 0.6.8 shows it: a plain flash line, no alert role, no error status
        err = f'<div class="flash">{html.escape(error)}</div>' if error else ""
        return self._page("New item", f'{err}<form method="post" action="/items/new"><label>Name '
                                      f'<input name="name"></label> <button type="submit">Save</button></form>')

    def _save(self, req) -> Response:
        self.posts += 1
        if self.refuse:
            return self._form("Could not save the item: the database is locked")
        self.items.append((parse_qs(req.body.decode("utf-8")).get("name") or [""])[0])
        return Response.redirect("/items/", 303)

    def _list(self, req) -> Response:
        rows = "".join(f"<li>{html.escape(i)}</li>" for i in self.items)
        return self._page("All items", f'<ul>{rows}</ul><a href="/items/new">New item</a>')


@pytest.fixture(scope="module")
def shop(tmp_path_factory):
    app = Shop(tmp_path_factory.mktemp("shop_static"))
    app.site.start()
    yield app
    app.site.stop()


@pytest.fixture(scope="module")
def shop_project(tmp_path_factory, shop):
    root = tmp_path_factory.mktemp("shop") / "app"
    (root / "flows").mkdir(parents=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({"name": "Shop", "base_url": shop.site.base_url}))

    def drive(page):
        page.wait_for_load_state("load")
        time.sleep(PAUSE_S)
        page.get_by_label("Name").click()
        page.keyboard.type("Lamp")
        time.sleep(1.2)
        page.get_by_role("button", name="Save").click()
        page.get_by_text("All items").wait_for()
        time.sleep(2.5)  # the recorder takes the after-state once the page is quiet

    code, out, err = record(root, "add_item", drive, "/items/new")
    assert code == 0, out + err
    return root


def test_the_recorded_save_lands_on_the_list_under_the_same_title(shop_project) -> None:
    flow = load_flow(shop_project / "flows" / "add_item.yaml")
    save = [s for s in flow.steps if s.action.kind == "click" and s.target.name == "Save"]
    assert save and not save[-1].reversible  # the form posts: irreversible
    after = save[-1].recorded.after
    assert after is not None and after.url_pattern == "/items/" and after.title == "Shop" and not after.heading, after


def test_the_save_replays_as_recorded(shop_project, shop) -> None:
    shop.refuse, shop.items, shop.posts = False, [], 0
    done = replay(shop_project, "add_item")
    assert done.returncode == 0, done.stdout + done.stderr
    assert shop.items == ["Lamp"] and shop.posts == 1


def test_a_deployment_titled_otherwise_passes_as_recorded(shop_project, shop) -> None:
    """Every page of the recording has one title: it is no signal of where a step landed, so a deployment
    whose pages are titled otherwise (sqlite-web names the database file in every title) passes with nothing
    to report.  It used to judge each step by its route (agrees) against its title (disagrees): a split,
    "landed elsewhere", three retries of the same click and the circuit breaker open."""
    shop.refuse, shop.items, shop.posts, shop.title = False, [], 0, "Store"
    try:
        done = replay(shop_project, "add_item")
    finally:
        shop.title = "Shop"
    assert done.returncode == 0, done.stdout + done.stderr
    assert shop.items == ["Lamp"] and shop.posts == 1
    assert "titled" not in done.stdout + done.stderr


def test_a_refused_save_under_the_same_title_stops_and_is_not_sent_again(shop_project, shop, tmp_path) -> None:
    shop.refuse, shop.items, shop.posts = True, [], 0
    try:
        report = tmp_path / "run.json"
        done = replay(shop_project, "add_item", "--json", str(report))
    finally:
        shop.refuse = False
    assert done.returncode != 0, done.stdout + done.stderr
    assert shop.posts == 1, "the refused write was sent again"
    assert shop.items == []
    text = done.stdout + done.stderr + (report.read_text() if report.is_file() else "")
    assert "changed since the recording" not in text, text
    assert "the step reached /items/new instead of /items/" in text, text  # says where it stayed
    if report.is_file():
        json.loads(report.read_text())  # a complete report
