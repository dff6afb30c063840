"""A flow as ordinary Playwright code: a pytest-playwright test, or a plain script (issue 14 part 1, issue 22).

The locator of each step is the one Playwright's codegen would write for the
recorded element, chosen from the step's descriptor in this order (the
first that the descriptor supports wins):

1. test id                -> ``page.get_by_test_id("...")``
   (then, for a step whose selector is chained - ``role=table >> role=link[name="year"]``, ``h3 >> nth=0`` -
   that selector, as public locator calls: the chain says the element alone is not unique on its page)
2. role + accessible name -> ``page.get_by_role("button", name="Sign in")``
   (``exact=True`` unless the recorder looked and saw no other element of the role whose name contains this one, as
   codegen decides; a recorded scope - the row or landmark that makes the target unique - chains first:
   ``page.get_by_role("row", name="Bob").get_by_role("link", name="Edit")``)
   (a name in capitals only, as ``text-transform: uppercase`` shows it, is
   matched case-insensitively as a whole: ``name=re.compile(r"^employee$", re.I)``;
   a password input has no ARIA role, so it falls through to its label)
3. label                  -> ``page.get_by_label("Password")``
   (only when the label is the field's accessible name: a ``<label>`` whose ``for`` names another id, or
   the text beside a field without one, is no label Playwright finds - such a field goes by its CSS)
4. placeholder            -> ``page.get_by_placeholder("YYYY-MM-DD")``
5. text                   -> ``page.get_by_text("...")``
6. CSS                    -> ``page.locator("<the step's CSS selector or css_path>")``

A step without a descriptor (selector-only, before its first run, or imported
from a codegen script) keeps its selector, with Playwright's private
``internal:`` parts written as the public locator calls that make them
(:mod:`core.export.selectors`).  Locators stay strict (Playwright raises when
one matches two elements): the exported test fails rather than click one of
several (never ``.first`` on an action).

What the replay checks after a step, the test checks too (``expect(...)``):
the flow's assertions; the value a fill left in its field and the state a
check / uncheck left; and the step's recorded landing
(:class:`core.domain.AfterState`): the URL path relative to ``base_url``
(ids as wildcards), the main heading (else the title) read loosely as the
replay reads it (case, digits, spacing and quotes folded:
:func:`loose_pattern`), a dialog open (by its title) or closed.

The pytest style is a pytest-playwright test: it takes the plugin's ``page``
and ``base_url`` fixtures, so ``--browser``, ``--base-url``, ``--headed``,
``--tracing``, ``--video``, ``--screenshot`` and ``--output`` work as in any
Playwright suite, and it mixes with a user's own Playwright tests in one
session.  What the plugin does not give lives in one ``conftest.py`` per
export folder (:func:`conftest_source`): Chromium (``STEADYHAND_CHROMIUM``,
else Playwright's own when installed, else the system's on the PATH), the
project's viewport and timeouts, ``base_url`` (``--base-url``, else
``STEADYHAND_BASE_URL``, else the project's), and the ``param`` / ``secret``
fixtures.  Parameters are overridable from the environment
(``STEADYHAND_PARAM_<NAME>``); secrets are read from the environment only
(``STEADYHAND_SECRET_<NAME>``, :func:`core.secrets.env_var_name`) and never
written into a file.  A project on the bundled demo site without a base URL
gets a demo server per pytest session (``python -m core.sites.demo``, one
per xdist worker), reset before each test so no test sees another's writes
or locked accounts; after each test the server's log must show no duplicate
write, else the test fails.  That form needs Steadyhand importable by the
test's Python.

The script style defines ``run(page, base_url, params)`` (what ``steadyhand
bench tweaks`` / ``bench overhead`` time as their plain-script baseline), a
``new_context(browser)`` and a ``main()`` that launches Chromium, runs once
and exits 0 (passed) or 1 (failed, with the error).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.act.landing import base_path, relative_path
from core.domain import AfterState, Assertion, ElementDescriptor, Flow, Step
from core.domain.element import NAMED_BY_AUTHOR
from core.domain.resources import module_name
from core.project import Project
from core.project.params import placeholders
from core.secrets import env_var_name

from .emit import py_comment, py_doc, py_ident, py_str
from .selectors import SelectorError, has_internal, locator_code

__all__ = ["CONFTEST_MARK", "ExportError", "ExportStyle", "LocatorChoice", "choose_locator", "conftest_source",
           "export_flow", "loose_pattern", "param_env_var"]

ExportStyle = Literal["pytest", "script"]

#: Launch arguments of the exported tests: the engine's (core.perception.browser.CHROMIUM_ARGS, copied so the
#: generated file needs nothing of Steadyhand).
_CHROMIUM_ARGS = (
    "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--test-type",
)
#: ARIA roles ``get_by_role`` accepts that a recorded descriptor may carry (WAI-ARIA 1.2 widget, landmark and
#: document-structure roles; "generic", "none", "presentation" and "text" name nothing worth a locator).
_ROLES = frozenset("""
alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox
complementary contentinfo definition deletion dialog directory document emphasis feed figure form grid gridcell
group heading img insertion link list listbox listitem log main marquee math meter menu menubar menuitem
menuitemcheckbox menuitemradio navigation note option paragraph progressbar radio radiogroup region row rowgroup
rowheader scrollbar search searchbox separator slider spinbutton status strong subscript superscript switch tab
table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem
""".split())
#: Names a generated variable must not take (the fixtures and modules of the generated file).
_RESERVED = frozenset({"page", "base_url", "browser", "params", "param", "secret", "os", "re", "sys", "time",
                       "pytest", "expect", "sync_playwright", "run", "main", "argparse", "shutil", "annotations",
                       "select", "signal", "subprocess", "tempfile", "Browser", "BrowserContext", "Page", "BASE_URL",
                       "CHROMIUM", "CHROMIUM_ARGS", "VIEWPORT", "ACTION_TIMEOUT_MS", "NAVIGATION_TIMEOUT_MS",
                       "SITE_ARGS", "SITE_START_S", "SITE_STOP_S", "new_context", "default_params"})
#: First line of a ``conftest.py`` that :func:`conftest_source` wrote (the export command overwrites only those).
CONFTEST_MARK = "# Written by `steadyhand export pytest`"
#: The dialogs a replay counts (``[role=dialog]``, ``[role=alertdialog]``, ``dialog[open]``) as a locator.
_DIALOGS = "page.get_by_role('dialog').or_(page.get_by_role('alertdialog'))"
#: Input types whose value is read back by ``to_have_value`` as typed (a file input's value is a fake path).
_VALUE_TYPES = frozenset({"", "text", "email", "search", "tel", "url", "number", "date", "time", "datetime-local",
                          "month", "week", "color", "range"})
_TOKEN = re.compile(r"\{\{|\}\}|\{(\w+)\}")


class ExportError(ValueError):
    """The flow cannot be exported; the message names the flow, the step and why."""


@dataclass(frozen=True, slots=True)
class LocatorChoice:
    """The locator chosen for a step: ``strategy`` (``test_id | role | label | placeholder | text | css |
    selector``) and ``code``, a Python expression on ``page``."""

    strategy: str
    code: str


def param_env_var(name: str) -> str:
    """Environment variable that overrides parameter ``name`` (``STEADYHAND_PARAM_USER``)."""
    return "STEADYHAND_PARAM_" + re.sub(r"[^A-Z0-9_]", "_", name.upper())


def _var(name: str) -> str:
    """The Python variable of parameter ``name``."""
    return py_ident(name, prefix="param_", reserved=_RESERVED)


def _text_expr(text: str) -> str:
    """A Python expression of ``text`` with its ``{param}`` placeholders as variables (``{{`` is one brace)."""
    parts: list[str] = []
    literal = ""
    pos = 0
    for m in _TOKEN.finditer(text):
        literal += text[pos:m.start()]
        pos = m.end()
        if m.group(1) is None:
            literal += m.group(0)[0]
            continue
        if literal:
            parts.append(_py(literal))
            literal = ""
        parts.append(_var(m.group(1)))
    literal += text[pos:]
    if literal or not parts:
        parts.append(_py(literal))
    return " + ".join(parts)


def _py(value: object) -> str:
    """A Python literal of ``value``: a string through :func:`core.export.emit.py_str`, a list of strings item by
    item, anything else (numbers the exporter computed) by ``repr``."""
    if isinstance(value, str):
        return py_str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_py(v) for v in value) + "]"
    return repr(value)


def _comment(text: str) -> str:
    """``text`` on one line, safe inside a ``#`` comment (:func:`core.export.emit.py_comment`)."""
    return re.sub(r" {2,}", " ", py_comment(text)).strip()


def _doc(text: str) -> str:
    """``text`` on one line, safe inside a generated docstring (:func:`core.export.emit.py_doc`)."""
    return re.sub(r" {2,}", " ", py_doc(text)).strip()


def _shouting(text: str) -> bool:
    """True for a name in capitals only (``"EMPLOYEE"``): what ``text-transform: uppercase`` shows."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters) and not placeholders(text)


def _name_arg(name: str, exact: bool = False) -> str:
    """``name=...`` as codegen writes it: the name as a case-insensitive substring, with ``exact=True`` only when
    the recording saw another element of the role whose name contains this one (:attr:`ElementDescriptor.exact`)."""
    if _shouting(name) and exact:
        return f"name=re.compile({'^' + re.escape(name.lower()) + '$'!r}, re.IGNORECASE)"
    return f"name={_text_expr(name)}" + (", exact=True" if exact else "")


def _exact(exact: bool) -> str:
    return ", exact=True" if exact else ""


def choose_locator(step: Step) -> LocatorChoice | None:
    """The codegen-style locator of ``step``'s target (see the module docstring), None for a targetless step.

    Returns
    -------
    LocatorChoice | None
        Strategy and code; None when the step has neither descriptor nor selector.
    """
    d: ElementDescriptor = step.target
    if d.test_id:
        return LocatorChoice("test_id", f"page.get_by_test_id({_text_expr(d.test_id)})")
    if step.selector and ">>" in step.selector:
        # a chained selector (a scope, an nth) says the element alone is not unique on its page - a facet's
        # link 'year' beside the column header's; the replay's exact level is that selector, and a locator
        # made from the element alone would match both and fail strict mode where the replay passes
        try:
            return LocatorChoice("selector", selector_code(step.selector))
        except ExportError:
            pass  # no public form of one of its parts: the element's own locator below
    is_password = d.tag == "input" and d.type.lower() == "password"
    # within the recorded scope (the row, landmark or labelled container that makes the target unique)
    root = "page"
    if d.scope is not None and d.scope.role in _ROLES and d.scope.name:
        if d.scope.role in _NAMED_BY_AUTHOR:  # a list item's name is no accessible name: match its text instead
            root = (f"page.get_by_role({d.scope.role!r}).filter(has_text=re.compile("
                    f"{_py(_spaced(d.scope.name))}, re.IGNORECASE))")
        else:
            root = f"page.get_by_role({d.scope.role!r}, name={_text_expr(d.scope.name)})"
    if d.role in _ROLES and d.name and not is_password:
        return LocatorChoice("role", f"{root}.get_by_role({d.role!r}, {_name_arg(d.name, d.exact is not False)})")
    if d.label and " ".join(d.name.split()) == " ".join(d.label.split()):
        # only a label that names the field (its accessible name says so: a <label for>, a wrapping label,
        # aria-labelledby) is one get_by_label finds; the text beside a field that has none is not
        return LocatorChoice("label", f"{root}.get_by_label({_text_expr(d.label)}{_exact(d.exact is not False)})")
    if d.placeholder:
        return LocatorChoice("placeholder", f"{root}.get_by_placeholder({_text_expr(d.placeholder)}{_exact(d.exact is not False)})")
    if d.text and d.text.strip():
        return LocatorChoice("text", f"{root}.get_by_text({_text_expr(d.text.strip())}{_exact(d.exact is not False)})")
    css = step.selector if step.selector and _looks_css(step.selector) else d.css_path
    if css:
        return LocatorChoice("css", f"page.locator({_text_expr(css)})")
    if step.selector:
        return LocatorChoice("selector", selector_code(step.selector))
    return None


def selector_code(selector: str) -> str:
    """The locator code of a Playwright selector: ``page.locator("...")``, or for one with ``internal:`` parts
    the public calls that make them (:func:`core.export.selectors.locator_code`).

    Raises
    ------
    ExportError
        An ``internal:`` part has no public form.
    """
    if not has_internal(selector):
        return f"page.locator({_text_expr(selector)})"
    try:
        return locator_code(selector, _text_expr)
    except SelectorError as exc:
        raise ExportError(str(exc)) from None


def _looks_css(selector: str) -> bool:
    """A plain CSS selector (not Playwright's ``role=`` / ``text=`` / ``>>`` syntax)."""
    return (not has_internal(selector) and ">>" not in selector
            and not re.match(r"^\s*(role|text|internal|xpath|css|id|data-testid)\s*=", selector))


def _assertion(a: Assertion, target: str | None, where: str) -> str:
    exp = _text_expr(a.expected)
    if a.kind == "text_appears":
        return f"expect(page.get_by_text({exp}).first).to_be_visible()"
    if a.kind == "text_absent":
        return f"expect(page.get_by_text({exp})).to_have_count(0)"
    if a.kind == "url_contains":
        return f"expect(page).to_have_url(re.compile(re.escape({exp})))"
    loc = selector_code(a.selector) if a.selector else target
    if loc is None:
        raise ExportError(f"{where}: a {a.kind!r} assertion needs a selector or the step's target")
    if a.kind == "count":
        try:
            return f"expect({loc}).to_have_count({int(a.expected)})"
        except ValueError:
            raise ExportError(f"{where}: a count assertion expects a whole number, got {a.expected!r}") from None
    method = {"visible": "to_be_visible()", "hidden": "to_be_hidden()", "enabled": "to_be_enabled()",
              "disabled": "to_be_disabled()", "text_equals": f"to_have_text({exp})",
              "text_contains": f"to_contain_text({exp})", "value": f"to_have_value({exp})"}.get(a.kind)
    if method is None:
        raise ExportError(f"{where}: assertion kind {a.kind!r} has no expect() form")
    return f"expect({loc}).{method}"


_SCROLL = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}
_PLACEHOLDER_SEG = re.compile(r"^\{[^{}]*\}$")


def loose_pattern(text: str) -> str:
    """A regular expression (for ``re.IGNORECASE``) that finds ``text`` as the replay reads a heading, title or
    dialog name (:func:`core.act.after.same_text`): digits as any number, runs of spaces as any space, straight
    and typographic apostrophes alike, a ``{name}`` placeholder as any text; found anywhere in the actual text.

    ``"Alice's 3 requests"`` -> ``"Alice['’‘]s\\s+\\d+\\s+requests"``.
    """
    out: list[str] = []
    for piece in re.split(r"(\{[^{}]*\}|\d+|\s+|['\u2019\u2018])", text.strip()):
        if not piece:
            continue
        if _PLACEHOLDER_SEG.match(piece):
            out.append(".+")
        elif piece.isdigit():
            out.append(r"\d+")
        elif piece.isspace():
            out.append(r"\s+")
        elif piece in "'\u2019\u2018":
            out.append("['\u2019\u2018]")
        else:
            out.append(re.escape(piece))
    return "".join(out)


_NAMED_BY_AUTHOR = NAMED_BY_AUTHOR  # core.domain.element


def _spaced(text: str) -> str:
    """A pattern for ``text`` in an element's text content, where the words may meet with no space between
    them (``<li>Eggs <small>(Produce)</small><button>Delete</button></li>`` reads "Eggs (Produce)Delete")."""
    return r"\s*".join(re.escape(w) for w in text.split())


def _loose(text: str) -> str:
    return f"re.compile({_py(loose_pattern(text))}, re.IGNORECASE)"


def _route_pattern(route: str) -> str:
    """A regular expression of the rest of the URL after ``base_url`` for a recorded route (``/requests/{n}``):
    each ``{...}`` segment one segment, an optional trailing slash, any query or fragment."""
    segs = route.rstrip("/").split("/")
    body = "/".join("[^/?#]+" if _PLACEHOLDER_SEG.match(s) else re.escape(s) for s in segs)
    return body + r"/?(?:[?#].*)?$"


class _Landing:
    """What the previous steps' recorded landings said (a fact is checked again only when it changes)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.route = ""
        self.heading = ""
        self.dialog: bool | None = None

    def lines(self, after: AfterState | None) -> list[str]:
        """``expect(...)`` lines of a step's recorded landing (see the module docstring)."""
        if after is None or after.is_empty:
            return []
        out: list[str] = []
        route = relative_path(after.url_pattern, self.base) if after.url_pattern else ""
        moved = bool(route) and route != self.route
        if moved:
            out.append(f"expect(page).to_have_url(re.compile(re.escape(base_url.rstrip('/')) + "
                       f"{_py(_route_pattern(route))}))")
            self.route = route
        if after.heading and (moved or after.heading != self.heading):
            out.append(f"expect(page.get_by_role('heading', name={_loose(after.heading)}).first).to_be_visible()")
            self.heading = after.heading
        elif after.title and not after.heading and moved:
            out.append(f"expect(page).to_have_title({_loose(after.title)})")
        if after.dialog is True and after.dialog_name:  # named as the replay reads it: label, else its title
            name = _loose(after.dialog_name)
            out.append(f"expect(page.get_by_role('dialog', name={name}).or_(page.get_by_role('alertdialog', "
                       f"name={name})).or_(page.get_by_role('dialog').filter(has_text={name})).first).to_be_visible()")
        elif after.dialog is True:
            out.append(f"expect({_DIALOGS}.first).to_be_visible()")
        elif after.dialog is False and self.dialog:
            out.append(f"expect({_DIALOGS}).to_have_count(0)")
        if after.dialog is not None:
            self.dialog = after.dialog
        if after.field_appeared and after.field_appeared not in ("textbox", "searchbox", "combobox", "spinbutton"):
            out.append(f"expect(page.get_by_label({_loose(after.field_appeared)}).first).to_be_editable()")
        return out


def _value_check(step: Step, loc: str | None, secrets: set[str]) -> list[str]:
    """What a fill / check / uncheck left in its field, as the replay verifies it (a fill the page undid fails):
    ``to_have_value`` for an ``input`` / ``textarea`` the recording names (never for a secret's value, which
    an assertion's message would print), ``to_be_checked`` / ``not_to_be_checked``."""
    if loc is None:
        return []
    kind, d = step.action.kind, step.target
    if kind == "check":
        return [f"expect({loc}).to_be_checked()"]
    if kind == "uncheck":
        return [f"expect({loc}).not_to_be_checked()"]
    value = step.action.value
    if (kind != "input" or not value or any(n in secrets for n in placeholders(value)) or d.tag not in ("input",
            "textarea") or (d.tag == "input" and d.type.lower() not in _VALUE_TYPES)):
        return []
    return [f"expect({loc}).to_have_value({_text_expr(value)})"]


def _step_lines(step: Step, index: int, flow: Flow, landing: _Landing, secrets: set[str]) -> list[str]:
    where = f"{flow.source or flow.name}: step {step.id!r} (#{index + 1})"
    try:
        choice = choose_locator(step)
    except ExportError as exc:
        raise ExportError(f"{where}: {exc}") from None
    loc = choice.code if choice else None
    kind, value = step.action.kind, _text_expr(step.action.value)
    lines = ["# " + _comment(f"{step.id}: {step.title}") + (f"  [locator: {choice.strategy}]" if choice else "")]
    timeout = f"timeout={step.action.timeout_ms}" if step.action.timeout_ms else ""

    def need() -> str:
        if loc is None:
            raise ExportError(f"{where}: a {kind!r} step needs a target (descriptor or selector)")
        return loc

    after = step.recorded.after if step.recorded is not None else None
    if kind in ("click", "dblclick", "press", "check") and after is not None and after.download:
        # the step starts a download: wait for it as codegen's script did (the download is not checked)
        lines.append("with page.expect_download():")
        lines.append("    " + (f"{need()}.{kind}({timeout})" if kind != "press" else
                              f"{loc}.press({value})" if loc else f"page.keyboard.press({value})"))
    elif kind in ("click", "dblclick", "hover", "check", "uncheck"):
        lines.append(f"{need()}.{kind}({timeout})")
    elif kind == "input":
        lines.append(f"{need()}.fill({value}{', ' + timeout if timeout else ''})")
    elif kind == "select":
        lines.append(f"{need()}.select_option({value}{', ' + timeout if timeout else ''})")
    elif kind == "press":
        lines.append(f"{loc}.press({value})" if loc else f"page.keyboard.press({value})")
    elif kind == "navigate":
        lines.append(f"page.goto(base_url + {value})" if step.action.value.startswith("/")
                     else f"page.goto({value})")
    elif kind == "back":
        lines.append("page.go_back()")
    elif kind == "scroll":
        dx, dy = _SCROLL.get(step.action.direction, (0, 1))
        if loc:
            lines.append(f"{loc}.hover()")
        lines.append(f"page.mouse.wheel({dx * step.action.distance}, {dy * step.action.distance})")
    elif kind == "wait":
        if step.action.value:
            lines.append(f"expect(page.get_by_text({value}).first).to_be_visible("
                         f"{timeout or 'timeout=' + str(step.action.timeout_ms or 5000)})")
        elif loc:
            lines.append(f"expect({loc}).to_be_visible({timeout})")
        else:
            lines.append(f"page.wait_for_timeout({step.action.timeout_ms or 1000})")
    elif kind == "screenshot":
        lines.append("page.screenshot()")
    elif kind == "upload":
        lines.append(f"{need()}.set_input_files({value})")
    elif kind == "assert":
        pass
    else:
        raise ExportError(f"{where}: action {kind!r} has no Playwright form")
    try:
        lines += [_assertion(a, loc, where) for a in step.assertions]
    except ExportError as exc:
        raise ExportError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
    lines += _value_check(step, loc, secrets)
    lines += landing.lines(step.recorded.after if step.recorded is not None else None)
    if kind in ("click", "dblclick", "press"):
        # A click that navigated returns once the new page commits; its scripts may not have run yet, so the
        # next step's button could be pressed before its handler exists. Waiting for "load" costs nothing when
        # the page did not navigate.
        lines.append("page.wait_for_load_state()")
    return lines


def _params_of(project: Project, flow: Flow) -> tuple[dict[str, str], list[str]]:
    """(parameter name -> default, secret names) the flow uses, in order of first use."""
    used: list[str] = []
    texts = [flow.start_url] + [t for st in flow.steps for t in _texts(st)]
    for t in texts:
        for name in placeholders(t):
            if name not in used:
                used.append(name)
    secret_names = set(project.settings.secrets) | set(flow.secrets)
    defaults = {**project.settings.params, **flow.params}
    unknown = [n for n in used if n not in secret_names and n not in defaults]
    if unknown:
        raise ExportError(f"{flow.source or flow.name}: parameter {{{unknown[0]}}} has no value in the project or "
                          "the flow")
    return ({n: defaults[n] for n in used if n not in secret_names}, [n for n in used if n in secret_names])


def _texts(step: Step) -> list[str]:
    d = step.target
    return [step.action.value, step.selector, d.test_id, d.name, d.label, d.placeholder, d.text, d.css_path] + [
        t for a in step.assertions for t in (a.expected, a.selector)]



def export_flow(project: Project, flow: Flow, *, style: ExportStyle = "pytest") -> str:
    """The source of a pytest-playwright test file (``style="pytest"``) or a plain script (``"script"``)
    replaying ``flow``.  The pytest file needs the ``conftest.py`` of :func:`conftest_source` beside it.

    Raises
    ------
    ExportError
        A step cannot be written as Playwright code (the message names the flow file, the step and why),
        or a parameter has no value.
    """
    if flow.episode is not None:
        raise ExportError(f"{flow.source or flow.name}: an episodic (MiniWoB++) flow binds its parameters from the "
                          "episode; it has no standalone test form")
    params, secrets = _params_of(project, flow)
    body = [f"page.goto(base_url + {_text_expr(flow.start_url)})" if flow.start_url.startswith("/")
            else f"page.goto({_text_expr(flow.start_url)})"]
    landing = _Landing(flow.base_path or base_path(project.settings.base_url or ""))
    for i, st in enumerate(flow.steps):
        body += _step_lines(st, i, flow, landing, set(secrets))
    names = list(params) + secrets
    uses_re = any("re." in ln for ln in body)
    if style == "pytest":
        return "\n".join(_pytest_file(project, flow, params, secrets, body, uses_re)) + "\n"
    b = project.engine_settings.browser
    header = _script_header(project, flow, params, secrets, b.viewport_width, b.viewport_height,
                            b.action_timeout_ms, b.navigation_timeout_ms)
    unpack = [f"    {_var(n)} = params[{_py(n)}]" for n in names]
    run = ["def run(page: Page, base_url: str, params: dict[str, str]) -> None:",
           f'    """Replay {_doc(repr(flow.name))} on ``page``; ``params`` holds '
           f'{_doc(", ".join(names)) or "no parameters"}."""']
    run += unpack + ["    " + ln for ln in body]
    defaults = ["def default_params() -> dict[str, str]:",
                '    """Parameters from the environment, else the flow\'s defaults; secrets from the environment."""',
                "    return {"] + [f"        {_py(n)}: os.environ.get({_py(param_env_var(n))}, {_py(d)}),"
                                   for n, d in params.items()]
    defaults += [f"        {_py(n)}: _secret({_py(n)})," for n in secrets] + ["    }", "", ""]
    main = [
        "", "",
        "def main(argv: list[str] | None = None) -> int:",
        '    """Run once in Chromium: 0 passed, 1 failed (the error is printed), 2 bad input (no base URL, a secret '
        'not set)."""',
        "    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])",
        "    ap.add_argument('--base-url', default=BASE_URL, help='base URL of the app (STEADYHAND_BASE_URL)')",
        "    ap.add_argument('--headed', action='store_true')",
        "    args = ap.parse_args(argv)",
        "    if not args.base_url:",
        "        print('error: give --base-url or set STEADYHAND_BASE_URL', file=sys.stderr)",
        "        return 2",
        "    try:",
        "        params = default_params()",
        "    except RuntimeError as exc:  # a secret not set (_secret): said, not a traceback",
        "        print(f'error: {exc}', file=sys.stderr)",
        "        return 2",
        "    with sync_playwright() as pw:",
        "        browser = pw.chromium.launch(executable_path=chromium_path(pw.chromium.executable_path),",
        "                                     headless=not args.headed, args=CHROMIUM_ARGS)",
        "        context = new_context(browser)",
        "        started = time.perf_counter()",
        "        try:",
        "            run(context.new_page(), args.base_url.rstrip('/'), params)",
        "        except Exception as exc:  # noqa: BLE001 - the script's verdict",
        "            print(f'FAILED after {time.perf_counter() - started:.2f} s: {type(exc).__name__}: {exc}',"
        " file=sys.stderr)",
        "            return 1",
        "        finally:",
        "            context.close()",
        "            browser.close()",
        "    print(f'passed in {time.perf_counter() - started:.2f} s')",
        "    return 0",
        "", "",
        "if __name__ == '__main__':",
        "    sys.exit(main())",
    ]
    return "\n".join(header + defaults + run + main) + "\n"


def _pytest_file(project: Project, flow: Flow, params: dict[str, str], secrets: list[str], body: list[str],
                 uses_re: bool) -> list[str]:
    """A pytest-playwright test of ``flow``: the plugin's ``page`` and ``base_url``, the conftest's ``param`` and
    ``secret`` (nothing else of set-up: that is the folder's ``conftest.py``)."""
    lines = [
        f'"""{_doc(flow.name)}: a pytest-playwright test exported by `steadyhand export pytest` from project '
        f'{_doc(repr(project.name))}.',
        "",
        "Run it with pytest (pytest-playwright installed), e.g. `pytest THIS_FOLDER --base-url http://...`;",
        "--browser, --headed, --tracing, --video, --screenshot and --output work as in any Playwright suite.",
        "The conftest.py beside it holds the shared set-up (Chromium, viewport, timeouts, base URL, parameters).",
        "Locators follow Playwright codegen's preference (test id, role + name, label, placeholder, text, CSS).",
    ]
    if params:
        lines.append("Parameters (override with the environment): " + _doc(", ".join(
            f"{n} ({param_env_var(n)})" for n in params)) + ".")
    if secrets:
        defaults = _secret_defaults(project)
        lines.append("Secrets (from the environment; never written here): " + _doc(", ".join(
            f"{n} ({env_var_name(n)}" + (", else the project's declared default" if n in defaults else "") + ")"
            for n in secrets)) + ".")
    lines += ['"""', "from __future__ import annotations", ""]
    if uses_re:
        lines += ["import re", ""]
    b = project.engine_settings.browser
    lines += ["import pytest", "from playwright.sync_api import Page, expect", "",
              "#: This file's own browser context (the plugin's marker) and the marker of the conftest's timeouts: the",
              "#: other tests of the session keep their own settings.",
              f"pytestmark = [pytest.mark.{EXPORT_MARK}, pytest.mark.browser_context_args(viewport={{'width': "
              f"{int(b.viewport_width)}, 'height': {int(b.viewport_height)}}}, accept_downloads=True)]", "", ""]
    fixtures = (["param"] if params else []) + (["secret"] if secrets else [])
    args = ", ".join(["page: Page", "base_url: str"] + fixtures)
    fn = "test_" + re.sub(r"[^A-Za-z0-9_]", "_", flow.name)
    lines += [f"def {fn}({args}) -> None:", "    " + _py(flow.description or flow.name)]
    lines += [f"    {_var(n)} = param({_py(n)}, {_py(d)})" for n, d in params.items()]
    lines += [f"    {_var(n)} = secret({_py(n)})" for n in secrets]
    lines += ["    " + ln for ln in body]
    return lines


#: The Chromium finder both styles write: STEADYHAND_CHROMIUM, else Playwright's own build when installed, else
#: the system's Chromium on the PATH (Debian's /usr/bin/chromium): the order core.perception.browser uses.
_CHROMIUM_FINDER = [
    "def chromium_path(playwright_own: str) -> str | None:",
    '    """The Chromium to launch: STEADYHAND_CHROMIUM, else None for Playwright\'s own build (``playwright_own``)',
    '    when it is installed, else the system\'s on the PATH."""',
    "    if os.environ.get('STEADYHAND_CHROMIUM'):",
    "        return os.environ['STEADYHAND_CHROMIUM']",
    "    if playwright_own and os.path.exists(playwright_own):",
    "        return None",
    "    for name in ('chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'):",
    "        found = shutil.which(name)",
    "        if found:",
    "            return found",
    "    return None",
]


def _script_header(project: Project, flow: Flow, params: dict[str, str], secrets: list[str],
                   width: int, height: int, action_ms: int, nav_ms: int) -> list[str]:
    base = project.settings.base_url or ""
    lines = [
        f'"""{_doc(flow.name)}: plain Playwright script exported by `steadyhand export` from project '
        f'{_doc(repr(project.name))}.',
        "",
        "Run it with: STEADYHAND_BASE_URL=http://... python THIS_FILE",
        "Locators follow Playwright codegen's preference (test id, role + name, label, placeholder, text, CSS).",
    ]
    if params:
        lines.append("Parameters (override with the environment): " + _doc(", ".join(
            f"{n} ({param_env_var(n)})" for n in params)) + ".")
    if secrets:
        lines.append("Secrets (from the environment only): " + _doc(", ".join(
            f"{n} ({env_var_name(n)})" for n in secrets)) + ".")
    lines += ['"""', "from __future__ import annotations", "", "import argparse", "import os", "import re",
              "import shutil", "import sys", "import time", "",
              "from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright", "",
              f"BASE_URL = os.environ.get('STEADYHAND_BASE_URL', {_py(base)})",
              f"CHROMIUM_ARGS = {_py(list(_CHROMIUM_ARGS))} + (['--no-sandbox'] if hasattr(os, 'geteuid') and "
              "os.geteuid() == 0 else [])  # Chromium's sandbox refuses root only",
              f"VIEWPORT = {{'width': {int(width)}, 'height': {int(height)}}}",
              f"ACTION_TIMEOUT_MS = {int(action_ms)}", f"NAVIGATION_TIMEOUT_MS = {int(nav_ms)}",
              "expect.set_options(timeout=ACTION_TIMEOUT_MS)", "", "",
              "def _secret(name: str) -> str:",
              "    var = 'STEADYHAND_SECRET_' + re.sub(r'[^A-Z0-9_]', '_', name.upper())",
              "    value = os.environ.get(var)",
              "    if not value:",
              "        raise RuntimeError(f'secret {name!r} is not set: set the environment variable {var} '",
              "                           f'(a secret is never written into this file), e.g. '",
              "                           f'{var}=... python {os.path.basename(sys.argv[0] or __file__)}')",
              "    return value",
              "", "", *_CHROMIUM_FINDER, "", "",
              "def new_context(browser: Browser) -> BrowserContext:",
              "    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)",
              "    context.set_default_timeout(ACTION_TIMEOUT_MS)",
              "    context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)",
              "    return context",
              "", ""]
    return lines


#: The marker the exported tests carry (their conftest's timeouts and demo-server resets apply to them alone).
EXPORT_MARK = "steadyhand_export"


def _secret_defaults(project: Project) -> dict[str, str]:
    """Secret name -> the default the project declares (``secrets.NAME.default``: public demo values only)."""
    out: dict[str, str] = {}
    for name, spec in project.settings.secrets.items():
        default = getattr(spec, "default", None)
        if default:
            out[name] = str(default)
    return out


def _project_file(project: Project) -> str:
    """The project's ``steadyhand.yaml`` as an absolute path ('' when the project has no folder)."""
    root = getattr(project, "root", None)
    return str((root / "steadyhand.yaml").resolve()) if root else ""


def _project_file_expr(project: Project, folder: Path | None) -> str:
    """The Python expression of the conftest's default ``PROJECT_FILE``: relative to the conftest's own folder
    when ``folder`` (where the conftest is written) lies inside the project's folder - an ``e2e/`` folder of a
    repository then runs from any checkout - else the absolute path of :func:`_project_file`."""
    path = _project_file(project)
    root = getattr(project, "root", None)
    if folder is not None and root is not None and path:
        here, top = Path(folder).resolve(), Path(root).resolve()
        if here == top or top in here.parents:
            rel = os.path.relpath(path, here)
            return f"os.path.join(os.path.dirname(os.path.abspath(__file__)), {_py(rel)})"
    return _py(path)


def _site_args(project: Project) -> list[str] | None:
    """``python -m core.sites.demo`` options of the project's bundled demo site; None when it has none."""
    if project.settings.site != "demo":
        return None
    from core.sites.adapters import demo_options

    opts = demo_options(project)
    args = ["--port", "0"]
    if "today" in opts:
        args += ["--today", opts["today"].isoformat()]
    if "latency_ms" in opts:
        args += ["--latency-ms", str(opts["latency_ms"])]
    if "variant" in opts:
        args += ["--variant", str(opts["variant"])]
    return args


def conftest_source(project: Project, folder: Path | None = None) -> str:
    """The ``conftest.py`` shared by the tests exported from ``project`` into one folder (written once there).

    ``folder`` is where it is written: inside the project's folder, the project file is named relative to it.

    It adapts pytest-playwright's fixtures without replacing them: ``browser_type_launch_args`` (Chromium: see
    :data:`_CHROMIUM_FINDER`; the engine's quiet launch arguments; ``--browser-channel`` and other engines left
    alone), ``browser_context_args`` (the project's viewport, downloads accepted; ``--device`` and ``--video``
    still win), ``context`` (the project's action and navigation timeouts, ms), ``base_url`` (``--base-url``,
    else ``STEADYHAND_BASE_URL``, else the project's ``base_url``; a project on the bundled demo site gets a
    demo server of the session's own), and adds ``param(name, default)`` and ``secret(name)``.
    """
    b = project.engine_settings.browser
    site_args = _site_args(project)
    lines = [
        CONFTEST_MARK + f" for project {_doc(repr(project.name))}: shared by the tests of this folder.",
        '"""Set-up of the tests `steadyhand export pytest` wrote here; they use pytest-playwright\'s fixtures.',
        "",
        "Chromium: STEADYHAND_CHROMIUM, else Playwright's own build when installed, else the system's on the PATH",
        "(--browser firefox / webkit and --browser-channel are left to the plugin).  Base URL: --base-url, else",
        "STEADYHAND_BASE_URL, else the project's" + (" (none: a demo server per session, python -m core.sites.demo, "
                                                      "reset before each test)" if site_args is not None else "") + ".",
        "Parameters: STEADYHAND_PARAM_<NAME> over the flow's defaults; secrets: STEADYHAND_SECRET_<NAME> only.",
        '"""',
        "from __future__ import annotations",
        "",
        "import json",
        "import os",
        "import re",
        "import shutil",
    ]
    if site_args is not None:
        lines += ["import select", "import signal", "import subprocess", "import sys", "import tempfile", "import time",
                  "import urllib.request"]
    lines += [
        "",
        "import pytest",
        "from playwright.sync_api import expect",
        "",
        f"PROJECT_BASE_URL = {_py(project.settings.base_url or '')}",
        f"VIEWPORT = {{'width': {int(b.viewport_width)}, 'height': {int(b.viewport_height)}}}",
        "#: The project's browser.action_timeout_ms and navigation_timeout_ms (steadyhand.yaml), ms.",
        f"ACTION_TIMEOUT_MS = {int(b.action_timeout_ms)}",
        f"NAVIGATION_TIMEOUT_MS = {int(b.navigation_timeout_ms)}",
        "#: Chromium launch arguments that keep it quiet on a closed network (the engine's own).",
        f"CHROMIUM_ARGS = {_py(list(_CHROMIUM_ARGS))}",
        "#: The marker of the exported tests: this conftest's timeouts and demo-server resets apply to them alone.",
        f"EXPORT_MARK = {_py(EXPORT_MARK)}",
        "#: The project file whose declared secret defaults (secrets.NAME.default: public demo values only) are used",
        "#: when STEADYHAND_SECRET_<NAME> is unset (read when needed, never copied here; STEADYHAND_PROJECT overrides).",
        f"PROJECT_FILE = os.environ.get('STEADYHAND_PROJECT', {_project_file_expr(project, folder)})",
        f"DEFAULTED_SECRETS = {_py(sorted(_secret_defaults(project)))}",
        "", "",
        *_CHROMIUM_FINDER,
        "", "",
        "@pytest.fixture(scope='session')",
        "def browser_type_launch_args(browser_type_launch_args, browser_type, browser_name):",
        "    args = dict(browser_type_launch_args)",
        "    if browser_name != 'chromium' or args.get('channel') or args.get('executable_path'):",
        "        return args",
        "    root = hasattr(os, 'geteuid') and os.geteuid() == 0  # Chromium's sandbox refuses root only",
        "    args['args'] = [*CHROMIUM_ARGS, *(['--no-sandbox'] if root else []), *args.get('args', [])]",
        "    path = chromium_path(browser_type.executable_path)",
        "    if path:",
        "        args['executable_path'] = path",
        "    return args",
        "", "",
        "def pytest_configure(config):",
        "    config.addinivalue_line('markers', EXPORT_MARK + ': a test written by steadyhand export pytest (the '",
        "                            'project timeouts of this conftest apply to it alone)')",
        "", "",
        "def _exported(request) -> bool:",
        "    return request.node.get_closest_marker(EXPORT_MARK) is not None",
        "", "",
        "@pytest.fixture",
        "def context(context, request):",
        '    """The project\'s action and navigation timeouts, on the exported tests only."""',
        "    if _exported(request):",
        "        context.set_default_timeout(ACTION_TIMEOUT_MS)",
        "        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)",
        "    return context",
        "", "",
        "@pytest.fixture(autouse=True)",
        "def _expect_timeout(request):",
        '    """expect()\'s timeout = the project\'s action timeout, on the exported tests only."""',
        "    if not _exported(request):",
        "        yield",
        "        return",
        "    expect.set_options(timeout=ACTION_TIMEOUT_MS)",
        "    yield",
        "    expect.set_options(timeout=None)  # back to Playwright's default for the other tests of the session",
        "", "",
        "@pytest.fixture",
        "def param():",
        '    """param(name, default): STEADYHAND_PARAM_<NAME> when set, else the flow\'s default."""',
        "    def get(name: str, default: str) -> str:",
        "        return os.environ.get('STEADYHAND_PARAM_' + re.sub(r'[^A-Z0-9_]', '_', name.upper()), default)",
        "    return get",
        "", "",
        "def _declared_default(name: str) -> str:",
        "    try:",
        "        import yaml",
        "        path = PROJECT_FILE if PROJECT_FILE.endswith('.yaml') else os.path.join(PROJECT_FILE, 'steadyhand.yaml')",
        "        with open(path, encoding='utf-8') as fh:",
        "            spec = (yaml.safe_load(fh) or {}).get('secrets', {}).get(name) or {}",
        "        return str(spec.get('default') or '') if isinstance(spec, dict) else ''",
        "    except (ImportError, OSError, ValueError, AttributeError):",
        "        return ''",
        "", "",
        "@pytest.fixture",
        "def secret():",
        '    """secret(name): STEADYHAND_SECRET_<NAME>, else the project\'s declared default; the test fails (naming',
        '    the variable) when neither is there."""',
        "    def get(name: str) -> str:",
        "        var = 'STEADYHAND_SECRET_' + re.sub(r'[^A-Z0-9_]', '_', name.upper())",
        "        value = os.environ.get(var) or (_declared_default(name) if name in DEFAULTED_SECRETS else '')",
        "        if not value:",
        "            pytest.fail(f'secret {name!r} is not set: set the environment variable {var}', pytrace=False)",
        "        return value",
        "    return get",
        "", "",
    ]
    lines += [
        "def _given_base_url(config) -> str:",
        '    """--base-url (or PYTEST_BASE_URL, or the base_url ini value), read from the options themselves: asking',
        "    for the plugin's own base_url fixture warns under pytest 9 (pytest-playwright defines it as a method of",
        '    a plugin object, PytestRemovedIn10Warning)."""',
        "    value = config.getoption('--base-url', None)",
        "    if not value:",
        "        try:",
        "            value = config.getini('base_url')",
        "        except ValueError:  # no plugin registered the ini value",
        "            value = ''",
        "    return value or ''",
        "", "",
    ]
    if site_args is None:
        lines += [
            "@pytest.fixture(scope='session')",
            "def base_url(pytestconfig):",
            '    """--base-url (pytest-playwright), else STEADYHAND_BASE_URL, else the project\'s base URL."""',
            "    url = _given_base_url(pytestconfig) or os.environ.get('STEADYHAND_BASE_URL') or PROJECT_BASE_URL",
            "    if not url:",
            "        pytest.fail('give --base-url http://... (or set STEADYHAND_BASE_URL)', pytrace=False)",
            "    return url.rstrip('/')",
        ]
        return "\n".join(lines) + "\n"
    lines += [
        "#: The project's bundled demo app (python -m SITE_MODULE; Steadyhand must be importable by this Python).",
        f"SITE_MODULE = {_py(module_name('core.sites.demo'))}",
        f"SITE_ARGS = {_py(site_args)}",
        "#: Longest wait for the demo server to print its URL, to stop, and to answer a request, s.",
        "SITE_START_S, SITE_STOP_S, SITE_ANSWER_S = 30.0, 10.0, 10.0",
        "_OWN_SERVER: list[str] = []",
        "", "",
        "@pytest.fixture(scope='session')",
        "def base_url(pytestconfig):",
        '    """--base-url or STEADYHAND_BASE_URL when given (a server you run: the tests share its state, so run them',
        "    one by one), else a demo server of this session's own (one per xdist worker), reset before each test.",
        '    """',
        "    given = _given_base_url(pytestconfig) or os.environ.get('STEADYHAND_BASE_URL')",
        "    if given:",
        "        yield given.rstrip('/')",
        "        return",
        "    log = tempfile.TemporaryFile(mode='w+', encoding='utf-8')  # a file: a full pipe would stall the server",
        "    proc = subprocess.Popen([sys.executable, '-m', SITE_MODULE, *SITE_ARGS], stdout=subprocess.PIPE,",
        "                            stderr=log, text=True)",
        "    url = ''",
        "    deadline = time.monotonic() + SITE_START_S",
        "    while not url and proc.poll() is None and time.monotonic() < deadline:",
        "        ready, _, _ = select.select([proc.stdout], [], [], 0.5)",
        "        line = proc.stdout.readline() if ready else ''",
        "        found = re.search(r'http://127\\.0\\.0\\.1:\\d+', line)",
        "        url = found.group(0) if found else ''",
        "    if not url:",
        "        proc.kill()",
        "        proc.wait(timeout=SITE_STOP_S)",
        "        log.seek(0)",
        "        pytest.fail(f'the demo server did not start within {SITE_START_S:.0f} s: {log.read().strip()[-500:]}')",
        "    _OWN_SERVER.append(url)",
        "    try:",
        "        yield url",
        "    finally:",
        "        _OWN_SERVER.remove(url)",
        "        proc.send_signal(signal.SIGTERM)  # a Ctrl-C for it (SIGINT is ignored in a background CI job)",
        "        try:",
        "            proc.communicate(timeout=SITE_STOP_S)",
        "        except subprocess.TimeoutExpired:",
        "            proc.kill()",
        "            proc.communicate()",
        "        log.close()",
        "", "",
        "def _call(url: str, method: str = 'GET') -> dict:",
        "    req = urllib.request.Request(url, data=b'{}' if method == 'POST' else None, method=method,",
        "                                 headers={'Content-Type': 'application/json'})",
        "    with urllib.request.urlopen(req, timeout=SITE_ANSWER_S) as answer:",
        "        return json.loads(answer.read().decode('utf-8') or '{}')",
        "", "",
        "@pytest.fixture(autouse=True)",
        "def _fresh_demo_state(base_url, request):",
        '    """On the session\'s own demo server: its known state before each exported test (POST /api/reset: no write',
        '    or locked account of another test), and no duplicate write in its log after it (GET /__gt/report)."""',
        "    if base_url not in _OWN_SERVER or not _exported(request):",
        "        yield",
        "        return",
        "    _call(base_url + '/api/reset', 'POST')",
        "    yield",
        "    report = _call(base_url + '/__gt/report')",
        "    if report.get('duplicate_writes'):",
        "        pytest.fail(f\"the demo server saw a write done twice: {report.get('duplicates')}\", pytrace=False)",
    ]
    return "\n".join(lines) + "\n"
