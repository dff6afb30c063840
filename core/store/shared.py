"""One shared store for a team: the store on a PostgreSQL server instead of a SQLite file (issue 24 item 2).

``STEADYHAND_STORE_URL`` (environment) names the database, e.g.
``postgresql://steadyhand:PASSWORD@db.internal:5432/steadyhand``.  When it is set, every store a command
opens (``run``, ``heals``, ``corrections``, ``skills``, ``history``, ``report``, the studio) is that database
instead of ``<project>/.steadyhand/store.sqlite``: the runs, steps, evidence and state graphs of every
worker land in one place, and heal proposals, corrections and skills are reviewed once, from any machine
pointed at it, with the same review rules.  Screenshots stay files beside the project
(``<project>/.steadyhand/``) on the machine that took them.  Unset: the SQLite file, as always.

The URL is taken from the environment only (never from a project file, which is shared input): it holds a
password.  It is never printed in clear: :func:`url_label` hides the password.  ``postgresql://`` uses the
psycopg 3 driver (``pip install 'steadyhand[postgres]'``); ``postgresql+psycopg://`` is the same.  One
database per project (or per group of copies of one project): runs and reviews are not told apart by
project folder.

Writers on PostgreSQL queue as they do on SQLite (:mod:`core.store.database`): each write transaction first
takes one transaction-scoped advisory lock, so the store's read-then-write steps (a heal proposal seen again,
a skill's counters) stay atomic with several workers, and no row is lost or doubled.
"""
from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

__all__ = ["STORE_URL_ENV", "StoreUrlError", "store_url", "store_present", "url_label", "engine_url"]

#: Environment variable naming the shared store's database URL.
STORE_URL_ENV = "STEADYHAND_STORE_URL"

#: Drivers a shared store accepts: SQLAlchemy's dialect+driver names.
_DRIVERS = {"postgresql": "postgresql+psycopg", "postgresql+psycopg": "postgresql+psycopg"}


class StoreUrlError(ValueError):
    """``STEADYHAND_STORE_URL`` is not a database URL a shared store can use (one line, password hidden)."""


def store_url() -> str:
    """The shared store's URL from :data:`STORE_URL_ENV` (stripped), ``""`` when unset: the SQLite file."""
    return os.environ.get(STORE_URL_ENV, "").strip()


def store_present(path: Path | str) -> bool:
    """True when a store can be read: a shared store is configured, or the SQLite file ``path`` exists."""
    return bool(store_url()) or Path(path).is_file()


def url_label(url: str) -> str:
    """``url`` with its password hidden (``***``), for messages; a value that is no URL is named as such."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return "(a value that is not a database URL)"


def engine_url(url: str) -> str:
    """The SQLAlchemy URL to open for ``url``: ``postgresql://`` gets the psycopg 3 driver.

    Raises
    ------
    StoreUrlError
        Not a URL, or not PostgreSQL (SQLite stays a file beside the project: unset the variable).
    """
    try:
        u = make_url(url)
    except (ArgumentError, ValueError):
        raise StoreUrlError(f"{STORE_URL_ENV}: not a database URL; expected "
                            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE") from None
    driver = _DRIVERS.get(u.drivername)
    if driver is None or not u.host or not u.database:
        raise StoreUrlError(f"{STORE_URL_ENV}={url_label(url)}: a shared store is a PostgreSQL database, "
                            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE (unset it for the project's SQLite file)")
    return u.set(drivername=driver).render_as_string(hide_password=False)
