"""A throwaway PostgreSQL cluster for tests of the shared store: Debian's server binaries, a data folder in a
temp dir, listening on 127.0.0.1 only, on a free port, with a password (scram-sha-256) for TCP connections.

No server found is an error (``PgMissing``), never a skip: ``packaging/setup.sh`` installs Debian's
``postgresql`` package, so a machine without it is a broken set-up.  Run as root (CI), the server runs as the
``postgres`` user that package creates (``initdb`` refuses root).  Every wait has a limit (``pg_ctl -t``).
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

__all__ = ["PgCluster", "PgMissing", "pg_bindir"]

#: Longest wait for the server to start or stop, s.
PG_CTL_TIMEOUT_S = 60
USER = "steadyhand"
PASSWORD = "pg-test-pass-7Q"


class PgMissing(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


def pg_bindir() -> Path:
    """Folder of ``initdb``, ``pg_ctl`` and ``postgres``: Debian's newest ``/usr/lib/postgresql/N/bin``, else PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    raise PgMissing("no PostgreSQL server (initdb, pg_ctl) on this machine: run packaging/setup.sh, which installs "
                    "Debian's postgresql package")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgCluster:
    """``with PgCluster() as pg:`` a running server; :meth:`url` of a database made by :meth:`create_db`."""

    def __init__(self) -> None:
        # a folder of its own under /tmp (mode 1777 above it), so the server user reaches it without touching
        # the modes of pytest's private folders
        self.folder = Path(tempfile.mkdtemp(prefix="steadyhand-pg-"))
        self.bindir = pg_bindir()
        self.port = _free_port()
        self.data = self.folder / "data"
        self.socket_dir = self.folder / "sock"
        self.log = self.folder / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                raise PgMissing("running as root and there is no 'postgres' user to run the server as: "
                                "install Debian's postgresql package (packaging/setup.sh)") from None
            self._as = ["runuser", "-u", "postgres", "--"]

    def _cmd(self, *args: str) -> subprocess.CompletedProcess:
        r = subprocess.run([*self._as, *args], capture_output=True, text=True, timeout=PG_CTL_TIMEOUT_S + 30)
        if r.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.is_file() else ""
            raise RuntimeError(f"{args[0]} failed ({r.returncode}): {r.stderr or r.stdout}\n{log}")
        return r

    def start(self) -> "PgCluster":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.socket_dir.mkdir(exist_ok=True)
        pwfile = self.folder / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self._as:
            shutil.chown(self.folder, "postgres")
            shutil.chown(self.socket_dir, "postgres")
            shutil.chown(pwfile, "postgres")
        self._cmd(str(self.bindir / "initdb"), "-D", str(self.data), "-U", USER, f"--pwfile={pwfile}",
                  "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync")
        opts = f"-p {self.port} -k {self.socket_dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", opts,
                  "-w", "-t", str(PG_CTL_TIMEOUT_S), "start")
        return self

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").is_file():
                self._cmd(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                          "-t", str(PG_CTL_TIMEOUT_S), "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> "PgCluster":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def url(self, db: str = "postgres", *, password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{db}"

    def create_db(self, name: str) -> str:
        """Create database ``name``; its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)
