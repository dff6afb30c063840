"""Import a Playwright codegen script into a Steadyhand flow.

``playwright codegen --target python`` (or ``python-async`` / ``python-pytest``)
writes a script of page calls.  :func:`import_codegen` reads it with
:mod:`ast` - the script is never executed - and turns every supported call
into a step of the closed action space; everything else becomes a note for
the user, naming the line.

Locators become the selector strings Playwright's own locators produce
(Playwright 1.65), usable with ``page.locator(selector)``::

    page.get_by_role("button", name="Sign in")      internal:role=button[name="Sign in"i]
      ... exact=True                                internal:role=button[name="Sign in"s]
    page.get_by_label("User name")                  internal:label="User name"i
    page.get_by_text("Hello")                       internal:text="Hello"i
    page.get_by_placeholder("Search")               internal:attr=[placeholder="Search"i]
    page.get_by_title("Help") / get_by_alt_text     internal:attr=[title="Help"i] / [alt=...]
    page.get_by_test_id("save")                     internal:testid=[data-testid="save"s]
    page.locator("#a").locator("b")                 #a >> b
    .first / .last / .nth(2)                        ... >> nth=0 / nth=-1 / nth=2
    .filter(has_text="x")                           ... >> internal:has-text="x"i
    page.frame_locator("iframe").get_by_text("x")   iframe >> internal:control=enter-frame >> internal:text="x"i
    page.locator("iframe").content_frame.locator(s) (the same)

Text matched by ``internal:text``, ``internal:label`` and ``has-text`` is
quoted like a JSON string; attribute values (role names, placeholders...)
are double-quoted with ``\\`` and ``"`` escaped; the suffix ``i`` matches
case-insensitively and by substring, ``s`` exactly.  ``re.compile(...)``
arguments become ``/pattern/flags``.

Steps are ``s1``..``sN`` and carry only the ``selector`` (their ``target``
is empty): the first successful run captures the full element descriptor
into the flow file.  ``expect(locator)`` becomes an ``assert`` step with
the selector and one :class:`~core.domain.Assertion` naming the same
selector (``hidden`` and ``count`` are targetless: the element may be absent
or several); ``expect(page).to_have_url(u)`` becomes a targetless
``url_contains``.  The first ``page.goto()`` is the ``start_url``.

Secrets: a value typed into a field whose locator suggests a secret
(password, passcode, pin, secret, token, otp) becomes a ``{name}``
placeholder listed in ``Flow.secrets``, and so does any literal equal to a
declared secret's value.  The literal never appears in the flow, the notes
or an exception message.  A declared secret whose value is not given
(``secret_values``) takes the one literal typed into its fields; when several
different literals are, none takes it (which one is its value cannot be told):
they become ``{name_1}``, ``{name_2}``... and a note says what to set.
"""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Iterable, Mapping

from core.progress import counted
from core.act.space import ACTION_SPACE
from core.domain import Action, AfterState, Assertion, Flow, Step, StepEvidence
from core.project.loader import ProjectError
from core.project.params import escape, placeholder
from core.secrets import MIN_SUBSTRING_LENGTH, Redactor, env_var_name, looks_like_password
from .steps import relative_url, slug

__all__ = ["ImportResult", "import_codegen", "SECRET_WORDS"]

#: Words that mark a field as secret when they appear in its locator (label,
#: placeholder, accessible name, test id or CSS selector), case-insensitively.
SECRET_WORDS = frozenset({
    "password", "passwd", "pwd", "passcode", "passphrase", "pin", "pincode", "secret", "token", "otp",
})
_SECRET_PREFIXES = ("password", "passcode", "passphrase", "secret", "token")

_ENTER_FRAME = " >> internal:control=enter-frame >> "
#: Keyword arguments of actions that do not change what the action does.
_HARMLESS_KWARGS = frozenset({"timeout", "force", "no_wait_after", "delay", "strict"})
#: ``with page.expect_...()`` blocks whose body is imported (the engine waits on its own).
_TRANSPARENT_WAITS = frozenset({"expect_navigation", "expect_response", "expect_request", "expect_event"})
#: ``with page.expect_...()`` blocks whose body is imported although what they wait for is not followed: the
#: click that starts a download or opens a popup is the user's action (Confirm on an export dialog), so
#: dropping it would change what the flow does; the popup page or the download object is not driven.
_UNFOLLOWED_WAITS = {"expect_download": "the download it starts is accepted by the browser and not checked",
                     "expect_popup": "the page it opens is not followed (actions on that page are skipped)"}
#: Calls of the browser/context boilerplate that are ignored without a note.
_BOILERPLATE_METHODS = frozenset({
    "close", "stop", "start", "launch", "launch_persistent_context", "new_context", "new_page",
    "connect", "connect_over_cdp", "set_default_timeout", "set_default_navigation_timeout", "storage_state",
})
_BOILERPLATE_FUNCTIONS = frozenset({"run", "main"})
#: Set-up options that change nothing a flow replays (whether a window shows, how slowly the script went).
_KEPT_SETUP_OPTIONS = frozenset({"headless"})
_LABEL_MAX = 60


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What :func:`import_codegen` made of a script.

    Attributes
    ----------
    flow : Flow
        The flow (``source`` is ``""``); steps ``s1``..``sN`` carry a
        ``selector`` and an empty ``target``.
    notes : tuple[str, ...]
        Messages for the user, in line order: which values became secret
        parameters, which lines were skipped and why (``"line 12: ..."``).
        They never contain a secret value.
    """

    flow: Flow
    notes: tuple[str, ...] = ()


# --- selector syntax ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Regex:
    """A ``re.compile(pattern, flags)`` argument; ``flags`` in JavaScript notation (``"i"``)."""

    pattern: str
    flags: str = ""

    def selector(self) -> str:
        """``/pattern/flags`` with unescaped quotes escaped and ``>>`` broken up, as Playwright writes it."""
        out: list[str] = []
        backslashes = 0
        for ch in self.pattern:
            if ch in "\"'`" and backslashes % 2 == 0:
                out.append("\\")
            out.append(ch)
            backslashes = backslashes + 1 if ch == "\\" else 0
        return "/" + "".join(out).replace(">>", "\\>\\>") + "/" + self.flags


def _quote_text(value: str | _Regex, exact: bool) -> str:
    """Text-selector quoting (``internal:text``, ``internal:label``, ``has-text``): a JSON string."""
    if isinstance(value, _Regex):
        return value.selector()
    return json.dumps(value, ensure_ascii=False) + ("s" if exact else "i")


def _quote_attr(value: str | _Regex, exact: bool) -> str:
    """Attribute-selector quoting (role names, ``internal:attr``): ``"..."`` with ``\\`` and ``"`` escaped."""
    if isinstance(value, _Regex):
        return value.selector()
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"' + ("s" if exact else "i")


