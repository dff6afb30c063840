"""Virtual environments and servers of the third-party apps of ``steadyhand bench drift --app NAME``.

Each release (:class:`core.bench.drift_apps.AppVersion`) gets its own virtual environment under the drift
cache (``STEADYHAND_DRIFT_CACHE`` or ``~/.cache/steadyhand/drift``, never inside the repository), made once
with the machine's Python and ``pip install`` from PyPI (:func:`ensure_app_venv`).  :class:`AppServer` runs
the benchmark's small app (``core/bench/drift_servers/<server>``) with that environment's Python on a free
127.0.0.1 port over a SQLite file made for the run, mounted at a path prefix or at the root.

Errors: :class:`~core.bench.drift_env.DriftEnvError` when venv / pip fail, the cache is inside the
repository, or the server does not answer within :data:`START_TIMEOUT_S`.
"""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .drift_apps import AppSpec, AppVersion
from .drift_env import DriftEnvError, cache_dir, free_port

__all__ = ["SERVERS_DIR", "REPO", "app_venv", "installed", "ensure_app_venv", "made_with", "REQUIREMENTS_FILE", "AppServer", "read_rows",
           "START_TIMEOUT_S", "PIP_TIMEOUT_S"]

#: Folder of the app servers (run by each app's own Python; standard library + the app's framework).
SERVERS_DIR = Path(__file__).resolve().parent / "drift_servers"
#: The repository root (the cache must not lie inside it).
REPO = Path(__file__).resolve().parents[2]
#: Seconds a server may take to answer its start page (a cold import of the framework is several s; Gradio 5
#: took 30 s on 2 loaded cores).
START_TIMEOUT_S = 120.0
#: Seconds one pip install may take.
PIP_TIMEOUT_S = 900


def app_venv(version: AppVersion, root: Path | None = None) -> Path:
    """The environment folder of ``version`` (``<cache>/<venv>``); DriftEnvError when inside the repository."""
    target = (root or cache_dir()) / version.venv
    resolved = target.resolve()
    if resolved == REPO or REPO in resolved.parents:
        raise DriftEnvError(f"{target}: the drift cache must lie outside the repository ({REPO})")
    return target


def installed(version: AppVersion, root: Path | None = None) -> str | None:
    """The installed version of ``version.package`` in its environment, or None when there is none."""
    py = app_venv(version, root) / "bin" / "python"
    if not py.exists():
        return None
    proc = subprocess.run([str(py), "-c", f"import importlib.metadata as m; print(m.version({version.package!r}))"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else None


#: The file in an environment that lists the pip arguments it was made with (one a line): an environment made
#: with other pins (a registry's new release broke the old set, the pins were changed) is made again.
REQUIREMENTS_FILE = "steadyhand-requirements.txt"


def made_with(version: AppVersion, root: Path | None = None) -> tuple[str, ...] | None:
    """The pip arguments ``version``'s environment was made with (:data:`REQUIREMENTS_FILE`); None when it does
    not say (an environment of before, or none)."""
    try:
        text = (app_venv(version, root) / REQUIREMENTS_FILE).read_text(encoding="utf-8")
    except OSError:
        return None
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def ensure_app_venv(version: AppVersion, root: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """Create ``version``'s environment and pip-install its requirements, unless the release is there, made with
    the same requirements (:data:`REQUIREMENTS_FILE`).

    Raises
    ------
    DriftEnvError
        When the environment cannot be made (pip failed: its output's tail) or holds another release after.
    """
    target = app_venv(version, root)
    if installed(version, root) == version.version and made_with(version, root) == tuple(version.requirements):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    log(f"drift: creating {target} ({' '.join(version.requirements)})")
    for cmd in ([sys.executable, "-m", "venv", "--clear", str(target)],
                [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", *version.requirements]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        if proc.returncode != 0:
            raise DriftEnvError(f"{' '.join(cmd[:5])}... failed ({proc.returncode}): {(proc.stdout + proc.stderr)[-2000:]}")
    got = installed(version, root)
    if got != version.version:
        raise DriftEnvError(f"{target}: {version.package} {got!r} installed, expected {version.version!r}")
    (target / REQUIREMENTS_FILE).write_text("".join(f"{r}\n" for r in version.requirements), encoding="utf-8")
    return target


def read_rows(db: Path, table: str = "item") -> tuple[tuple[Any, ...], ...]:
    """The rows ``(id, name, quantity)`` of ``table`` sorted by id; ``()`` while the table does not exist yet."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return tuple(con.execute(f"SELECT id, name, quantity FROM {table} ORDER BY id").fetchall())
    except sqlite3.OperationalError:
        return ()
    finally:
        con.close()


@dataclass
class AppServer:
    """One app release served on ``127.0.0.1:port`` under ``prefix`` over the SQLite file ``db``; a context
    manager.  ``password`` is the generated admin's (passed in the environment, never on the command line)."""

    spec: AppSpec
    version: AppVersion
    db: Path
    prefix: str = ""
    password: str = ""
    root: Path | None = None
    port: int = 0
    proc: subprocess.Popen | None = field(default=None, repr=False)
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` plus the prefix (the project's ``base_url`` for this server)."""
        return f"http://127.0.0.1:{self.port}{self.prefix}"

    def start(self, timeout_s: float = START_TIMEOUT_S) -> "AppServer":
        if self.port == 0:
            self.port = free_port()
        py = app_venv(self.version, self.root) / "bin" / "python"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("STEADYHAND_", "PYTHON"))}
        env.update(dict(self.version.env), DRIFT_DB=str(self.db), DRIFT_PORT=str(self.port), DRIFT_PREFIX=self.prefix,
                   DRIFT_ADMIN_PASSWORD=self.password or "unused", PYTHONPATH=str(SERVERS_DIR),
                   PYTHONDONTWRITEBYTECODE="1")
        self.log_path = self.db.with_suffix(".log")
        log = open(self.log_path, "w", encoding="utf-8")  # a file: a full pipe would stall the server
        self.proc = subprocess.Popen([str(py), str(SERVERS_DIR / self.spec.server)], stdout=log, stderr=log,
                                     env=env, cwd=str(self.db.parent), start_new_session=True)
        log.close()
        url = self.base_url + self.spec.start_path
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise DriftEnvError(f"{self.spec.server} ({self.version.label}) exited with {self.proc.returncode}: "
                                    f"{self.log_path.read_text(encoding='utf-8')[-2000:]}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                time.sleep(0.3)
        self.stop()
        raise DriftEnvError(f"{url}: no answer within {timeout_s:.0f} s")

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after ``timeout_s`` s); idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout_s)
        self.proc = None

    def __enter__(self) -> "AppServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
