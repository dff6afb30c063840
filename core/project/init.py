"""Start a project for any web app: ``steadyhand init DIR --url URL`` writes its settings file and ``flows/``.

:func:`project_settings` builds the settings mapping and validates it with
the schema the loader uses (:class:`~core.project.schema.ProjectModel`);
:func:`init_project` writes it and loads the folder back with
:func:`~core.project.loader.load_project`, so a project it makes is one
``record`` and ``run`` accept.  Nothing here reaches the network: the URL
is checked by its form only.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

import yaml
from pydantic import ValidationError

from core.domain.settings import BrowserSettings
from core.secrets import env_var_name, keyring_service

from .loader import FLOWS_DIR, SETTINGS_FILE, Project, load_project, write_atomic
from .schema import SCHEMA_VERSION, ProjectModel

__all__ = ["InitError", "check_base_url", "project_settings", "settings_text", "init_project"]

#: A parameter or secret name: what a ``{name}`` placeholder holds (core.project.params.PLACEHOLDER).
_NAME = re.compile(r"^\w+$")


class InitError(ValueError):
    """The arguments cannot make a project (bad URL or name, a settings file already there); one line."""


def check_base_url(url: str) -> str:
    """The base URL of a project from ``url``, checked by its form alone (no request is made).

    An ``http`` or ``https`` URL with a host; no user or password (the file
    goes into version control: declare a secret instead), no query or
    fragment (give a start page to ``record``).  A URL with a path gets a
    trailing ``/`` (the folder flows' relative URLs are joined to); a bare
    origin keeps none (``http://127.0.0.1:8000``).

    Raises
    ------
    InitError
        When ``url`` is not such a URL.
    """
    text = (url or "").strip()
    try:
        parts = urlsplit(text)
        port = parts.port  # raises on a port out of range or not a number
    except ValueError as exc:
        raise InitError(f"--url {url!r}: not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise InitError(f"--url {url!r}: expected an http:// or https:// URL")
    if not parts.hostname:
        raise InitError(f"--url {url!r}: the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise InitError(f"--url {url!r}: keep user names and passwords out of the URL; declare them with --secret")
    if parts.query or parts.fragment:
        raise InitError(f"--url {url!r}: the base URL takes no query or fragment; pass the start page to "
                        "`steadyhand record` instead")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    origin = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    path = parts.path
    if path in ("", "/"):
        return origin
    return origin + (path if path.endswith("/") else path + "/")


def _check_name(kind: str, name: str) -> str:
    if not _NAME.match(name or ""):
        raise InitError(f"{kind} {name!r}: a name is letters, digits and '_' (it is written as {{{name or 'name'}}} "
                        "in flows)")
    return name


def project_settings(url: str, *, name: str, secrets: Sequence[str] = (),
                     params: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings mapping of a new project, in the key order it is written in.

    Keys: ``schema_version``, ``name``, ``base_url`` (:func:`check_base_url`),
    ``browser`` (the defaults of :class:`~core.domain.settings.BrowserSettings`
    written out so they can be edited: headless, viewport, locale, timezone,
    timeouts in ms), then ``params`` and ``secrets`` when given.  A secret
    gets no value (it comes from ``STEADYHAND_SECRET_<NAME>`` or the
    keyring at run time), only a description saying so.

    Raises
    ------
    InitError
        For a bad URL, an empty project name, a parameter or secret name that
        is not letters, digits and ``_``, or a name used for both.
    """
    base_url = check_base_url(url)
    if not name.strip():
        raise InitError("--name: the project needs a name")
    params = {_check_name("--param", k): str(v) for k, v in (params or {}).items()}
    names = list(dict.fromkeys(_check_name("--secret", s) for s in secrets))
    both = sorted(set(names) & set(params))
    if both:
        raise InitError(f"{both[0]!r} is given as both a --param and a --secret; a secret's value is never written")
    b = BrowserSettings()
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": name.strip(),
        "base_url": base_url,
        "browser": {
            "headless": b.headless,
            "viewport": {"width": b.viewport_width, "height": b.viewport_height},
            "locale": b.locale,
            "timezone": b.timezone,
            "action_timeout_ms": b.action_timeout_ms,
            "navigation_timeout_ms": b.navigation_timeout_ms,
        },
    }
    if params:
        data["params"] = params
    if names:
        data["secrets"] = {
            s: {"description": f"set {env_var_name(s)} or the keyring (service "
                               f"{keyring_service(name.strip())!r}, user {s!r}) before recording and replaying"}
            for s in names}
    try:
        ProjectModel.model_validate(data)
    except ValidationError as exc:  # the arguments above should not allow it; said plainly if they do
        raise InitError(f"the settings would not load: {exc.errors()[0].get('msg', exc)}") from None
    return data


def settings_text(data: Mapping[str, Any]) -> str:
    """The settings file's text: a comment saying what comes next, then ``data`` as YAML in its key order."""
    head = ("# Steadyhand project settings (steadyhand.yaml). Record a flow into flows/ with:\n"
            "#   steadyhand record --project . --flow NAME [START_URL]\n")
    return head + yaml.safe_dump(dict(data), sort_keys=False, allow_unicode=True, width=100)


def init_project(folder: Path | str, *, url: str, name: str = "", secrets: Sequence[str] = (),
                 params: Mapping[str, str] | None = None, force: bool = False) -> Project:
    """Write ``<folder>/steadyhand.yaml`` and an empty ``<folder>/flows/``; return the project loaded back.

    ``name`` defaults to the folder's name.  The folder is created when
    missing; files already in it are kept (``flows/`` too) except the
    settings file, which is replaced only with ``force``.

    Raises
    ------
    InitError
        For bad arguments (:func:`project_settings`), a settings file that
        exists without ``force``, or a folder that cannot be written.
    ProjectError
        When the folder, loaded back, does not load (a flow already in
        ``flows/`` is invalid).
    """
    root = Path(folder).expanduser().resolve()
    data = project_settings(url, name=name or root.name, secrets=secrets, params=params)
    target = root / SETTINGS_FILE
    if target.exists() and not force:
        raise InitError(f"{target}: a project is already there; pass --force to replace its settings file")
    if root.exists() and not root.is_dir():
        raise InitError(f"{root}: not a folder")
    try:
        (root / FLOWS_DIR).mkdir(parents=True, exist_ok=True)
        write_atomic(target, settings_text(data).encode("utf-8"))
    except OSError as exc:
        raise InitError(f"{root}: cannot write the project there: {exc.strerror or exc}") from None
    return load_project(root)

