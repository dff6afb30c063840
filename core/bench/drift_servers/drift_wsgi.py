"""A WSGI dispatcher that mounts one app under a URL path prefix (``/staging``), standard library only.

Copied beside the app servers of ``steadyhand bench drift --app ...``, which run in each app's own
virtual environment (no Steadyhand there).  A request for ``PREFIX`` or ``PREFIX/...`` reaches the app with
``SCRIPT_NAME`` extended by the prefix and ``PATH_INFO`` the rest (so the app's ``url_for`` writes prefixed
links, as behind a reverse proxy); ``/`` is redirected (302) to ``PREFIX/``; any other path answers 404.
With an empty prefix the app is returned unchanged.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

__all__ = ["normalise_prefix", "mount", "split_path"]

WSGIApp = Callable[[dict, Callable[..., Any]], Iterable[bytes]]


def normalise_prefix(prefix: str) -> str:
    """``"staging"``, ``"/staging/"`` -> ``"/staging"``; ``""`` or ``"/"`` -> ``""`` (no prefix)."""
    parts = [p for p in (prefix or "").split("/") if p]
    return "/" + "/".join(parts) if parts else ""


def split_path(prefix: str, path: str) -> tuple[str, str] | None:
    """``(script_name_part, path_info)`` when ``path`` lies under ``prefix``, else None (pure).

    ``split_path("/staging", "/staging/items/")`` -> ``("/staging", "/items/")``;
    ``split_path("/staging", "/staging")`` -> ``("/staging", "")``; ``"/stagingx"`` is not under it.
    """
    prefix = normalise_prefix(prefix)
    if not prefix:
        return "", path
    if path == prefix or path.startswith(prefix + "/"):
        return prefix, path[len(prefix):]
    return None


def mount(app: WSGIApp, prefix: str) -> WSGIApp:
    """``app`` served under ``prefix`` (see the module docstring); ``app`` itself when there is none."""
    prefix = normalise_prefix(prefix)
    if not prefix:
        return app

    def dispatch(environ: dict, start_response: Callable[..., Any]) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "") or "/"
        split = split_path(prefix, path)
        if split is None:
            if path == "/":
                start_response("302 Found", [("Location", prefix + "/"), ("Content-Length", "0")])
                return [b""]
            body = f"not found: {path} (the app is mounted at {prefix}/)".encode()
            start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8"),
                                             ("Content-Length", str(len(body)))])
            return [body]
        environ = dict(environ)
        environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + split[0]
        environ["PATH_INFO"] = split[1]
        return app(environ, start_response)

    return dispatch
