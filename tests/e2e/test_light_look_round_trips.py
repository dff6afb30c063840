"""The fast path's page reads cost as few round trips as they can, in real Chromium (issue 20 "fast path").

* A light look (``observe(ax=False)``) of a page of one frame is ONE round trip into the page - the page
  library's stamp and element collection, with the reads given as ``around``, in one evaluation - and it sees
  what the long way (one round trip for the stamp, one for the collection) sees.
* The network watch has Playwright deliver the page's pending events once per look of the driver: the
  step's readers of the same observation (checkpoint, write inference, landing, evidence, skills capture)
  share it, and a request sent after a look is seen once the next look is made.
"""
from __future__ import annotations

import time

from core.perception.netwatch import NetworkWatch
from tests.e2e.browser_fixtures import driver_on

PAGE = """<!doctype html><title>t</title><h1>Orders</h1>
<label>Name <input id="n" value="x"></label>
<button onclick="fetch('/index.html?save=' + Date.now(), {method: 'POST'})">Save</button>
<a href="#more">More</a>"""


def _evaluations(d, fn):
    """``fn()`` with the driver's evaluations in the page counted; returns (result, count)."""
    real = d._bounded
    calls = []

    def counted(obj, method, *args, **kw):
        if method == "evaluate":
            calls.append(args)
        return real(obj, method, *args, **kw)

    d._bounded = counted  # type: ignore[method-assign]
    try:
        return fn(), len(calls)
    finally:
        del d._bounded


def _seen(obs):
    return [(c.ref, c.descriptor.role, c.descriptor.name, c.descriptor.bbox) for c in obs.candidates], obs.visible_text


def test_a_light_look_of_one_frame_is_one_round_trip_and_sees_what_the_long_way_sees(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        d.observe(screenshot=False)  # the full look first (the tree's names kept for the light ones)
        reads = d.light_reads
        light, n = _evaluations(d, lambda: d.observe(screenshot=False, ax=False,
                                                     around=("() => 'pre'", "() => document.title")))
        assert n == 1
        assert d.light_reads == reads + 1
        assert d.around == ("pre", "t")
        d._light_read = lambda *a, **k: None  # type: ignore[method-assign]  # the long way: stamp, then collect
        long, n_long = _evaluations(d, lambda: d.observe(screenshot=False, ax=False))
        assert n_long == 2
        assert _seen(light) == _seen(long)
        assert light.signature.digest == long.signature.digest


def test_the_network_watch_flushes_once_per_look_and_misses_no_request(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        watch = NetworkWatch.of(d)
        assert watch is not None and watch.driver is d
        t0 = time.monotonic()
        d.observe(screenshot=False, ax=False)
        start = watch.flushes
        for _ in range(4):  # the readers of one look: the look itself delivered the events, no flush
            watch.between(t0)
        assert watch.flushes == start
        d.page.get_by_role("button", name="Save").click()
        d.observe(screenshot=False, ax=False)  # at once: no wait could have delivered the request's event
        posts = [r for r in watch.between(t0) if r.method == "POST"]
        assert watch.flushes == start
        assert len(posts) == 1 and "save=" in posts[0].url
        d.looks_deliver = False  # a driver whose looks are not round trips to the page: one flush per look
        d.observe(screenshot=False, ax=False)
        watch.between(t0)
        watch.between(t0)
        assert watch.flushes == start + 1
        watch.driver = None  # a watch that knows no driver's looks flushes on every call (the old behaviour)
        watch.between(t0)
        watch.between(t0)
        assert watch.flushes == start + 3
