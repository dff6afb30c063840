"""A flow as ordinary Playwright code: a pytest test file, or a plain script (issue 14, part 1).

The locator of each step is the one Playwright's codegen would write for the
recorded element, chosen from the step's descriptor in this order (the
first that the descriptor supports wins):

1. test id                -> ``page.get_by_test_id("...")``
2. role + accessible name -> ``page.get_by_role("button", name="Sign in", exact=True)``
   (a name in capitals only, as ``text-transform: uppercase`` shows it, is
   matched case-insensitively as a whole: ``name=re.compile(r"^employee$", re.I)``;
   a password input has no ARIA role, so it falls through to its label)
3. label                  -> ``page.get_by_label("Password", exact=True)``
4. placeholder            -> ``page.get_by_placeholder("YYYY-MM-DD", exact=True)``
5. text                   -> ``page.get_by_text("...", exact=True)``
6. CSS                    -> ``page.locator("<the step's CSS selector or css_path>")``

A step without a descriptor (selector-only, before its first run) keeps its
Playwright selector: ``page.locator("<selector>")``.  Locators stay strict
(Playwright raises when one matches two elements): the exported test fails
rather than click one of several (never ``.first`` on an action).

Parameters become pytest fixtures (test style) or entries of ``params``
(script style), each overridable from the environment
(``STEADYHAND_PARAM_<NAME>``); secrets are read from the environment only
(``STEADYHAND_SECRET_<NAME>``, :func:`core.secrets.env_var_name`) and never
written into the file; assertions become ``expect(...)``.  The browser is the
system Chromium (``STEADYHAND_CHROMIUM``, default ``/usr/bin/chromium``)
through ``executable_path``: nothing is downloaded.  The base URL comes from
``STEADYHAND_BASE_URL`` (default: the project's ``base_url``; a project on a
bundled site has none, its port is chosen at run time).  Without it, the
pytest test of a project on the bundled demo site starts a demo server of its
own (``python -m core.sites.demo`` with the project's ``site_options``) and
stops it after the test: no test sees another's writes or locked accounts
(``login_lockout`` locks the account the other flows sign in with), so the
files of a whole project run in parallel under pytest-xdist (``-n 4``); the
server's own log at its stop must show no duplicate write, else the test
fails.  That form needs Steadyhand importable by the test's Python.

The script style defines ``run(page, base_url, params)`` (what ``steadyhand
bench tweaks`` times as its plain-script baseline) and a ``main()`` that
launches Chromium, runs once and exits 0 (passed) or 1 (failed, with the
error).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from core.domain import Assertion, ElementDescriptor, Flow, Step
from core.project import Project
from core.project.params import placeholders
from core.secrets import env_var_name

from .emit import py_comment, py_doc, py_ident, py_str

__all__ = ["ExportError", "ExportStyle", "LocatorChoice", "choose_locator", "export_flow", "param_env_var"]

ExportStyle = Literal["pytest", "script"]

#: Launch arguments of the exported tests: the engine's (core.perception.browser.CHROMIUM_ARGS, copied so the
#: generated file needs nothing of Steadyhand).
_CHROMIUM_ARGS = (
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
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
_RESERVED = frozenset({"page", "base_url", "browser", "params", "os", "re", "sys", "time", "pytest", "expect",
                       "sync_playwright", "run", "main", "argparse", "annotations", "select", "signal", "subprocess",
                       "tempfile", "Browser", "BrowserContext", "Page", "BASE_URL", "CHROMIUM", "CHROMIUM_ARGS",
                       "VIEWPORT", "ACTION_TIMEOUT_MS", "NAVIGATION_TIMEOUT_MS", "SITE_ARGS", "SITE_START_S",
                       "SITE_STOP_S", "new_context", "default_params"})
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
            parts.append(py_str(literal))
            literal = ""
        parts.append(_var(m.group(1)))
    literal += text[pos:]
    if literal or not parts:
        parts.append(py_str(literal))
    return " + ".join(parts)


def _shouting(text: str) -> bool:
    """True for a name in capitals only (``"EMPLOYEE"``): what ``text-transform: uppercase`` shows."""
    letters = [c for c in text if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters) and not placeholders(text)


def _name_arg(name: str) -> str:
    if _shouting(name):
        return f"name=re.compile({py_str('^' + re.escape(name.lower()) + '$')}, re.IGNORECASE)"
    return f"name={_text_expr(name)}, exact=True"


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
    is_password = d.tag == "input" and d.type.lower() == "password"
    if d.role in _ROLES and d.name and not is_password:
        return LocatorChoice("role", f"page.get_by_role({py_str(d.role)}, {_name_arg(d.name)})")
    if d.label:
        return LocatorChoice("label", f"page.get_by_label({_text_expr(d.label)}, exact=True)")
    if d.placeholder:
        return LocatorChoice("placeholder", f"page.get_by_placeholder({_text_expr(d.placeholder)}, exact=True)")
    if d.text and d.text.strip():
        return LocatorChoice("text", f"page.get_by_text({_text_expr(d.text.strip())}, exact=True)")
    css = step.selector if step.selector and _looks_css(step.selector) else d.css_path
    if css:
        return LocatorChoice("css", f"page.locator({_text_expr(css)})")
    if step.selector:
        return LocatorChoice("selector", f"page.locator({_text_expr(step.selector)})")
    return None


def _looks_css(selector: str) -> bool:
    """A plain CSS selector (not Playwright's ``role=`` / ``text=`` / ``>>`` syntax)."""
    return not re.match(r"^\s*(role|text|internal|xpath|css|id|data-testid)\s*=", selector) and ">>" not in selector


def _assertion(a: Assertion, target: str | None, where: str) -> str:
    exp = _text_expr(a.expected)
    if a.kind == "text_appears":
        return f"expect(page.get_by_text({exp}).first).to_be_visible()"
    if a.kind == "text_absent":
        return f"expect(page.get_by_text({exp})).to_have_count(0)"
    if a.kind == "url_contains":
        return f"expect(page).to_have_url(re.compile(re.escape({exp})))"
    loc = f"page.locator({_text_expr(a.selector)})" if a.selector else target
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


def _step_lines(step: Step, index: int, flow: Flow) -> list[str]:
    where = f"{flow.source or flow.name}: step {step.id!r} (#{index + 1})"
    choice = choose_locator(step)
    loc = choice.code if choice else None
    kind, value = step.action.kind, _text_expr(step.action.value)
    lines = [f"# {py_comment(step.id)}: {py_comment(step.title)}" + (f"  [locator: {choice.strategy}]" if choice else "")]
    timeout = f"timeout={step.action.timeout_ms}" if step.action.timeout_ms else ""

    def need() -> str:
        if loc is None:
            raise ExportError(f"{where}: a {kind!r} step needs a target (descriptor or selector)")
        return loc

    if kind in ("click", "dblclick", "hover", "check", "uncheck"):
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
    lines += [_assertion(a, loc, where) for a in step.assertions]
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
    """The source of a pytest file (``style="pytest"``) or a plain script (``"script"``) replaying ``flow``.

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
    for i, st in enumerate(flow.steps):
        body += _step_lines(st, i, flow)
    b = project.engine_settings.browser
    header = _header(project, flow, style, params, secrets, b.viewport_width, b.viewport_height,
                     b.action_timeout_ms, b.navigation_timeout_ms)
    if style == "pytest":
        header += _base_url_fixture(project)
    names = list(params) + secrets
    if style == "pytest":
        fixtures = []
        for n, default in params.items():
            fixtures += ["@pytest.fixture", f"def {_var(n)}() -> str:",
                         f"    return os.environ.get({py_str(param_env_var(n))}, {py_str(default)})", "", ""]
        for n in secrets:
            fixtures += ["@pytest.fixture", f"def {_var(n)}() -> str:", f"    return _secret({py_str(n)})", "", ""]
        args = ", ".join(["page: Page", "base_url: str"] + [f"{_var(n)}: str" for n in names])
        fn = "test_" + re.sub(r"[^A-Za-z0-9_]", "_", flow.name)
        doc = "    " + py_str(flow.description or flow.name)
        test = [f"def {fn}({args}) -> None:", doc] + ["    " + ln for ln in body]
        return "\n".join(header + fixtures + test) + "\n"
    unpack = [f"    {_var(n)} = params[{py_str(n)}]" for n in names]
    run = ["def run(page: Page, base_url: str, params: dict[str, str]) -> None:",
           f'    """Replay {py_doc(repr(flow.name))} on ``page``; ``params`` holds '
           f'{py_doc(", ".join(names)) or "no parameters"}."""']
    run += unpack + ["    " + ln for ln in body]
    defaults = ["def default_params() -> dict[str, str]:",
                '    """Parameters from the environment, else the flow\'s defaults; secrets from the environment."""',
                "    return {"] + [f"        {py_str(n)}: os.environ.get({py_str(param_env_var(n))}, {py_str(d)})," for n, d in params.items()]
    defaults += [f"        {py_str(n)}: _secret({py_str(n)})," for n in secrets] + ["    }", "", ""]
    main = [
        "", "",
        "def main(argv: list[str] | None = None) -> int:",
        '    """Run once in the system Chromium: 0 passed, 1 failed (the error is printed)."""',
        "    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])",
        "    ap.add_argument('--base-url', default=BASE_URL, help='base URL of the app (STEADYHAND_BASE_URL)')",
        "    ap.add_argument('--headed', action='store_true')",
        "    args = ap.parse_args(argv)",
        "    if not args.base_url:",
        "        print('error: give --base-url or set STEADYHAND_BASE_URL', file=sys.stderr)",
        "        return 2",
        "    params = default_params()",
        "    with sync_playwright() as pw:",
        "        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=not args.headed, args=CHROMIUM_ARGS)",
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


def _header(project: Project, flow: Flow, style: ExportStyle, params: dict[str, str], secrets: list[str],
            width: int, height: int, action_ms: int, nav_ms: int) -> list[str]:
    base = project.settings.base_url or ""
    what = "pytest test" if style == "pytest" else "plain Playwright script"
    lines = [
        f'"""{py_doc(flow.name)}: {what} exported by `steadyhand export` from project {py_doc(repr(project.name))}.',
        "",
        f"Run it with: STEADYHAND_BASE_URL=http://... {'pytest THIS_FILE' if style == 'pytest' else 'python THIS_FILE'}"
        + (" (without it, each test starts a demo server of its own; files run in parallel with pytest -n 4)"
           if style == "pytest" and project.settings.site == "demo" else ""),
        "Locators follow Playwright codegen's preference (test id, role + name, label, placeholder, text, CSS).",
    ]
    if params:
        lines.append("Parameters (override with the environment): " + ", ".join(
            f"{py_doc(n)} ({param_env_var(n)})" for n in params) + ".")
    if secrets:
        lines.append("Secrets (from the environment only): " + ", ".join(
            f"{py_doc(n)} ({py_doc(env_var_name(n))})" for n in secrets) + ".")
    lines += ['"""', "from __future__ import annotations", "", "import os", "import re"]
    if style == "script":
        lines += ["import argparse", "import sys", "import time"]
    elif project.settings.site == "demo":
        lines += ["import select", "import signal", "import subprocess", "import sys", "import tempfile", "import time"]
    lines += [""]
    if style == "pytest":
        lines += ["import pytest"]
    lines += ["from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright", "",
              f"BASE_URL = os.environ.get('STEADYHAND_BASE_URL', {py_str(base)})",
              "CHROMIUM = os.environ.get('STEADYHAND_CHROMIUM', '/usr/bin/chromium')",
              f"CHROMIUM_ARGS = {list(_CHROMIUM_ARGS)!r}",
              f"VIEWPORT = {{'width': {width}, 'height': {height}}}",
              f"ACTION_TIMEOUT_MS = {action_ms}", f"NAVIGATION_TIMEOUT_MS = {nav_ms}",
              "expect.set_options(timeout=ACTION_TIMEOUT_MS)", "", "",
              "def _secret(name: str) -> str:",
              "    var = 'STEADYHAND_SECRET_' + re.sub(r'[^A-Z0-9_]', '_', name.upper())",
              "    value = os.environ.get(var)",
              "    if not value:",
              "        raise RuntimeError(f'secret {name!r} is not set: set the environment variable {var}')",
              "    return value",
              "", "",
              "def new_context(browser: Browser) -> BrowserContext:",
              "    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)",
              "    context.set_default_timeout(ACTION_TIMEOUT_MS)",
              "    context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)",
              "    return context",
              "", ""]
    if style == "pytest":
        lines += ["@pytest.fixture(scope='module')",
                  "def browser():",
                  "    with sync_playwright() as pw:",
                  "        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)",
                  "        yield b",
                  "        b.close()",
                  "", "",
                  "@pytest.fixture",
                  "def page(browser: Browser):",
                  "    context = new_context(browser)",
                  "    yield context.new_page()",
                  "    context.close()",
                  "", "",
                  ]
    return lines


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


def _base_url_fixture(project: Project) -> list[str]:
    """The ``base_url`` fixture: ``STEADYHAND_BASE_URL``, else (a project on the bundled demo site) a demo server
    of the test's own, started and stopped around it, so that no test sees another's writes or lockouts and the
    files of a project run in parallel (``pytest -n 4``)."""
    site_args = _site_args(project)
    if site_args is None:
        return ["@pytest.fixture",
                "def base_url() -> str:",
                "    if not BASE_URL:",
                "        pytest.fail('set STEADYHAND_BASE_URL to the base URL of the app')",
                "    return BASE_URL.rstrip('/')",
                "", ""]
    return [
        "#: The project's bundled demo app (python -m core.sites.demo; Steadyhand must be importable by this Python).",
        f"SITE_ARGS = {site_args!r}",
        "#: Longest wait for the demo server to print its URL, and to stop, s.",
        "SITE_START_S, SITE_STOP_S = 30.0, 10.0",
        "", "",
        "@pytest.fixture",
        "def base_url():",
        '    """STEADYHAND_BASE_URL when set (a server you run: the tests share its state, so run them one by one),',
        "    else a fresh demo server for this test alone: nothing it does (a write, a locked account) reaches",
        "    another test, so the files run in parallel (pytest -n 4).  The server's own log must show no",
        '    duplicate write."""',
        "    if BASE_URL:",
        "        yield BASE_URL.rstrip('/')",
        "        return",
        "    log = tempfile.TemporaryFile(mode='w+', encoding='utf-8')  # a file: a full pipe would stall the server",
        "    proc = subprocess.Popen([sys.executable, '-m', 'core.sites.demo', *SITE_ARGS], stdout=subprocess.PIPE,",
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
        "    try:",
        "        yield url",
        "    finally:",
        "        proc.send_signal(signal.SIGINT)  # it prints its ground truth as it stops",
        "        try:",
        "            proc.communicate(timeout=SITE_STOP_S)",
        "        except subprocess.TimeoutExpired:",
        "            proc.kill()",
        "            proc.communicate()",
        "        log.seek(0)",
        "        err = log.read()",
        "        log.close()",
        "    doubled = re.search(r'(\\d+) duplicate writes', err)",
        "    if doubled and int(doubled.group(1)):",
        "        pytest.fail(f'the demo server saw a write done twice: {err.strip()[-500:]}')",
        "", "",
    ]
