"""The check for a dialog still fading in after a step that passed (core/engine/motion.py) costs no page call
when the step's settle wait ended with nothing animating (its answer's ``moving``): on the demo, whose pages
animate nothing, no step asks.  A page that animates a dialog in is asked, and the step meets the dialog:
``test_skills_where_failures_happen.py`` (sweetalert2's fade-in)."""
from __future__ import annotations

import shutil

import pytest

import core.recover.motion as motion
from core.engine.session import ProjectSession
from core.project import load_project

pytestmark = pytest.mark.browser


#: A field whose focus moves its box shadow, and a Delete button that adds a dialog at opacity 0 and fades it in
#: over 1 s two frames later.
FIELD_AND_FADE = ("<style>input{transition:box-shadow 1s}input:focus{box-shadow:0 0 8px blue}"
                  "#d{transition:opacity 1s;opacity:0}#d.in{opacity:1}</style><input id=f>"
                  "<button id=b onclick=\"const d=document.createElement('div');d.id='d';"
                  "d.setAttribute('role','dialog');d.textContent='Sure?';document.body.append(d);"
                  "requestAnimationFrame(()=>requestAnimationFrame(()=>d.classList.add('in')))\">Delete</button>")


def test_no_page_call_when_nothing_animated_as_the_page_settled(monkeypatch, tmp_path) -> None:
    asked: list[int] = []
    real = motion.dialog_arriving

    def counting(driver):
        asked.append(1)
        return real(driver)

    monkeypatch.setattr(motion, "dialog_arriving", counting)
    shutil.copytree("projects/demo", tmp_path / "demo", ignore=shutil.ignore_patterns(".steadyhand"))
    project = load_project(tmp_path / "demo")
    with ProjectSession(project, headless=True) as session:
        result = session.run_flow(project.flows["sort_table"])
    assert result.status == "passed", result.error
    assert asked == []


def test_the_settle_wait_says_whether_a_dialog_is_arriving_as_it_ends(tmp_path) -> None:
    """A form field's focus transition moves something but brings no dialog: the settle wait's answer says so
    (``arriving`` False) and the step asks nothing more; a dialog fading in (opacity 0 -> 1 over 1 s) is said to
    be arriving, so the verify phase waits for it (``look_when_still``)."""
    from core.domain import BrowserSettings
    from core.perception.driver import PlaywrightDriver

    from urllib.parse import quote

    page = "data:text/html," + quote(FIELD_AND_FADE)
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto(page)
        start = d.probe()
        d.page.fill("#f", "x")  # focuses the field: its box shadow starts to move
        got = d.wait_settled(start=start, quiet_ms=40, react_from=start["timerSeq"])
        assert got["moving"] is True and got["arriving"] is False
        start = d.probe()
        d.page.click("#b")
        got = d.wait_settled(start=start, quiet_ms=40, react_from=start["timerSeq"])
        assert got["moving"] is True and got["arriving"] is True
    finally:
        d.close()


def test_a_dialog_still_fading_in_is_arriving_frames_after_the_fade_began() -> None:
    """A loaded machine's wait ends frames after the fade began: the dialog's opacity is no longer 0 but still
    rising - it is arriving until the fade ends (it was "shown" from the first frame on, and the check flaky)."""
    import time
    from urllib.parse import quote

    from core.domain import BrowserSettings
    from core.perception.driver import PlaywrightDriver
    from core.perception.pagefacts import ARRIVING_JS

    page = "data:text/html," + quote(FIELD_AND_FADE)
    d = PlaywrightDriver(BrowserSettings(), base_url="http://127.0.0.1:9/", headless=True)
    d.open()
    try:
        d.goto(page)
        d.page.click("#b")
        d.page.wait_for_function("() => { const o = +getComputedStyle(document.getElementById('d')).opacity; "
                                 "return o > 0.05 && o < 0.6; }", timeout=5000)
        assert d.evaluate(ARRIVING_JS) is True
        d.page.wait_for_function("() => +getComputedStyle(document.getElementById('d')).opacity === 1", timeout=10000)
        time.sleep(0.1)  # the transition's end event: no animation runs any more
        assert d.evaluate(ARRIVING_JS) is False
    finally:
        d.close()
