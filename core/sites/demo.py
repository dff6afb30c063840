"""LeaveDesk: the bundled demo target web app, with its ground-truth log.

A small leave-request app (login with lockout, a requests table, a form
with date pickers, report export/save, confirmation dialogs) served on
``127.0.0.1`` from ``resources/sites/demo/``, with a real SQLite backend that
is reset to a known state at every :meth:`DemoSite.start` and a settable
clock ("today") so date flows are repeatable.

Ground truth
------------
Every control of the pages carries ``data-gt="<stable id>"``; a delegated
listener posts ``{gt, kind, ts}`` to ``/__gt/activation`` whenever one is
activated (click, change, input-commit, submit).  The server adds its own
entries (login attempts, logouts, exports: ``source="server"``) and logs
every write (create, approve, delete, save report), flagging a write that
repeats an earlier one (same client token, same content, same target) as a
duplicate.  Only benchmarks and tests read this log; the engine, the
locator and the recorder must never read ``data-gt``
(:data:`core.domain.GROUND_TRUTH_ATTRIBUTES`).

Run standalone with ``python -m core.sites.demo`` (see :func:`main`).
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import hashlib
import io
import json
import re
import secrets
import sqlite3
import sys
import threading
import time
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable

from .server import Request, Response, StaticSite, file_response
from ..domain.resources import resource_path

__all__ = [
    "DemoSite", "DEMO_ROOT", "DEMO_USERS", "DEMO_PASSWORD", "LEAVE_TYPES", "VARIANTS", "VARIANT_TWEAKS", "TWEAKS",
    "LEARN_TWEAKS", "LEARN_VARIANT_TWEAKS", "LEARN_VARIANTS", "SERVED_VARIANTS", "variant_tweaks",
    "MAX_FAILED_LOGINS", "DEFAULT_TODAY", "working_days", "main",
]

#: Folder of the demo's pages and static files.
DEMO_ROOT = resource_path("sites", "demo")
#: Public demo password of every demo user (not a secret: documented demo data).
DEMO_PASSWORD = "demo-pass"
#: user name -> display name.
DEMO_USERS = {"alice": "Alice Martin", "bob": "Bob Chen"}
#: Leave type value -> label, in the order of the form's dropdown.
LEAVE_TYPES = {
    "annual": "Annual leave",
    "sick": "Sick leave",
    "parental": "Parental leave",
    "unpaid": "Unpaid leave",
    "training": "Training",
}
STATUS_LABELS = {"pending": "Pending", "approved": "Approved", "rejected": "Rejected"}
#: The single UI tweaks a variant is made of (docs/variants.md says what each changes in the DOM).
TWEAKS = ("moved", "relayout", "suffix", "apostrophe", "combobox", "contenteditable", "nested-delete", "nested-export",
          "columns", "noise", "popup", "renamed-ids")
#: UI variant -> its tweaks (docs/variants.md).  ``tweaked`` is the set the first tweak tests used
#: (R, docs/mechanisms.md); ``all`` combines every tweak.
VARIANT_TWEAKS: dict[str, tuple[str, ...]] = {
    "baseline": (),
    "moved": ("moved",),
    "relayout": ("relayout",),
    "suffix": ("suffix", "apostrophe"),
    "custom-input": ("combobox", "contenteditable"),
    "nested-dialog": ("nested-delete", "nested-export"),
    "columns": ("columns",),
    "noise": ("noise",),
    "popup": ("popup",),
    "renamed-ids": ("renamed-ids",),
    "all": TWEAKS,
    "tweaked": ("moved", "suffix", "combobox", "nested-delete", "columns", "renamed-ids"),
}
#: Every selectable UI variant (``steadyhand bench tweaks`` runs all but the ``tweaked`` alias).
VARIANTS = tuple(VARIANT_TWEAKS)
#: Failure kinds that need a new action, not a healed locator (``steadyhand bench learn``; docs/variants.md):
#: a consent wall over every page, a popup when a field gets focus that must be dismissed by "Start empty"
#: (its "Fill it in" is a harmful write), a Reason field edited only by a double-click on its label.
LEARN_TWEAKS = ("focus-popup", "cookie-banner", "inline-edit")
#: The learning variants: one per failure kind, ``learn-all`` = every tweak of :data:`TWEAKS` and of
#: :data:`LEARN_TWEAKS`, and ``popup-renamed`` (the focus popup on a release with renamed ids and labels).
#: Served like :data:`VARIANTS` but kept out of them (the tweak bench runs those).
LEARN_VARIANT_TWEAKS: dict[str, tuple[str, ...]] = {
    "focus-popup": ("focus-popup",),
    "cookie-banner": ("cookie-banner",),
    "inline-edit": ("inline-edit",),
    "learn-all": TWEAKS + LEARN_TWEAKS,
    "popup-renamed": ("focus-popup", "renamed-ids", "suffix", "apostrophe"),
}
LEARN_VARIANTS = tuple(LEARN_VARIANT_TWEAKS)
#: Every variant the demo server serves.
SERVED_VARIANTS = VARIANTS + LEARN_VARIANTS


def variant_tweaks(variant: str) -> tuple[str, ...]:
    """The tweaks of a served variant (:data:`VARIANT_TWEAKS`, :data:`LEARN_VARIANT_TWEAKS`); KeyError if unknown."""
    return VARIANT_TWEAKS[variant] if variant in VARIANT_TWEAKS else LEARN_VARIANT_TWEAKS[variant]
#: Failed sign-ins that lock an account (P11 "three failed logins lock the account").
MAX_FAILED_LOGINS = 3
#: Default server date, a Monday.
DEFAULT_TODAY = date(2026, 3, 2)
#: Activation kinds a page may report (``dblclick``: a double-click on an element with an id, e.g. a label).
ACTIVATION_KINDS = ("click", "change", "input-commit", "submit", "dblclick")
SESSION_COOKIE = "leavedesk_session"

_SCHEMA = """
DROP TABLE IF EXISTS users;
DROP TABLE IF EXISTS sessions;
DROP TABLE IF EXISTS leave_requests;
DROP TABLE IF EXISTS saved_reports;
CREATE TABLE users (
    username TEXT PRIMARY KEY, password TEXT NOT NULL, display_name TEXT NOT NULL,
    failed_attempts INTEGER NOT NULL DEFAULT 0, locked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE sessions (token TEXT PRIMARY KEY, username TEXT NOT NULL REFERENCES users(username));
CREATE TABLE leave_requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT, username TEXT NOT NULL REFERENCES users(username),
    type TEXT NOT NULL, start_date TEXT NOT NULL, end_date TEXT NOT NULL, reason TEXT NOT NULL,
    status TEXT NOT NULL, notify INTEGER NOT NULL DEFAULT 1, created_at TEXT NOT NULL,
    client_token TEXT);
