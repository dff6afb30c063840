"""What the drift app servers share: their settings from the environment and a loopback WSGI server.

Runs inside each app's own virtual environment (Flask and Werkzeug of that release; no Steadyhand).
Environment: ``DRIFT_DB`` (SQLite file, made by the server), ``DRIFT_PORT``, ``DRIFT_PREFIX`` (URL path
prefix, "" for none), ``DRIFT_ADMIN_PASSWORD`` (the generated admin's password, never printed),
``DRIFT_TEMPLATE_MODE`` (Flask-Admin's bootstrap mode).
"""
from __future__ import annotations

import os
import sys

from drift_wsgi import mount

HOST = "127.0.0.1"


def setting(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        sys.exit(f"drift server: {name} is not set")
    return value


def serve(app, prefix: str) -> None:
    """Serve the Flask ``app`` under ``prefix`` on 127.0.0.1:DRIFT_PORT (threaded) until killed."""
    from werkzeug.serving import make_server

    port = int(setting("DRIFT_PORT"))
    server = make_server(HOST, port, mount(app, prefix), threaded=True)
    print(f"drift server: serving on http://{HOST}:{port}{prefix}/", flush=True)
    server.serve_forever()
