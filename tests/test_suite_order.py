"""The suite's file order (tests/conftest.py): every file it names exists, and long files come before the rest."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _order():  # noqa: ANN202 - tests/conftest.py, loaded by its path (every test folder has a conftest module)
    spec = importlib.util.spec_from_file_location("_suite_order", TESTS / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_long_file_named_exists_once() -> None:
    order = _order()
    missing = [name for name in order.LONG_FIRST if not (TESTS / name).is_file()]
    assert not missing, f"renamed or removed: {missing} (tests/conftest.py LONG_FIRST)"
    assert len(set(order.LONG_FIRST)) == len(order.LONG_FIRST)


def test_long_files_first_then_end_to_end_then_the_unit_tests_of_core() -> None:
    order = _order()
    first, second = (TESTS / name for name in order.LONG_FIRST[:2])
    files = [TESTS / "core" / "act" / "test_space.py", TESTS / "e2e" / "test_names.py", second,
             TESTS / "studio" / "test_bridge.py", TESTS / "packaging" / "test_desktop_entry.py", first]
    ranked = sorted(files, key=order.file_rank)
    assert ranked == [first, second, TESTS / "packaging" / "test_desktop_entry.py", TESTS / "e2e" / "test_names.py",
                      TESTS / "studio" / "test_bridge.py", TESTS / "core" / "act" / "test_space.py"]
    assert order.file_rank(Path("/elsewhere/test_x.py")) > order.file_rank(files[0])


def test_the_session_runs_in_that_order(request: pytest.FixtureRequest) -> None:
    """This session's own items are in file-rank order (the hook ran; xdist keeps it under --dist loadfile)."""
    order = _order()
    ranks = [order.file_rank(item.path) for item in request.session.items]
    assert ranks == sorted(ranks)
