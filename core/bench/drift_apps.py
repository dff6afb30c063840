"""The third-party apps of ``steadyhand bench drift --app NAME``: what is installed, served and done, and the pure
judgement of a replay against the app's own database.

Each :class:`AppSpec` names a small app of the benchmark's own (``core/bench/drift_servers/*_app.py``: one
``item`` table with CRUD views made by the framework) and the releases it runs on, oldest first: the flow is
recorded once on the oldest (:attr:`AppSpec.recorded_on`) and replayed on each (the oldest included, as the
sanity row), at the server's root and again under :data:`PREFIX` (the same flow, another ``base_url``).

The **ground truth** of a step is the state a scripted user reaches with the intended action
(:class:`Action`, CSS written for each release's markup) on a fresh database: :class:`AppState` = the URL path
relative to the app's mount point, the rows of the ``item`` table (read from SQLite, not the page), and the
values of the form's fields (``null`` when the page has no such field).  A replayed attempt is judged by
:func:`judge_attempts`:

* **wrong**: an acted attempt reached a state one part of which (path, rows, fields) is neither the step's
  intended before- nor after-state: the engine did something else than the step;
* **missed**: the attempt changed nothing the step should have changed (it equals the before-state);
* **repeated effects**: rows beyond the most of each row content that the intended before/after states hold
  (:func:`repeated_rows`: a Save done twice is one repeated effect);
* **retried after an effect**: the step was attempted again although an earlier attempt had already changed
  the state (path, rows or fields): "an effect seen is an effect done" (a second click on a Delete whose
  confirmation box had opened, even when the database shows nothing twice).

Errors: none here (pure); the runner (:mod:`core.bench.drift_app_run`) raises DriftEnvError / DriftSetupError.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence
from urllib.parse import urlsplit

__all__ = [
    "AppVersion", "Action", "AppSpec", "AppState", "StepJudgement", "APPS", "PREFIX", "ITEM_NAME", "ITEM_QTY",
    "ITEM_QTY_EDITED", "relative_path", "repeated_rows", "judge_attempts", "script_steps_passed", "step_lines",
    "FIELDS_JS", "GRADIO_FIELDS_JS", "heal_summary",
]

#: The path prefix of the second replay of each flow (the app mounted there by a WSGI dispatcher).
PREFIX = "/staging"
#: The row the flows add, and the quantities before and after the edit.
ITEM_NAME, ITEM_QTY, ITEM_QTY_EDITED = "Walnut desk", "7", "12"

#: Reads the form fields a step may change (``null`` when absent); of the password only whether it is
#: filled; ``dialog`` "open" while a modal box is shown.
FIELDS_JS = """() => {
  const v = s => { const e = document.querySelector(s); return e ? e.value : null; };
  const pw = document.querySelector('input#password');
  return {username: v('input#username'), password: pw ? (pw.value ? 'filled' : '') : null,
          name: v('input#name'), quantity: v('input#quantity'),
          dialog: [...document.querySelectorAll('.modal, [role=dialog], dialog')].some(
            m => m.offsetParent !== null || getComputedStyle(m).position === 'fixed' && getComputedStyle(m).display !== 'none'
          ) ? 'open' : null};
}"""


#: The Gradio app's fields (``elem_id`` sits on the block around the ``textarea`` / ``input``): name, quantity
#: and the result line the Save button fills.
GRADIO_FIELDS_JS = """() => {
  const v = s => { const e = document.querySelector(s); return e ? e.value : null; };
  return {name: v('#name textarea, #name input'), quantity: v('#quantity textarea, #quantity input'),
          result: v('#result textarea, #result input')};
}"""


@dataclass(frozen=True, slots=True)
class AppVersion:
    """One release of an app as the bench installs it: ``label`` (table row, e.g. ``1.6.1-bootstrap3``),
    ``venv`` (folder under the drift cache, shared by labels of one release), ``package`` and ``version``
    (what must be installed there), ``requirements`` (pip arguments: the release and the pins that make it
    import on Python 3.11) and ``env`` (extra server settings, e.g. the template mode)."""

    label: str
    venv: str
    package: str
    version: str
    requirements: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Action:
    """One intended user action: ``kind`` click / input; ``selector`` CSS (a comma list covers the markup
    of several releases) matching exactly one element, or among its matches the one whose whole text is
    ``text``; ``value`` typed by an input (replacing the field's value); ``accept_dialog``: the click opens
    the browser's own confirm() box and the user presses OK."""

    key: str
    title: str
    kind: str
    selector: str
    text: str = ""
    value: str = ""
    accept_dialog: bool = False


@dataclass(frozen=True, slots=True)
class AppSpec:
    """An app of the bench: ``key`` (``--app``), ``title``, ``project`` (folder holding the recorded flow),
    ``flow``, ``server`` (script in core/bench/drift_servers), ``start_path`` (where the flow starts,
    relative to the mount point), ``versions`` (oldest first: recorded on the first), ``actions`` (one per
    recorded step), ``password`` (the flow signs in as the generated admin), ``fields_js`` (reads the form's
    fields for the ground truth: :data:`FIELDS_JS` unless the app's markup needs its own)."""

    key: str
    title: str
    project: str
    flow: str
    server: str
    start_path: str
    versions: tuple[AppVersion, ...]
    actions: tuple[Action, ...]
    password: bool = False
    fields_js: str = FIELDS_JS

    @property
    def recorded_on(self) -> AppVersion:
        return self.versions[0]

    def version(self, label: str) -> AppVersion:
        """The release labelled ``label`` (KeyError naming the known labels)."""
        for v in self.versions:
            if v.label == label:
                return v
        raise KeyError(f"{self.key}: no version {label!r} (known: {', '.join(v.label for v in self.versions)})")


@dataclass(frozen=True, slots=True)
class AppState:
    """What a step is judged by: ``path`` relative to the app's mount point (query and fragment dropped),
    ``rows`` of the item table as ``(id, name, quantity)`` sorted by id, ``fields`` the form's field values
    as sorted ``(field, value-or-None)`` pairs."""

    path: str
    rows: tuple[tuple[Any, ...], ...]
    fields: tuple[tuple[str, str | None], ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": [list(r) for r in self.rows], "fields": dict(self.fields)}


def relative_path(url: str, base_url: str) -> str:
    """The path of ``url`` relative to ``base_url``'s path (pure); ``/`` at least.

    ``relative_path("http://h:1/staging/item/", "http://h:1/staging")`` -> ``"/item/"``; a URL outside the
    base's path keeps its whole path (it is then judged as it is: the app left its mount point).
    """
    path = urlsplit(url).path or "/"
    base = urlsplit(base_url).path.rstrip("/")
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):] or "/"
    return re.sub(r"/{2,}", "/", path)


