"""The environment of the datasette drift benchmark: virtual environments, the books database, loopback servers.

Three datasette releases (:data:`VERSIONS`, checked on PyPI with ``pip index versions --pre datasette``:
all three exist) are installed each in its own virtual environment under
``~/.cache/steadyhand/drift/<version>`` (``STEADYHAND_DRIFT_CACHE`` overrides the folder), created once and
reused; pip installs from the package index only.  One SQLite file holds a ``books`` table (title, author,
year, genre, pages; :data:`ROWS` deterministic rows from a seeded generator) and an FTS5 index
``books_fts`` over title and author (external content, ``content=[books]``), which datasette detects and
shows as the table's search box.  Each release is served with ``datasette serve --host 127.0.0.1
--port N`` (architecture rule 11) in a subprocess of its own, stopped by :meth:`DatasetteServer.stop`.

Errors: :class:`DriftEnvError` (an install, a start or a readiness wait that failed), with the tail of
pip's or datasette's output.
"""
from __future__ import annotations

import os
import random
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "VERSIONS", "ROWS", "DB_NAME", "DriftEnvError", "cache_dir", "venv_dir", "datasette_bin",
    "installed_version", "ensure_venv", "book_rows", "make_books_db", "free_port", "DatasetteServer",
]

#: The releases of the issue ("0.59.4, 0.65.5 and 1.0a41"); the flow is recorded on the first.
VERSIONS: tuple[str, ...] = ("0.59.4", "0.65.5", "1.0a41")
#: Rows of the books table: three pages of datasette's default page size (100) and a bit.
ROWS = 320
#: The database's file name; datasette names the database after it ("library").
DB_NAME = "library.db"
#: Seconds a server may take to answer its first request before the start counts as failed.
START_TIMEOUT_S = 60.0
#: Seconds one ``pip install`` may take.
PIP_TIMEOUT_S = 900.0

_ADJ = ("Silent", "Golden", "Hidden", "Broken", "Distant", "Crimson", "Quiet", "Frozen", "Wild", "Last",
        "Burning", "Forgotten", "Secret", "Winter", "Summer", "Empty")
_NOUN = ("River", "Garden", "Empire", "Harbor", "Mountain", "Letter", "Kingdom", "Lantern", "Orchard",
         "Voyage", "Station", "Tower", "Island", "Forest", "Mirror", "Road")
_FIRST = ("Ada", "Bram", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kira",
          "Luca", "Maya", "Nils", "Olga", "Pavel")
_LAST = ("Arden", "Brook", "Castell", "Dunmore", "Ellery", "Fairfax", "Grantham", "Holloway", "Iverson",
         "Jessop", "Kestrel", "Lindqvist")
_GENRES = ("Fiction", "Mystery", "Science", "History", "Poetry", "Travel", "Biography", "Fantasy")


class DriftEnvError(RuntimeError):
    """An install or a server start failed; the message carries the tail of the tool's output."""


