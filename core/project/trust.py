"""A project is untrusted until the user trusts it on this machine, as an editor treats a cloned workspace.

A project file is input from whoever wrote it.  The settings that run a program or reach the environment
(:data:`TRUSTED_SETTINGS`: ``browser.executable_path`` runs a program; ``model.api_key_env`` reads an environment
variable and sends it; ``model.base_url`` and ``model.cross_check.base_url`` send page data and the model key to
a server) take effect only for a project the user trusted with ``steadyhand trust PROJECT``; otherwise using one
is refused with one error naming the setting and the command (issue 21 item 2).  A model server on this machine
(a loopback host: ``127.0.0.0/8``, ``::1``, ``localhost``) needs no trust - nothing leaves the machine - unless
the key comes from ``api_key_env``.

Trust is kept outside every project, in ``$XDG_CONFIG_HOME/steadyhand/trusted.json`` (``~/.config`` when the
variable is unset): per project folder (resolved), the digest (SHA-256) of the trusted settings' values.  A
setting changed after the trust (a ``git pull``) no longer matches the digest: it is refused again until the
user trusts the project again.
"""
from __future__ import annotations

import hashlib
import ipaddress
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .loader import SETTINGS_FILE, ProjectError, _one_line, write_atomic
from .schema import ProjectModel

__all__ = ["TRUSTED_SETTINGS", "TrustError", "TrustEntry", "trust_file", "guarded_settings", "settings_digest",
           "untrusted_setting", "require_trust", "trust_project", "revoke_trust", "trusted_projects", "loopback_url",
           "loopback_host", "endpoint_refusal"]

#: The settings that run a program or reach the environment, as dotted paths of the project file.
TRUSTED_SETTINGS: tuple[str, ...] = ("browser.executable_path", "browser.endpoint_hosts", "model.api_key_env",
                                     "model.base_url", "model.cross_check.api_key_env", "model.cross_check.base_url")

#: The trust file's format version.
_VERSION = 1


class TrustError(ProjectError):
    """A setting that needs trust is used in a project not trusted (or changed since); names the setting and the
    command that trusts the project."""


@dataclass(frozen=True, slots=True)
class TrustEntry:
    """One trusted project: its folder, the digest of its trusted settings, what they were, and when (UTC ISO)."""

    root: str
    digest: str
    settings: dict[str, str]
    trusted_at: str


def trust_file() -> Path:
    """``$XDG_CONFIG_HOME/steadyhand/trusted.json`` (``~/.config/steadyhand/trusted.json`` without the variable)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / ".config") / "steadyhand" / "trusted.json"


def loopback_url(url: str) -> bool:
    """True for an http(s) URL whose host is this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_host(host: str) -> bool:
    """True for ``localhost`` and the addresses of ``127.0.0.0/8`` and ``::1`` (brackets allowed)."""
    host = host.strip().strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def endpoint_refusal(root: Path | str, model: ProjectModel, host: str, label: str) -> str:
    """Why ``run --browser-endpoint`` may not reach ``host`` for the project at ``root`` ("" when it may).

    A loopback host always may.  Another host only when the project file lists it under
    ``browser.endpoint_hosts`` (case-insensitive) and the project is trusted on this machine as it now is: a
    browser elsewhere sees every page of the run and every value typed, secrets included.  ``label`` names
    the endpoint in the message (without its credentials).
    """
    if loopback_host(host):
        return ""
    allowed = {h.strip().strip("[]").lower() for h in model.browser.endpoint_hosts}
    if host.strip().strip("[]").lower() not in allowed:
        return (f"--browser-endpoint {label}: {host} is not this machine, and the project does not list it under "
                f"browser.endpoint_hosts in {SETTINGS_FILE} (a browser elsewhere sees every page and every value "
                f"typed, secrets too); add it there, then run: {_command(root)}")
    err = untrusted_setting(root, model, "browser.endpoint_hosts")
    return str(err) if err is not None else ""


def guarded_settings(model: ProjectModel) -> dict[str, str]:
    """The settings of :data:`TRUSTED_SETTINGS` that ``model`` sets and that need trust, dotted path -> value.

    A ``base_url`` on a loopback host is left out unless its endpoint takes its key from ``api_key_env``.
    """
    out: dict[str, str] = {}
    if model.browser.executable_path:
        out["browser.executable_path"] = model.browser.executable_path
    if model.browser.endpoint_hosts:
        out["browser.endpoint_hosts"] = ", ".join(model.browser.endpoint_hosts)
    endpoints = [("model", model.model)] + ([("model.cross_check", model.model.cross_check)]
                                            if model.model is not None and model.model.cross_check else [])
    for where, e in endpoints:
        if e is None:
            continue
        if e.api_key_env:
            out[f"{where}.api_key_env"] = e.api_key_env
        if e.api_key_env or not loopback_url(e.base_url):
            out[f"{where}.base_url"] = e.base_url
    return out


