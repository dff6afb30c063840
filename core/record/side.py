"""Import Selenium IDE projects (``.side`` files) into Steadyhand flows.

A ``.side`` file is JSON: ``{"name", "url", "tests": [{"name", "commands":
[{"command", "target", "targets": [[locator, kind], ...], "value"}]}]}``.
:func:`import_side` turns each test into a flow; nothing in the file is ever
executed.

Commands (``verify*`` is imported as the ``assert*`` it mirrors: Steadyhand
stops at a failed check, it does not carry on):

=============================================  ======================================================
Selenium IDE                                   Steadyhand step
=============================================  ======================================================
``open``                                       the flow's ``start_url``; a later one: ``navigate``
``click``, ``clickAt``                         ``click``
``doubleClick``, ``doubleClickAt``             ``dblclick``
``type``                                       ``input`` (secret fields become ``{name}``)
``sendKeys`` with ``${KEY_ENTER}`` etc.        ``press`` (text without a key: ``input``)
``select`` (``label=`` / ``value=``)           ``select``
``check`` / ``uncheck``                        ``check`` / ``uncheck``
``mouseOver``                                  ``hover``
``assertText`` / ``assertNotText``             ``assert`` ``text_equals`` (``*x*``: ``text_contains``)
``assertValue``                                ``assert`` ``value``
``assertElementPresent`` / ``...NotPresent``   ``assert`` ``visible`` / ``hidden`` (see below)
``assertElementVisible`` / ``...NotVisible``   ``assert`` ``visible`` / ``hidden``
``assertEditable`` / ``assertNotEditable``     ``assert`` ``enabled`` / ``disabled``
``assertTextPresent`` / ``...NotPresent``      ``assert`` ``text_appears`` / ``text_absent``
``waitForElementPresent`` / ``...Visible``     ``assert`` ``visible`` (assertions wait)
``waitForElementNotPresent`` / ``...Visible``  ``assert`` ``hidden``
``waitForText``                                ``assert`` ``text_contains``
=============================================  ======================================================

Variables: ``store`` (a literal) makes the parameter ``{name}`` with that value as its default; a
``${name}`` never stored becomes the parameter ``{name}`` (give it with ``run --param``).  A ``${name}``
that another ``store*`` command fills at run time (``storeText``, ``storeValue``...) cannot keep its meaning
in a flow, which has no run-time variables: the test is refused, naming the command; so is a variable an
``executeScript`` stores its result in.

Control flow: a test with a command inside an ``if`` / ``while`` / ``times`` / ``forEach`` / ``do`` block is
refused, naming the command and the block's opening command (a flow is a straight line: the body would run
always, or once).  A ``click`` whose very next command types (``type``, ``sendKeys``) into the same target is
dropped with one note per test: it only focuses the field, which typing does anyway.

Secrets: a value typed into a secret field (its locator says password, pin, token...) or equal to a
declared secret's value becomes a secret parameter.  Different values stay different across the whole
file: a literal equal to a declared secret's known value takes it, and each other literal a secret of its
own (``{password_2}``...), so a wrong-password test still types the wrong one.  When the declared secret's
value is unknown, the one literal typed into its fields takes its name; several different ones never do
(which is the secret's cannot be told): they are ``{password_1}``, ``{password_2}``... (see
:class:`_SideSecrets`).  The note names the environment variable that gives each
(``STEADYHAND_SECRET_PASSWORD_2``).

Refused (``ProjectError``, nothing written): a test with no step to import (its notes say why).

Not supported, each with a note naming the command: ``assertTitle`` /
``verifyTitle`` (the action space has no title assertion), ``assertChecked``
(no checked assertion), ``store*`` of a value read at run time (flows
have parameters, not variables), ``execute*`` / ``runScript`` (a flow never runs a
script), an empty control-flow block and ``run`` (a flow does not call other tests), ``selectFrame`` / ``selectWindow``
(steps find elements in frames themselves; windows are not followed, and a click
recorded with ``opensWindow`` is imported as a click with a note saying so),
dialogs (``answerOnNextPrompt``, ``chooseOkOnNextConfirmation``...),
``dragAndDropToObject``, ``submit`` (click the submit button instead).
``pause``, ``setWindowSize``, ``echo``, ``close`` and comments are dropped
with a note (the engine waits and sizes the viewport itself).
"Present" is imported as "visible": a present but hidden element fails it.

Locators: ``id=x`` -> ``id=x``, ``name=x`` -> ``[name="x"]``, ``css=...``,
``xpath=...`` and bare ``//...`` as they are, ``linkText=T`` ->
``a:text-is("T")``, ``partialLinkText=T`` -> ``a:has-text("T")``.  The step's
selector is the command's chosen target.  Its ``targets`` list becomes
**descriptor hints** (``imported: true``): tag, id, name attribute, link or
inner text, image alt, from the id / name / linkText / ``xpath:*`` entries; of an
XPath, only its last step describes the element (``//div[@id='login']/input`` gives
the tag ``input``, never the ``div``'s id).
When the selector no longer matches one element, the locator chain looks for
the element by these hints (and proposes a heal); the first run that passes
the step by its selector replaces the hints by the full captured descriptor.
"""
from __future__ import annotations