def _content(rows: Sequence[Sequence[Any]]) -> Counter:
    return Counter(tuple(r[1:]) for r in rows)


def repeated_rows(got: Sequence[Sequence[Any]], *allowed: Sequence[Sequence[Any]]) -> int:
    """Rows of ``got`` beyond the most copies of the same content (all columns but the id) any ``allowed``
    state holds (pure).  A row added twice where the truth adds it once counts 1."""
    most: Counter = Counter()
    for rows in allowed:
        for key, n in _content(rows).items():
            most[key] = max(most[key], n)
    return sum(max(0, n - most[key]) for key, n in _content(got).items() if n > 1 or most[key])


@dataclass
class StepJudgement:
    """The judgement of one step's acted attempts: ``wrong`` (and ``diff`` saying how), ``missed`` (no
    intended change), ``repeated`` rows, ``retried_after_effect``, ``acted`` attempts judged."""

    acted: int = 0
    wrong: bool = False
    missed: bool = False
    repeated: int = 0
    retried_after_effect: bool = False
    diff: list[str] = field(default_factory=list)


def judge_attempts(before: AppState, after: AppState, attempts: Sequence[AppState]) -> StepJudgement:
    """Judge the states reached after each acted attempt of a step against its truth (see the module docstring)."""
    out = StepJudgement(acted=len(attempts))
    for got in attempts:
        diff = []
        if got.path not in (before.path, after.path):
            diff.append(f"path {got.path!r} instead of {after.path!r}")
        if got.rows not in (before.rows, after.rows):
            diff.append(f"rows {[list(r) for r in got.rows]} instead of {[list(r) for r in after.rows]}")
        want_f, was_f = dict(after.fields), dict(before.fields)
        for name, value in got.fields:
            if value is not None and value not in (want_f.get(name), was_f.get(name)):
                diff.append(f"field {name} holds {value!r} instead of {want_f.get(name)!r}")
        if diff and not out.wrong:
            out.wrong, out.diff = True, diff
        out.repeated = max(out.repeated, repeated_rows(got.rows, before.rows, after.rows))
    if attempts and before != after and all(a == before for a in attempts):
        out.missed = True
    out.retried_after_effect = any(a != before for a in attempts[:-1])
    return out