def _js_bool(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


#: get_by_role options in the order Playwright writes them.
_ROLE_OPTIONS = ("checked", "disabled", "selected", "expanded", "include_hidden", "level", "name",
                 "description", "pressed")


# --- the intermediate form ---------------------------------------------------------------------

class _Skip(Exception):
    """A statement that cannot be imported; the reason never quotes the script's values."""


class _NotPage(Exception):
    """An expression that does not start from the page (browser/context boilerplate or plain Python)."""


def _reason(exc: Exception) -> str:
    """Why a statement was skipped, never empty (an exception object is truthy even with no message)."""
    if str(exc):
        return str(exc)
    if isinstance(exc, _NotPage):
        return "its locator does not start from the page the flow drives (a variable or object Steadyhand cannot read)"
    return "not understood"


class _Page:
    """Marker of the page object itself."""


_PAGE = _Page()


@dataclass(frozen=True, slots=True)
class _Loc:
    """A locator (or, with ``frame``, a frame locator) as a selector string plus a human label."""

    selector: str
    label: str
    frame: bool = False


@dataclass
class _Op:
    """One importable statement, before secrets and URLs are resolved."""

    line: int
    kind: str  # an action kind, or "goto"
    loc: _Loc | None = None
    value: str | None = ""  # None: a typed value that is not a literal
    verb: str = ""
    typed: bool = False
    secret: bool = False  # the value became a secret parameter
    assertion: str = ""
    targetless: bool = False  # the assertion names its own selector (hidden, count)
    download: bool = False  # the action inside `with …expect_download()`: the export wraps it again


def _shape(node: ast.AST) -> str:
    """The call chain of an expression without any argument (``page.get_by_label(…).fill(…)``)."""
    if isinstance(node, ast.Await):
        return "await " + _shape(node.value)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_shape(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_shape(node.func)}(…)"
    if isinstance(node, ast.Subscript):
        return f"{_shape(node.value)}[…]"
    return "…"


def _unwrap(node: ast.AST) -> ast.AST:
    return node.value if isinstance(node, ast.Await) else node


def _root_name(node: ast.AST) -> str:
    """The name an expression starts from (``page`` in ``page.get_by_text(…).click()``), or ""."""
    while True:
        node = _unwrap(node)
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "expect" and node.args:
                node = node.args[0]
            else:
                node = node.func
        elif isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        else:
            return ""


class _Reader:
    """Walks the script's statements in order and collects :class:`_Op` and notes."""

    def __init__(self) -> None:
        self.ops: list[_Op] = []
        self.notes: list[tuple[int, str]] = []
        self.main_pages: set[str] = {"page"}
        self.main_assigned = False
        #: names whose calls are skipped, and why (a second page, a popup, a download)
        self.other_pages: dict[str, str] = {}
        self.constants: dict[str, Any] = {}
        self.locators: dict[str, _Loc] = {}
        self.page_calls = 0

    def note(self, line: int, text: str) -> None:
        self.notes.append((line, f"line {line}: {text}"))

    # --- statements -----------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> None:
        for st in stmts:
            self.statement(st)

    def statement(self, st: ast.stmt) -> None:
        line = st.lineno
        if isinstance(st, (ast.Import, ast.ImportFrom, ast.Pass, ast.Global, ast.Nonlocal)):
            return
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.block(st.body)
            return
        if isinstance(st, (ast.With, ast.AsyncWith)):
            self.with_block(st)
            return
        if isinstance(st, ast.If) and _is_main_guard(st.test):
            self.block(st.body)
            return
        if isinstance(st, ast.Return) and (st.value is None or isinstance(st.value, ast.Constant)):
            return
        if isinstance(st, ast.Expr):
            value = _unwrap(st.value)
            if isinstance(value, ast.Constant):
                return  # a docstring
            if isinstance(value, ast.Call):
                self.call_statement(value, line)
                return
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            self.assignment(st)
            return
        if self.touches_page(st):
            self.page_calls += 1
        self.note(line, f"{type(st).__name__.lower()} statement not understood; skipped")

    def touches_page(self, node: ast.AST) -> bool:
        names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        return bool(names & (self.main_pages | set(self.other_pages) | set(self.locators)))

    def with_block(self, st: ast.With | ast.AsyncWith) -> None:
        line = st.lineno
        for item in st.items:
            call = _unwrap(item.context_expr)
            func = call.func if isinstance(call, ast.Call) else None
            if isinstance(func, ast.Name) and func.id in ("sync_playwright", "async_playwright"):
                continue
            method = func.attr if isinstance(func, ast.Attribute) else ""
            if method in _TRANSPARENT_WAITS:
                continue
            if method in _UNFOLLOWED_WAITS:
                self.note(line, f"`with …{method}()`: the actions inside it are imported; "
                                f"{_UNFOLLOWED_WAITS[method]}")
                if method == "expect_download":
                    first = len(self.ops)
                    self.block(st.body)
                    for i in range(first, len(self.ops)):  # the action that starts the download
                        if self.ops[i].kind in ("click", "dblclick", "press", "check"):
                            self.ops[i] = replace(self.ops[i], download=True)
                            break
                    return
                continue
            if method.startswith("expect_"):
                self.page_calls += 1
                what = method.removeprefix("expect_").replace("_", " ")
                self.note(line, f"`with …{method}()` block skipped with the actions inside it: Steadyhand "
                                f"drives one page and does not follow a {what}")
            else:
                self.note(line, f"`with {_shape(item.context_expr)}` block not understood; skipped")
            return
        self.block(st.body)

    def assignment(self, st: ast.Assign | ast.AnnAssign) -> None:
        line = st.lineno
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        value = st.value
        if value is None:
            return
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            self.note(line, "assignment not understood; skipped")
            return
        name = targets[0].id
        inner = _unwrap(value)
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
            method = inner.func.attr
            if method == "new_page":
                if not self.main_assigned:
                    self.main_pages, self.main_assigned = {name}, True
                else:
                    self.other_pages[name] = "another page (a second tab)"
                    self.note(line, f"a second page ({name}) is opened; its actions are skipped")
                return
            if method in _BOILERPLATE_METHODS:
                self.setup_options(inner, method, line)
                return
        if isinstance(inner, ast.Attribute) and inner.attr == "value" and isinstance(inner.value, ast.Name):
            # page1 = page1_info.value: the popup or download of a `with …expect_…()` block (noted there)
            self.other_pages[name] = "the popup or download of a `with …expect_…()` block, which is not followed"
            return
        if _root_name(value) in self.main_pages | set(self.locators):
            try:
                loc = self.locator(value)
            except (_Skip, _NotPage) as exc:
                self.page_calls += 1
                self.note(line, f"{_shape(value)}: {_reason(exc)}; skipped")
                return
            if isinstance(loc, _Loc):
                self.locators[name] = loc
                return
        try:
            self.constants[name] = self.literal(value)
        except _Skip:
            self.note(line, f"assignment to {name} not understood; skipped")

    def setup_options(self, call: ast.Call, method: str, line: int) -> None:
        """A note for each option of the browser or context set-up that the flow cannot keep: another browser
        engine than Chromium, a device, geolocation, locale, permissions... (the project's settings apply)."""
        if method in ("launch", "launch_persistent_context"):
            engine = call.func.value.attr if isinstance(call.func, ast.Attribute) and isinstance(
                call.func.value, ast.Attribute) else ""
            if engine in ("firefox", "webkit"):
                self.note(line, f"the script runs {engine.capitalize()}; a flow replays in Chromium (the project's "
                                f"browser): {engine}-only behaviour is not checked")
        if method not in ("launch", "launch_persistent_context", "new_context"):
            return
        dropped = []
        for kw in call.keywords:
            if kw.arg is None:  # **playwright.devices["iPhone 13"]
                device = kw.value.slice if isinstance(kw.value, ast.Subscript) else None
                name = device.value if isinstance(device, ast.Constant) and isinstance(device.value, str) else ""
                dropped.append(f"device {name!r}" if name else f"**{_shape(kw.value)}")
            elif kw.arg not in _KEPT_SETUP_OPTIONS:
                dropped.append(kw.arg)
        if dropped:
            self.note(line, f"{method}() options dropped: {', '.join(dropped)} (the project's browser settings "
                            f"apply: set viewport, headless and the like in steadyhand.yaml)")

    def call_statement(self, call: ast.Call, line: int) -> None:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in _BOILERPLATE_FUNCTIONS:
                return
            self.note(line, f"{_shape(call)} not understood; skipped")
            return
        if not isinstance(func, ast.Attribute):
            self.note(line, f"{_shape(call)} not understood; skipped")
            return
        if isinstance(func.value, ast.Name) and func.value.id == "asyncio" and func.attr == "run":
            return
        receiver = _unwrap(func.value)
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "expect":
            self.page_calls += 1
            self.guarded(line, call, lambda: self.assertion(receiver, func.attr, call, line))
            return
        root = _root_name(call)
        if root in self.other_pages:
            if func.attr == "close":
                return
            self.note(line, f"{_shape(call)} acts on {root}, {self.other_pages[root]}; skipped")
            return
        if root not in self.main_pages and root not in self.locators:
            if func.attr in _BOILERPLATE_METHODS or "tracing" in _shape(func).split("."):
                return
            self.note(line, f"{_shape(call)} not understood; skipped")
            return
        self.page_calls += 1
        self.guarded(line, call, lambda: self.action(receiver, func.attr, call, line))

    def guarded(self, line: int, call: ast.Call, fn: Any) -> None:
        try:
            fn()
        except (_Skip, _NotPage) as exc:
            self.note(line, f"{_shape(call)}: {_reason(exc)}; skipped")

    # --- literals -------------------------------------------------------------------
    def literal(self, node: ast.AST) -> Any:
        """Value of a literal argument: constants, names of constants, f-strings, ``re.compile``."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.constants:
                return self.constants[node.id]
            raise _Skip(f"`{node.id}` is not a literal or a constant of the script")
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    if v.format_spec is not None or v.conversion not in (-1, ord("s")):
                        raise _Skip("an f-string with a format is not supported")
                    parts.append(str(self.literal(v.value)))
                else:
                    parts.append(str(self.literal(v)))
            return "".join(parts)
        if isinstance(node, ast.BinOp):
            left, right = self.literal(node.left), self.literal(node.right)
            if isinstance(node.op, ast.Add) and isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(node.op, ast.BitOr) and isinstance(left, int) and isinstance(right, int):
                return left | right
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.literal(node.operand)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return -v
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.literal(e) for e in node.elts]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "re":
            flag = {"I": re.I, "IGNORECASE": re.I, "S": re.S, "DOTALL": re.S, "M": re.M, "MULTILINE": re.M}
            if node.attr in flag:
                return int(flag[node.attr])
        if (isinstance(node, ast.Call) and _shape(node.func) == "re.compile" and node.args
                and not node.keywords and len(node.args) <= 2):
            pattern = self.literal(node.args[0])
            flags = self.literal(node.args[1]) if len(node.args) == 2 else 0
            if not isinstance(pattern, str) or not isinstance(flags, int):
                raise _Skip("re.compile() needs a literal pattern")
            js = "".join(c for f, c in ((re.I, "i"), (re.S, "s"), (re.M, "m")) if flags & f)
            if flags & ~(re.I | re.S | re.M):
                raise _Skip("only the regular-expression flags I, S and M are supported")
            return _Regex(pattern, js)
        raise _Skip("an argument is not a literal")

    def text_arg(self, node: ast.AST) -> str | _Regex:
        v = self.literal(node)
        if not isinstance(v, (str, _Regex)):
            raise _Skip("expected a string argument")
        return v

    def string_arg(self, node: ast.AST) -> str:
        v = self.literal(node)
        if isinstance(v, list) and len(v) == 1:
            v = v[0]
        if not isinstance(v, str):
            raise _Skip("expected one string argument")
        return v

    # --- locators -------------------------------------------------------------------
    def locator(self, node: ast.AST) -> _Page | _Loc:
        """The page or the locator an expression denotes."""
        node = _unwrap(node)
        if isinstance(node, ast.Name):
            if node.id in self.main_pages:
                return _PAGE
            if node.id in self.locators:
                return self.locators[node.id]
            if node.id in self.other_pages:
                raise _Skip(f"{node.id} is {self.other_pages[node.id]}")
            raise _NotPage()
        if isinstance(node, ast.Attribute):
            base = self.locator(node.value)
            attr = node.attr
            if isinstance(base, _Page):
                if attr == "main_frame":
                    return _PAGE
                if attr in ("keyboard", "mouse", "touchscreen"):
                    raise _Skip(f"page.{attr} has no target element (Steadyhand acts on elements)")
                raise _Skip(f"page.{attr} is not supported")
            if attr in ("first", "last"):
                return self.nth(base, "0" if attr == "first" else "-1")
            if attr == "content_frame" and not base.frame:
                return replace(base, frame=True)
            if attr == "owner" and base.frame:
                return replace(base, frame=False)
            raise _Skip(f".{attr} is not supported")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            base = self.locator(node.func.value)
            return self.locator_call(base, node.func.attr, node)
        raise _Skip("expression not understood")

    def nth(self, base: _Loc, index: str) -> _Loc:
        return replace(base, selector=f"{base.selector} >> nth={index}")

    def locator_call(self, base: _Page | _Loc, method: str, call: ast.Call) -> _Loc:
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        if any(k.arg is None for k in call.keywords):
            raise _Skip("**kwargs are not supported")
        if method == "nth" and isinstance(base, _Loc):
            if len(call.args) != 1 or kwargs:
                raise _Skip(".nth() needs one index")
            index = self.literal(call.args[0])
            if not isinstance(index, int) or isinstance(index, bool):
                raise _Skip(".nth() needs an integer")
            return self.nth(base, str(index))
        if method == "filter" and isinstance(base, _Loc) and not base.frame:
            if call.args:
                raise _Skip(".filter() takes keyword arguments only")
            return replace(base, selector=base.selector + self.filters(kwargs, "filter"))
        if method in ("and_", "or_") and isinstance(base, _Loc) and not base.frame:
            other = self.locator(call.args[0]) if len(call.args) == 1 and not kwargs else None
            if not isinstance(other, _Loc) or other.frame:
                raise _Skip(f".{method}() needs one locator")
            inner = json.dumps(other.selector, ensure_ascii=False)
            return replace(base, selector=f"{base.selector} >> internal:{method.rstrip('_')}={inner}")
        if method == "frame_locator":
            if len(call.args) != 1 or kwargs:
                raise _Skip(".frame_locator() needs one selector")
            sel = self.string_arg(call.args[0])
            return _Loc(self.join(base, sel), sel, frame=True)
        if method == "locator":
            if len(call.args) != 1:
                raise _Skip(".locator() needs one selector")
            sel = self.literal(call.args[0])
            if not isinstance(sel, str):
                raise _Skip(".locator() needs a selector string")
            return _Loc(self.join(base, sel) + self.filters(kwargs, "locator"), sel)
        if method.startswith("get_by_"):
            inner, label = self.getter(method, call, kwargs)
            return _Loc(self.join(base, inner), label)
        raise _Skip(f".{method}() is not supported")

    @staticmethod
    def join(base: _Page | _Loc, inner: str) -> str:
        if isinstance(base, _Page):
            return inner
        return base.selector + (_ENTER_FRAME if base.frame else " >> ") + inner

    def filters(self, kwargs: Mapping[str, ast.AST], method: str) -> str:
        out = ""
        for key, node in kwargs.items():
            if key in ("has_text", "has_not_text"):
                out += f" >> internal:{key.replace('_', '-')}={_quote_text(self.text_arg(node), False)}"
            elif key in ("has", "has_not"):
                inner = self.locator(node)
                if not isinstance(inner, _Loc) or inner.frame:
                    raise _Skip(f"{key}= needs a locator")
                out += f" >> internal:{key.replace('_', '-')}={json.dumps(inner.selector, ensure_ascii=False)}"
            elif key == "visible":
                out += f" >> visible={_js_bool(bool(self.literal(node)))}"
            else:
                raise _Skip(f".{method}() argument {key}= is not supported")
        return out

    def getter(self, method: str, call: ast.Call, kwargs: Mapping[str, ast.AST]) -> tuple[str, str]:
        """Selector and human label of a ``get_by_*`` call."""
        if len(call.args) != 1:
            raise _Skip(f".{method}() needs one positional argument")
        arg = self.text_arg(call.args[0])
        label = arg.pattern if isinstance(arg, _Regex) else arg
        exact = bool(self.literal(kwargs["exact"])) if "exact" in kwargs else False
        allowed = {"exact"}
        if method == "get_by_role":
            if not isinstance(arg, str):
                raise _Skip("get_by_role() needs a role name")
            allowed = set(_ROLE_OPTIONS) | {"exact"}
            self.check_kwargs(method, kwargs, allowed)
            props = ""
            for key in _ROLE_OPTIONS:
                if key not in kwargs:
                    continue
                if key in ("name", "description"):
                    text = self.text_arg(kwargs[key])
                    props += f"[{key}={_quote_attr(text, exact)}]"
                    if key == "name":
                        label = text.pattern if isinstance(text, _Regex) else text
                else:
                    props += f"[{key.replace('_', '-')}={_js_bool(self.literal(kwargs[key]))}]"
            return f"internal:role={arg}{props}", label
        if method == "get_by_test_id":
            self.check_kwargs(method, kwargs, set())
            return f"internal:testid=[data-testid={_quote_attr(arg, True)}]", label
        self.check_kwargs(method, kwargs, allowed)
        if method == "get_by_label":
            return f"internal:label={_quote_text(arg, exact)}", label
        if method == "get_by_text":
            return f"internal:text={_quote_text(arg, exact)}", label
        attrs = {"get_by_placeholder": "placeholder", "get_by_title": "title", "get_by_alt_text": "alt"}
        if method in attrs:
            return f"internal:attr=[{attrs[method]}={_quote_attr(arg, exact)}]", label
        raise _Skip(f".{method}() is not supported")

    @staticmethod
    def check_kwargs(method: str, kwargs: Mapping[str, ast.AST], allowed: set[str]) -> None:
        for key in kwargs:
            if key not in allowed:
                raise _Skip(f".{method}() argument {key}= is not supported")

    # --- actions --------------------------------------------------------------------
    def action(self, receiver: ast.AST, method: str, call: ast.Call, line: int) -> None:
        target = self.locator(receiver)
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        if isinstance(target, _Page):
            self.page_action(method, call, kwargs, line)
            return
        if target.frame:
            raise _Skip("a frame locator is not an element; add .locator() or .get_by_…()")
        self.element_action(target, method, list(call.args), kwargs, line)

    def page_action(self, method: str, call: ast.Call, kwargs: dict[str, ast.AST], line: int) -> None:
        if method == "goto":
            if len(call.args) != 1:
                raise _Skip("page.goto() needs one URL")
            self.ops.append(_Op(line, "goto", value=self.string_arg(call.args[0])))
            dropped = sorted(k for k in kwargs if k)
            if dropped:  # timeout=, wait_until=, referer=: the project's navigation settings apply
                self.note(line, f"page.goto() options dropped: {', '.join(dropped)} (the project's "
                                "browser.navigation_timeout_ms and waits apply)")
            return
        if method == "go_back":
            self.ops.append(_Op(line, "back"))
            return
        if method in ("close", "set_default_timeout", "set_default_navigation_timeout"):
            return
        if method.startswith("wait_for_"):
            raise _Skip("waits are not imported: the engine waits for the page to settle after every action")
        if method in _ELEMENT_ACTIONS and call.args:
            # the selector-first API of older codegen versions: page.click("text=Sign in")
            sel = self.literal(call.args[0])
            if not isinstance(sel, str):
                raise _Skip("expected a selector string")
            self.element_action(_Loc(sel, sel), method, list(call.args[1:]), kwargs, line)
            return
        raise _Skip(f"page.{method}() has no equivalent in Steadyhand's action space")

    def element_action(self, loc: _Loc, method: str, args: list[ast.AST], kwargs: dict[str, ast.AST],
                       line: int) -> None:
        if method not in _ELEMENT_ACTIONS:
            raise _Skip(f".{method}() has no equivalent in Steadyhand's action space")
        kind, nargs = _ELEMENT_ACTIONS[method]
        extra = {"label", "value", "index"} if method == "select_option" else set()
        if method == "set_checked":
            extra = {"checked"}
        for key in kwargs:
            if key not in _HARMLESS_KWARGS | extra:
                raise _Skip(f"argument {key}= is not supported")
        if len(args) > nargs:
            raise _Skip("too many arguments")
        op = _Op(line, kind, loc=loc, verb=method)
        if method in ("fill", "type", "press_sequentially"):
            if len(args) != 1:
                raise _Skip(f".{method}() needs a value")
            op.typed = True
            try:
                op.value = self.string_arg(args[0])
            except _Skip:
                op.value = None  # kept only when the field is secret (then it becomes a parameter)
        elif method == "clear":
            op.value, op.verb = "", "clear"
        elif method == "press":
            if len(args) != 1:
                raise _Skip(".press() needs a key")
            op.value = self.string_arg(args[0])
        elif method == "set_input_files":
            files = self.literal(args[0]) if args else None
            if isinstance(files, list) and len(files) == 1:
                files = files[0]
            if not isinstance(files, str) or not files:
                raise _Skip("only one file path is supported")
            op.value = files
        elif method == "select_option":
            op.value = self.select_value(args, kwargs)
        elif method == "set_checked":
            node = args[0] if args else kwargs.get("checked")
            if node is None:
                raise _Skip(".set_checked() needs True or False")
            op.kind = "check" if self.literal(node) else "uncheck"
        elif args:
            raise _Skip(f".{method}() takes no value here")
        self.ops.append(op)

    def select_value(self, args: list[ast.AST], kwargs: Mapping[str, ast.AST]) -> str:
        if "index" in kwargs:
            raise _Skip("select_option(index=...) is not supported; select by label or value")
        sources = list(args) + [kwargs[k] for k in ("label", "value") if k in kwargs]
        if len(sources) != 1:
            raise _Skip("select_option() with several options is not supported")
        value = self.literal(sources[0])
        if isinstance(value, list) and len(value) > 1:
            raise _Skip("select_option() with several options is not supported")
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if not isinstance(value, str):
            raise _Skip("select_option() needs one option label or value")
        return value

    # --- assertions -----------------------------------------------------------------
    def assertion(self, expect_call: ast.Call, method: str, call: ast.Call, line: int) -> None:
        if len(expect_call.args) != 1 and not (len(expect_call.args) == 2 and not expect_call.keywords):
            raise _Skip("expect() takes one locator or the page")
        target = self.locator(expect_call.args[0])
        kwargs = {k.arg: k.value for k in call.keywords if k.arg}
        flag_kw = {"to_be_visible": "visible", "to_be_enabled": "enabled"}.get(method)
        for key in kwargs:
            if key not in ("timeout", "use_inner_text") and key != flag_kw:
                raise _Skip(f"argument {key}= is not supported")
        if isinstance(target, _Page):
            if method != "to_have_url":
                raise _Skip(f"expect(page).{method}() has no equivalent assertion")
            expected = self.literal(call.args[0]) if len(call.args) == 1 else None
            if not isinstance(expected, str):
                raise _Skip("to_have_url() with a regular expression is not supported; use a URL string")
            self.ops.append(_Op(line, "assert", assertion="url_contains", value=expected, targetless=True))
            return
        if target.frame:
            raise _Skip("a frame locator is not an element")
        if method in ("to_be_checked", "not_to_be_checked"):
            raise _Skip("Steadyhand has no checked-state assertion")
        if method in _STATE_ASSERTIONS:
            if call.args:
                raise _Skip(f"{method}() takes no value here")
            kind = _STATE_ASSERTIONS[method]
            if flag_kw and flag_kw in kwargs and not self.literal(kwargs[flag_kw]):
                kind = {"visible": "hidden", "enabled": "disabled"}[kind]
            self.ops.append(_Op(line, "assert", loc=target, assertion=kind, targetless=kind == "hidden"))
            return
        if method in _VALUE_ASSERTIONS:
            if len(call.args) != 1:
                raise _Skip(f"{method}() needs one expected value")
            expected = self.literal(call.args[0])
            if method == "to_have_count":
                if not isinstance(expected, int) or isinstance(expected, bool):
                    raise _Skip("to_have_count() needs an integer")
                expected = str(expected)
            elif not isinstance(expected, str):
                raise _Skip(f"{method}() is supported with one string only (not a list or a regular expression)")
            kind = _VALUE_ASSERTIONS[method]
            self.ops.append(_Op(line, "assert", loc=target, assertion=kind, value=expected,
                                targetless=kind == "count"))
            return
        raise _Skip(f"{method}() has no equivalent assertion")


#: Locator methods: action kind and the number of positional arguments they take.
_ELEMENT_ACTIONS: dict[str, tuple[str, int]] = {
    "click": ("click", 0), "dblclick": ("dblclick", 0), "hover": ("hover", 0),
    "fill": ("input", 1), "type": ("input", 1), "press_sequentially": ("input", 1), "clear": ("input", 0),
    "press": ("press", 1), "check": ("check", 0), "uncheck": ("uncheck", 0), "set_checked": ("check", 1),
    "select_option": ("select", 1), "set_input_files": ("upload", 1),
}
_STATE_ASSERTIONS = {
    "to_be_visible": "visible", "not_to_be_hidden": "visible", "to_be_hidden": "hidden", "not_to_be_visible": "hidden",
    "to_be_enabled": "enabled", "not_to_be_disabled": "enabled", "to_be_disabled": "disabled",
    "not_to_be_enabled": "disabled",
}
_VALUE_ASSERTIONS = {
    "to_have_text": "text_equals", "to_contain_text": "text_contains", "to_have_value": "value",
    "to_have_count": "count",
}


def _is_main_guard(test: ast.expr) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


# --- secrets, URLs and steps -------------------------------------------------------------------

def _words(text: str) -> list[str]:
    """Lower-case words of a locator: split at non-letters and camelCase boundaries."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return [w for w in re.split(r"[^A-Za-z0-9]+", text.lower()) if w]


def _looks_secret(loc: _Loc) -> bool:
    """A secret field: its locator or label says so in English words, or names a password in any language
    (:func:`core.secrets.looks_like_password`: "Mot de passe", "密码", ``#pw``)."""
    words = _words(loc.selector + " " + loc.label)
    return any(w in SECRET_WORDS or w.startswith(_SECRET_PREFIXES) for w in words) \
        or looks_like_password(loc.label, loc.selector)


def _slug(text: str) -> str:
    return slug(text, "secret", digit_prefix="secret")


class _Secrets:
    """Decides which typed values become secret parameters, and masks literals elsewhere."""

    def __init__(self, names: Iterable[str], values: Mapping[str, str]) -> None:
        self.declared: list[str] = list(dict.fromkeys([*names, *values]))
        self.declared_values = {n: v for n, v in values.items() if isinstance(v, str) and v}
        self.by_value: dict[str, str] = {}
        for n, v in self.declared_values.items():
            self.by_value.setdefault(v, n)
        self.used: dict[str, str | None] = {}  # name -> literal it stands for (None: not a literal)
        self.order: list[str] = []
        # declared names whose value is unknown and into whose fields several different literals are typed:
        # which one is the declared secret's cannot be told, so none takes the name (name -> how many values)
        self.unsure: dict[str, int] = {}

    def prepare(self, ops: list[_Op]) -> None:
        """Find the declared secrets whose value is unknown and whose fields get several different literals."""
        groups: dict[str, set[str]] = {}
        for op in ops:
            value = op.value
            if (op.kind != "input" or not op.typed or op.loc is None or value is None or value in self.by_value
                    or not _looks_secret(op.loc)):
                continue
            base = next((n for n in self._matches(op.loc) if n not in self.declared_values), None)
            if base is not None:
                groups.setdefault(base, set()).add(value)
        self.unsure = {n: len(v) for n, v in groups.items() if len(v) >= 2}

    def name_for(self, op: _Op) -> tuple[str, str] | None:
        """``(name, why)`` when the typed value of ``op`` is secret, else None."""
        assert op.loc is not None
        value = op.value
        if value is not None and value in self.by_value:
            return self._use(self.by_value[value], value), "it equals the value of a declared secret"
        if not _looks_secret(op.loc):
            return None
        if value is not None:
            for name, literal in self.used.items():
                if literal == value:
                    return name, "the field looks like a secret field"
        return self._use(self._pick(op.loc, value), value), "the field looks like a secret field"

    def _use(self, name: str, literal: str | None) -> str:
        if name not in self.used:
            self.used[name] = literal
            self.order.append(name)
        return name

    def _free(self, name: str, literal: str | None) -> bool:
        if name in self.used:
            return literal is not None and self.used[name] == literal
        if literal is None:
            return True  # a value computed by the script: the declared secret supplies it at run time
        if name in self.unsure:
            return False  # one of several different literals: never guessed to be the declared secret's value
        known = self.declared_values.get(name)
        return known is None or known == literal

    def _matches(self, loc: _Loc) -> list[str]:
        """The declared names a secret field's locator names, best first."""
        slug = _slug(loc.label)
        words = set(_words(loc.selector + " " + loc.label))
        matches = [n for n in self.declared if _slug(n) == slug]
        matches += sorted((n for n in self.declared if n not in matches and set(_words(n)) <= words),
                          key=lambda n: -len(n))
        if looks_like_password(loc.label, loc.selector):  # "Mot de passe", "#pw": a declared password-like name
            matches += [n for n in self.declared if n not in matches and looks_like_password(n)]
        return matches

    def _pick(self, loc: _Loc, literal: str | None) -> str:
        slug = _slug(loc.label)
        matches = self._matches(loc)
        for name in matches:
            if self._free(name, literal):
                return name
        if not matches and slug == _slug("") and looks_like_password(loc.label, loc.selector):
            slug = "password"  # a label with no ASCII word ("密码", "Mot de passe" keeps "mot_de_passe")
        base = matches[0] if matches else slug
        candidate, i = base, 1
        if base in self.unsure:  # none of the values is {base}: {base_1}, {base_2}...
            candidate = f"{base}_1"
        while not self._free(candidate, literal) or (candidate != base and candidate in self.declared):
            i += 1
            candidate = f"{base}_{i}"
        return candidate

    def literals(self) -> list[tuple[str, str]]:
        """``(literal, name)`` of every known secret value, longest first."""
        pairs = {v: n for n, v in self.used.items() if v}
        for v, n in self.by_value.items():
            pairs.setdefault(v, n)
        return sorted(pairs.items(), key=lambda p: (-len(p[0]), p[0]))

    def substitute(self, text: str) -> str:
        """The literal ``text`` as flow text: braces doubled (literal), secret values replaced by ``{name}``."""
        out = escape(text)
        for literal, name in self.literals():
            if text == literal or (len(literal) >= MIN_SUBSTRING_LENGTH and literal in text):
                self._use(name, literal)
                if text == literal:
                    return placeholder(name)
                out = out.replace(escape(literal), placeholder(name))
        return out

    def leaked_in(self, text: str) -> str:
        """Name of a secret whose value occurs in ``text`` ("" when none)."""
        for literal, name in self.literals():
            if text == literal or (len(literal) >= MIN_SUBSTRING_LENGTH and literal in text):
                return name
        return ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_MAX else text[:_LABEL_MAX - 1] + "…"


def _step_name(op: _Op, value: str) -> str:
    label = _short(op.loc.label) if op.loc else ""
    kind = op.kind
    if kind == "assert":
        return {
            "visible": f"Expect {label} to be visible", "hidden": f"Expect {label} to be hidden",
            "enabled": f"Expect {label} to be enabled", "disabled": f"Expect {label} to be disabled",
            "text_equals": f"Expect {label} to have text {_short(value)!r}",
            "text_contains": f"Expect {label} to contain {_short(value)!r}",
            "value": f"Expect {label} to have value {_short(value)!r}",
            "count": f"Expect {value} × {label}",
            "url_contains": f"Expect the URL to contain {_short(value)!r}",
        }[op.assertion]
    if kind == "input":
        verb = {"fill": "Fill", "clear": "Clear"}.get(op.verb, "Type into")
        return f"{verb} {label}"
    return {
        "click": f"Click {label}", "dblclick": f"Double-click {label}", "hover": f"Hover over {label}",
        "press": f"Press {_short(value)} in {label}", "check": f"Check {label}", "uncheck": f"Uncheck {label}",
        "select": f"Select {_short(value)} in {label}", "upload": f"Upload a file to {label}",
        "back": "Go back", "navigate": f"Go to {_short(value)}",
    }[kind]


def _fills_its_target(kind: str) -> bool:
    """The action puts a value into its element (types, presses a key, picks an option or a file).

    From the action table: it needs a target and takes a value.  ``kind`` may
    also be an import-only kind (``"goto"``, ``"skip"``): False.
    """
    row = ACTION_SPACE.get(kind)
    return row is not None and row.target == "required" and row.value != "none"


def _drop_focus_clicks(ops: list[_Op]) -> tuple[list[_Op], list[int]]:
    """Remove the click codegen records before typing into the same field.

    Replaying it would fail post-verification (a click on a field changes
    nothing but the focus), and typing focuses the field anyway.
    """
    kept: list[_Op] = []
    dropped: list[int] = []
    for i, op in enumerate(ops):
        nxt = ops[i + 1] if i + 1 < len(ops) else None
        if (op.kind == "click" and op.loc is not None and nxt is not None and nxt.loc is not None
                and _fills_its_target(nxt.kind) and nxt.loc.selector == op.loc.selector):
            dropped.append(op.line)
            continue
        kept.append(op)
    return kept, dropped


def _decide_secrets(ops: list[_Op], secrets: _Secrets, notes: list[tuple[int, str]]) -> None:
    """Replace typed secret values by ``{name}`` (in place), before anything else reads a value."""
    for op in ops:
        if op.kind != "input" or not op.typed or op.loc is None:
            continue
        found = secrets.name_for(op)
        if found is None:
            if op.value is None:
                notes.append((op.line, f"line {op.line}: the typed value is not a literal; skipped"))
                op.kind = "skip"
            continue
        name, why = found
        op.value, op.secret = placeholder(name), True
        where = f" into {_short(op.loc.label)!r}" if not secrets.leaked_in(op.loc.label) else ""
        notes.append((op.line, f"line {op.line}: the value typed{where} became secret parameter {{{name}}} ({why})"))


def _build_steps(ops: list[_Op], secrets: _Secrets, base_url: str,
                 notes: list[tuple[int, str]]) -> tuple[str | None, list[Step]]:
    """The start URL (None without a leading ``goto``) and the steps ``s1``..``sN``."""
    steps: list[Step] = []
    start_url: str | None = None
    for op in ops:
        if op.kind == "skip":
            continue
        value = op.value or ""
        if not op.secret:
            value = secrets.substitute(value)  # a script's strings are literal: their braces stay literal
        leaked = secrets.leaked_in(op.loc.selector) if op.loc is not None else ""
        if leaked:
            notes.append((op.line, f"line {op.line}: the locator contains the value of secret {{{leaked}}}; skipped"))
            continue
        kind = op.kind
        if kind == "goto":
            url = relative_url(value, base_url)
            if base_url and url == value and re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value):
                notes.append((op.line, f"line {op.line}: the URL is not under the base URL; kept absolute"))
            if start_url is None and not steps:
                start_url = url
                continue
            kind, value = "navigate", url
        selector = escape(op.loc.selector) if op.loc is not None else ""
        if kind == "assert":
            if op.assertion == "url_contains":
                value = relative_url(value, base_url)
            # The assertion names its selector even when the step has it too: the executor checks an
            # assertion after re-observing the page, which invalidates the step target's ref when the
            # target is not an interactive element (a heading, a text).  The step's own selector still
            # lets the first run capture the element's descriptor.
            step = Step(id=f"s{len(steps) + 1}", action=Action("assert"), name=_step_name(op, value),
                        selector="" if op.targetless else selector,
                        assertions=(Assertion(op.assertion, value, selector),))  # type: ignore[arg-type]
        else:
            step = Step(id=f"s{len(steps) + 1}", action=Action(kind, value=value),  # type: ignore[arg-type]
                        name=_step_name(replace(op, kind=kind), value), selector=selector,
                        recorded=StepEvidence(after=AfterState(download=True)) if op.download else None)
        steps.append(step)
    return start_url, steps


