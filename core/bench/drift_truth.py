"""Ground truth of the datasette drift benchmark: what the intended user actions produce on each release.

The flow is recorded once on datasette 0.59.4 by a scripted user (:data:`INTENDED`, one action per recorded
step).  The same intended actions, performed by a plain Playwright script with locators written by a person
who knows each release's markup (CSS over datasette's own classes and hrefs, never the engine), give the
page state each step must reach on each release: the URL path, the query string (as a sorted multiset of
pairs), the page's main heading (``h1``) and the value of the table's search box.  The engine's replay is
judged against these states, step by step, independently of the engine's own verdicts.

Each intended action also checks its own landing (``check``: the query parameter it must add); a ground
truth whose script did not land where intended raises :class:`GroundTruthError` instead of becoming a
wrong reference.
"""
from __future__ import annotations

import re

from dataclasses import asdict, dataclass
from typing import Any, Callable
from urllib.parse import parse_qsl, urlencode, urlsplit

__all__ = [
    "PageState", "TruthStep", "IntendedAction", "INTENDED", "GroundTruthError", "page_state", "state_of", "diff_states",
    "perform", "ground_truth", "ground_truth_prefix", "same_url", "prep_start", "STATE_JS", "SEARCH_WORD", "FACET_VALUE", "PAUSE_MS",
]

#: The word searched for (FTS5 over title and author; 20 of the 320 books have it in the title).
SEARCH_WORD = "garden"
#: The facet value chosen (44 books).
FACET_VALUE = "Mystery"
#: A user's pace between actions, ms (the recorder's steps must not merge).
PAUSE_MS = 700
#: Milliseconds a ground-truth action may take to find its element and act (Playwright's timeout).
ACTION_TIMEOUT_MS = 10_000

#: Reads the state of a page: main heading and the search box's value ("" when none; None when no box).
STATE_JS = """() => {
  const h = document.querySelector('h1');
  const s = document.querySelector('input[name="_search"]');
  return {heading: h ? h.innerText.replace(/\\s+/g, ' ').trim() : '', search: s ? s.value : null};
}"""


@dataclass(frozen=True, slots=True)
class PageState:
    """The state of a datasette page that a step is judged by.

    ``path`` is the URL path; ``query`` the query string as sorted ``(name, value)`` pairs (order of
    parameters is not a difference); ``heading`` the ``h1``'s text (whitespace collapsed); ``search`` the
    value of ``input[name=_search]`` or None when the page has no search box; ``fragment`` the URL's
    ``#fragment`` (kept to reopen the same place, not compared: it only scrolls).
    """

    path: str
    query: tuple[tuple[str, str], ...]
    heading: str
    search: str | None
    fragment: str = ""

    @property
    def relative_url(self) -> str:
        """``path?query#fragment`` (the query re-encoded in sorted order), to reopen this state."""
        q = urlencode(self.query)
        return self.path + (f"?{q}" if q else "") + (f"#{self.fragment}" if self.fragment else "")

    def to_json_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["query"] = [list(p) for p in self.query]
        return d


def state_of(url: str, heading: str, search: str | None, base_path: str = "") -> PageState:
    """A :class:`PageState` from a URL and the page's heading and search value (pure).

    ``base_path`` (e.g. ``/staging``, the path of the server's base URL) is taken off the front of the URL's
    path, so states reached under a path prefix compare with those reached at the root.
    """
    parts = urlsplit(url)
    path = parts.path or "/"
    base = base_path.rstrip("/")
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):] or "/"
    return PageState(path, tuple(sorted(parse_qsl(parts.query, keep_blank_values=True))),
                     " ".join(heading.split()), search, parts.fragment)


def page_state(page: Any, base_path: str = "") -> PageState:
    """The :class:`PageState` of a live Playwright page (path relative to ``base_path``)."""
    got = page.evaluate(STATE_JS)
    return state_of(page.url, got.get("heading") or "", got.get("search"), base_path)


def same_url(a: PageState, b: PageState) -> bool:
    """Same path and query (the fragment aside)."""
    return (a.path, a.query) == (b.path, b.query)