def cache_dir() -> Path:
    """The benchmark's cache folder (``STEADYHAND_DRIFT_CACHE`` or ``~/.cache/steadyhand/drift``)."""
    env = os.environ.get("STEADYHAND_DRIFT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "steadyhand" / "drift"


def venv_dir(version: str, root: Path | None = None) -> Path:
    """The virtual environment of one release."""
    return (root or cache_dir()) / version


def datasette_bin(version: str, root: Path | None = None) -> Path:
    """The ``datasette`` executable of one release's environment."""
    return venv_dir(version, root) / "bin" / "datasette"


def installed_version(version: str, root: Path | None = None) -> str | None:
    """The datasette version installed in the release's environment, or None when there is none."""
    py = venv_dir(version, root) / "bin" / "python"
    if not py.exists():
        return None
    proc = subprocess.run([str(py), "-c", "import importlib.metadata as m; print(m.version('datasette'))"],
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip() if proc.returncode == 0 else None


def ensure_venv(version: str, root: Path | None = None, log=print) -> Path:
    """Create the release's environment and install ``datasette==version`` into it, unless already there.

    Returns the environment's folder.  Raises :class:`DriftEnvError` when venv or pip fails.
    """
    target = venv_dir(version, root)
    if installed_version(version, root) == version:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    log(f"drift: creating {target} (datasette=={version})")
    steps = [[sys.executable, "-m", "venv", "--clear", str(target)],
             [str(target / "bin" / "python"), "-m", "pip", "install", "--quiet", f"datasette=={version}"]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        if proc.returncode != 0:
            raise DriftEnvError(f"{' '.join(cmd[:4])}... failed ({proc.returncode}): "
                                f"{(proc.stdout + proc.stderr)[-2000:]}")
    got = installed_version(version, root)
    if got != version:
        raise DriftEnvError(f"{target}: datasette {got!r} installed, expected {version!r}")
    return target


def book_rows(n: int = ROWS, seed: int = 9) -> list[tuple[str, str, int, str, int]]:
    """``n`` deterministic books ``(title, author, year, genre, pages)`` from ``random.Random(seed)``."""
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        title = f"The {rng.choice(_ADJ)} {rng.choice(_NOUN)}"
        author = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        rows.append((title, author, rng.randint(1850, 2023), rng.choice(_GENRES), rng.randint(90, 900)))
    return rows


def make_books_db(path: Path, n: int = ROWS) -> Path:
    """Write the benchmark's SQLite file at ``path`` (replaced when present): ``books`` and its FTS5 index.

    ``books(id INTEGER PRIMARY KEY, title, author, year, genre, pages)``; ``books_fts`` is an FTS5 table
    over title and author with ``content=[books]``, the shape ``sqlite-utils enable-fts`` makes, which
    datasette's FTS detection finds (it shows the search box on the books table).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    con = sqlite3.connect(path)
    try:
        con.executescript(
            "CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, "
            "year INTEGER NOT NULL, genre TEXT NOT NULL, pages INTEGER NOT NULL);"
            "CREATE VIRTUAL TABLE books_fts USING fts5(title, author, content=[books], content_rowid=[id]);")
        con.executemany("INSERT INTO books (title, author, year, genre, pages) VALUES (?, ?, ?, ?, ?)",
                        book_rows(n))
        con.execute("INSERT INTO books_fts (rowid, title, author) SELECT id, title, author FROM books")
        con.commit()
    finally:
        con.close()
    return path


def free_port() -> int:
    """A free TCP port on 127.0.0.1 (bound and released; the server binds it right after)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class DatasetteServer:
    """One datasette release serving ``db`` on ``127.0.0.1:port``; a context manager (start / stop).

    ``executable`` is that release's ``datasette``; any command with datasette's ``serve`` arguments works
    (the tests start a plain ``python -m http.server`` look-alike through ``command``).
    """

    executable: Path
    db: Path
    port: int = 0
    command: list[str] | None = None
    proc: subprocess.Popen | None = field(default=None, repr=False)
    host: str = "127.0.0.1"
    #: URL path prefix (``/staging``; "" for none): datasette's ``base_url`` setting serves and links under it
    prefix: str = ""

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` plus the prefix."""
        return f"http://{self.host}:{self.port}{self.prefix}"

    def argv(self) -> list[str]:
        """The command line that starts the server (loopback only: ValueError for any other host)."""
        if self.host not in ("127.0.0.1", "::1"):
            raise ValueError(f"servers bind to loopback only (architecture rule 11), not {self.host!r}")
        if self.command is not None:
            return [c.format(port=self.port, host=self.host, db=str(self.db)) for c in self.command]
        return [str(self.executable), "serve", str(self.db), "--host", self.host, "--port", str(self.port),
                "--setting", "sql_time_limit_ms", "5000"] + (["--setting", "base_url", self.prefix.rstrip("/") + "/"]
                                                             if self.prefix else [])

    def start(self, timeout_s: float = START_TIMEOUT_S) -> "DatasetteServer":
        """Start the subprocess and wait until ``/`` answers (at most ``timeout_s`` s, else DriftEnvError)."""
        if self.port == 0:
            self.port = free_port()
        self.proc = subprocess.Popen(self.argv(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                out = self.proc.stdout.read() if self.proc.stdout else ""
                raise DriftEnvError(f"{self.argv()[0]} exited with {self.proc.returncode}: {out[-2000:]}")
            try:
                with urllib.request.urlopen(self.base_url + "/", timeout=2) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                time.sleep(0.2)
        self.stop()
        raise DriftEnvError(f"{self.base_url}: no answer within {timeout_s:.0f} s")

    def stop(self, timeout_s: float = 10.0) -> None:
        """Terminate the subprocess (SIGTERM, then SIGKILL after ``timeout_s`` s); idempotent."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=timeout_s)
        if self.proc.stdout:
            self.proc.stdout.close()
        self.proc = None

    def __enter__(self) -> "DatasetteServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