import json
import re
from urllib.parse import urlsplit
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from core.progress import counted
from core.domain import Action, Assertion, ElementDescriptor, Flow, Step
from core.project.loader import ProjectError, check_size
from core.project.params import escape, placeholder
from core.secrets import MIN_SUBSTRING_LENGTH, env_var_name, looks_like_password

from .codegen import SECRET_WORDS
from .steps import relative_url, slug

__all__ = ["SideTest", "SideImport", "read_side", "import_side", "UNSUPPORTED"]

#: Commands that have no step, and why (the note the user reads).
UNSUPPORTED: Mapping[str, str] = {
    "asserttitle": "the action space has no title assertion",
    "verifytitle": "the action space has no title assertion",
    "assertchecked": "there is no checked assertion (the check step itself is verified)",
    "verifychecked": "there is no checked assertion (the check step itself is verified)",
    "assertnotchecked": "there is no checked assertion",
    "verifynotchecked": "there is no checked assertion",
    "executescript": "a flow never runs a script",
    "executeasyncscript": "a flow never runs a script",
    "runscript": "a flow never runs a script",
    "if": "a flow is a straight line (no control flow)", "elseif": "a flow is a straight line",
    "else": "a flow is a straight line", "end": "a flow is a straight line", "while": "a flow is a straight line",
    "do": "a flow is a straight line", "repeatif": "a flow is a straight line", "times": "a flow is a straight line",
    "foreach": "a flow is a straight line", "run": "a flow does not call other tests",
    "selectframe": "steps find elements in frames themselves",
    "selectwindow": "other windows are not followed",
    "answeronnextprompt": "native dialogs are not scripted",
    "chooseokonnextconfirmation": "native dialogs are not scripted",
    "choosecancelonnextconfirmation": "native dialogs are not scripted",
    "choosecancelonnextprompt": "native dialogs are not scripted",
    "webdriverchooseokonvisibleconfirmation": "native dialogs are not scripted",
    "draganddroptoobject": "drag and drop is not in the action space",
    "submit": "click the form's submit button instead",
    "editcontent": "contenteditable editing is not in the action space",
}
_DROPPED: Mapping[str, str] = {
    "pause": "the engine waits for the page itself",
    "setwindowsize": "the project's viewport applies",
    "echo": "nothing to do",
    "close": "the run closes the page",
    "comment": "kept as nothing",
    "setspeed": "the engine paces itself",
}
_KEYS = {"ENTER": "Enter", "TAB": "Tab", "ESC": "Escape", "ESCAPE": "Escape", "BACKSPACE": "Backspace",
         "BKSP": "Backspace", "DELETE": "Delete", "DEL": "Delete", "UP": "ArrowUp", "DOWN": "ArrowDown",
         "LEFT": "ArrowLeft", "RIGHT": "ArrowRight", "HOME": "Home", "END": "End", "SPACE": " ",
         "PAGE_UP": "PageUp", "PAGE_DOWN": "PageDown"}
_KEY_RE = re.compile(r"^\$\{KEY_([A-Z_]+)\}$")
_VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_XPATH_TAG = re.compile(r"^\(?//([a-zA-Z][a-zA-Z0-9-]*)\b")
_XPATH_TEXT = re.compile(r"contains\((?:text\(\)|\.)\s*,\s*'([^']+)'\)\]?\)?$|text\(\)\s*=\s*'([^']+)'")
#: Tags whose role depends on attributes the hints do not have (an input is a textbox, a checkbox, a button...):
#: a hint with such a tag would imply a role and make the matched element look like another kind of control.
_AMBIGUOUS_TAGS = frozenset({"*", "input", "div", "span", "li", "td", "tr", "section", "p"})
_XPATH_ATTR = re.compile(r"@(id|name|alt)\s*=\s*'([^']*)'")


