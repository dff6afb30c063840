"""A full disk while writing screenshots: the row is kept without its file, never naming a missing or half file."""
from __future__ import annotations

import errno
import os
import types

import pytest

from core.bench.faults import check_store
from core.store import Store
from core.store import media
from core.store.resumes import ResumeTable


@pytest.fixture
def full_disk_after(monkeypatch):
    """``full_disk_after(n)``: the media writer's n+1-th file writes half its bytes, then raises ENOSPC."""

    def arm(n: int) -> None:
        real, count = os.fdopen, {"n": 0}

        class Half:
            def __init__(self, fh):
                self.fh = fh

            def write(self, data):
                self.fh.write(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.fh.close()

        def fdopen(fd, mode="r", *a, **k):
            fh = real(fd, mode, *a, **k)
            count["n"] += 1
            return fh if count["n"] <= n else Half(fh)

        names = {k: getattr(os, k) for k in dir(os) if not k.startswith("__")}
        names["fdopen"] = fdopen
        monkeypatch.setattr(media, "os", types.SimpleNamespace(**names))
    return arm


def test_enospc_keeps_the_row_without_the_screenshot_and_says_so(tmp_path, make_observation, make_png,
                                                                   full_disk_after):
    store = Store.open(tmp_path / "store.sqlite")
    run = store.begin_run("p", "f")
    first = store.record_observation(run, 0, "before", make_observation(png=make_png(seed=1)))
    full_disk_after(0)
    second = store.record_observation(run, 0, "after", make_observation(png=make_png(seed=2)))
    assert first is not None and first.is_file() and second is None
    assert len(store.media_errors) == 1 and "No space left on device" in store.media_errors[0]
    assert "step 1 (after)" in store.media_errors[0]
    detail = store.run_detail(run)
    shots = [o.screenshot for o in detail.observations]
    assert len(shots) == 2 and shots[0] is not None and shots[1] is None
    store.close()
    report = check_store(tmp_path)
    assert report == {"integrity": "ok", "missing": 0, "broken": 0, "temp_files": 0, "corruptions": 0}


def test_other_os_errors_still_raise(tmp_path, make_observation, make_png, monkeypatch):
    store = Store.open(tmp_path / "store.sqlite")
    run = store.begin_run("p", "f")

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "denied")

    monkeypatch.setattr(media.tempfile, "mkstemp", denied)
    with pytest.raises(PermissionError):
        store.record_observation(run, 0, "before", make_observation(png=make_png()))
    assert store.run_detail(run).observations == ()  # the transaction was rolled back: no row without its file
    store.close()


def test_resume_table_links_runs_and_counts_actions_under_way(tmp_path):
    store = Store.open(tmp_path / "store.sqlite")
    a = store.begin_run("p", "f")
    b = store.begin_run("p", "f")
    table = ResumeTable(store)
    table.acting(a, 3, 1)
    table.acting(a, 3, 2)
    table.record(b, a, {"start": 3, "done": [0, 1, 2]})
    st = table.state(a)
    assert st is not None and st.acts == {3: 2} and st.status == "running"
    assert table.of(b) == {"resumed_from": a, "plan": {"start": 3, "done": [0, 1, 2]}}
    assert table.resumed_by(a) == [b] and table.of(a) is None and table.state("nope") is None
    store.close()