def heal_summary(heals: Sequence[tuple[str, float]]) -> str:
    """``[("semantic", 0.31), ("fuzzy", 0.12)]`` -> ``"semantic 0.31, fuzzy 0.12"`` (``-`` when none)."""
    return ", ".join(f"{level} {margin:.2f}" for level, margin in heals) or "-"


_STEP_COMMENT = re.compile(r"^\s*# (\S+): ")


def step_lines(source: str) -> list[int]:
    """Line numbers (1-based) of the ``# <step id>: <title>`` comments that open each step of an exported
    flow (``core.export.playwright_test``), in order (pure)."""
    return [i + 1 for i, line in enumerate(source.splitlines()) if _STEP_COMMENT.match(line)]


def script_steps_passed(source: str, file_name: str, output: str, returncode: int) -> int:
    """How many steps of an exported script passed, from pytest's output (pure).

    All of them when pytest exited 0; else the steps whose opening comment lies before the line of
    ``file_name`` that the traceback names last (the failing statement).  0 when no such line is named
    (the script failed before its first step).
    """
    starts = step_lines(source)
    if returncode == 0:
        return len(starts)
    lines = [int(n) for n in re.findall(rf"{re.escape(file_name)}:(\d+)", output)]
    if not lines:
        return 0
    failing = lines[-1]
    return max(0, sum(1 for s in starts if s < failing) - 1)


_FAB_PINS_3 = ("flask<2", "werkzeug<2.1", "jinja2<3.1", "itsdangerous<2.1", "markupsafe<2.1", "sqlalchemy<1.4",
               "flask-sqlalchemy<2.5", "wtforms<3", "marshmallow<4", "email_validator<2")
_FAB_PINS_40 = ("flask<2.1", "werkzeug<2.1", "jinja2<3.1", "itsdangerous<2.1", "sqlalchemy<1.5", "flask-sqlalchemy<3",
                "wtforms<3.1", "marshmallow<4")
_FAB_PINS_45 = ("flask<3", "werkzeug<3", "sqlalchemy<2", "flask-sqlalchemy<3.1", "marshmallow<4")


def _fab(version: str, pins: tuple[str, ...]) -> AppVersion:
    return AppVersion(version, f"fab-{version}", "flask-appbuilder", version, (f"flask-appbuilder=={version}", *pins))


_SAVE = 'form button[type="submit"], form input[type="submit"]'

FAB = AppSpec(
    key="fab", title="Flask-AppBuilder", project="projects/fab", flow="items_crud", server="fab_app.py",
    start_path="/login/", password=True,
    versions=(_fab("3.4.5", _FAB_PINS_3), _fab("4.0.0", _FAB_PINS_40), _fab("4.5.4", _FAB_PINS_45)),
    actions=(
        Action("user", "Type the user name", "input", "input#username", value="admin"),
        Action("password", "Type the password", "input", "input#password", value="{password}"),
        Action("sign_in", "Sign in", "click", 'form[name="login"] [type="submit"]'),
        Action("menu", "Open Items from the menu", "click", ".navbar a", text="Items"),
        Action("add", "Add a new item", "click", 'a[href*="/itemview/add"]'),
        Action("name", "Type the item's name", "input", "input#name", value=ITEM_NAME),
        Action("qty", "Type the quantity", "input", "input#quantity", value=ITEM_QTY),
        Action("save", "Save the new item", "click", _SAVE),
        Action("edit", "Edit the item", "click", 'a[href*="/itemview/edit/"]'),
        Action("qty2", "Change the quantity", "input", "input#quantity", value=ITEM_QTY_EDITED),
        Action("save2", "Save the change", "click", _SAVE),
        Action("delete", "Delete the item", "click", "a.confirm"),
        Action("confirm", "Confirm the deletion", "click", "#modal-confirm-ok"),
    ),
)

_FA_PINS_16 = ("flask<2.3", "werkzeug<2.3", "sqlalchemy<2", "flask-sqlalchemy<3.1", "wtforms<3.1")
_FA_16 = ("flask-admin==1.6.1", *_FA_PINS_16)
_FA_22 = ("flask-admin[sqlalchemy]==2.2.1", "flask-sqlalchemy")

