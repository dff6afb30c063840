"""Locating in a long table (failure kind 6): observe and resolve times per target on an N-row table.

``steadyhand bench table [--rows N] [--json PATH]`` serves, on loopback, a
list page in the manner of an admin app's change list (a search box, a
``<table>`` whose rows hold an id link, a name cell, an e-mail cell and an
"Edit" button - every button named alike, as in Django admin or datasette),
remembers the Edit buttons of rows 1, N/2 and N from one observation (as a
recording would: the full descriptor, box and neighbours), then for each
target observes the page afresh and resolves the descriptor with the
locator chain (R2).  Printed per target: observe ms (the whole
:meth:`PlaywrightDriver.observe`, no screenshot), in-page ms (inside the
page library), resolve ms, candidates observed, the strategy and whether
the located element is the one of that row.  A measurement: the figures
depend on the machine; tests assert the work done, never the times.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path

from core.domain import BrowserSettings, ElementDescriptor
from core.locate import resolve
from core.perception.driver import PlaywrightDriver
from core.sites.server import LoopbackServer, Response

__all__ = ["TargetTiming", "TableReport", "table_page", "run_table_benchmark", "format_report", "main",
           "DEFAULT_ROWS"]

#: Rows of the benchmark table (failure kind 6 of issue 9).
DEFAULT_ROWS = 1000


def _name(i: int) -> str:
    return f"User {i:04d}"


def table_page(rows: int) -> str:
    """HTML of the list page: a search form, a table of ``rows`` users, a pager link.

    Row ``i`` (1-based) holds a link ``"{i}"`` to ``/users/{i}``, the name
    ``"User 000i"``, the e-mail ``"user{i}@example.test"`` and a button
    "Edit" that writes "Editing User 000i" into the status line.
    """
    body = "\n".join(
        f'<tr><td class="col-id"><a href="/users/{i}">{i}</a></td><td class="col-name">{escape(_name(i))}</td>'
        f'<td class="col-email">user{i}@example.test</td>'
        f'<td class="col-actions"><button type="button" class="button edit">Edit</button></td></tr>'
        for i in range(1, rows + 1))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Users | Site administration</title>
<style>body {{ font: 14px sans-serif; }} td, th {{ padding: 4px 10px; }} tr:nth-child(odd) {{ background: #f4f4f4; }}</style>
</head><body>
<h1>Select user to change</h1>
<form id="changelist-search" role="search"><label for="searchbar">Search</label>
<input type="text" id="searchbar" name="q"> <input type="submit" value="Search"></form>
<table id="result_list"><thead><tr><th>ID</th><th>Name</th><th>E-mail</th><th>Actions</th></tr></thead>
<tbody>
{body}
</tbody></table>
<p class="paginator">{rows} users <a href="?p=2">Next</a></p>
<p id="status" role="status"></p>
<script>
document.getElementById('result_list').addEventListener('click', (e) => {{
  const b = e.target.closest('button.edit');
  if (b) document.getElementById('status').textContent = 'Editing ' + b.closest('tr').children[1].textContent;
}});
</script>
</body></html>"""


@dataclass(frozen=True, slots=True)
class TargetTiming:
    """One target of the table benchmark.

    Attributes
    ----------
    row : int
        1-based row of the Edit button remembered.
    observe_ms, page_ms, resolve_ms : float
        Median ms of the observation (whole call), of the time inside the page
        library, and of the locator chain.
    candidates : int
        Candidates in the observation.
    strategy : str
        The level that won (``""`` when it abstained).
    located_row : int
        Row of the element located (0: none).
    correct : bool
        ``located_row == row``.
    in_viewport : bool
        The target was inside the viewport when observed.
    neighbours : tuple[str, ...]
        The located element's neighbour texts as observed (its row's cells, nearest first).
    """

    row: int
    observe_ms: float
    page_ms: float
    resolve_ms: float
    candidates: int
    strategy: str
    located_row: int
    correct: bool
    in_viewport: bool
    neighbours: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableReport:
    """All targets of one run: ``rows`` in the table, ``repeat`` observations per target."""

    rows: int
    repeat: int
    targets: tuple[TargetTiming, ...]

    def to_json_dict(self) -> dict[str, object]:
        """``{"rows", "repeat", "targets": [{"row", "observe_ms", "page_ms", "resolve_ms", "candidates",
        "strategy", "located_row", "correct", "in_viewport", "neighbours"}]}``."""
        return {"rows": self.rows, "repeat": self.repeat, "targets": [asdict(t) for t in self.targets]}