def prep_start(truth: "list[TruthStep]", k: int) -> int:
    """The first step of the shortest run-up to step ``k`` that starts on a freshly loaded page (pure).

    Steps before ``k`` that leave the URL as it was (typing in the search box) and start on the same URL as
    ``k`` must be replayed before it, since a reload loses what they did; the run-up starts at the earliest
    of them.  Returns an index ``j <= k``.
    """
    j = k
    while j > 0 and same_url(truth[j - 1].before, truth[k].before) and same_url(truth[j - 1].after, truth[j - 1].before):
        j -= 1
    return j


def diff_states(want: PageState, got: PageState) -> list[str]:
    """What differs between the intended state and the reached one, one phrase per field ([] when equal)."""
    out = []
    if want.path != got.path:
        out.append(f"path {got.path!r} instead of {want.path!r}")
    if want.query != got.query:
        missing = sorted(set(want.query) - set(got.query))
        extra = sorted(set(got.query) - set(want.query))
        out.append(f"query missing {missing} extra {extra}")
    if want.heading != got.heading:
        out.append(f"heading {got.heading!r} instead of {want.heading!r}")
    if want.search != got.search:
        out.append(f"search box {got.search!r} instead of {want.search!r}")
    return out


class GroundTruthError(RuntimeError):
    """The plain script of the intended actions did not land where intended on a release."""


@dataclass(frozen=True, slots=True)
class IntendedAction:
    """One intended user action: ``kind`` (click / input), a CSS ``selector`` (unique on the page when
    ``text`` is empty, else the element among its matches whose text is ``text``), the typed ``value`` of
    an input, and ``check(before, after) -> problem`` ("" when it landed as intended)."""

    key: str
    title: str
    kind: str
    selector: str
    text: str = ""
    value: str = ""
    check: Callable[[PageState, PageState], str] = lambda before, after: ""


def _adds(name: str, value: str | None = None, path: str | None = None) -> Callable[[PageState, PageState], str]:
    def check(before: PageState, after: PageState) -> str:
        if path is not None and after.path != path:
            return f"path {after.path!r}, expected {path!r}"
        if name and not any(k == name and (value is None or v == value) for k, v in after.query):
            return f"query {after.query} lacks {name}={value if value is not None else '*'}"
        return ""
    return check


def _same_url(before: PageState, after: PageState) -> str:
    if (before.path, before.query) != (after.path, after.query):
        return "typing in the search box changed the URL"
    return "" if after.search == SEARCH_WORD else f"search box holds {after.search!r}"


def _row_page(before: PageState, after: PageState) -> str:
    parts = after.path.rstrip("/").split("/")
    return "" if len(parts) == 4 and parts[1:3] == ["library", "books"] and parts[3].isdigit() else \
        f"path {after.path!r} is not a row page"


#: The intended actions, in order: the recorded flow has one step per action.
INTENDED: tuple[IntendedAction, ...] = (
    IntendedAction("database", "Open the library database", "click",
                   'section.content h2 > a[href$="/library"]', check=_adds("", path="/library")),
    IntendedAction("table", "Open the books table", "click",
                   'section.content :is(h2, h3) > a[href$="/library/books"]', check=_adds("", path="/library/books")),
    IntendedAction("sort", "Sort by year", "click", "th.col-year a", check=_adds("_sort", "year")),
    IntendedAction("facet", "Facet by genre", "click", "p.suggested-facets a", text="genre",
                   check=_adds("_facet", "genre")),
    IntendedAction("facet_value", f"Keep genre {FACET_VALUE}", "click",
                   '.facet-info[data-column="genre"] li a', text=FACET_VALUE, check=_adds("genre", FACET_VALUE)),
    IntendedAction("search_type", f"Type {SEARCH_WORD!r} in the search box", "input", 'input[name="_search"]',
                   value=SEARCH_WORD, check=_same_url),
    IntendedAction("search_submit", "Submit the search", "click", 'form.filters input[type="submit"]',
                   check=_adds("_search", SEARCH_WORD)),
    IntendedAction("row", "Open the first row", "click", "table.rows-and-columns tbody tr:first-child td.type-pk a",
                   check=_row_page),
    IntendedAction("crumb", "Back to the books table by the breadcrumb", "click",
                   'nav .crumbs a[href$="/library/books"]', check=_adds("", path="/library/books")),
    IntendedAction("next", "Next page", "click", "a", text="Next page", check=_adds("_next")),
)