FLASK_ADMIN = AppSpec(
    key="flask-admin", title="Flask-Admin", project="projects/flask-admin", flow="items_crud",
    server="flask_admin_app.py", start_path="/admin/",
    versions=(
        AppVersion("1.6.1-bootstrap3", "flask-admin-1.6.1", "flask-admin", "1.6.1", _FA_16,
                   (("DRIFT_TEMPLATE_MODE", "bootstrap3"),)),
        AppVersion("1.6.1-bootstrap4", "flask-admin-1.6.1", "flask-admin", "1.6.1", _FA_16,
                   (("DRIFT_TEMPLATE_MODE", "bootstrap4"),)),
        AppVersion("2.2.1-bootstrap4", "flask-admin-2.2.1", "flask-admin", "2.2.1", _FA_22,
                   (("DRIFT_TEMPLATE_MODE", "bootstrap4"),)),
    ),
    actions=(
        Action("menu", "Open Items from the menu", "click", ".navbar a", text="Items"),
        Action("create", "Create an item", "click", 'a[href*="/admin/item/new/"]'),
        Action("name", "Type the item's name", "input", "input#name", value=ITEM_NAME),
        Action("qty", "Type the quantity", "input", "input#quantity", value=ITEM_QTY),
        Action("save", "Save the new item", "click", 'form input[type="submit"][value="Save"], form button[type="submit"]'
               ':text-is("Save")'),
        Action("edit", "Edit the item", "click", 'a[href*="/admin/item/edit/"]'),
        Action("qty2", "Change the quantity", "input", "input#quantity", value=ITEM_QTY_EDITED),
        Action("save2", "Save the change", "click", 'form input[type="submit"][value="Save"], form button[type="submit"]'
               ':text-is("Save")'),
        # Deleting a row opens the browser's own confirm() box, which neither the recorder nor the replay
        # answers (Playwright dismisses it): no delete step until they do (see the report of 2026-12-05).
    ),
)

# Gradio 3.x pins the web stack of its time (Starlette's old TemplateResponse, httpx before 0.28, the Hub
# client that still has HfFolder); 4.x needs that Hub client too, and the FastAPI and Starlette of its time
# (Starlette 1.x dropped TemplateResponse(name, context): every page answered 500 "unhashable type: 'dict'");
# 5.x installs as it is (Python 3.11).
_GR_3 = ("gradio==3.50.2", "fastapi<0.105", "starlette<0.28", "httpx<0.28", "huggingface_hub<0.26", "pydantic<2.6")
_GR_4 = ("gradio==4.44.1", "huggingface_hub<0.26", "fastapi<0.113", "starlette<0.39")
_GR_5 = ("gradio==5.50.0",)
_GR_FIELD = "#{0} textarea, #{0} input"

GRADIO = AppSpec(
    key="gradio", title="Gradio", project="projects/gradio", flow="save_items", server="gradio_app.py",
    start_path="/", fields_js=GRADIO_FIELDS_JS,
    versions=(AppVersion("3.50.2", "gradio-3.50.2", "gradio", "3.50.2", _GR_3),
              AppVersion("4.44.1", "gradio-4.44.1", "gradio", "4.44.1", _GR_4),
              AppVersion("5.50.0", "gradio-5.50.0", "gradio", "5.50.0", _GR_5)),
    actions=(
        Action("name", "Type the item's name", "input", _GR_FIELD.format("name"), value=ITEM_NAME),
        Action("qty", "Type the quantity", "input", _GR_FIELD.format("quantity"), value=ITEM_QTY),
        Action("save", "Save the item", "click", "button#save"),
        Action("qty2", "Change the quantity", "input", _GR_FIELD.format("quantity"), value=ITEM_QTY_EDITED),
        Action("save2", "Save it again with the new quantity", "click", "button#save"),
    ),
)

#: The apps by ``--app`` key (datasette has its own runner, core.bench.drift).
APPS: dict[str, AppSpec] = {FAB.key: FAB, FLASK_ADMIN.key: FLASK_ADMIN, GRADIO.key: GRADIO}


def state_json(state: AppState | None) -> dict[str, Any] | None:
    return None if state is None else state.to_json_dict()


def as_dict(obj: Any) -> dict[str, Any]:
    return asdict(obj)
