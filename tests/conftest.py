"""The order the suite's test files run in: the long ones first, the many short ones last.

CI runs ``pytest -n 2 --dist loadfile`` (README, ``.ci/run``): each test file goes whole to one of two
workers, in collection order, as a worker runs short of work.  Alphabetical order left long files (a wheel
built and installed, benchmarks, recordings with a person's pauses, runs of ``steadyhand`` in a subprocess)
wherever their names fell, so one of them started last made a tail while the other worker sat idle.  Here
the files of :data:`LONG_FIRST` come first (longest first), then the rest of the end-to-end, packaging and
studio files, then the unit tests of ``core`` (hundreds of files of a second or less each: they even out
the two workers at the end).  The order of the tests inside a file is kept, and pytest-xdist is told to keep
this order of the files (see :func:`pytest_configure`).

:data:`LONG_FIRST` comes from per-file durations measured with ``pytest -n 0 --durations=0`` (seconds of a
file, its module fixtures included); a file missing from it only runs later, nothing is left out.
"""
from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Test files (relative to tests/) that take the longest, longest first.  The first block was measured
#: (seconds of the file with ``-n 0`` on a shared, loaded 2-core machine; CPU seconds in brackets, with the
#: processes it started); the second holds files not measured yet that run ``steadyhand`` in a subprocess
#: many times, record with a person's pauses or start Chromium per test; the third, measured and shorter.
LONG_FIRST: tuple[str, ...] = (
    "e2e/test_export_pytest.py",  # 380 s (67): a pytest-playwright subprocess per exported flow
    "e2e/test_record_meaning.py",  # 368 s (90): eight recordings with pauses, each replayed
    "e2e/test_record_cdp.py",  # 342 s (44)
    "e2e/test_cli_one_error.py",  # 314 s (79): 35 runs of the command
    "core/project/test_trust.py",  # 307 s (45): 19 tests, the command in a subprocess
    # not measured yet
    "e2e/test_run_options.py",
    "e2e/test_heals.py",
    "e2e/test_outcomes_relative.py",
    "e2e/test_popups_no_choice.py",
    "e2e/test_skills_where_failures_happen.py",
    "e2e/test_learn_libraries.py",
    "e2e/test_resume_exactly_once.py",
    "e2e/test_faults_server.py",
    "e2e/test_faults_disk.py",
    "e2e/test_locate_evidence_run.py",
    "e2e/test_landing_regions.py",
    "e2e/test_record_corrections.py",
    "e2e/test_record_frames.py",
    "e2e/test_init_record.py",
    "e2e/test_run_trace.py",
    "e2e/test_run_ids.py",
    "e2e/test_codegen_import.py",
    "e2e/test_import_side.py",
    "e2e/test_takeover_cdp.py",
    "e2e/test_shared_store.py",
    "e2e/test_miniwob.py",
    "e2e/test_model_goal_miniwob.py",
    "studio/test_end_to_end.py",
    "studio/test_bench_studio.py",
    # measured, shorter
    "core/store/test_store_postgres.py",  # 111 s (13): a PostgreSQL cluster started and stopped
    "e2e/test_browser_endpoint.py",  # 88 s (26)
    "e2e/test_cli.py",  # 76 s (25)
    "e2e/test_browser_crash.py",  # 70 s (13)
    "e2e/test_baselines_cli_and_wait.py",  # 63 s (17)
    "e2e/test_faults_kill_resume.py",  # 60 s (13)
    "packaging/test_wheel_install.py",  # 54 s (26): the wheel built and installed in a new environment
    "e2e/test_bench_overhead.py",  # 54 s (23)
    "e2e/test_audit_after_run.py",  # 48 s (15)
    "e2e/test_bench_record.py",  # 33 s (12)
    "core/bench/test_similo_bench.py",  # 27 s (3)
    "e2e/test_change_detection.py",  # 25 s (12)
)

#: Where the other files go, by their first folder under tests/ (a folder not named here goes with "core").
GROUPS: dict[str, int] = {"packaging": 0, "e2e": 1, "studio": 2, "test_architecture.py": 3, "core": 4}

_RANK = {name: i for i, name in enumerate(LONG_FIRST)}


def file_rank(path: Path) -> tuple[int, int]:
    """Sort key of a test file: (0, place in LONG_FIRST), else (1 + its group, 0)."""
    try:
        rel = path.resolve().relative_to(TESTS).as_posix()
    except ValueError:  # a file outside tests/ (given on the command line): after everything else
        return (len(GROUPS) + 1, 0)
    if rel in _RANK:
        return (0, _RANK[rel])
    return (1 + GROUPS.get(rel.split("/")[0], GROUPS["core"]), 0)


def pytest_configure(config: pytest.Config) -> None:
    """Keeps this order under ``--dist loadfile``: pytest-xdist would otherwise sort the files by their number of
    tests (``--loadscope-reorder``, on by default), which put a 119-test file of quick checks first and the long
    one-test files last."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    """Long files first (see the module docstring); a stable sort keeps each file's own order."""
    ranks: dict[Path, tuple[int, int]] = {}
    items.sort(key=lambda item: ranks.setdefault(item.path, file_rank(item.path)))