def locate(page: Any, action: IntendedAction) -> Any:
    """The Playwright locator of an intended action's element on ``page`` (exactly one, else GroundTruthError)."""
    loc = page.locator(action.selector)
    if action.text:
        loc = loc.filter(has_text=action.text)
        # has_text is a substring match: keep the one whose whole text is the wanted text
        texts = [" ".join(t.split()) for t in loc.all_inner_texts()]
        exact = [i for i, t in enumerate(texts) if t == action.text]
        if len(exact) != 1:
            raise GroundTruthError(f"{action.key}: {len(exact)} elements {action.selector!r} with text "
                                   f"{action.text!r} on {page.url}")
        return loc.nth(exact[0])
    n = loc.count()
    if n != 1:
        raise GroundTruthError(f"{action.key}: {n} elements match {action.selector!r} on {page.url}")
    return loc


#: Longest outerHTML kept of an intended element (characters).
HTML_CHARS = 600


def perform(page: Any, action: IntendedAction, *, typing_delay_ms: int = 0) -> str:
    """Do one intended action with real input (a click; for an input, click then type) and wait for load.

    Returns the element's outerHTML as it was before the action (at most :data:`HTML_CHARS` characters).
    """
    el = locate(page, action)
    html = str(el.evaluate("e => e.outerHTML"))[:HTML_CHARS]
    if action.kind == "click":
        el.click(timeout=ACTION_TIMEOUT_MS)
    elif action.kind == "input":
        el.click(timeout=ACTION_TIMEOUT_MS)
        page.keyboard.type(action.value, delay=typing_delay_ms)
    else:  # pragma: no cover - the table above holds clicks and inputs only
        raise ValueError(action.kind)
    page.wait_for_load_state("load", timeout=ACTION_TIMEOUT_MS)
    return html


@dataclass(frozen=True, slots=True)
class TruthStep:
    """The ground truth of one step on one release: the state before and after the intended action and
    the outerHTML of the element the intended action used (the markup a locator must find there)."""

    before: PageState
    after: PageState
    element_html: str


#: The heading of datasette's error pages ("Error 404", "Error 500").
_ERROR_HEADING = re.compile(r"^Error [45]\d\d\b")


def ground_truth(page: Any, base_url: str, actions: tuple[IntendedAction, ...] = INTENDED) -> list[TruthStep]:
    """Drive ``page`` through the intended actions from ``base_url + "/"``: one :class:`TruthStep` each (paths
    relative to ``base_url``'s path).

    Raises GroundTruthError when an element is not unique, an action did not land as its check says, or it
    reached the release's own error page (``Error 404``: nothing to judge a replay by).
    """
    states, problem = ground_truth_prefix(page, base_url, actions)
    if problem:
        raise GroundTruthError(problem)
    return states


def ground_truth_prefix(page: Any, base_url: str, actions: tuple[IntendedAction, ...] = INTENDED
                        ) -> tuple[list[TruthStep], str]:
    """As :func:`ground_truth`, but the steps up to the first intended action that fails are kept:
    ``(truth of the steps before it, what failed)``; ``""`` when every action landed."""
    page.goto(base_url.rstrip("/") + "/", wait_until="load", timeout=ACTION_TIMEOUT_MS)
    states: list[TruthStep] = []
    base_path = urlsplit(base_url).path
    before = page_state(page, base_path)
    for action in actions:
        try:
            html = perform(page, action)
        except GroundTruthError as exc:
            return states, str(exc)
        after = page_state(page, base_path)
        if _ERROR_HEADING.match(after.heading) and not _ERROR_HEADING.match(before.heading):
            # the release's own page for the intended action is an error page (datasette 0.59-1.0 double their
            # base_url prefix in facet-value links): there is no intended state to judge a replay by
            return states, f"{action.key} on {base_url}: the intended action reaches the release's error page " \
                           f"({after.heading!r})"
        problem = action.check(before, after)
        if problem:
            return states, f"{action.key} on {base_url}: {problem}"
        states.append(TruthStep(before, after, html))
        before = after
    return states, ""
