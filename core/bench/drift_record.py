"""Record the drift benchmark's flow once, for real, with Steadyhand's recorder on datasette 0.59.4.

``steadyhand bench drift --record`` serves the recorded release over the benchmark's database, copies the
project to a temporary folder with its ``base_url`` pointed at that server, runs ``steadyhand record
--headless --cdp-port N /`` there (the recorder's own Chromium, CDP on 127.0.0.1) and lets a scripted user
do the intended actions (:data:`core.bench.drift_truth.INTENDED`) on the recorded page over
``connect_over_cdp``, with real input at a user's pace; SIGTERM stops and saves the recording, like Ctrl-C.
The saved flow file and its crops are then copied into the project (``flows/NAME.yaml``,
``flows/NAME.crops/``); only the step titles and the description are then replaced by the intended
actions' titles ("Sort by year" instead of "Click year").  Nothing else of the flow is written by hand.

Errors: :class:`~core.bench.drift_env.DriftEnvError` when the recorder does not start within
:data:`READY_TIMEOUT_S` or exits with a non-zero code (its output is in the message).
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from ..domain.resources import module_name
from .drift_env import DB_NAME, VERSIONS, DatasetteServer, DriftEnvError, datasette_bin, free_port, make_books_db
from .drift_truth import INTENDED, PAUSE_MS, page_state, perform

__all__ = ["record_flow", "FLOW_NAME", "READY_TIMEOUT_S"]

#: The recorded flow's name (file ``flows/books_tour.yaml``).
FLOW_NAME = "books_tour"
#: Seconds the recorder may take to print its ready line.
READY_TIMEOUT_S = 60.0
#: Milliseconds between two typed characters (a user's typing).
TYPING_DELAY_MS = 90


def _set_base_url(settings: Path, url: str) -> None:
    lines = settings.read_text(encoding="utf-8").splitlines(keepends=True)
    out = [f"base_url: {url}\n" if line.startswith("base_url:") else line for line in lines]
    settings.write_text("".join(out), encoding="utf-8")


def record_flow(project: Path, *, version: str = VERSIONS[0], flow: str = FLOW_NAME, root: Path | None = None,
                log: Callable[[str], None] = print) -> Path:
    """Record ``flow`` on ``version`` and copy it into ``project``; returns the flow file's path.

    The scripted user checks each intended action's landing as the ground truth does, so a recording
    that went astray raises instead of being saved into the project.
    """
    project = Path(project).resolve()
    repo = Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory(prefix="steadyhand-drift-rec-") as tmp_s:
        tmp = Path(tmp_s)
        db = make_books_db(tmp / DB_NAME)
        work = tmp / "project"
        shutil.copytree(project, work, ignore=shutil.ignore_patterns(".steadyhand"))
        with DatasetteServer(datasette_bin(version, root), db) as server:
            _set_base_url(work / "steadyhand.yaml", server.base_url)
            port = free_port()
            env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(repo)}
            env.pop("DISPLAY", None)
            cmd = [sys.executable, "-m", module_name("core.cli"), "record", "--project", str(work), "--flow", flow, "--headless",
                   "--cdp-port", str(port), "--force", "/"]
            proc = subprocess.Popen(cmd, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                _wait_ready(proc)
                _drive(port, log)
                proc.send_signal(signal.SIGTERM)
                out, err = proc.communicate(timeout=90)
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate(timeout=30)
            log(out.rstrip())
            if proc.returncode != 0:
                raise DriftEnvError(f"steadyhand record exited with {proc.returncode}: {out[-1500:]}{err[-1500:]}")
        src = work / "flows"
        dst = project / "flows"
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / f"{flow}.yaml", dst / f"{flow}.yaml")
        crops = src / f"{flow}.crops"
        if (dst / f"{flow}.crops").exists():
            shutil.rmtree(dst / f"{flow}.crops")
        if crops.exists():
            shutil.copytree(crops, dst / f"{flow}.crops")
    _tidy_titles(dst / f"{flow}.yaml", version)
    return dst / f"{flow}.yaml"


def _tidy_titles(path: Path, version: str) -> None:
    """Step titles from the intended actions ("Sort by year" for "Click year"), when the recording has one
    step per intended action; nothing else of the recorded flow is touched."""
    from dataclasses import replace

    from core.project import load_flow, save_flow

    flow = load_flow(path)
    if [s.action.kind for s in flow.steps] != [a.kind for a in INTENDED]:
        return
    steps = tuple(replace(s, name=a.title) for s, a in zip(flow.steps, INTENDED, strict=True))
    description = (f"A tour of the books table, recorded by demonstration on datasette {version} (steadyhand bench "
                   "drift --record): open the database and the table, sort by year, facet by genre and keep "
                   "Mystery, full-text search, open a row, back by the breadcrumb, next page. Step titles from "
                   "the intended actions.")
    save_flow(replace(flow, steps=steps, description=description), path)


def _wait_ready(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    head: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line:
            break
        head.append(line)
        if line.startswith("Close the page"):
            return
    proc.kill()
    out, err = proc.communicate(timeout=30)
    raise DriftEnvError(f"the recorder did not start: {''.join(head)}{out}{err[-2000:]}")


def _drive(port: int, log: Callable[[str], None]) -> None:
    """The scripted user: every intended action with real input on the recorder's page, checked."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.connect_over_cdp(f"http://127.0.0.1:{port}")
        try:
            page = browser.contexts[0].pages[0]
            page.wait_for_load_state("load")
            page.wait_for_timeout(PAUSE_MS)
            before = page_state(page)
            for action in INTENDED:
                perform(page, action, typing_delay_ms=TYPING_DELAY_MS)
                page.wait_for_timeout(PAUSE_MS)
                after = page_state(page)
                problem = action.check(before, after)
                if problem:
                    raise DriftEnvError(f"recording went astray at {action.key}: {problem}")
                log(f"  did: {action.title}")
                before = after
            page.wait_for_timeout(PAUSE_MS)
        finally:
            browser.close()




