"""What naming from the accessibility tree costs: observe time on the demo pages, with and without it.

``python -m core.bench.observe [--repeat N]`` signs in to the bundled demo
(LeaveDesk) and, on each of its pages, times ``PlaywrightDriver.observe``
(no screenshot) with names from Chromium's accessibility tree - on the
unchanged page (the tree is read once and its entries reused while no DOM
mutation happens) and after a DOM change before every observation (the
tree is read each time) - and with the page library's in-page names only,
and prints the medians in ms.  A
measurement, not a test: the numbers depend on the machine.
"""
from __future__ import annotations

import argparse
import statistics
import time

from core.domain import BrowserSettings
from core.perception.driver import PlaywrightDriver
from core.sites.demo import DEMO_PASSWORD, DemoSite

__all__ = ["measure", "main"]

#: Demo pages measured, after signing in.
PAGES = ("/login", "/requests", "/requests/new")


def measure(repeat: int = 15) -> list[tuple[str, int, float, float, float]]:
    """(page, candidates, median ms with the tree, with the tree after a DOM change, without) for each page
    of :data:`PAGES` (signed in after the first)."""
    out = []
    with DemoSite() as site:
        d = PlaywrightDriver(BrowserSettings(), base_url=site.base_url, headless=True)
        d.open()
        try:
            for path in PAGES:
                d.goto(path)
                times: dict[str, float] = {}
                n = 0
                for mode in ("ax", "ax_changed", "page"):
                    d.ax_tree = mode != "page"
                    d.observe(screenshot=False)  # warm-up
                    samples = []
                    for i in range(repeat):
                        if mode == "ax_changed":  # one DOM mutation: the tree must be read again
                            d.page.evaluate("i => { document.body.dataset.benchTick = String(i); }", i)
                        t0 = time.perf_counter()
                        obs = d.observe(screenshot=False)
                        samples.append((time.perf_counter() - t0) * 1000.0)
                    times[mode] = statistics.median(samples)
                    n = len(obs.candidates)
                out.append((path, n, times["ax"], times["ax_changed"], times["page"]))
                if path == "/login":
                    d.page.fill("#username", "alice")
                    d.page.fill("#password", DEMO_PASSWORD)
                    d.page.click("#signin")
                    d.page.wait_for_url("**/requests")
        finally:
            d.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args(argv)
    print(f"{'page':<16}{'candidates':>11}{'AX tree ms':>12}{'AX, changed':>13}{'in-page ms':>12}")
    for path, n, with_ax, changed, without in measure(args.repeat):
        print(f"{path:<16}{n:>11}{with_ax:>12.1f}{changed:>13.1f}{without:>12.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
