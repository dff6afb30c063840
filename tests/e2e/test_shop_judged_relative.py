"""A shop's save, judged relative to its recording on a small app written for this test (served on 127.0.0.1).

Every page is titled "Shop" and has no <h1> (as sqlite-web's pages): the route and the title are what say
where a step landed.  The flow is recorded with `steadyhand record` driven over CDP: type a name, Save (the
form posts, the server answers 303 to the list), then a check of the new row's cell (Alt+Shift+A).  Replayed
with `steadyhand run`:

* as recorded, it passes; on a deployment titled otherwise it passes too (a title every recorded step shares
  is no signal: it used to split route against title and stop at the first click);
* with two rows there before, the check finds the new row where it is (it is kept by its role and name, not
  by its position's CSS path, which read another row);
* with the list losing the row, the check fails and says so in plain words;
* with the server refusing the write by showing its form again (200, a plain flash line: what sqlite-web
  0.6.8 does on a failed insert), the irreversible Save stops - it used to pass as "drifted" on the one
  agreeing signal, the constant title - and the write is never sent again.
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
        self.listed = True  # the list shows the items (False: a release whose list lost them)
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
        rows = "".join(f"<tr><td>{n}</td><td>{html.escape(i)}</td></tr>" for n, i in enumerate(self.items, 1)
                       if self.listed)
        return self._page("All items", f'<table><thead><tr><th>#</th><th>Name</th></tr></thead><tbody>{rows}'
                                       f'</tbody></table><a href="/items/new">New item</a>')


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
        page.keyboard.press("Alt+Shift+A")  # check the new row's name cell
        page.get_by_role("cell", name="Lamp").click()
        time.sleep(1.0)

    code, out, err = record(root, "add_item", drive, "/items/new")
    assert code == 0, out + err
    return root


def test_the_recorded_save_lands_on_the_list_under_the_same_title(shop_project) -> None:
    flow = load_flow(shop_project / "flows" / "add_item.yaml")
    save = [s for s in flow.steps if s.action.kind == "click" and s.target.name == "Save"]
    assert save and not save[-1].reversible  # the form posts: irreversible
    after = save[-1].recorded.after
    assert after is not None and after.url_pattern == "/items/" and after.title == "Shop" and not after.heading, after


def test_the_check_of_the_new_row_is_kept_by_its_meaning_not_its_position(shop_project) -> None:
    flow = load_flow(shop_project / "flows" / "add_item.yaml")
    checks = [(a.kind, a.expected, a.selector) for s in flow.steps for a in s.assertions]
    assert checks == [("text_equals", "Lamp", 'internal:role=cell[name="Lamp"s]')], checks


def test_a_table_with_more_rows_passes_the_check_where_the_new_row_is(shop_project, shop) -> None:
    """Two rows were there before: the new one is the third, not the first as recorded (its position's CSS path
    read "Chair" and failed the check of a row that was inserted)."""
    shop.refuse, shop.items, shop.posts = False, ["Chair", "Desk"], 0
    done = replay(shop_project, "add_item")
    assert done.returncode == 0, done.stdout + done.stderr
    assert shop.items == ["Chair", "Desk", "Lamp"] and shop.posts == 1


def test_a_list_without_the_new_row_fails_the_check_in_plain_words(shop_project, shop) -> None:
    shop.refuse, shop.items, shop.posts, shop.listed = False, [], 0, False
    try:
        done = replay(shop_project, "add_item")
    finally:
        shop.listed = True
    assert done.returncode != 0, done.stdout + done.stderr
    assert "no cell named 'Lamp' on the page" in done.stdout, done.stdout
    assert shop.posts == 1  # a failed check after the write does not send it again


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
