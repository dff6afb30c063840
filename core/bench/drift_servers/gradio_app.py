"""A small Gradio form app for ``steadyhand bench drift --app gradio``: two text fields, a Save button, a result
line and the list of what was saved.

Runs in the release's own virtual environment (``python gradio_app.py``; Gradio 3.x, 4.x and 5.x): the
Blocks app is mounted on a FastAPI app at ``DRIFT_PREFIX`` (``gr.mount_gradio_app``; "" = the root) and
served by uvicorn on 127.0.0.1:``DRIFT_PORT``.  Every submission is written to the ``item`` table of the
SQLite file ``DRIFT_DB`` (``id``, ``name``, ``quantity``): the bench's ground truth is the app's own log, not
the page.  No sign-in; no request leaves the machine (analytics off, system fonts instead of web fonts).
"""
from __future__ import annotations

import html
import os
import sqlite3
import sys
import threading

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import gradio as gr  # noqa: E402 - after the analytics switch
import uvicorn  # noqa: E402
from fastapi import FastAPI  # noqa: E402

HOST = "127.0.0.1"
_LOCK = threading.Lock()


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        sys.exit(f"drift server: {name} is not set")
    return value


DB = setting("DRIFT_DB")


def _connect() -> sqlite3.Connection:
    con = sqlite3.connect(DB, timeout=5)
    con.execute("CREATE TABLE IF NOT EXISTS item (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, "
                "quantity INTEGER)")
    return con


def saved_list() -> str:
    """The saved items as an HTML list (our own markup: the same on every release)."""
    with _LOCK:
        con = _connect()
        try:
            rows = con.execute("SELECT name, quantity FROM item ORDER BY id").fetchall()
        finally:
            con.close()
    items = "".join(f"<li>{html.escape(str(n))} &times; {q}</li>" for n, q in rows)
    return f'<h3>Saved items</h3><ul id="saved-items" aria-label="Saved items">{items}</ul>'


def save(name: str, quantity: str):
    """Write one submission (a name and a whole quantity) and say what was saved."""
    name = (name or "").strip()
    try:
        qty = int(str(quantity).strip())
    except ValueError:
        return "The quantity must be a whole number", saved_list()
    if not name:
        return "Type a name first", saved_list()
    with _LOCK:
        con = _connect()
        try:
            con.execute("INSERT INTO item (name, quantity) VALUES (?, ?)", (name, qty))
            con.commit()
        finally:
            con.close()
    return f"Saved {name} ({qty})", saved_list()


def make_blocks() -> gr.Blocks:
    try:
        theme = gr.themes.Default(font=["sans-serif"], font_mono=["monospace"])  # no web fonts fetched
    except Exception:  # noqa: BLE001 - a release without themes
        theme = None
    with gr.Blocks(title="Drift Inventory", theme=theme, analytics_enabled=False) as demo:
        gr.Markdown("# Drift Inventory")
        name = gr.Textbox(label="Name", elem_id="name")
        quantity = gr.Textbox(label="Quantity", elem_id="quantity")
        button = gr.Button("Save", elem_id="save", variant="primary")
        result = gr.Textbox(label="Result", elem_id="result", interactive=False)
        listing = gr.HTML(saved_list(), elem_id="listing")
        button.click(save, inputs=[name, quantity], outputs=[result, listing])
        demo.load(saved_list, inputs=None, outputs=listing)
    return demo


def main() -> None:
    _connect().close()
    prefix = setting("DRIFT_PREFIX", "").rstrip("/")
    port = int(setting("DRIFT_PORT"))
    app = FastAPI()
    app = gr.mount_gradio_app(app, make_blocks(), path=prefix or "/")
    print(f"drift server: serving on http://{HOST}:{port}{prefix}/", flush=True)
    uvicorn.run(app, host=HOST, port=port, log_level="warning")


if __name__ == "__main__":
    main()