def _masker(values: Iterable[str]) -> Redactor:
    """Masks secret values in messages; short ones are left alone (they would mask line numbers)."""
    return Redactor(v for v in values if len(v) >= MIN_SUBSTRING_LENGTH)


def _parse(source: str, filename: str, redactor: Redactor) -> ast.Module:
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        msg = redactor.text(exc.msg or "invalid syntax")
        raise ProjectError(filename, f"not valid Python: {msg}", location=f"line {exc.lineno or 1}") from None
    except ValueError as exc:  # null bytes on older Pythons
        raise ProjectError(filename, f"not valid Python: {redactor.text(str(exc))}", location="line 1") from None
    except (RecursionError, MemoryError):  # expressions nested or chained past the parser's stack
        raise ProjectError(filename, "not readable: the script is nested too deeply") from None


def import_codegen(source: str, *, flow_name: str, filename: str = "<script>", base_url: str = "",
                   secret_names: Iterable[str] = (), secret_values: Mapping[str, str] = {}) -> ImportResult:
    """Turn a Playwright codegen script (Python) into a flow, without executing it.

    Parameters
    ----------
    source : str
        The script's text (sync or async API, plain or pytest form).
    flow_name : str
        Name of the flow (the flow file's stem).
    filename : str
        Shown in notes' context and in errors.
    base_url : str
        URLs starting with it become relative (``"http://host/app/login"`` ->
        ``"/login"``); others stay absolute.  The first ``page.goto()``
        before any action is the flow's ``start_url``, later ones are
        ``navigate`` steps.
    secret_names : Iterable[str]
        Declared secret names (project and flow); a secret field whose
        label matches one uses that name.
    secret_values : Mapping[str, str]
        Known values of declared secrets: a literal equal to one becomes
        ``{name}``.

    Returns
    -------
    ImportResult
        The flow (steps ``s1``..``sN`` with a ``selector`` and an empty
        ``target``; assertions as ``assert`` steps) and notes for the user.

    Raises
    ------
    ProjectError
        ``ProjectError(filename, message, location="line N")`` when the
        script is not valid Python or holds no supported Playwright page
        call.  The message never contains a secret value.
    ValueError
        When ``flow_name`` is empty.
    """
    if not flow_name:
        raise ValueError("flow_name must not be empty")
    secrets = _Secrets(secret_names, secret_values)
    tree = _parse(source, filename, _masker(secrets.declared_values.values()))
    reader = _Reader()
    reader.block(tree.body)
    if not reader.page_calls:
        raise ProjectError(filename, "no Playwright page calls found; expected a script written by "
                                     "`playwright codegen --target python`", location="line 1")
    ops, dropped = _drop_focus_clicks(reader.ops)
    notes = list(reader.notes)
    if dropped:
        lines = ", ".join(map(str, dropped))
        notes.append((dropped[0], f"line {dropped[0]}: dropped {counted(len(dropped), 'click')} that only focus a field "
                                  f"before typing (lines {lines}); replay types into the field directly"))
    secrets.prepare(ops)
    _decide_secrets(ops, secrets, notes)
    for name, count in secrets.unsure.items():
        got = [n for n in secrets.order if n.startswith(f"{name}_") and n not in secrets.declared]
        notes.append((0, f"the script types {count} different values into the fields of the declared secret "
                         f"{{{name}}}, whose value is not known here ({env_var_name(name)} is not set and it has no "
                         f"default): which one is {{{name}}} cannot be told, so none of them was taken for it; they "
                         f"became {', '.join(f'{{{n}}}' for n in got)}: set "
                         f"{' and '.join(env_var_name(n) for n in got)} (or the keyring) before running, or set "
                         f"{env_var_name(name)} and import again to have the equal value become {{{name}}}"))
    start_url, steps = _build_steps(ops, secrets, base_url, notes)
    if not steps:  # nothing but a page.goto(), or nothing at all: an empty flow is never written
        first = next((text for _, text in sorted(notes, key=lambda n: n[0])), "")
        line = int(m.group(1)) if (m := re.match(r"line (\d+): ", first)) else 1
        reason = first.split(": ", 1)[1] if ": " in first else "no supported page call"
        raise ProjectError(filename, f"nothing to import: {_masker(v for v, _ in secrets.literals()).text(reason)}",
                           location=f"line {line}")
    if start_url is None:
        start_url = "/"
        notes.append((0, "no page.goto() before the first action: the flow starts at /"))
    for name in secrets.order:
        if name not in secrets.declared:
            notes.append((0, f"secret {{{name}}} is not declared in the project: set {env_var_name(name)} or store "
                             f"it in the system keyring before running the flow"))
    flow = Flow(name=flow_name, start_url=start_url, steps=tuple(steps), secrets=tuple(secrets.order),
                description=f"Imported from {PurePath(filename).name} (Playwright codegen).")
    mask = _masker(v for v, _ in secrets.literals())
    ordered = [text for _, text in sorted(notes, key=lambda n: n[0])]
    return ImportResult(flow=flow, notes=tuple(mask.text(t) for t in ordered))
