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

#: Test files (relative to tests/) that take the longest, longest first.
LONG_FIRST: tuple[str, ...] = (
    "packaging/test_wheel_install.py",
    "e2e/test_bench_overhead.py",
    "e2e/test_baselines_cli_and_wait.py",
    "e2e/test_audit_after_run.py",
    "e2e/test_bench_record.py",
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
