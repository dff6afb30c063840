"""``bench learn --libraries`` on three consent libraries from the npm registry and two look-alikes (issue 25 item 6).

One person's takeover on tarteaucitronjs teaches a consent skill by meaning (``popup: consent``, choice
``reject``); it is replayed on the stored failures of the three libraries (3 distinct cases) and approved;
then on every library of the kind no takeover is needed, the choice the app records is the person's, and the
look-alikes (an upsell and a newsletter form saying "cookies" and "Accept") are never answered by it.
Through :class:`~core.engine.session.ProjectSession`, in real Chromium; takes about two minutes.
"""
from __future__ import annotations

import pytest

from core.bench.learn_libs import LIBRARIES, format_library_report, run_library_benchmark

pytestmark = pytest.mark.browser


def test_one_approved_consent_skill_carries_over_to_other_libraries_and_never_to_look_alikes(tmp_path) -> None:
    libs = tuple(lib for lib in LIBRARIES if lib.name in ("tarteaucitron", "cookieconsent", "orejime", "upsell",
                                                            "newsletter"))
    report = run_library_benchmark(choice="reject", runs=1, libraries=libs, workdir=tmp_path)
    text = format_library_report(report)
    assert report.approved, text
    assert "3/3 distinct failures" in report.validation, text
    before = {r.version: r for r in report.rows if r.phase == "before"}
    after = {r.version: r for r in report.rows if r.phase == "after"}
    assert all(before[n].takeovers == 1 for n in ("tarteaucitron", "cookieconsent", "orejime")), text
    for n in ("tarteaucitron", "cookieconsent", "orejime"):
        assert after[n].takeovers == 0 and after[n].hits == after[n].runs == 1, text
    for r in report.rows:
        assert r.false_triggers == 0 and r.wrong_skill == 0 and r.wrong_engine == 0, text
    assert after["upsell"].skill_uses == 0 and after["newsletter"].skill_uses == 0, text