@dataclass(frozen=True, slots=True)
class SideTest:
    """One test of a ``.side`` file: its name and its commands as read."""

    name: str
    commands: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True, slots=True)
class SideImport:
    """What :func:`import_side` made of one test: the flow and notes naming each command not imported."""

    flow: Flow
    notes: tuple[str, ...] = ()


def read_side(path: Path) -> tuple[str, list[SideTest]]:
    """The project URL and the tests of a ``.side`` file.

    Raises
    ------
    ProjectError
        When the file cannot be read, is not JSON, or lacks ``tests`` /
        ``commands`` of the right shape (the message names the file and field).
    """
    path = Path(path)
    check_size(path, what="Selenium IDE project")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProjectError(path, f"cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProjectError(path, f"not a Selenium IDE project (JSON expected): {exc}") from None
    except (RecursionError, MemoryError):
        raise ProjectError(path, "not a Selenium IDE project: its JSON is nested too deeply to read") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        raise ProjectError(path, "expected a Selenium IDE project with a list of tests", location="tests")
    url = doc.get("url", "")
    if not isinstance(url, str):
        raise ProjectError(path, "expected a string", location="url")
    if url and urlsplit(url.strip()).scheme.lower() not in ("http", "https"):
        raise ProjectError(path, f"only http and https URLs are allowed, got {url!r}", location="url")
    tests: list[SideTest] = []
    for i, t in enumerate(doc["tests"]):
        if not isinstance(t, dict) or not isinstance(t.get("commands"), list):
            raise ProjectError(path, "expected a test with a list of commands", location=f"tests[{i}].commands")
        for j, c in enumerate(t["commands"]):
            if not isinstance(c, dict) or not isinstance(c.get("command", ""), str):
                raise ProjectError(path, "expected a command object with a string 'command'",
                                   location=f"tests[{i}].commands[{j}]")
        tests.append(SideTest(str(t.get("name") or f"test {i + 1}"), tuple(t["commands"])))
    return url, tests


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def selector_of(locator: str) -> str | None:
    """A Playwright selector for a Selenium IDE locator, or None when the form is unknown.

    >>> selector_of("linkText=Join Us!")
    'a:text-is("Join Us!")'
    """
    locator = locator.strip()
    if not locator:
        return None
    if locator.startswith(("//", "(//")):
        return f"xpath={locator}"
    kind, sep, rest = locator.partition("=")
    if not sep:
        return f'[id={_quote(locator)}], [name={_quote(locator)}]'  # Selenium's implicit id-or-name
    kind = kind.strip()
    if kind == "id":
        return f"[id={_quote(rest)}]"
    if kind == "name":
        return f"[name={_quote(rest)}]"
    if kind == "css":
        return f"css={rest}"
    if kind == "xpath":
        return f"xpath={rest}"
    if kind == "linkText":
        return f"a:text-is({_quote(rest)})"
    if kind == "partialLinkText":
        return f"a:has-text({_quote(rest)})"
    return None


def last_step(xpath: str) -> str:
    """The last location step of ``xpath`` (what describes the element itself, not its ancestors).

    >>> last_step("//div[@id='login']/input[@name='u']")
    "input[@name='u']"
    >>> last_step("(//form//button)[2]")
    'button'
    """
    xp = xpath.strip()
    m = re.match(r"^\((.*)\)\[\d+\]$", xp, re.S)  # (//a//b)[2]: the element is b
    if m:
        xp = m.group(1)
    depth, quote, start = 0, "", 0
    for i, ch in enumerate(xp):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "/" and depth == 0:
            start = i + 1
    return xp[start:]


def hints_of(locators: Iterable[str]) -> ElementDescriptor:
    """Descriptor hints (``imported=True``) from a command's target and its ``targets`` list."""
    got: dict[str, str] = {}
    for loc in locators:
        kind, _, rest = loc.partition("=")
        if kind == "id" and rest:
            got.setdefault("id", rest)
        elif kind == "name" and rest:
            got.setdefault("name_attr", rest)
        elif kind in ("linkText", "partialLinkText") and rest:
            got.setdefault("tag", "a")
            if kind == "linkText":
                got.setdefault("text", rest)
        elif kind == "xpath" and rest:
            rest = "//" + last_step(rest)  # the element's own step: an ancestor's id is not the element's
            m = _XPATH_TAG.match(rest)
            if m and m.group(1).lower() not in _AMBIGUOUS_TAGS:
                got.setdefault("tag", m.group(1).lower())
            t = _XPATH_TEXT.search(rest)
            if t:
                got.setdefault("text", t.group(1) or t.group(2))
            for attr, value in _XPATH_ATTR.findall(rest):
                got.setdefault({"id": "id", "name": "name_attr", "alt": "alt"}[attr], value)
    if not got:
        return ElementDescriptor()
    return ElementDescriptor(**got, imported=True)


def _looks_secret(locators: Iterable[str]) -> bool:
    locators = list(locators)
    words = set(re.findall(r"[a-z]+", " ".join(locators).lower()))
    return bool(words & SECRET_WORDS) or looks_like_password(*locators)


def _expected(value: str) -> tuple[str, str]:
    """(kind, text) of an assertText value: ``exact:x``, ``glob:*x*`` / ``*x*`` (contains), else equals."""
    if value.startswith("exact:"):
        return "text_equals", value[6:]
    if value.startswith("glob:"):
        value = value[5:]
    if len(value) >= 2 and value.startswith("*") and value.endswith("*") and "*" not in value[1:-1]:
        return "text_contains", value[1:-1]
    return "text_equals", value


def _key(c: Mapping[str, Any]) -> str:
    """The command's name as compared (``"clickAt"`` -> ``"clickat"``); "" for a disabled (``//``) one."""
    raw = str(c.get("command", "")).strip()
    return "" if raw.startswith("//") else raw.replace(" ", "").lower()


def _focus_clicks(commands: tuple[Mapping[str, Any], ...]) -> list[int]:
    """Indexes of the clicks Selenium IDE records before typing into the same field.

    A click is dropped only when the very next command is a ``type`` or ``sendKeys`` with the same target:
    replaying it would change nothing but the focus (the engine's verification then sees no effect), and
    typing focuses the field anyway.  A click that opens a window, or is followed by anything else, stays.
    """
    out = []
    for j, (c, nxt) in enumerate(zip(commands, commands[1:], strict=False)):
        target = str(c.get("target", "") or "").strip()
        if (_key(c) in ("click", "clickat") and not c.get("opensWindow") and target
                and _key(nxt) in ("type", "sendkeys") and str(nxt.get("target", "") or "").strip() == target):
            out.append(j)
    return out


def _name_words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


class _SideSecrets:
    """The secret parameter of each typed secret value, decided over every test of a file.

    A value equal to a declared secret's known value takes that name.  Each other value belongs to a declared
    name (the one its field's locator names, else a password-like one for a password field, else the first
    whose value is unknown): a name whose value is known gives ``{name_2}``, ``{name_3}``... (the value differs
    from it); a name whose value is unknown takes the value when it is the only one typed into its fields, and
    when several differ none takes it (which one is the declared secret's cannot be told): they become
    ``{name_1}``, ``{name_2}``...  With no declared secret the first value is ``{password}``.
    """

    def __init__(self, names: tuple[str, ...], values: Mapping[str, str], tests: Iterable[SideTest]) -> None:
        self.declared = tuple(names)
        self.known = {n for n, v in values.items() if v}
        self.exact = {v: n for n, v in values.items() if v}  # a typed value equal to a known one, any length
        self.by_value = {v: n for n, v in values.items() if len(v) >= MIN_SUBSTRING_LENGTH}  # any field
        self.literals: dict[str, str] = {}
        self.groups: dict[str, list[str]] = {}  # base name -> the distinct other values typed into its fields
        self.base: dict[str, str] = {}
        for t in tests:
            for c in t.commands:
                key, raw = _key(c), str(c.get("value", "") or "")
                locators = [str(c.get("target", "") or "")] + [
                    str(x[0]) for x in c.get("targets", []) if isinstance(x, (list, tuple)) and x]
                typed = key == "type" or (key == "sendkeys" and "${KEY_" not in raw)
                if not typed or not raw or raw in self.exact or not (raw in self.by_value or _looks_secret(locators)):
                    continue
                base = self.base.setdefault(raw, self.base_of(locators))
                if raw not in self.groups.setdefault(base, []):
                    self.groups[base].append(raw)
        self.unsure = {b for b, got in self.groups.items()
                       if b in self.declared and b not in self.known and len(got) >= 2}
        for got in self.groups.values():  # named in the file's order: the same names with --test as without
            for raw in got:
                self.name(raw, [])

    def base_of(self, locators: list[str]) -> str:
        words = _name_words(" ".join(locators))
        for n in sorted(self.declared, key=lambda n: -len(n)):
            if _name_words(n) and _name_words(n) <= words:
                return n
        if looks_like_password(*locators):
            for n in self.declared:
                if looks_like_password(n):
                    return n
        unknown = [n for n in self.declared if n not in self.known]
        return (unknown or list(self.declared) or ["password"])[0]

    def name(self, raw: str, locators: list[str]) -> str:
        """The secret parameter standing for the typed value ``raw``: one name per distinct value."""
        if raw in self.exact:
            return self.exact[raw]
        if raw in self.literals:
            return self.literals[raw]
        base = self.base.get(raw) or self.base_of(locators)
        taken = set(self.exact.values()) | set(self.literals.values())
        if base not in taken and base not in self.known and base not in self.unsure:
            name = base  # the only value typed into the fields of a secret whose value is unknown (or undeclared)
        else:
            k = 1 if base in self.unsure else 2
            name = f"{base}_{k}"
            while name in taken or name in self.declared:
                k += 1
                name = f"{base}_{k}"
        self.literals[raw] = name
        return name

    def unsure_base(self, name: str) -> str:
        """The declared secret ``name`` stands beside because its value could not be told apart ("" if none)."""
        raw = next((v for v, n in self.literals.items() if n == name), None)
        base = self.base.get(raw, "") if raw is not None else ""
        return base if base in self.unsure else ""

    def count(self, base: str) -> int:
        return len(self.groups.get(base, ()))


class _Importer:
    def __init__(self, test: SideTest, *, project_url: str, base_url: str, flow_name: str,
                 secret_names: tuple[str, ...], secret_values: Mapping[str, str], filename: str,
                 names: "_SideSecrets | None" = None) -> None:
        self.test = test
        self.project_url = project_url.rstrip("/")
        self.base_url = base_url
        self.flow_name = flow_name
        self.secret_names = secret_names
        self.secret_values = {v: n for n, v in secret_values.items() if len(v) >= MIN_SUBSTRING_LENGTH}
        self.filename = filename
        self.steps: list[Step] = []
        self.notes: list[str] = []
        self.secrets: list[str] = []
        self.start_url = ""
        self.kept_absolute = False  # the note about the file's own site not under the base URL was given
        self.stored: dict[str, tuple[int, str]] = {}  # variable filled at run time -> its command (1-based, name)
        self.params: dict[str, str] = {}  # variable of a `store` of a literal -> that literal (the default)
        # typed secret literal -> its name, over the whole file
        self.names = names if names is not None else _SideSecrets(secret_names, secret_values, [test])

    def note(self, j: int, command: str, why: str) -> None:
        self.notes.append(f"{self.test.name} command {j + 1} ({command}): {why}")

    def url(self, target: str) -> str:
        """A URL of the file as the flow stores it: relative to the recorded site (the .side ``url``) or to
        the project's base URL when under either, else absolute."""
        scheme = re.match(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):", target)
        if scheme and scheme.group(1).lower() not in ("http", "https"):  # file:, data:, javascript: never imported
            raise ProjectError(self.filename, f"{self.test.name}: only http and https URLs are allowed, got "
                                              f"{target!r}", location="open")
        # the .side file's own site (its `url`) when it is not under the project's base URL (a file recorded on a
        # developer's server): its pages are opened at the same paths under the base URL, and the report says so
        foreign = bool(self.project_url and self.base_url
                       and relative_url(self.project_url + "/", self.base_url) == self.project_url + "/")
        if foreign and not self.kept_absolute:
            self.kept_absolute = True
            self.notes.append(f"{self.test.name}: the file's site {self.project_url} is not under the project's base "
                              f"URL {self.base_url}: its pages are opened at the same paths under the base URL")
        if not re.match(r"^[a-z]+://", target):
            return "/" + target.lstrip("/")
        for base in (self.project_url, self.base_url):
            if base:
                rel = relative_url(target, base)
                if rel != target:
                    return rel
        if self.base_url:  # another site than the file's and the project's: kept absolute, as import-codegen does
            self.notes.append(f"{self.test.name}: {target} is not under the project's base URL {self.base_url}; "
                              "kept absolute")
        return target

    def value(self, raw: str, j: int, command: str, locators: list[str]) -> str:
        if raw in self.secret_values or (raw and _looks_secret(locators)):
            name = self.names.name(raw, locators)
            unsure = self.names.unsure_base(name)
            others = (set(self.names.by_value.values()) | set(self.names.literals.values())
                      | set(self.secret_names)) - {name}
            declared = ", a secret of its own (its value differs from the other secret fields')" \
                if name not in self.secret_names and others else ""
            if unsure:
                declared = (f", not the declared {{{unsure}}}: the file types {self.names.count(unsure)} different "
                            f"values into its fields and its value is not known here ({env_var_name(unsure)} is not "
                            f"set and it has no default), so which one is {{{unsure}}} cannot be told; set "
                            f"{env_var_name(unsure)} and import again to have the equal value become {{{unsure}}}")
            if name not in self.secrets:
                self.secrets.append(name)
            self.note(j, command, f"the typed value became the secret parameter {{{name}}}{declared}; give it in "
                                  f"the environment variable {env_var_name(name)} (or the keyring)")
            return placeholder(name)

        def var(m: re.Match[str]) -> str:
            name = m.group(1)
            if name in self.stored:
                raise ProjectError(self.filename, f"test {self.test.name!r}, command {j + 1} ({command}): "
                                                  f"${{{name}}} is filled at run time by command {self.stored[name][0]} "
                                                  f"({self.stored[name][1]}); "
                                                  f"a flow has no run-time variables, so the test is not imported "
                                                  f"(import the others with --test NAME)", location=f"{command}")
            if name in self.params:
                self.note(j, command, f"${{{name}}} became the parameter {{{name}}} (default {self.params[name]!r}, "
                                      f"from the store command)")
            else:
                self.note(j, command, f"${{{name}}} became the parameter {{{name}}}; give it with "
                                      f"run --param {name}=VALUE")
            return placeholder(name)

        out, last = [], 0
        for m in _VAR_RE.finditer(raw):
            out += [escape(raw[last:m.start()]), var(m)]
            last = m.end()
        out.append(escape(raw[last:]))
        return "".join(out)

    def add(self, command: str, kind: str, selector: str, hints: ElementDescriptor, *, value: str = "",
            assertions: tuple[Assertion, ...] = ()) -> None:
        n = len(self.steps) + 1
        what = hints.text or hints.name_attr or hints.id or selector
        self.steps.append(Step(id=f"s{n}", name=f"{command} {what}"[:80], action=Action(kind, value),
                               target=hints, selector=selector, assertions=assertions))

    def refuse_blocks(self) -> None:
        """Refuse the test when a command runs under a condition or in a loop: a flow is a straight line, so the
        body would run always (or once), which is not what the test means."""
        opened: list[tuple[int, str]] = []  # (index, command) of each open if / while / times / forEach / do
        for j, c in enumerate(self.test.commands):
            key, command = _key(c), str(c.get("command", "")).strip()
            if key in ("if", "while", "times", "foreach", "do"):
                opened.append((j, command))
            elif key in ("end", "repeatif"):
                if opened:
                    opened.pop()
            elif opened and key and key not in ("elseif", "else") and key not in _DROPPED:
                k, opener = opened[-1]
                how = "only when the condition of" if opener.lower() == "if" else "repeatedly under"
                raise ProjectError(self.filename, f"test {self.test.name!r}, command {j + 1} ({command}) runs "
                                                  f"{how} command {k + 1} ({opener}); a flow is a straight line and "
                                                  f"would run it always, so the test is not imported (import the "
                                                  f"others with --test NAME)", location=command)

    def run(self) -> SideImport:
        self.refuse_blocks()
        focus = _focus_clicks(self.test.commands)
        for j, c in enumerate(self.test.commands):
            if j in focus:
                continue
            self.one(j, c)
        if focus:
            numbers = ", ".join(str(j + 1) for j in focus)
            self.notes.insert(0, f"{self.test.name}: dropped {counted(len(focus), 'click')} that only focus a field before "
                                 f"typing (commands {numbers}); replay types into the field directly")
        if not self.start_url:
            self.start_url = "/"
            self.notes.insert(0, f"{self.test.name}: no open command; the flow starts at {self.start_url}")
        if not self.steps:
            why = "; ".join(self.notes) or "it has no command"
            raise ProjectError(self.filename, f"test {self.test.name!r}: nothing to import ({why})",
                               location=f"tests[{self.test.name}]")
        flow = Flow(name=self.flow_name, start_url=self.start_url, steps=tuple(self.steps),
                    secrets=tuple(self.secrets), params=dict(self.params),
                    description=f"imported from {self.filename}, test {self.test.name!r}")
        return SideImport(flow, tuple(self.notes))

    def one(self, j: int, c: Mapping[str, Any]) -> None:
        raw_command = str(c.get("command", "")).strip()
        command = raw_command.lstrip("/")  # a leading // disables a command in Selenium IDE
        if not command or raw_command.startswith("//"):
            if raw_command:
                self.note(j, command, "disabled in Selenium IDE: skipped")
            return
        key = command.replace(" ", "").lower()
        target = str(c.get("target", "") or "")
        raw_value = str(c.get("value", "") or "")
        locators = [target] + [str(t[0]) for t in c.get("targets", []) if isinstance(t, (list, tuple)) and t]
        if key == "store" and raw_value:  # store | literal | name: a parameter with that default
            self.params[raw_value] = target
            self.stored.pop(raw_value, None)
            self.note(j, command, f"${{{raw_value}}} became the parameter {{{raw_value}}} with the default "
                                  f"{target!r}")
            return
        if key.startswith("store") or (key in ("executescript", "executeasyncscript") and raw_value):
            if raw_value:  # the script's result is stored in ${value}: set at run time, as storeText does
                self.stored[raw_value] = (j + 1, command)
                self.params.pop(raw_value, None)
            self.note(j, command, f"not supported: a flow never runs a script (${{{raw_value}}} it stores is set at "
                                  f"run time: a test that uses it is refused)" if "script" in key else
                      "variables are built at run time: not supported (flows have parameters)")
            return
        if key in _DROPPED:
            self.note(j, command, f"dropped ({_DROPPED[key]})")
            return
        if key in UNSUPPORTED:
            self.note(j, command, f"not supported: {UNSUPPORTED[key]}")
            return
        if key == "open":
            url = self.url(target)
            if not self.start_url and not self.steps:
                self.start_url = url
            else:
                self.steps.append(Step(id=f"s{len(self.steps) + 1}", name=f"open {url}"[:80],
                                       action=Action("navigate", url)))
            return
        key = key.replace("verify", "assert", 1) if key.startswith("verify") else key
        page_level = key in ("asserttextpresent", "asserttextnotpresent")
        selector = None if page_level else selector_of(target)
        if selector is None and not page_level:
            selector = next((s for s in (selector_of(x) for x in locators[1:]) if s), None)
            if selector is None:
                self.note(j, command, f"the locator {target!r} has no Playwright equivalent: skipped")
                return
        hints = hints_of(locators)
        sel = selector or ""
        if key in ("click", "clickat"):
            self.add("click", "click", sel, hints)
            if c.get("opensWindow"):  # Selenium IDE then switches to the new window with selectWindow
                self.note(j, command, "opens a new window: imported as a click; the flow's next steps run on "
                                      "this page (other windows are not followed)")
        elif key in ("doubleclick", "doubleclickat"):
            self.add("double-click", "dblclick", sel, hints)
        elif key == "type":
            self.add("type into", "input", sel, hints, value=self.value(raw_value, j, command, locators))
        elif key == "sendkeys":
            m = _KEY_RE.match(raw_value.strip())
            if m and m.group(1) in _KEYS:
                self.add(f"press {_KEYS[m.group(1)]} in", "press", sel, hints, value=_KEYS[m.group(1)])
            elif "${KEY_" in raw_value:
                self.note(j, command, f"keys {raw_value!r}: only one named key per command is supported")
            else:
                self.add("type into", "input", sel, hints, value=self.value(raw_value, j, command, locators))
                self.note(j, command, "sendKeys appends; imported as a fill of the field")
        elif key in ("select", "addselection"):
            how, _, option = raw_value.partition("=")
            if how in ("label", "value") and option:
                self.add("select in", "select", sel, hints, value=escape(option))
            elif not _ and raw_value:
                self.add("select in", "select", sel, hints, value=escape(raw_value))
            else:
                self.note(j, command, f"option {raw_value!r}: only label= and value= are supported")
        elif key in ("check", "uncheck"):
            self.add(key, key, sel, hints)
        elif key == "mouseover":
            self.add("hover", "hover", sel, hints)
        elif key in ("asserttext", "waitfortext"):
            kind, text = _expected(raw_value)
            if key == "waitfortext":
                kind = "text_contains"
            self.add("check text of", "assert", sel, hints, assertions=(Assertion(kind, escape(text), sel),))
        elif key == "assertnottext":
            self.note(j, command, "not supported: there is no 'text differs' assertion")
        elif key == "assertvalue":
            self.add("check value of", "assert", sel, hints, assertions=(Assertion("value", escape(raw_value), sel),))
        elif key in ("assertelementpresent", "assertelementvisible", "waitforelementpresent",
                     "waitforelementvisible"):
            self.add("check", "assert", sel, hints, assertions=(Assertion("visible", "", sel),))
        elif key in ("assertelementnotpresent", "assertelementnotvisible", "waitforelementnotpresent",
                     "waitforelementnotvisible"):
            # targetless: the element may be absent (the assertion names it)
            self.add("check absent", "assert", "", ElementDescriptor(), assertions=(Assertion("hidden", "", sel),))
        elif key in ("asserteditable", "waitforelementeditable"):
            self.add("check editable", "assert", sel, hints, assertions=(Assertion("enabled", "", sel),))
        elif key in ("assertnoteditable", "waitforelementnoteditable"):
            self.add("check not editable", "assert", sel, hints, assertions=(Assertion("disabled", "", sel),))
        elif key in ("asserttextpresent", "asserttextnotpresent"):
            text = target or raw_value
            kind = "text_appears" if key == "asserttextpresent" else "text_absent"
            self.steps.append(Step(id=f"s{len(self.steps) + 1}", name=f"check text {text!r}"[:80],
                                   action=Action("assert"), assertions=(Assertion(kind, escape(text)),)))
        else:
            self.note(j, command, "not supported (unknown to this importer)")


def import_side(path: Path, *, base_url: str = "", test: str | None = None, flow_prefix: str = "",
                secret_names: tuple[str, ...] = (), secret_values: Mapping[str, str] | None = None
                ) -> list[SideImport]:
    """Import the tests of a ``.side`` file (or only the one named ``test``) as flows.

    Parameters
    ----------
    path : Path
        The ``.side`` file.
    base_url : str
        The project's base URL: URLs under it are stored relative (``"/join.html"``).
    test : str, optional
        Import only the test of this name.
    flow_prefix : str
        Flow names are ``<prefix><slug of the test name>`` (``"smoke_test"``).
    secret_names, secret_values
        Declared secrets: a typed literal equal to a value becomes its
        ``{name}``; a value typed into a field whose locator names a secret
        (password, token, pin...) becomes ``{first declared name}``.

    Raises
    ------
    ProjectError
        A malformed file, or no test named ``test`` (the message names the
        file and lists the tests).
    """
    project_url, tests = read_side(path)
    if test is not None:
        tests = [t for t in tests if t.name == test]
        if not tests:
            _, every = read_side(path)
            raise ProjectError(Path(path), f"no test named {test!r} (tests: {', '.join(t.name for t in every)})",
                               location="tests")
    out: list[SideImport] = []
    used: set[str] = set()
    # one name per typed secret, decided over every test of the file (also with --test: the same names)
    names = _SideSecrets(secret_names, secret_values or {}, read_side(path)[1] if test is not None else tests)
    for t in tests:
        name = f"{flow_prefix}{slug(t.name) or 'test'}"
        base, n = name, 2
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        out.append(_Importer(t, project_url=project_url, base_url=base_url, flow_name=name,
                             secret_names=secret_names, secret_values=secret_values or {},
                             filename=Path(path).name, names=names).run())
    return out
