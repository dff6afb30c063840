"""One run id everywhere (issue 23 item 5): a full id or any unique prefix names a run, as git accepts a unique
prefix of a commit id; an ambiguous prefix is an error that lists the matches."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.store import SHORT_RUN_ID, RunIdError, Store, short_run_id


@pytest.fixture
def store(tmp_path: Path):
    s = Store.open(tmp_path / "store.sqlite")
    yield s
    s.close()


def test_a_full_id_a_short_id_and_any_unique_prefix_name_the_run(store: Store) -> None:
    a = store.begin_run("P", "login", run_id="3f2a9c01d4e5b6a7c8d9e0f1a2b3c4d5")
    store.begin_run("P", "login", run_id="77aa0000000000000000000000000000")
    assert store.resolve_run_id(a) == a
    assert store.resolve_run_id(short_run_id(a)) == a and len(short_run_id(a)) == SHORT_RUN_ID == 8
    assert store.resolve_run_id("3f") == a and store.resolve_run_id(" 3f2a9 ") == a


def test_an_ambiguous_prefix_lists_the_matches(store: Store) -> None:
    a = store.begin_run("P", "login", run_id="abc12345aaaa")
    b = store.begin_run("P", "export", run_id="abc12345bbbb")
    with pytest.raises(RunIdError) as info:
        store.resolve_run_id("abc1")
    msg = str(info.value)
    assert "ambiguous" in msg and a in msg and b in msg and "login" in msg and "export" in msg
    assert set(info.value.matches) == {a, b} and "give more characters" in msg
    assert store.resolve_run_id("abc12345a") == a


def test_an_unknown_or_empty_id_is_a_clear_error(store: Store) -> None:
    store.begin_run("P", "login", run_id="abc")
    with pytest.raises(RunIdError, match="no run id starts with 'zz'"):
        store.resolve_run_id("zz")
    with pytest.raises(RunIdError, match="no run id given"):
        store.resolve_run_id("  ")
    with pytest.raises(RunIdError, match="no run id starts with"):
        store.resolve_run_id("a%")  # a LIKE wildcard is a literal character here
