"""The act phase's probe and the page's kept state (what an action's effect is told against) come in one round
trip: the same probe and the same snapshot as reading them apart; a script that throws leaves the probe."""
from __future__ import annotations

from core.perception.effects import IDB_LIMIT_MS, SNAPSHOT_JS, snapshot
from tests.e2e.browser_fixtures import driver_on

PAGE = """<!doctype html><title>t</title><script>localStorage.setItem('cart', '2'); document.cookie = 'k=v';
</script><ul><li>a</li><li>b</li></ul><button>Go</button>"""


def test_one_round_trip_gives_the_probe_and_the_snapshot(tmp_path) -> None:
    (tmp_path / "index.html").write_text(PAGE)
    with driver_on(tmp_path) as d:
        d.goto("/index.html")
        apart_probe = d.probe()
        apart = snapshot(d)
        probe, read = d.probe_and_read(SNAPSHOT_JS, IDB_LIMIT_MS)
        assert probe is not None and apart_probe is not None
        assert set(probe) == set(apart_probe) and probe["url"] == apart_probe["url"]
        assert probe["mutations"] == apart_probe["mutations"]
        together = snapshot(d, read)
        assert together == apart and together is not None and together.local  # localStorage 'cart' seen
        assert together.cookies  # the cookies are still read from the browser

        probe, read = d.probe_and_read("async () => { throw new Error('no'); }")
        assert read is None and probe is not None and probe["url"].endswith("/index.html")