def _row_of(driver: PlaywrightDriver, ref: str) -> int:
    """1-based table row of the element behind ``ref`` (0 when it is not in a row of the table)."""
    handle = driver._handle(ref)
    return int(driver._bounded(handle, "evaluate", "e => { const tr = e.closest('#result_list tbody tr'); "
                               "return tr ? tr.sectionRowIndex + 1 : 0; }", None, what="table row"))


def run_table_benchmark(rows: int = DEFAULT_ROWS, *, repeat: int = 3,
                        settings: BrowserSettings | None = None) -> TableReport:
    """Observe and locate the Edit buttons of rows 1, ``rows // 2`` and ``rows`` (see the module docstring).

    Raises
    ------
    ValueError
        When ``rows`` < 1 or ``repeat`` < 1.
    """
    if rows < 1 or repeat < 1:
        raise ValueError(f"rows and repeat must be >= 1, got {rows} and {repeat}")
    html = table_page(rows)
    server = LoopbackServer()
    server.route("GET", "/users/", lambda req: Response.text(html, 200, "text/html; charset=utf-8"))
    targets = sorted({1, max(1, rows // 2), rows})
    out: list[TargetTiming] = []
    with server:
        driver = PlaywrightDriver(settings or BrowserSettings(), base_url=server.base_url, headless=True)
        driver.open()
        try:
            driver.goto("/users/")
            driver.observe(screenshot=False)  # the frames the selectors below are matched in
            recorded: dict[int, ElementDescriptor] = {}
            for row in targets:
                (cand,) = driver.refs_for_selector(f"#result_list tbody tr:nth-child({row}) button.edit")
                recorded[row] = cand.descriptor
            driver.observe(screenshot=False)  # warm-up
            for row in targets:
                obs_ms, page_ms, res_ms = [], [], []
                for _ in range(repeat):
                    t0 = time.perf_counter()
                    obs = driver.observe(screenshot=False)
                    obs_ms.append((time.perf_counter() - t0) * 1000.0)
                    page_ms.append(driver.page_ms)
                    t1 = time.perf_counter()
                    res = resolve(recorded[row], obs.candidates)
                    res_ms.append((time.perf_counter() - t1) * 1000.0)
                located = _row_of(driver, res.ref) if res.ref else 0
                cand = next((c for c in obs.candidates if c.ref == res.ref), None)
                out.append(TargetTiming(
                    row, statistics.median(obs_ms), statistics.median(page_ms), statistics.median(res_ms),
                    len(obs.candidates), "" if res.abstained else res.strategy, located, located == row,
                    bool(cand is not None and cand.extra.get("in_viewport")),
                    tuple(cand.descriptor.neighbours) if cand is not None else ()))
        finally:
            driver.close()
    return TableReport(rows, repeat, tuple(out))


def format_report(report: TableReport) -> str:
    """The report as a table for the terminal."""
    lines = [f"table of {report.rows} rows, median of {report.repeat} observations per target",
             f"{'row':>6}{'observe ms':>12}{'in-page ms':>12}{'resolve ms':>12}{'candidates':>12}  "
             f"{'strategy':<10}{'located':>8}  ok"]
    for t in report.targets:
        lines.append(f"{t.row:>6}{t.observe_ms:>12.1f}{t.page_ms:>12.1f}{t.resolve_ms:>12.1f}{t.candidates:>12}  "
                     f"{t.strategy or '-':<10}{t.located_row:>8}  {'yes' if t.correct else 'NO'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m core.bench.table [--rows N] [--repeat N] [--json PATH]``; exit 0 (figures are the output)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    args = ap.parse_args(argv)
    report = run_table_benchmark(args.rows, repeat=args.repeat)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json_dict(), indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
