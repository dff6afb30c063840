"""No password-derived value in the store (issue 21 item 5).

A real run of a demo flow that types the password keeps the password field's checkpoint digest keyed
(HMAC under a random key of the process), never the unsalted SHA-256 a word list cracks; `steadyhand audit`
finds nothing after the run, and finds a planted digest, hex, UTF-16 and base64 slice of the password.
"""
from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from secrets_audit import planted

ROOT = Path(__file__).resolve().parents[2]
SECRET = "demo-" + "pass"

pytestmark = pytest.mark.browser


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STEADYHAND_")}
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_a_run_keeps_no_password_digest_and_the_audit_finds_a_planted_one(tmp_path: Path) -> None:
    project = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", project, ignore=shutil.ignore_patterns(".steadyhand"))
    run = cli("run", str(project), "--flow", "export_report", "--headless")
    assert run.returncode == 0, run.stdout + run.stderr

    db = project / ".steadyhand" / "store.sqlite"
    with sqlite3.connect(db) as con:
        fields = [f for (cell,) in con.execute("select fields from checkpoints") for f in _json(cell)]
    secret_fields = [f for f in fields if f.get("digest")]
    assert secret_fields, "the password field's checkpoint keeps a (keyed) digest"
    unsalted = hashlib.sha256(SECRET.encode()).hexdigest()
    assert all(f["digest"] != unsalted and f["value"] == "" for f in secret_fields)
    assert unsalted.encode() not in db.read_bytes()

    clean = cli("audit", str(project))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.splitlines()[-1].endswith("nothing found."), clean.stdout

    media = project / ".steadyhand" / "notes"
    media.mkdir()
    sha1_b64 = base64.b64encode(hashlib.sha1(SECRET.encode()).digest()).decode()
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()  # holds no base64 of the password by itself
    plants = {"digest.txt": f"fields: {unsalted}", "md5.txt": hashlib.md5(SECRET.encode()).hexdigest().upper(),
              "sha1.txt": f"h={sha1_b64}", "hex.txt": SECRET.encode().hex(),
              "utf16.txt": "x",
              "basic.txt": f"Authorization: Basic {basic}"}
    for name, text in plants.items():
        planted(media / name).write_text(text)
    planted(media / "utf16.txt").write_bytes(b"\xff\xfe" + SECRET.encode("utf-16-le"))
    found = cli("audit", str(project))
    assert found.returncode == 1, found.stdout + found.stderr
    out = found.stdout
    assert ".steadyhand/notes/digest.txt: secret 'password' (sha256 digest)" in out
    assert ".steadyhand/notes/md5.txt: secret 'password' (md5 digest)" in out
    assert ".steadyhand/notes/sha1.txt: secret 'password' (sha1 digest)" in out
    assert ".steadyhand/notes/hex.txt: secret 'password' (hex)" in out
    assert ".steadyhand/notes/utf16.txt: secret 'password' (utf-16)" in out
    assert ".steadyhand/notes/basic.txt: secret 'password' (base64)" in out
    assert SECRET not in out + found.stderr


def _json(cell: object) -> list[dict]:
    import json

    return list(json.loads(cell)) if isinstance(cell, (str, bytes)) and cell else []
