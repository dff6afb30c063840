"""An imported codegen script whose locator is scoped stays scoped in `export pytest`, end to end in Chromium.

datasette's table page has two links named "year" (the facet suggestion and the column header); Playwright
codegen writes ``page.get_by_role("table").get_by_role("link", name="year")``. `import-codegen` keeps that
selector, `run` fills the step's descriptor in from the one element it matched (and keeps the selector as the
exact level), and the exported test used to be made from the descriptor alone -
``get_by_role('link', name='year', exact=True)``: two elements, a strict-mode failure where the plain script
and the replay both pass. The page here is the same shape, served on 127.0.0.1.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from core.cli import main
from core.sites.server import CountingSite, Request, Response

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]

PAGE = """<!doctype html><html><head><title>books</title></head><body>
<h1>books</h1><h3>{caption}</h3>
<p>Suggested facets: <a href="/books?facet=year">year</a> <a href="/books?facet=genre">genre</a></p>
<table><thead><tr><th><a href="/books?sort=title">title</a></th><th><a href="/books?sort=year">year</a></th></tr>
</thead><tbody><tr><td>The Summer Tower</td><td>1897</td></tr><tr><td>The Summer Empire</td><td>2007</td></tr>
</tbody></table></body></html>"""

SCRIPT = """from playwright.sync_api import Playwright, sync_playwright, expect


def run(playwright: Playwright) -> None:
    browser = playwright.chromium.launch(headless=False)
    context = browser.new_context()
    page = context.new_page()
    page.goto("{base}/books")
    page.get_by_role("table").get_by_role("link", name="year").click()
    expect(page.locator("h3")).to_contain_text("sorted by year")
    context.close()
    browser.close()


with sync_playwright() as playwright:
    run(playwright)
"""


def _books_page(request: Request) -> Response:
    caption = "2 rows sorted by year" if request.arg("sort") == "year" else "2 rows"
    return Response.text(PAGE.format(caption=caption), content_type="text/html; charset=utf-8")


@pytest.fixture
def books_url():
    with CountingSite({"/books": _books_page}) as site:
        yield site.base_url


def test_a_scoped_codegen_locator_stays_scoped_in_the_exported_test(books_url: str, tmp_path: Path) -> None:
    project, out = tmp_path / "proj", tmp_path / "export"
    out.mkdir()
    script = tmp_path / "codegen_books.py"
    script.write_text(SCRIPT.format(base=books_url), encoding="utf-8")
    assert main(["init", str(project), "--url", books_url]) == 0
    assert main(["import-codegen", str(script), "--project", str(project), "--flow", "books"]) == 0
    assert main(["run", str(project), "--flow", "books", "--headless", "-q"]) == 0  # fills the descriptors in
    assert "name: year" in (project / "flows" / "books.yaml").read_text(encoding="utf-8")
    test_file = out / "test_books.py"
    assert main(["export", "pytest", str(project), "--flow", "books", "-o", str(test_file)]) == 0
    src = test_file.read_text(encoding="utf-8")
    assert "page.get_by_role('table').get_by_role('link', name='year')" in src
    (out / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # not the repository's settings
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STEADYHAND_", "PYTEST_"))}
    env.update(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                        "--base-url", books_url, test_file.name], cwd=out, env=env, capture_output=True, text=True,
                       timeout=240)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout


ROWS = """<!doctype html><html><head><title>people</title></head><body><h1>{title}</h1>
<table><tbody><tr><td>Ada Lovelace</td><td><a href="/edit/ada">Edit</a></td></tr>
<tr><td>Bob Stone</td><td><a href="/edit/bob">Edit</a></td></tr></tbody></table></body></html>"""


def _rows_page(request: Request) -> Response:
    title = "Editing " + request.path.rsplit("/", 1)[-1] if "/edit/" in request.path else "people"
    return Response.text(ROWS.format(title=title), content_type="text/html; charset=utf-8")


FLOW = """schema_version: 1
name: edit_bob
start_url: /people
steps:
- id: s1
  name: Edit Bob
  action: click
  target:
    tag: a
    role: link
    name: Edit
    text: Edit
    scope: {role: row, name: Bob Stone}
    exact: false
  assertions:
  - kind: text_appears
    expected: Editing bob
"""


def test_a_recorded_scope_makes_a_shared_link_name_pass_strict_mode(tmp_path: Path) -> None:
    """Two links named "Edit", one per table row. The flow's target carries the row that makes it unique
    (``scope``); the exported test chains it (``get_by_role('row', name='Bob Stone').get_by_role('link', ...)``) and
    passes, where a locator from the link alone fails Playwright's strict mode (two elements)."""
    with CountingSite({"/people": _rows_page, "/edit/{who}": _rows_page}) as site:
        url = site.base_url.rstrip("/")
        project, out = tmp_path / "proj", tmp_path / "export"
        out.mkdir()
        assert main(["init", str(project), "--url", url]) == 0
        (project / "flows" / "edit_bob.yaml").write_text(FLOW, encoding="utf-8")
        test_file = out / "test_edit_bob.py"
        assert main(["export", "pytest", str(project), "--flow", "edit_bob", "-o", str(test_file)]) == 0
        src = test_file.read_text(encoding="utf-8")
        assert "page.get_by_role('row', name='Bob Stone').get_by_role('link', name='Edit')" in src
        (out / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STEADYHAND_", "PYTEST_"))}
        env.update(PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", PYTHONDONTWRITEBYTECODE="1")
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                            "--base-url", url, test_file.name], cwd=out, env=env, capture_output=True, text=True,
                           timeout=240)
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
        assert "1 passed" in r.stdout
        assert site.count("/edit/bob") == 1 and site.count("/edit/ada") == 0  # Bob's row, once
