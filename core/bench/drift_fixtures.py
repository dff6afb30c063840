"""Static reproduction pages of the drift benchmark: each step's page as each datasette release serves it.

``steadyhand bench drift --fixtures DIR`` serves every release over the benchmark's database, walks the
ground truth of the intended actions (:func:`core.bench.drift_truth.ground_truth`) and saves, for each
step asked, the server-rendered HTML of the page the step starts on (its intended before-state) as
``DIR/<version>/<step id>.html``, with the static files it references (``/-/static/...``, query strings
dropped) under ``DIR/<version>/-/static/``.  The server's own origin in absolute links
(``http://127.0.0.1:<port>``) is rewritten to :data:`FIXTURE_ORIGIN`, so the files do not depend on the
port they were captured on.  Served by :class:`core.sites.server.StaticSite` from ``DIR/<version>``, a page
looks and scripts as the release does (its CSS and JS are the release's own).

The markup is the release's, not written by hand; ``DIR/index.json`` lists the pages with the URL each
was captured at and the intended element's CSS selector and text (:data:`~core.bench.drift_truth.INTENDED`).
"""
from __future__ import annotations

import json
import re
import tempfile
import urllib.request
from pathlib import Path
from typing import Callable, Sequence

from .drift_env import DB_NAME, VERSIONS, DatasetteServer, datasette_bin, ensure_venv, make_books_db
from .drift_truth import INTENDED, ground_truth

__all__ = ["capture_fixtures", "FIXTURE_ORIGIN", "DEFAULT_STEPS"]

#: The origin absolute links are rewritten to (the port is the project's nominal base URL's).
FIXTURE_ORIGIN = "http://127.0.0.1:8001"
#: The steps captured by default: those that were not an exact pass on some release (bench of 2026-12-02).
DEFAULT_STEPS = ("s2", "s3", "s4", "s7", "s8", "s10")

_STATIC = re.compile(r'(?:src|href)="(/-/static/[^"?]+)(\?[^"]*)?"')


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return resp.read().decode("utf-8")


def capture_fixtures(out: Path, versions: Sequence[str] = VERSIONS, steps: Sequence[str] = DEFAULT_STEPS, *,
                     step_ids: Sequence[str] = (), root: Path | None = None,
                     log: Callable[[str], None] = print) -> Path:
    """Capture the pages (see the module docstring) into ``out``; returns the index file's path.

    ``step_ids`` are the flow's step ids in order (default ``s1``..``sN``, as the recorder numbers them).
    """
    from playwright.sync_api import sync_playwright

    from core.perception.browser import CHROMIUM_ARGS, find_chromium

    out = Path(out)
    ids = list(step_ids) or [f"s{i + 1}" for i in range(len(INTENDED))]
    index: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="steadyhand-drift-fx-") as tmp:
        db = make_books_db(Path(tmp) / DB_NAME)
        for version in versions:
            ensure_venv(version, root, log=log)
            folder = out / version
            folder.mkdir(parents=True, exist_ok=True)
            with DatasetteServer(datasette_bin(version, root), db) as server:
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=find_chromium(), args=list(CHROMIUM_ARGS))
                    try:
                        truth = ground_truth(browser.new_page(), server.base_url)
                    finally:
                        browser.close()
                saved: dict[str, str] = {}  # captured URL -> file (steps starting on one page share it)
                for k, step_id in enumerate(ids):
                    if step_id not in steps:
                        continue
                    url = truth[k].before.relative_url
                    action = INTENDED[k]
                    entry = index.setdefault(step_id, {"title": action.title, "selector": action.selector,
                                                       "text": action.text, "pages": {}})
                    if url in saved:
                        entry["pages"][version] = {"file": saved[url], "captured_at": url}
                        continue
                    html = _get(server.base_url + url.split("#")[0])
                    html = html.replace(server.base_url, FIXTURE_ORIGIN)
                    for path in sorted({m.group(1) for m in _STATIC.finditer(html)}):
                        target = folder / path.lstrip("/")
                        if not target.exists():
                            target.parent.mkdir(parents=True, exist_ok=True)
                            target.write_text(_get(server.base_url + path).replace(server.base_url, FIXTURE_ORIGIN),
                                              encoding="utf-8")
                    (folder / f"{step_id}.html").write_text(html, encoding="utf-8")
                    saved[url] = f"{version}/{step_id}.html"
                    entry["pages"][version] = {"file": saved[url], "captured_at": url}
                    log(f"  {version}/{step_id}.html ({len(html)} chars) from {url}")
    path = out / "index.json"
    path.write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")
    return path
