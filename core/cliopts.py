"""The options ``steadyhand run`` shares with pytest's and Playwright's habits, their defaults, and shell completion.

* :func:`add_run_options`: the options of ``run`` (and ``demo``, which runs the bundled demo project).
* :func:`apply_run_defaults`: an option not given on the command line takes its value from the environment
  (``STEADYHAND_<OPTION>``, e.g. ``STEADYHAND_RETRIES=2``), else from the ``[tool.steadyhand]`` table of the
  nearest ``pyproject.toml`` at or above the project folder (``retries = 2``), else its built-in default
  (:data:`RUN_DEFAULTS`).  Command line, then environment, then file: the more local setting wins.
* :func:`keyword_matcher`: ``-k EXPR`` as pytest reads it over flow names (substrings, case-insensitive,
  ``and`` / ``or`` / ``not`` / parentheses).
* :func:`completion_script`: ``steadyhand completion bash`` (also for zsh through ``bashcompinit``): the
  commands and options of the parser, flow names after ``--flow`` and ``-k``, files after ``--json`` and the
  other path options.
* :func:`write_json`: ``--json PATH`` of every command, ``-`` for standard output.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tomllib
from pathlib import Path
from typing import Any, Callable, Mapping

__all__ = ["RUN_DEFAULTS", "RUN_CHOICES", "ENV_PREFIX", "ConfigError", "add_run_options", "apply_run_defaults", "env_name",
           "find_pyproject", "keyword_matcher", "completion_script", "write_json", "JSON_HELP"]

#: Prefix of the environment variables that set ``run``'s defaults (``STEADYHAND_BASE_URL``...).
ENV_PREFIX = "STEADYHAND_"

#: The ``run`` options a machine or a project may set once: key (as in ``[tool.steadyhand]``, the option's
#: long name) -> (argparse destination, type, built-in default).  ``headless = false`` is ``--headed``.
RUN_DEFAULTS: Mapping[str, tuple[str, type, Any]] = {
    "base-url": ("base_url", str, None),
    "browser-endpoint": ("browser_endpoint", str, None),
    "headless": ("headless", bool, None),       # None: the project's browser.headless
    "retries": ("retries", int, 0),
    "maxfail": ("maxfail", int, 0),             # 0: no limit
    "json": ("json", str, None),
    "junit": ("junit", str, None),
    "html": ("html", str, None),
    "no-screenshots": ("no_screenshots", bool, False),
    "quiet": ("quiet", bool, False),
    "trace": ("trace", str, "off"),
}

#: The values a :data:`RUN_DEFAULTS` option of type str may take, when they are few (``--trace``; the same
#: tuple as :data:`core.engine.trace.TRACE_MODES`, checked by tests/core/test_trace.py).
RUN_CHOICES: Mapping[str, tuple[str, ...]] = {"trace": ("off", "on", "retain-on-failure")}

#: Help of ``--json`` wherever a command writes JSON.
JSON_HELP = "write the JSON document to PATH ('-': to standard output)"

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}


class ConfigError(ValueError):
    """A default that cannot be used: the message names where it came from (variable or file) and why."""


def env_name(key: str) -> str:
    """``STEADYHAND_<KEY>`` of a :data:`RUN_DEFAULTS` key (``"base-url"`` -> ``STEADYHAND_BASE_URL``)."""
    return ENV_PREFIX + key.upper().replace("-", "_")


def add_run_options(r: argparse.ArgumentParser) -> None:
    """The options of ``run`` and ``demo`` (not the project argument).  Options of :data:`RUN_DEFAULTS` default
    to None here; :func:`apply_run_defaults` fills them in after parsing."""
    r.add_argument("--flow", action="append", help="flow name (repeatable; default: all)")
    r.add_argument("-k", dest="keyword", metavar="EXPR",
                   help="only the flows whose names match EXPR, as pytest's -k: substrings (case-insensitive) "
                        "joined by and / or / not and parentheses, e.g. -k 'leave and not lockout'")
    head = r.add_mutually_exclusive_group()
    head.add_argument("--headless", dest="headless", action="store_const", const=True, default=None,
                      help=f"run Chromium headless (default: the project's browser.headless; "
                           f"{env_name('headless')}=1)")
    head.add_argument("--headed", dest="headless", action="store_const", const=False,
                      help=f"show the Chromium window ({env_name('headless')}=0)")
    r.add_argument("-x", "--exitfirst", dest="maxfail", action="store_const", const=1, default=None,
                   help="stop after the first flow run that does not pass (--maxfail 1)")
    r.add_argument("--maxfail", dest="maxfail", type=int, metavar="N",
                   help="stop after N flow runs did not pass; the flows left are reported as not run "
                        f"(default: no limit; {env_name('maxfail')})")
    r.add_argument("--retries", type=int, metavar="N", default=None,
                   help="run a flow that did not pass again, up to N times, only when its failed run wrote "
                        "nothing by the engine's own record (no action that may write was performed, a sign-in "
                        "aside) and the failure was not bad input or a broken environment; a run that wrote is "
                        "never repeated. Each retry is marked as such in every report "
                        f"(default 0; {env_name('retries')}; needs the store, so not with --no-store)")
    r.add_argument("--trace", choices=RUN_CHOICES["trace"], default=None,
                   help="record a Playwright trace of each flow run, kept as .steadyhand/traces/<run id>.zip (open "
                        "it with playwright show-trace) and linked from every report: on (every run), "
                        "retain-on-failure (only runs that did not pass), off; secret values are removed from it "
                        f"or it is not kept (default off; {env_name('trace')})")
    r.add_argument("--json", metavar="PATH", default=None, help=JSON_HELP.replace("JSON document", "JSON summary"))
    r.add_argument("--junit", metavar="PATH", default=None,
                   help="write JUnit XML (one test case per flow run) for CI")
    r.add_argument("--html", metavar="PATH", default=None,
                   help="write a self-contained HTML report of the run (several runs: an index at PATH linking "
                        "PATH-<flow>-N.html)")
    r.add_argument("--episodes", type=int, default=1, help="episodes per episodic (MiniWoB++) flow")
    r.add_argument("--seed", type=int, default=1000, help="first episode seed (flows were written on seed 0)")
    r.add_argument("--param", action="append", metavar="NAME=VALUE",
                   help="override a parameter (a name no selected flow has is refused, with the names it has)")
    r.add_argument("--base-url", metavar="URL", default=None,
                   help="run against this base URL instead of the project's (another host or path prefix, e.g. a "
                        f"staging server); env {env_name('base-url')} sets it too")
    r.add_argument("--browser-endpoint", metavar="URL", default=None,
                   help="run in a browser kept elsewhere instead of launching Chromium: ws://HOST:PORT/... of a "
                        "Playwright browser server, or http://HOST:PORT of a Chromium's DevTools endpoint (a "
                        "Selenium Grid 4 node's); a host other than this machine must be listed in the project's "
                        f"browser.endpoint_hosts and the project trusted (env {env_name('browser-endpoint')})")
    r.add_argument("--no-store", action="store_true", help="do not record the run in the project store")
    r.add_argument("--no-screenshots", action="store_true", default=None, help="skip screenshots (faster)")
    r.add_argument("-q", "--quiet", action="store_true", default=None, help="no per-flow progress lines")
    r.add_argument("--on-escalation", choices=("stop", "wait"), default="stop",
                   help="stop: the flow ends escalated; wait: keep the browser open for a takeover (CDP on "
                        "127.0.0.1) until `steadyhand handback`")
    r.add_argument("--cdp-port", type=int, help="remote-debugging port for --on-escalation wait (default: a free one)")
    r.add_argument("--takeover-timeout", type=float, default=600.0, metavar="S",
                   help="longest wait for a hand-back, s (600)")
    r.add_argument("--shard", metavar="I/N", default=None,
                   help="run only shard I of N (1-based, as Playwright's --shard=1/3): the flow runs (each episode "
                        "of an episodic flow is one) are split by a stable hash of their names, so N CI jobs with "
                        "1/N .. N/N together run every flow exactly once")
    r.add_argument("--resume", metavar="RUN_ID",
                   help="continue a killed or failed run from its last checkpoint: steps that passed are not done "
                        "again (e.g. steadyhand run projects/demo --resume 3f2a... --headless)")


def find_pyproject(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest ``pyproject.toml`` at or above ``start`` that has a ``[tool.steadyhand]`` table, with the table.

    Raises
    ------
    ConfigError
        A ``pyproject.toml`` on the way that is not valid TOML (named with the parser's reason).
    """
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        path = folder / "pyproject.toml"
        if not path.is_file():
            continue
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: not readable as TOML: {exc}") from None
        table = doc.get("tool", {}).get("steadyhand")
        if isinstance(table, dict):
            return path, table
    return None


