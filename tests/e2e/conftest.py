"""End-to-end tests: after the last of them, the secrets audit runs over everything they wrote.

A secret found anywhere (a project's store, screenshots, journals; an export, a JUnit file or a report in the
temporary folder) fails the session: the teardown error names the file and the secret, never the value.  It
works per worker under pytest-xdist (each audits its own temporary folder).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from secrets_audit import audit_test_output

ROOT = Path(__file__).resolve().parents[2]
#: Folders of the temporary folder that end-to-end modules made (other tests plant secrets on purpose, and
#: under pytest-xdist they share a worker's temporary folder with these).
_E2E_DIRS: set[Path] = set()


@pytest.fixture(scope="module", autouse=True)
def e2e_output(tmp_path_factory: pytest.TempPathFactory):
    """Notes the temporary folders an end-to-end module makes (its tests and its module fixtures)."""
    base = tmp_path_factory.getbasetemp()
    before = set(base.iterdir())
    yield
    _E2E_DIRS.update(p for p in set(base.iterdir()) - before if p.is_dir() and not p.is_symlink())


@pytest.fixture(scope="session", autouse=True)
def secrets_audit_after_e2e(tmp_path_factory: pytest.TempPathFactory):
    """Runs the secrets audit when the session's end-to-end tests are done (see the module docstring)."""
    yield
    findings, summary = audit_test_output(tmp_path_factory.getbasetemp(), ROOT / "projects", only=_E2E_DIRS)
    if findings:
        pytest.fail(f"secrets audit after the end-to-end tests: {len(findings)} finding(s)\n" + "\n".join(findings)
                    + f"\n({summary})", pytrace=False)