CREATE TABLE saved_reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT, username TEXT NOT NULL, created_at TEXT NOT NULL,
    row_count INTEGER NOT NULL, csv TEXT NOT NULL);
"""

#: The known state after every reset: (user, type, start, end, reason, status, created).
_SEED_REQUESTS = (
    ("alice", "annual", "2026-03-16", "2026-03-20", "Family trip to Lisbon", "pending", "2026-02-20"),
    ("bob", "sick", "2026-02-23", "2026-02-24", "Flu", "approved", "2026-02-23"),
    ("bob", "annual", "2026-04-06", "2026-04-10", "Easter holidays", "pending", "2026-02-25"),
    ("alice", "training", "2026-03-05", "2026-03-05", "Security awareness course", "approved", "2026-02-10"),
    ("bob", "unpaid", "2026-05-11", "2026-05-15", "Moving house", "rejected", "2026-02-27"),
    ("alice", "parental", "2026-06-01", "2026-06-12", "School holidays", "pending", "2026-03-01"),
)

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _parse_date(value: Any) -> date | None:
    """``YYYY-MM-DD`` -> date; None for anything else."""
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        return None


def working_days(start: date, end: date) -> int:
    """Monday-to-Friday days from ``start`` to ``end`` inclusive (0 if end < start)."""
    days, d = 0, start
    while d <= end:
        days += d.weekday() < 5
        d += timedelta(days=1)
    return days


def _now_ms() -> float:
    return round(time.time() * 1000.0, 1)


class DemoSite:
    """The LeaveDesk demo app on ``127.0.0.1`` with its ground-truth log.

    Parameters
    ----------
    db_path : Path | None
        SQLite file of the backend; None keeps it in memory.  Either way it
        is reset to the known state by :meth:`start` and :meth:`reset`.
    today : date
        The server's clock ("today"): the calendar opens on its month and
        start dates before it are refused.
    latency_ms : int
        Server latency of a leave-request submit, ms (the page shows a
        spinner meanwhile).
    variant : str
        One of :data:`VARIANTS` (``"baseline"``, ``"moved"``, ``"relayout"``,
        ``"suffix"``, ``"custom-input"``, ``"nested-dialog"``, ``"columns"``,
        ``"noise"``, ``"popup"``, ``"renamed-ids"``, ``"all"``, and
        ``"tweaked"``: Sign in moved 20 px, "Export report (E)", custom listbox
        instead of the Leave type ``<select>``, two nested delete dialogs,
        reordered table columns, renamed ids).  docs/variants.md lists what
        each changes in the DOM.
    port : int
        TCP port; 0 (default) picks a free one.

    Examples
    --------
    >>> with DemoSite(latency_ms=200) as site:
    ...     login_url = site.url("/login")
    """

    def __init__(self, db_path: Path | None = None, *, today: date = DEFAULT_TODAY,
                 latency_ms: int = 800, variant: str = "baseline", port: int = 0) -> None:
        if variant not in SERVED_VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; expected one of {SERVED_VARIANTS}")
        self._db_path = Path(db_path) if db_path is not None else None
        self._today = today
        self._latency_ms = int(latency_ms)
        self._variant = variant
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._db = sqlite3.connect(str(self._db_path) if self._db_path else ":memory:",
                                   check_same_thread=False, isolation_level=None)
        self._db.row_factory = sqlite3.Row
        # a demo app's data: a process kill keeps what was written (the OS has it), an OS crash may lose the
        # last writes; without fsync a reset costs ~1 ms instead of 360-640 ms (``bench overhead``)
        self._db.execute("PRAGMA synchronous = OFF")
        self._activations: list[dict[str, Any]] = []
        self._writes: list[dict[str, Any]] = []
        self._write_keys: dict[tuple[str, ...], int] = {}
        self._seq = 0
        self._server = StaticSite(DEMO_ROOT / "static", mount="/static/", port=port)
        self._register_routes()
        self.reset()

    # -- lifecycle -----------------------------------------------------------------
    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash).  RuntimeError if not started."""
        return self._server.base_url

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._server.running

    def url(self, path: str = "/") -> str:
        """Absolute URL of ``path`` (``"/login"``) on this site."""
        return self._server.url(path)

    def start(self) -> "DemoSite":
        """Reset the backend to the known state and serve; returns ``self``."""
        self.reset()
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop serving (the database and logs stay readable).  Idempotent."""
        self._server.stop()

    def wait_idle(self, *, quiet_s: float = 0.3, timeout_s: float = 5.0) -> bool:
        """Block until no request is in progress and none ended for ``quiet_s`` s (late beacons logged);
        False after ``timeout_s`` (:meth:`core.sites.server.LoopbackServer.wait_idle`)."""
        return self._server.wait_idle(quiet_s=quiet_s, timeout_s=timeout_s)

    def close(self) -> None:
        """Stop serving and close the database."""
        self.stop()
        with self._lock:
            self._db.close()

    def __enter__(self) -> "DemoSite":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- settings ------------------------------------------------------------------
    @property
    def today(self) -> date:
        """The server's clock."""
        with self._lock:
            return self._today

    @property
    def variant(self) -> str:
        """Current UI variant (one of :data:`VARIANTS`)."""
        with self._lock:
            return self._variant

    @property
    def tweaks(self) -> tuple[str, ...]:
        """The tweaks of the current variant (:data:`VARIANT_TWEAKS`)."""
        with self._lock:
            return variant_tweaks(self._variant)

    @property
    def latency_ms(self) -> int:
        """Submit latency, ms."""
        return self._latency_ms

    def set_fault(self, fault: Any) -> None:
        """Inject a server fault (:class:`core.sites.faults.ServerFault`), or clear it with None.

        Clearing releases the requests a ``hang`` or ``slow`` fault holds.
        For benchmarks and tests: the engine never sets one.
        """
        old = self._server.fault
        self._server.fault = fault
        if old is not None and old is not fault:
            old.release()

    def set_today(self, d: date) -> None:
        """Set the server's clock (pages read it at load)."""
        with self._lock:
            self._today = d

    def set_variant(self, variant: str) -> None:
        """Switch the UI variant (pages apply it at their next load).

        Raises
        ------
        ValueError
            ``variant`` is not one of :data:`VARIANTS`.
        """
        if variant not in SERVED_VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; expected one of {SERVED_VARIANTS}")
        with self._lock:
            self._variant = variant

    def reset(self, today: date | None = None, *, variant: str | None = None) -> None:
        """Recreate the known state: users, six requests, no sessions, empty logs.

        Parameters
        ----------
        today : date | None
            New clock value; None keeps the current one.
        variant : str | None
            New UI variant; None keeps the current one.
        """
        if variant is not None:
            self.set_variant(variant)
        with self._lock:
            if today is not None:
                self._today = today
            db = self._db
            db.executescript(_SCHEMA)
            db.executemany(
                "INSERT INTO users (username, password, display_name) VALUES (?, ?, ?)",
                [(u, DEMO_PASSWORD, n) for u, n in DEMO_USERS.items()],
            )
            db.executemany(
                "INSERT INTO leave_requests (username, type, start_date, end_date, reason, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(u, t, s, e, r, st, c + "T09:00:00") for u, t, s, e, r, st, c in _SEED_REQUESTS],
            )
            self._activations.clear()
            self._writes.clear()
            self._write_keys.clear()
            self._seq = 0
            self._changed.notify_all()

    # -- ground truth ----------------------------------------------------------------
    def activations(self) -> list[dict[str, Any]]:
        """Activation log since the last reset, ordered by time.

        Page entries: ``{seq, ts, received_ms, source: "page", gt, kind,
        page, client_seq}`` where ``ts`` is the page's clock (ms since the
        epoch) and ``kind`` one of ``click | change | input-commit |
        submit``.  Server entries (``source: "server"``): ``gt`` is
        ``api.login`` / ``api.logout`` / ``api.export`` with ``kind``
        ``login`` / ``logout`` / ``export``; logins carry ``user`` and
        ``outcome`` (``ok | bad_password | unknown_user | locked |
        invalid``).
        """
        with self._lock:
            return sorted((dict(a) for a in self._activations), key=lambda a: (a["ts"], a["seq"]))

    def writes(self) -> list[dict[str, Any]]:
        """Write log since the last reset, in arrival order.

        Each entry: ``{seq, ts, op, ok, status, user, target, client_token,
        duplicate, duplicate_of, duplicate_reason}``; ``op`` is
        ``create_request | approve_request | delete_request | save_report``;
        ``duplicate`` is True when the write repeats an earlier successful
        write (``duplicate_reason``: ``token`` = same client token,
        ``content`` = same data, ``target`` = same row again).
        """
        with self._lock:
            return [dict(w) for w in self._writes]

    def ground_truth_report(self, expected: Iterable[str] | None = None) -> dict[str, Any]:
        """Counts over the ground-truth log.

        Parameters
        ----------
        expected : Iterable[str] | None
            The ``data-gt`` ids (``fnmatch`` patterns allowed, e.g.
            ``"row.*.approve"``) a correct run may activate.  When given, a
            page activation matching none of them is a wrong activation.

        Returns
        -------
        dict
            ``activations`` (page), ``activations_by_gt``, ``login_attempts``,
            ``failed_logins``, ``exports``, ``writes`` (successful),
            ``failed_writes``, ``duplicate_writes``, ``writes_by_op``,
            ``duplicates`` (entries); with ``expected`` also
            ``wrong_activations`` (count), ``wrong`` (gt ids in order) and
            ``missing`` (expected patterns never activated).
        """
        acts = self.activations()
        writes = self.writes()
        page = [a for a in acts if a["source"] == "page"]
        server = [a for a in acts if a["source"] == "server"]
        logins = [a for a in server if a["kind"] == "login"]
        report: dict[str, Any] = {
            "activations": len(page),
            "activations_by_gt": dict(Counter(a["gt"] for a in page)),
            "login_attempts": len(logins),
            "failed_logins": sum(a["outcome"] != "ok" for a in logins),
            "exports": sum(a["kind"] == "export" for a in server),
            "writes": sum(w["ok"] for w in writes),
            "failed_writes": sum(not w["ok"] for w in writes),
            "duplicate_writes": sum(w["duplicate"] for w in writes),
            "writes_by_op": dict(Counter(w["op"] for w in writes if w["ok"])),
            "duplicates": [w for w in writes if w["duplicate"]],
        }
        if expected is not None:
            patterns = list(expected)
            wrong = [a["gt"] for a in page if not any(fnmatch.fnmatchcase(a["gt"], p) for p in patterns)]
            seen = {a["gt"] for a in page}
            report["expected"] = patterns
            report["wrong_activations"] = len(wrong)
            report["wrong"] = wrong
            report["missing"] = [p for p in patterns if not any(fnmatch.fnmatchcase(g, p) for g in seen)]
        return report

    def wait_for_activation(self, gt: str, *, kind: str | None = None, count: int = 1,
                            timeout_s: float = 5.0) -> list[dict[str, Any]]:
        """Block until ``count`` activations of ``gt`` (and ``kind``) are logged.

        Page activations arrive asynchronously (beacons); use this instead
        of sleeping.  ``gt`` may be an ``fnmatch`` pattern.

        Returns
        -------
        list[dict]
            The matching entries.

        Raises
        ------
        TimeoutError
            Not enough matching entries within ``timeout_s`` seconds.
        """
        def matching() -> list[dict[str, Any]]:
            return [a for a in self._activations if fnmatch.fnmatchcase(a["gt"], gt)
                    and (kind is None or a["kind"] == kind)]

        deadline = time.monotonic() + timeout_s
        with self._changed:
            while len(found := matching()) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{len(found)}/{count} activations of {gt!r} (kind={kind}) logged")
                self._changed.wait(left)
            return sorted((dict(a) for a in found), key=lambda a: (a["ts"], a["seq"]))

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _log_activation(self, entry: dict[str, Any]) -> None:
        with self._lock:
            entry = {"seq": self._next_seq(), "received_ms": _now_ms(), **entry}
            entry.setdefault("ts", entry["received_ms"])
            self._activations.append(entry)
            self._changed.notify_all()

    def _log_write(self, op: str, *, ok: bool, status: int, user: str | None, target: Any = None,
                   client_token: str | None = None, keys: Iterable[tuple[str, ...]] = ()) -> dict[str, Any]:
        """Append one write; ``keys`` identify it for duplicate detection (caller holds the lock)."""
        keys = list(keys)
        original = next(((k[0], self._write_keys[k]) for k in keys if k in self._write_keys), None)
        entry = {
            "seq": self._next_seq(), "ts": _now_ms(), "op": op, "ok": ok, "status": status,
            "user": user, "target": target, "client_token": client_token,
            "duplicate": original is not None,
            "duplicate_of": original[1] if original else None,
            "duplicate_reason": original[0] if original else None,
        }
        self._writes.append(entry)
        if ok:
            for k in keys:
                self._write_keys.setdefault(k, entry["seq"])
        self._changed.notify_all()
        return entry

    # -- data ----------------------------------------------------------------------
    def _session_user(self, request: Request) -> sqlite3.Row | None:
        token = request.cookies.get(SESSION_COOKIE)
        if not token:
            return None
        with self._lock:
            return self._db.execute(
                "SELECT u.* FROM sessions s JOIN users u ON u.username = s.username WHERE s.token = ?",
                (token,),
            ).fetchone()

    def _request_rows(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT r.*, u.display_name FROM leave_requests r JOIN users u ON u.username = r.username"
                " ORDER BY r.id"
            ).fetchall()
        return [self._row_json(r) for r in rows]

    @staticmethod
    def _row_json(r: sqlite3.Row) -> dict[str, Any]:
        start, end = date.fromisoformat(r["start_date"]), date.fromisoformat(r["end_date"])
        return {
            "id": r["id"], "ref": f"LR-{r['id']:04d}", "username": r["username"],
            "employee": r["display_name"], "type": r["type"], "type_label": LEAVE_TYPES[r["type"]],
            "start": r["start_date"], "end": r["end_date"], "days": working_days(start, end),
            "reason": r["reason"], "status": r["status"], "status_label": STATUS_LABELS[r["status"]],
            "notify": bool(r["notify"]), "created_at": r["created_at"],
        }

    def _one_request(self, rid: int) -> dict[str, Any] | None:
        with self._lock:
            r = self._db.execute(
                "SELECT r.*, u.display_name FROM leave_requests r JOIN users u ON u.username = r.username"
                " WHERE r.id = ?", (rid,),
            ).fetchone()
        return self._row_json(r) if r else None

    def _csv(self) -> tuple[str, int]:
        rows = self._request_rows()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\r\n")
        w.writerow(["Ref", "Employee", "Type", "Start", "End", "Days", "Status", "Reason"])
        for r in rows:
            w.writerow([r["ref"], r["employee"], r["type_label"], r["start"], r["end"], r["days"],
                        r["status_label"], r["reason"]])
        return buf.getvalue(), len(rows)

    def _stamp(self) -> str:
        return f"{self._today.isoformat()}T{datetime.now().strftime('%H:%M:%S')}"

    def _config(self, request: Request) -> dict[str, Any]:
        user = self._session_user(request)
        with self._lock:
            return {
                "app": "LeaveDesk", "variant": self._variant, "tweaks": list(variant_tweaks(self._variant)),
                "today": self._today.isoformat(),
                "latency_ms": self._latency_ms,
                "leave_types": [{"value": k, "label": v} for k, v in LEAVE_TYPES.items()],
                "user": {"username": user["username"], "name": user["display_name"]} if user else None,
            }

    # -- routes --------------------------------------------------------------------
    def _register_routes(self) -> None:
        r = self._server.route
        r("GET", "/", self._page_root)
        r("GET", "/login", lambda req: self._page(req, "login.html", auth=False))
        r("GET", "/requests", lambda req: self._page(req, "requests.html"))
        r("GET", "/requests/new", lambda req: self._page(req, "new.html"))
        r("GET", "/favicon.ico", lambda req: file_response(DEMO_ROOT / "static" / "favicon.svg"))
        r("GET", "/api/config", lambda req: Response.json(self._config(req)))
        r("GET", "/api/config.js", self._api_config_js)
        r("GET", "/api/session", self._api_session)
        r("POST", "/api/login", self._api_login)
        r("POST", "/api/logout", self._api_logout)
        r("GET", "/api/requests", self._api_list)
        r("POST", "/api/requests", self._api_create)
        r("POST", "/api/requests/{rid}/approve", self._api_approve)
        r("DELETE", "/api/requests/{rid}", self._api_delete)
        r("GET", "/api/reports/export", self._api_export)
        r("GET", "/api/reports", self._api_reports)
        r("POST", "/api/reports", self._api_save_report)
        r("GET", "/api/clock", lambda req: Response.json({"today": self.today.isoformat()}))
        r("POST", "/api/clock", self._api_set_clock)
        r("POST", "/api/reset", self._api_reset)
        r("POST", "/api/entries/restore", self._api_restore_entry)
        r("POST", "/__gt/activation", self._gt_activation)
        r("GET", "/__gt/log", lambda req: Response.json({"activations": self.activations(), "writes": self.writes()}))
        r("GET", "/__gt/report", self._gt_report)

    def _page_root(self, request: Request) -> Response:
        return Response.redirect("/requests" if self._session_user(request) else "/login")

    def _page(self, request: Request, name: str, *, auth: bool = True) -> Response:
        if auth and self._session_user(request) is None:
            return Response.redirect("/login?next=" + request.path)
        return file_response(DEMO_ROOT / "pages" / name)

    def _api_config_js(self, request: Request) -> Response:
        cfg = json.dumps(self._config(request), ensure_ascii=False).replace("</", "<\\/")
        js = (f"window.DEMO_CONFIG = {cfg};\n"
              "document.documentElement.dataset.variant = window.DEMO_CONFIG.variant;\n"
              "document.documentElement.dataset.tweaks = window.DEMO_CONFIG.tweaks.join(' ');\n")
        return Response.text(js, content_type="text/javascript; charset=utf-8")

    @staticmethod
    def _body(request: Request) -> dict[str, Any] | None:
        try:
            data = request.json()
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def _api_session(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        return Response.json({"user": {"username": user["username"], "name": user["display_name"]}})

    def _api_login(self, request: Request) -> Response:
        body = self._body(request) or {}
        username = str(body.get("username", "")).strip().lower()
        password = str(body.get("password", ""))
        with self._lock:
            user = self._db.execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
            if not username or not password:
                outcome, resp = "invalid", Response.error(400, "Enter your user name and password.")
            elif user is None:
                outcome, resp = "unknown_user", Response.error(
                    401, "Incorrect user name or password.", code="bad_credentials")
            elif user["locked"]:
                outcome, resp = "locked", self._locked_response()
            elif not secrets.compare_digest(password, user["password"]):
                failed = user["failed_attempts"] + 1
                locked = failed >= MAX_FAILED_LOGINS
                self._db.execute("UPDATE users SET failed_attempts = ?, locked = ? WHERE username = ?",
                                 (failed, int(locked), username))
                if locked:
                    outcome, resp = "locked", self._locked_response()
                else:
                    left = MAX_FAILED_LOGINS - failed
                    outcome, resp = "bad_password", Response.error(
                        401, f"Incorrect user name or password. {left} attempt{'s' if left != 1 else ''} "
                             "left before the account is locked.",
                        code="bad_credentials", attempts_left=left)
            else:
                token = secrets.token_urlsafe(24)
                self._db.execute("UPDATE users SET failed_attempts = 0 WHERE username = ?", (username,))
                self._db.execute("INSERT INTO sessions (token, username) VALUES (?, ?)", (token, username))
                outcome = "ok"
                resp = Response.json({"user": {"username": username, "name": user["display_name"]}}).with_headers(
                    ("Set-Cookie", f"{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax"))
            self._log_activation({"source": "server", "gt": "api.login", "kind": "login",
                                  "user": username, "outcome": outcome})
        return resp

    @staticmethod
    def _locked_response() -> Response:
        return Response.error(
            423, "Account locked", code="locked",
            message="Too many failed sign-in attempts. Ask an administrator to unlock your account.")

    def _api_logout(self, request: Request) -> Response:
        user = self._session_user(request)
        with self._lock:
            self._db.execute("DELETE FROM sessions WHERE token = ?", (request.cookies.get(SESSION_COOKIE, ""),))
            self._log_activation({"source": "server", "gt": "api.logout", "kind": "logout",
                                  "user": user["username"] if user else None})
        return Response.json({"ok": True}).with_headers(
            ("Set-Cookie", f"{SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax"))

    def _api_list(self, request: Request) -> Response:
        if self._session_user(request) is None:
            return Response.error(401, "Not signed in")
        return Response.json({"requests": self._request_rows(), "today": self.today.isoformat()})

    def _validate(self, body: dict[str, Any]) -> dict[str, str]:
        errors: dict[str, str] = {}
        if body.get("type") not in LEAVE_TYPES:
            errors["type"] = "Choose a leave type."
        start, end = _parse_date(body.get("start")), _parse_date(body.get("end"))
        if start is None:
            errors["start"] = "Enter the start date as YYYY-MM-DD."
        elif start < self.today:
            errors["start"] = "The start date cannot be in the past."
        if end is None:
            errors["end"] = "Enter the end date as YYYY-MM-DD."
        elif start is not None and end < start:
            errors["end"] = "The end date must be on or after the start date."
        reason = body.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            errors["reason"] = "Enter a reason."
        elif len(reason) > 500:
            errors["reason"] = "Keep the reason under 500 characters."
        return errors

    def _api_create(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        if self._latency_ms > 0:  # outside the lock: concurrent submits overlap like on a real server
            time.sleep(self._latency_ms / 1000.0)
        body = self._body(request)
        token = str((body or {}).get("client_token") or "") or None
        with self._lock:
            if body is None:
                self._log_write("create_request", ok=False, status=400, user=user["username"], client_token=token)
                return Response.error(400, "The request body must be a JSON object.")
            errors = self._validate(body)
            if errors:
                self._log_write("create_request", ok=False, status=422, user=user["username"], client_token=token)
                return Response.error(422, "Please correct the highlighted fields.", fields=errors)
            reason = body["reason"].strip()
            cur = self._db.execute(
                "INSERT INTO leave_requests (username, type, start_date, end_date, reason, status, notify,"
                " created_at, client_token) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?)",
                (user["username"], body["type"], body["start"], body["end"], reason,
                 int(bool(body.get("notify", True))), self._stamp(), token),
            )
            rid = int(cur.lastrowid)
            keys = [("content", "create", user["username"], body["type"], body["start"], body["end"], reason)]
            if token:
                keys.insert(0, ("token", "create", token))
            self._log_write("create_request", ok=True, status=201, user=user["username"], target=rid,
                            client_token=token, keys=keys)
            return Response.json({"request": self._one_request(rid)}, 201)

    def _target(self, request: Request) -> int | None:
        try:
            return int(request.params["rid"])
        except (KeyError, ValueError):
            return None

    def _api_approve(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        rid = self._target(request)
        with self._lock:
            row = self._one_request(rid) if rid is not None else None
            keys = [("target", "approve", str(rid))]
            if row is None:
                self._log_write("approve_request", ok=False, status=404, user=user["username"], target=rid, keys=keys)
                return Response.error(404, "No such request.")
            if row["status"] != "pending":
                self._log_write("approve_request", ok=False, status=409, user=user["username"], target=rid, keys=keys)
                return Response.error(409, f"{row['ref']} is already {row['status']}.")
            self._db.execute("UPDATE leave_requests SET status = 'approved' WHERE id = ?", (rid,))
            self._log_write("approve_request", ok=True, status=200, user=user["username"], target=rid, keys=keys)
            return Response.json({"request": self._one_request(rid)})

    def _api_delete(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        rid = self._target(request)
        with self._lock:
            row = self._one_request(rid) if rid is not None else None
            keys = [("target", "delete", str(rid))]
            if row is None:
                self._log_write("delete_request", ok=False, status=404, user=user["username"], target=rid, keys=keys)
                return Response.error(404, "No such request.")
            self._db.execute("DELETE FROM leave_requests WHERE id = ?", (rid,))
            self._log_write("delete_request", ok=True, status=200, user=user["username"], target=rid, keys=keys)
            return Response.json({"deleted": row})

    def _api_export(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        text, count = self._csv()
        self._log_activation({"source": "server", "gt": "api.export", "kind": "export",
                              "user": user["username"], "rows": count})
        name = f"leave-report-{self.today.isoformat()}.csv"
        return Response.text(text, content_type="text/csv; charset=utf-8", headers=(
            ("Content-Disposition", f'attachment; filename="{name}"'), ("X-Row-Count", str(count))))

    def _api_reports(self, request: Request) -> Response:
        if self._session_user(request) is None:
            return Response.error(401, "Not signed in")
        with self._lock:
            rows = self._db.execute("SELECT id, username, created_at, row_count FROM saved_reports ORDER BY id").fetchall()
        return Response.json({"reports": [{**dict(r), "ref": f"RPT-{r['id']:04d}"} for r in rows]})

    def _api_save_report(self, request: Request) -> Response:
        user = self._session_user(request)
        if user is None:
            return Response.error(401, "Not signed in")
        with self._lock:
            text, count = self._csv()
            cur = self._db.execute(
                "INSERT INTO saved_reports (username, created_at, row_count, csv) VALUES (?, ?, ?, ?)",
                (user["username"], self._stamp(), count, text))
            rid = int(cur.lastrowid)
            digest = hashlib.sha1(text.encode("utf-8")).hexdigest()
            self._log_write("save_report", ok=True, status=201, user=user["username"], target=rid,
                            keys=[("content", "save_report", digest)])
            return Response.json({"report": {"id": rid, "ref": f"RPT-{rid:04d}", "rows": count}}, 201)

    def _api_restore_entry(self, request: Request) -> Response:
        """``POST /api/entries/restore {field}``: the focus-popup's "Fill it in" - a write of its own
        (op ``restore_entry``), never one a demo flow makes: the judge counts it as an unexpected write."""
        user = self._session_user(request)
        field = str((self._body(request) or {}).get("field", ""))[:40]
        with self._lock:
            self._log_write("restore_entry", ok=True, status=200, user=user["username"] if user else None,
                            target=field)
        return Response.json({"restored": field})

    def _api_set_clock(self, request: Request) -> Response:
        d = _parse_date((self._body(request) or {}).get("today"))
        if d is None:
            return Response.error(400, "Send {\"today\": \"YYYY-MM-DD\"}.")
        self.set_today(d)
        return Response.json({"today": d.isoformat()})

    def _api_reset(self, request: Request) -> Response:
        body = self._body(request) or {}
        today = _parse_date(body.get("today")) if body.get("today") else None
        variant = body.get("variant")
        if variant is not None and variant not in SERVED_VARIANTS:
            return Response.error(400, f"Unknown variant; expected one of {list(SERVED_VARIANTS)}.")
        self.reset(today, variant=variant)
        return Response.json({"today": self.today.isoformat(), "variant": self.variant})

    def _gt_activation(self, request: Request) -> Response:
        body = self._body(request)
        gt = (body or {}).get("gt")
        kind = (body or {}).get("kind")
        if not isinstance(gt, str) or not gt or len(gt) > 200 or kind not in ACTIVATION_KINDS:
            return Response.error(400, "Expected {gt, kind, ts}.")
        entry: dict[str, Any] = {"source": "page", "gt": gt, "kind": kind,
                                 "page": str(body.get("page", ""))[:200]}
        if isinstance(body.get("ts"), (int, float)):
            entry["ts"] = float(body["ts"])
        if isinstance(body.get("n"), int):
            entry["client_seq"] = body["n"]
        self._log_activation(entry)
        return Response.empty(204)

    def _gt_report(self, request: Request) -> Response:
        expected = request.query.get("expected")
        if expected is not None:
            expected = [p for v in expected for p in v.split(",") if p]
        return Response.json(self.ground_truth_report(expected))


def _interrupted(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _stop_on_sigterm() -> Callable[[], None]:
    """SIGTERM stops the server as Ctrl-C does (report printed, exit 0) until the returned function puts the
    previous handler back: a parent that runs it in the background of a non-interactive shell, where SIGINT is
    ignored, stops it with SIGTERM (the exported tests' fixture).  Only on the main thread (the signal
    module's rule); elsewhere nothing changes."""
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, _interrupted)
    return lambda: signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None, *, stop: Callable[[], bool] | None = None) -> int:
    """Serve the demo until Ctrl-C or SIGTERM: ``python -m core.sites.demo [options]``.

    Prints the URL, the demo accounts and, on exit, the ground-truth report.
    """
    p = argparse.ArgumentParser(prog="python -m core.sites.demo", description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (default: a free one)")
    p.add_argument("--today", type=date.fromisoformat, default=DEFAULT_TODAY, help="server date, YYYY-MM-DD")
    p.add_argument("--latency-ms", type=int, default=800, help="submit latency in ms (default 800)")
    p.add_argument("--variant", choices=SERVED_VARIANTS, default="baseline")
    p.add_argument("--db", type=Path, default=None, help="SQLite file (default: in memory)")
    args = p.parse_args(argv)
    site = DemoSite(args.db, today=args.today, latency_ms=args.latency_ms, variant=args.variant, port=args.port)
    site.start()
    restore = _stop_on_sigterm()
    users = ", ".join(f"{u} / {DEMO_PASSWORD}" for u in DEMO_USERS)
    try:  # the URL is printed inside: a Ctrl-C right after it is read still stops cleanly
        print(f"LeaveDesk demo at {site.url('/login')}  (variant {site.variant}, today {site.today}, "
              f"latency {site.latency_ms} ms)\nUsers: {users}\nCtrl-C to stop.", flush=True)
        while not (stop and stop()):
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass
    finally:
        restore()
        rep = site.ground_truth_report()
        site.close()
    print(f"Stopped. Ground truth: {rep['activations']} activations, {rep['writes']} writes, "
          f"{rep['duplicate_writes']} duplicate writes, {rep['failed_logins']} failed logins.", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
