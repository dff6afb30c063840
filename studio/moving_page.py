"""A page that keeps moving (a CSS spinner) with a form, served on 127.0.0.1, and a project with one flow on it.

Chromium's screencast sends a frame only when the page repaints: this page
repaints every frame, so a screencast that still runs after a run shows up
as frames that keep coming.  Used by the screencast tests and by the
moving page of ``steadyhand bench studio`` (:mod:`studio.bench`).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import yaml

__all__ = ["MOVING_PAGE", "serve_moving_page", "moving_project"]

MOVING_PAGE = b"""<!doctype html><html><head><title>Moving</title><style>
@keyframes spin { from { transform: rotate(0deg) } to { transform: rotate(360deg) } }
#spinner { width: 60px; height: 60px; border: 8px solid #ccd; border-top-color: #36c; border-radius: 50%;
           animation: spin 0.8s linear infinite; margin: 20px; }
</style></head><body>
<h1>Moving</h1><div id="spinner" aria-hidden="true"></div>
<label for="note">Note</label> <input id="note" name="note">
<label for="code">Code</label> <input id="code" name="code">
<button id="save" type="button" onclick="document.getElementById('out').textContent = 'Saved: ' +
  document.getElementById('note').value">Save</button>
<p id="out"></p></body></html>"""


@contextmanager
def serve_moving_page() -> Iterator[str]:
    """Serve :data:`MOVING_PAGE` at every path on 127.0.0.1 (a free port); yields the base URL, then stops."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(MOVING_PAGE)))
            self.end_headers()
            self.wfile.write(MOVING_PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def moving_project(root: Path, base_url: str, *, rounds: int = 3) -> Path:
    """Write a project at ``root`` whose flow ``note`` types a note and saves, ``rounds`` times,
    typing a secret code in the first round (steps: 3 + 2 x (rounds - 1)).

    The viewport is 1280x800 CSS px; the secret ``code`` defaults to ``s3cret-code``.
    """
    (root / "flows").mkdir(parents=True, exist_ok=True)
    (root / "steadyhand.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "Moving", "base_url": base_url,
        "browser": {"headless": True, "viewport": {"width": 1280, "height": 800}},
        "secrets": {"code": {"default": "s3cret-code", "description": "a test secret"}},
        "breaker": {"threshold": 3}}, sort_keys=False))
    steps: list[dict[str, object]] = []
    for r in range(rounds):
        steps.append(
            {"id": f"n{r}", "name": f"Type note {r + 1}", "action": "input", "selector": "#note", "value": f"note {r + 1}",
             "target": {"tag": "input", "role": "textbox", "name": "Note", "label": "Note", "id": "note"}})
        if r == 0:  # the secret once: typing the same value again would change nothing on the page
            steps.append(
            {"id": f"c{r}", "name": f"Type the code {r + 1}", "action": "input", "selector": "#code", "value": "{code}",
             "target": {"tag": "input", "role": "textbox", "name": "Code", "label": "Code", "id": "code"}})
        steps.append(
            {"id": f"s{r}", "name": f"Save {r + 1}", "action": "click", "selector": "#save",
             "target": {"tag": "button", "role": "button", "name": "Save", "text": "Save", "id": "save"}})
    (root / "flows" / "note.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "note", "start_url": "/", "steps": steps}, sort_keys=False))
    return root
