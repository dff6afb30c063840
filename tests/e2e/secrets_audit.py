"""The secrets audit over everything the end-to-end tests wrote (run at the end of the session, conftest.py).

Audited: every project folder (a ``steadyhand.yaml``) under the session's temporary folder, with the secrets
it declares; the bundled projects of the repository (``projects/*``, whose ``.steadyhand/`` the tests write);
and every other file of the temporary folder (exports, JUnit files, HTML reports, logs) for every secret value
any of those projects declares.  Under pytest-xdist each worker audits its own temporary folder (and the
bundled projects, read only).

A test that writes a secret on purpose (to check that the audit finds it) registers the file with
:func:`planted` and removes nothing; the session audit leaves exactly those files out.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from core.engine.audit import audit_paths, audit_project, declared_secrets
from core.sites.adapters import DEMO_APP_DB
from core.project import ProjectError, load_project

__all__ = ["planted", "audit_test_output"]

#: Files a test wrote a secret into on purpose (this process only: each xdist worker has its own).
_PLANTED: set[Path] = set()


def planted(path: Path) -> Path:
    """Mark ``path`` as a deliberate leak (the session audit skips it); returns ``path``."""
    _PLANTED.add(Path(path).absolute())
    return path


def _projects(top: Path) -> list[Path]:
    return sorted({p.parent for p in top.rglob("steadyhand.yaml") if p.is_file() and not p.is_symlink()})


def _source_copy(path: Path, basetemp: Path, repo: Path) -> bool:
    """True for a byte-for-byte copy of a file of the repository (a test that copies the source tree): the
    demo's public password is in the demo app's source by design; copies are not what the tests wrote."""
    parts = path.relative_to(basetemp).parts
    for i in range(1, len(parts)):
        original = repo.joinpath(*parts[i:])
        if original.is_file() and original.stat().st_size == path.stat().st_size:
            return original.read_bytes() == path.read_bytes()
    return False


def _app_data(path: Path) -> bool:
    """True for the demo app's own database (and its WAL files) wherever a test served it from: the data of the
    app under test, which keeps its users' passwords as it likes (:func:`core.sites.adapters.site_data_files`)."""
    return any(path.name == DEMO_APP_DB + suffix for suffix in ("", "-wal", "-shm", "-journal"))


def audit_test_output(basetemp: Path, bundled: Path, *, only: Iterable[Path] | None = None) -> tuple[list[str], str]:
    """Audit what the tests wrote; returns (findings as ``where: secret 'name' (form)`` lines, summary).

    ``basetemp``: the session's temporary folder; ``bundled``: the folder of the bundled projects (its parent
    is the repository: byte-for-byte copies of its files are left out); ``only``: the folders of ``basetemp``
    to audit (those the end-to-end tests made), None for all of it.
    """
    tops = sorted(Path(p) for p in only) if only is not None else [basetemp]
    findings: list[str] = []
    values: dict[str, str] = {}
    roots: list[Path] = []
    files = 0
    unloadable: list[Path] = []
    for root in [r for top in tops for r in _projects(top)] + _projects(bundled):
        try:
            project = load_project(root)
        except (ProjectError, OSError, ValueError):
            unloadable.append(root)  # a bad-input test's project: audited below with every known value
            continue
        roots.append(root)
        secrets, _ = declared_secrets(project)
        values.update({f"{name}@{project.name}": v for name, v in secrets.items()})
        report = audit_project(project)
        files += report.files
        findings += [f"{root}/{f}" for f in report.findings if (root / f.where.split(":")[0]).absolute()
                     not in _PLANTED]
    by_value = {v: k for k, v in values.items()}  # one name per distinct value
    known = {name: v for v, name in by_value.items()}
    inside = [r.absolute() for r in roots]
    # an unloadable project's own project file is where its secrets are declared (a default is not a leak)
    declarations = {(r / "steadyhand.yaml").absolute() for r in unloadable}
    rest = [p for top in tops for p in sorted(top.rglob("*")) if p.is_file() and not p.is_symlink()
            and p.absolute() not in declarations
            and not any(p.absolute().is_relative_to(r) for r in inside) and not _source_copy(p, basetemp, bundled.parent)
            and not _app_data(p)]
    if known:
        report = audit_paths(rest, known, root=basetemp)
        files += report.files
        findings += [f"{basetemp}/{f}" for f in report.findings
                     if (basetemp / f.where.split(":")[0]).absolute() not in _PLANTED]
    summary = (f"audited {files} files of {len(roots)} projects and the test output under {basetemp} for "
               f"{len(known)} secret value(s); {len(unloadable)} unloadable project folder(s) audited as files")
    return findings, summary