def _convert(value: Any, kind: type, where: str) -> Any:
    """``value`` (a string from the environment, or a TOML value) as ``kind``; ConfigError naming ``where``."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise ConfigError(f"{where}: expects true or false (1 / 0), got {value!r}")
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise ConfigError(f"{where}: expects a whole number, got {value!r}")
        try:
            number = int(str(value).strip())
        except ValueError:
            raise ConfigError(f"{where}: expects a whole number, got {value!r}") from None
        if number < 0:
            raise ConfigError(f"{where}: expects 0 or more, got {number}")
        return number
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expects a string, got {value!r}")
    return value.strip() or None


def apply_run_defaults(args: argparse.Namespace, project_dir: str | Path,
                       environ: Mapping[str, str] | None = None) -> list[str]:
    """Fill every :data:`RUN_DEFAULTS` option of ``args`` left None by the command line; returns where each
    value came from (``"retries=2 from STEADYHAND_RETRIES"``), for a note on stderr.

    Order: the command line, then ``STEADYHAND_<KEY>``, then ``[tool.steadyhand]`` of :func:`find_pyproject`
    from ``project_dir``, then the built-in default.  A negative ``--retries`` / ``--maxfail`` is refused too.

    Raises
    ------
    ConfigError
        A value of the wrong type, an unknown key in ``[tool.steadyhand]`` (the message lists the known ones),
        or a ``pyproject.toml`` that is not valid TOML.
    """
    env = os.environ if environ is None else environ
    found = find_pyproject(Path(project_dir))
    table: dict[str, Any] = found[1] if found else {}
    if found:
        unknown = sorted(set(table) - set(RUN_DEFAULTS))
        if unknown:
            raise ConfigError(f"{found[0]}: [tool.steadyhand] has no setting {', '.join(map(repr, unknown))} "
                              f"(settings: {', '.join(RUN_DEFAULTS)})")
    sources: list[str] = []
    for key, (dest, kind, builtin) in RUN_DEFAULTS.items():
        value = getattr(args, dest, None)
        if value is not None:
            if kind is int and value < 0:
                raise ConfigError(f"--{key}: expects 0 or more, got {value}")
            continue
        var = env_name(key)
        if env.get(var, "").strip() != "":
            value = _convert(env[var], kind, var)
            sources.append(f"{key}={value} from {var}")
        elif key in table:
            value = _convert(table[key], kind, f"{found[0]} [tool.steadyhand] {key}")  # type: ignore[index]
            sources.append(f"{key}={value} from {found[0]}")  # type: ignore[index]
        else:
            value = builtin
        if key in RUN_CHOICES and value is not None and value not in RUN_CHOICES[key]:
            where = var if env.get(var, "").strip() != "" else f"{found[0] if found else ''} [tool.steadyhand] {key}"
            raise ConfigError(f"{where}: expects one of {', '.join(RUN_CHOICES[key])}, got {value!r}")
        setattr(args, dest, value)
    return sources


# ------------------------------------------------------------------------------------------------- -k EXPR
def keyword_matcher(expr: str) -> Callable[[str], bool]:
    """A predicate over flow names for ``-k EXPR`` (pytest's grammar: ``or`` < ``and`` < ``not`` < ``( )``).

    A word matches a name that contains it, case-insensitively (``-k leave`` selects ``leave_request``).

    Raises
    ------
    ValueError
        An empty or malformed expression (the message says where).
    """
    tokens = re.findall(r"\(|\)|[^\s()]+", expr)
    if not tokens:
        raise ValueError("-k: the expression is empty")
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def or_expr() -> Callable[[str], bool]:
        parts = [and_expr()]
        while peek() == "or":
            take()
            parts.append(and_expr())
        return parts[0] if len(parts) == 1 else (lambda n: any(p(n) for p in parts))

    def and_expr() -> Callable[[str], bool]:
        parts = [not_expr()]
        while peek() == "and":
            take()
            parts.append(not_expr())
        return parts[0] if len(parts) == 1 else (lambda n: all(p(n) for p in parts))

    def not_expr() -> Callable[[str], bool]:
        tok = peek()
        if tok is None:
            raise ValueError(f"-k {expr!r}: the expression ends too early")
        if tok == "not":
            take()
            inner = not_expr()
            return lambda n: not inner(n)
        if tok == "(":
            take()
            inner = or_expr()
            if peek() != ")":
                raise ValueError(f"-k {expr!r}: a '(' is not closed")
            take()
            return inner
        if tok in (")", "and", "or"):
            raise ValueError(f"-k {expr!r}: unexpected {tok!r} at word {pos + 1}")
        word = take().lower()
        return lambda n: word in n.lower()

    matcher = or_expr()
    if pos != len(tokens):
        raise ValueError(f"-k {expr!r}: unexpected {tokens[pos]!r} at word {pos + 1}")
    return matcher


# ---------------------------------------------------------------------------------------------- --json PATH
def write_json(target: str, doc: Any) -> None:
    """Write ``doc`` as indented JSON to the file ``target`` (its folder created), or to stdout when ``-``.

    Raises
    ------
    OSError
        The file cannot be written.
    """
    text = json.dumps(doc, indent=2) + "\n"
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    Path(target).write_text(text, encoding="utf-8")


# ------------------------------------------------------------------------------------------------ completion
#: Options whose value is a flow name (completed from PROJECT/flows/*.yaml) or a file path.
_FLOW_OPTIONS = ("--flow", "-k", "--flows")
_FILE_METAVARS = ("PATH", "FILE", "FILE.html", "PNG", "DIR")


def _tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
          ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += _tree(child, path + (name,))
    return found


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def completion_script(parser: argparse.ArgumentParser, shell: str = "bash") -> str:
    """A completion script for ``shell`` (``bash``; ``zsh`` loads the same through ``bashcompinit``).

    Install: ``eval "$(steadyhand completion bash)"`` in ``~/.bashrc`` (or ``~/.zshrc``).

    Raises
    ------
    ValueError
        A shell other than bash or zsh.
    """
    if shell not in ("bash", "zsh"):
        raise ValueError(f"completion: shells supported are bash and zsh, not {shell!r}")
    prog = parser.prog
    children, options, files = [], [], []
    for path, p in _tree(parser):
        key = " ".join(path)
        subs = [name for a in p._actions if isinstance(a, argparse._SubParsersAction) for name in a.choices]
        opts = sorted(s for a in p._actions for s in a.option_strings)
        children.append(f"    {_quote(key)}) echo {' '.join(_quote(s) for s in subs)} ;;")
        options.append(f"    {_quote(key)}) echo {' '.join(_quote(o) for o in opts)} ;;")
        for a in p._actions:
            if a.option_strings and (a.metavar in _FILE_METAVARS or a.dest in ("json", "junit", "html", "output")):
                files += [f"{key}|{o}" for o in a.option_strings]
    fn = "_" + re.sub(r"\W", "_", prog)
    lines = [
        f"# {prog} shell completion ({shell}); load it with: eval \"$({prog} completion {shell})\"",
        *(["autoload -U +X bashcompinit && bashcompinit"] if shell == "zsh" else []),
        f"{fn}_children() {{", '  case "$1" in', *children, "  esac", "}",
        f"{fn}_options() {{", '  case "$1" in', *options, "  esac", "}",
        f"{fn}() {{",
        '  local cur prev path="" project="" w i kids',
        '  cur="${COMP_WORDS[COMP_CWORD]}"',
        '  prev="${COMP_WORDS[COMP_CWORD-1]}"',
        "  for ((i = 1; i < COMP_CWORD; i++)); do",
        '    w="${COMP_WORDS[i]}"',
        f'    kids=" $({fn}_children "$path") "',
        '    if [[ "$w" != -* && "$kids" == *" $w "* ]]; then path="${path:+$path }$w"',
        '    elif [[ "$w" != -* && -f "$w/steadyhand.yaml" ]]; then project="$w"',
        '    elif [[ ( "${COMP_WORDS[i-1]}" == "--project" ) && -f "$w/steadyhand.yaml" ]]; then project="$w"',
        "    fi",
        "  done",
        '  case "$prev" in',
        f"    {'|'.join(_FLOW_OPTIONS)})",
        '      if [[ -n "$project" ]]; then',
        '        local flows=""',
        '        for w in "$project"/flows/*.yaml; do [[ -e "$w" ]] && w="${w##*/}" && flows+="${w%.yaml} "; done',
        '        COMPREPLY=($(compgen -W "$flows" -- "$cur"))',
        "      fi",
        "      return 0 ;;",
        "  esac",
        '  case "$path|$prev" in',
        *([f"    {'|'.join(_quote(f) for f in sorted(set(files)))}) COMPREPLY=($(compgen -f -- \"$cur\")); "
           "return 0 ;;"] if files else []),
        "  esac",
        '  if [[ "$cur" == -* ]]; then',
        f'    COMPREPLY=($(compgen -W "$({fn}_options "$path")" -- "$cur"))',
        "  else",
        f'    kids="$({fn}_children "$path")"',
        '    if [[ -n "$kids" ]]; then COMPREPLY=($(compgen -W "$kids" -- "$cur"))',
        '    else COMPREPLY=($(compgen -d -- "$cur")); fi',
        "  fi",
        "}",
        f"complete -o default -F {fn} {prog}",
    ]
    return "\n".join(lines) + "\n"
