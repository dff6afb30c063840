"""``steadyhand export pytest PROJECT --flow NAME -o FILE [--style pytest|script]``.

The pytest style writes a pytest-playwright test and, beside it, the folder's shared ``conftest.py``
(:func:`core.export.playwright_test.conftest_source`): written when absent, rewritten when it is one this
command wrote for the same project, refused (exit 2) when it is someone else's or another project's.

Exit codes (as everywhere, core.engine.report): 0 written; 2 bad input (project, flow, a step with no
Playwright form, an unwritable output file, a ``conftest.py`` there that is not this project's export).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

from core.project import ProjectError, load_project
from core.secrets import env_var_name

from .playwright_test import CONFTEST_MARK, ExportError, conftest_source, export_flow, param_env_var

from core.exitcodes import EXIT_INPUT, EXIT_OK

__all__ = ["add_export_parser", "export_command"]


def add_export_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    """Add ``export`` (with its ``pytest`` form) to the ``steadyhand`` subcommands; returns the ``pytest`` parser."""
    e = sub.add_parser("export", help="write a flow as ordinary test code")
    esub = e.add_subparsers(dest="export", required=True)
    p = esub.add_parser(
        "pytest", help="a flow as a pytest file (or a plain Playwright script) with codegen-style locators",
        description="Write FLOW of PROJECT as a pytest-playwright test (default; a conftest.py with the shared "
                    "set-up is written beside it) or a plain Playwright script (--style script) with the locators "
                    "Playwright's codegen would choose. Example: steadyhand export pytest projects/demo --flow "
                    "leave_request -o e2e/test_leave.py && STEADYHAND_SECRET_PASSWORD=... pytest e2e --base-url "
                    "http://127.0.0.1:8000 --tracing on")
    p.add_argument("project", help="project folder (holds steadyhand.yaml)")
    p.add_argument("--flow", required=True, help="flow name")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="file to write (a .py file)")
    p.add_argument("--style", choices=("pytest", "script"), default="pytest",
                   help="pytest: a test with fixtures (default); script: run(page, base_url, params) and a main()")
    p.add_argument("--force", action="store_true", help="overwrite FILE when it exists")
    return p


def _err(msg: str) -> None:
    print(f"steadyhand: error: {msg}", file=sys.stderr)


def export_command(args: argparse.Namespace) -> int:
    """Run ``steadyhand export pytest``; returns the exit code."""
    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    flow = project.flows.get(args.flow)
    broken = project.invalid_flow(args.flow) if flow is None else None
    if broken is not None:
        _err(f"invalid flow file: {broken}")
        return EXIT_INPUT
    if flow is None:
        _err(f"{project.root}: no flow named {args.flow} (flows: {', '.join(project.flows) or 'none'})")
        return EXIT_INPUT
    out = Path(args.output)
    if out.exists() and not args.force:
        _err(f"{out}: the file exists; pass --force to overwrite it")
        return EXIT_INPUT
    try:
        source = export_flow(project, flow, style=args.style)
    except ExportError as exc:
        _err(str(exc))
        return EXIT_INPUT
    conftest = out.parent / "conftest.py"
    shared = conftest_source(project, out.parent) if args.style == "pytest" else ""
    if shared:
        why = _conftest_conflict(conftest, shared)
        if why:
            _err(why)
            return EXIT_INPUT
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(source, encoding="utf-8")
        if shared and (not conftest.exists() or conftest.read_text(encoding="utf-8") != shared):
            conftest.write_text(shared, encoding="utf-8")
            print(f"wrote {conftest} (the shared set-up of the tests in {out.parent})")
    except OSError as exc:
        _err(f"{exc.filename or out}: cannot write the file: {exc.strerror or exc}")
        return EXIT_INPUT
    print(f"wrote {out} ({args.style}) for flow {flow.name!r}")
    base = project.settings.base_url
    if args.style == "pytest" and importlib.util.find_spec("pytest_playwright") is None:
        print("  note: the test needs pytest-playwright, not installed here (pip install 'steadyhand[export]', or pytest-playwright alone)")
    if args.style == "pytest":
        print("  run: pytest " + str(out.parent) + " (pytest-playwright: --base-url, --browser, --headed, --tracing on, "
              "--video on, --screenshot on, --output DIR)")
    if not base and project.settings.site == "demo" and args.style == "pytest":
        print("  base URL: --base-url or STEADYHAND_BASE_URL, else a demo server per pytest session (python -m "
              "core.sites.demo) reset before each test: the files run in parallel under pytest -n 2")
    elif args.style == "pytest":
        print(f"  base URL: --base-url or STEADYHAND_BASE_URL{' (default ' + base + ')' if base else ' (required)'}")
    else:
        print(f"  base URL: STEADYHAND_BASE_URL{' (default ' + base + ')' if base else ' (required: the bundled site gets its port at run time)'}")
    names = {n for st in flow.steps for n in _names(st)}
    for n in project.settings.secrets:
        if n in names or n in flow.secrets:
            unset = ""
            if args.style == "script" and not os.environ.get(env_var_name(n)):
                unset = (f"; not set here: a plain script reads secrets from the environment only, and stops "
                         f"with an error naming {env_var_name(n)} until it is set")
            print(f"  secret {n!r}: from {env_var_name(n)} (never written into the file){unset}")
    for n in sorted(set(project.settings.params) | set(flow.params)):
        if n in names:
            print(f"  parameter {n!r}: default from the project/flow, override with {param_env_var(n)}")
    return EXIT_OK


def _conftest_conflict(path: Path, wanted: str) -> str:
    """Why ``path`` must not be (re)written with ``wanted``: "" when it is absent or a conftest this command wrote
    for the same project (its first line); else the reason, naming the file."""
    try:
        have = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        return f"{path}: cannot read the file: {exc.strerror or exc}"
    first, mine = have.split("\n", 1)[0], wanted.split("\n", 1)[0]
    if first == mine:
        return ""
    if first.startswith(CONFTEST_MARK):
        return (f"{path} holds the shared set-up of another project's exported tests; export into a folder of "
                "its own")
    return (f"{path} exists and was not written by steadyhand export; export into a folder of its own (the "
            "exported tests need the conftest.py this command writes)")


def _names(step: object) -> list[str]:
    from core.project.params import placeholders, step_texts

    return [n for _, t in step_texts(step) for n in placeholders(t)]  # type: ignore[arg-type]
