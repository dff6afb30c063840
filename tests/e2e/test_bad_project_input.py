"""Bad site options and a damaged store: one clear line naming the file and the field, exit 2, no traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _demo(tmp_path: Path, **options: str) -> Path:
    dst = tmp_path / "demo"
    shutil.copytree(ROOT / "projects" / "demo", dst, ignore=shutil.ignore_patterns(".steadyhand"))
    doc = yaml.safe_load((dst / "steadyhand.yaml").read_text())
    doc["site_options"].update(options)
    (dst / "steadyhand.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return dst


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core.cli", *args], cwd=ROOT, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("options,field,expected", [
    ({"variant": "sufix"}, "site_options.variant", "unknown variant 'sufix'"),
    ({"latency_ms": "fast"}, "site_options.latency_ms", "whole number of ms"),
    ({"today": "2 March"}, "site_options.today", "YYYY-MM-DD"),
    ({"variantt": "popup"}, "site_options.variantt", "unknown demo site option"),
])
def test_a_bad_site_option_names_the_file_and_the_field(tmp_path, options, field, expected) -> None:
    project = _demo(tmp_path, **options)
    r = _cli("run", str(project), "--headless", "--flow", "sort_table")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    (line,) = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert f"steadyhand.yaml at {field}" in line and expected in line


def test_a_damaged_store_is_named_and_left_as_it_is(tmp_path) -> None:
    project = _demo(tmp_path)
    store = project / ".steadyhand" / "store.sqlite"
    store.parent.mkdir()
    store.write_bytes(b"garbage, not SQLite")
    for args in (("run", str(project), "--headless", "--flow", "sort_table"), ("heals", "list", str(project))):
        r = _cli(*args)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert "not a readable Steadyhand store" in r.stderr and str(store) in r.stderr
    assert store.read_bytes() == b"garbage, not SQLite"
