"""The session's secrets audit (conftest.py) finds a leak anywhere the tests write, and names file and secret."""
from __future__ import annotations

import shutil
from pathlib import Path

from secrets_audit import audit_test_output, planted

ROOT = Path(__file__).resolve().parents[2]
SECRET = "demo-" + "pass"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    base, bundled = tmp_path / "base", tmp_path / "bundled"
    shutil.copytree(ROOT / "projects" / "demo", base / "t0" / "demo", ignore=shutil.ignore_patterns(".steadyhand"))
    (base / "t1").mkdir(parents=True)
    (base / "t1" / "junit.xml").write_text("<testsuite/>")
    bundled.mkdir()
    return base, bundled


def test_clean_output_has_no_finding(tmp_path: Path) -> None:
    base, bundled = _tree(tmp_path)
    findings, summary = audit_test_output(base, bundled)
    assert findings == [] and "of 1 projects" in summary


def test_a_leak_in_a_report_outside_any_project_is_found_and_a_planted_one_skipped(tmp_path: Path) -> None:
    base, bundled = _tree(tmp_path)
    planted(base / "t1" / "test_exported.py").write_text(f"PASSWORD = {SECRET!r}\n")  # on purpose
    assert audit_test_output(base, bundled)[0] == []
    leak = base / "t1" / "report.html"
    leak.write_text(f"<p>{SECRET}</p>")
    try:
        findings, _ = audit_test_output(base, bundled)
    finally:
        leak.unlink()  # not left for the session's own audit
    assert findings == [f"{base}/t1/report.html: secret 'password@Demo' (clear)"]


def test_a_leak_in_a_projects_store_folder_is_found(tmp_path: Path) -> None:
    base, bundled = _tree(tmp_path)
    data = base / "t0" / "demo" / ".steadyhand"
    data.mkdir()
    log = data / "run.log"
    log.write_text(f"typed {SECRET}")
    try:
        findings, _ = audit_test_output(base, bundled)
    finally:
        log.unlink()
    assert findings == [f"{base / 't0' / 'demo'}/.steadyhand/run.log: secret 'password' (clear)"]


def test_a_copy_of_the_source_tree_is_not_test_output_but_an_edited_copy_is(tmp_path: Path) -> None:
    base, _ = _tree(tmp_path)
    copy = base / "t1" / "core" / "sites" / "demo.py"  # holds the demo's public password by design
    copy.parent.mkdir(parents=True)
    shutil.copy(ROOT / "core" / "sites" / "demo.py", copy)
    assert audit_test_output(base, ROOT / "projects")[0] == []
    copy.write_text(copy.read_text() + "\n# edited\n")
    try:
        findings, _ = audit_test_output(base, ROOT / "projects")
    finally:
        copy.unlink()
    assert [f for f in findings if "t1/core/sites/demo.py" in f]


def test_only_the_folders_the_end_to_end_tests_made_are_audited(tmp_path: Path) -> None:
    base, bundled = _tree(tmp_path)
    other = base / "t2"  # another kind of test's folder (a unit test that plants a value to find it)
    other.mkdir()
    leak = other / "notes.txt"
    leak.write_text(SECRET)
    try:
        assert audit_test_output(base, bundled)[0] == [f"{base}/t2/notes.txt: secret 'password@Demo' (clear)"]
        findings, summary = audit_test_output(base, bundled, only=[base / "t0", base / "t1"])
    finally:
        leak.unlink()
    assert findings == [] and "of 1 projects" in summary