def settings_digest(values: dict[str, str]) -> str:
    """SHA-256 hex of the settings (sorted JSON): what a trust entry keeps to see a change."""
    return hashlib.sha256(json.dumps(values, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def _key(root: Path | str) -> str:
    return str(Path(root).expanduser().resolve())


def _read() -> dict[str, Any]:
    path = trust_file()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"version": _VERSION, "projects": {}}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectError(path, f"the list of trusted projects cannot be read ({exc}); fix or remove the file") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("projects"), dict):
        raise ProjectError(path, "the list of trusted projects is not in the expected form; fix or remove the file")
    return doc


def _write(doc: dict[str, Any]) -> Path:
    path = trust_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomic(path, (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    return path


def _command(root: Path | str) -> str:
    return f"steadyhand trust {_one_line(str(root))}"


def untrusted_setting(root: Path | str, model: ProjectModel, name: str = "") -> TrustError | None:
    """The error for setting ``name`` (default: the first changed or set one) when it needs trust and the
    project is not trusted as it now is, else None (nothing needs trust, or the trusted digest matches)."""
    values = guarded_settings(model)
    if not values or (name and name not in values):
        return None
    try:
        entry = _read()["projects"].get(_key(root))
    except ProjectError as exc:
        return TrustError(exc.path, exc.detail)
    digest = settings_digest(values)
    if isinstance(entry, dict) and entry.get("digest") == digest:
        return None
    trusted = entry.get("settings", {}) if isinstance(entry, dict) and isinstance(entry.get("settings"), dict) else {}
    name = name or next((n for n in values if trusted.get(n) != values[n]), next(iter(values)))
    what = ("runs a program" if name == "browser.executable_path" else
            "lets the flows run in a browser on another machine, which sees every page and every value typed"
            if name == "browser.endpoint_hosts" else
            "reads an environment variable and sends it to the model server" if name.endswith("api_key_env") else
            "sends page data and the model key to a server off this machine")
    again = " changed since you trusted this project;" if isinstance(entry, dict) else ""
    settings_path = Path(root) / SETTINGS_FILE
    return TrustError(settings_path, f"setting '{name}'{again} it {what}, so it takes effect only in a project you "
                                     f"trust on this machine: check the project file, then run: {_command(root)}",
                      location=f"field '{name}'")


def require_trust(root: Path | str, model: ProjectModel, *names: str) -> None:
    """Raise the :class:`TrustError` of :func:`untrusted_setting` when one of ``names`` (all settings when none
    are given) is set, needs trust, and the project is not trusted as it now is."""
    values = guarded_settings(model)
    if names and not any(n in values for n in names):
        return
    err = untrusted_setting(root, model)
    if err is not None:
        raise err


def trust_project(root: Path | str, model: ProjectModel) -> TrustEntry:
    """Trust the project at ``root`` with its settings as they are now; returns the entry written.

    Raises ``ProjectError`` when the trust file cannot be read; ``OSError`` when it cannot be written.
    """
    values = guarded_settings(model)
    doc = _read()
    entry = TrustEntry(_key(root), settings_digest(values), values,
                       datetime.now(timezone.utc).replace(microsecond=0).isoformat())
    doc["version"] = _VERSION
    doc["projects"][entry.root] = {"digest": entry.digest, "settings": entry.settings, "trusted_at": entry.trusted_at}
    _write(doc)
    return entry


def revoke_trust(root: Path | str) -> bool:
    """Forget the trust of the project at ``root``; True when it was trusted."""
    doc = _read()
    if doc["projects"].pop(_key(root), None) is None:
        return False
    _write(doc)
    return True


def trusted_projects() -> list[TrustEntry]:
    """Every trusted project, by folder."""
    out = []
    for root, e in sorted(_read()["projects"].items()):
        if isinstance(e, dict):
            out.append(TrustEntry(root, str(e.get("digest", "")), dict(e.get("settings") or {}),
                                  str(e.get("trusted_at", ""))))
    return out
