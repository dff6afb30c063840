"""Where a step landed, judged as a person would: independent signals weighed, paths relative to the base URL.

A person who replays a recorded step against a staging server, or on the
next release of an app, does not call the step failed because the app is
served under another path prefix, nor because the site name moved from an
``<h1>`` to a ``<div>`` while the address and the title still say the page
is the one expected.  They call it failed when the page is another page: an
error page, the sign-in page again, an error answer to the request the step
sent, or most of what identifies the page disagreeing.

This module is pure (no browser): the after-states
(:class:`~core.domain.AfterState`), the requests seen
(:class:`~core.act.writes.RequestSeen`) and the observations come in, a
:class:`Landing` goes out.  The engine calls :func:`judge_landing` where it
used to call :func:`core.act.after.compare_after`.

Signals weighed (each only when the recording has it):

``route``
    The URL path after the step, relative to the base URL's path
    (:func:`relative_path`), ids generalised (``{n}``, ``{id}``...).
``title``
    The document title.
``heading``
    The main heading (:func:`core.perception.pagefacts.main_heading`).

Evidence that the step landed elsewhere, whatever the signals say: a
4xx/5xx answer to a document or a write request the step sent that the
recording did not get (:func:`answer_evidence`: the recorder stores the
status of the step's own request, :func:`own_status`; a 404 that was a 404
when recorded is not evidence), an error page the recording was not
(:func:`error_page`), the sign-in page again (:func:`signin_again`).
A list the step changed on the same page (``list_kind`` / ``list_delta``)
must change by the same number of items, whatever it held before
(:func:`list_change`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Mapping, Sequence
from urllib.parse import unquote, urlsplit

from core.act.after import Mismatch, compare_after, same_text
from core.act.regions import PageRegions, changed_regions, region_moved
from core.act.writes import RequestSeen, is_beacon
from core.domain import AfterState, Observation

__all__ = ["base_path", "origin_of", "relative_path", "same_route", "failed_answer", "failed_request", "own_requests",
           "own_status", "answer_evidence", "list_change", "error_page", "signin_again", "Landing", "weigh_landing",
           "judge_landing", "constant_title", "ERROR_STATUS", "LIST_KINDS"]

#: An answer at or above this HTTP status to the step's own request is an error (RFC 9110: 4xx client
#: errors, 5xx server errors).
ERROR_STATUS = 400
#: Words of an error page's title or main heading (whole words, case folded): what a person reads as
#: "this is an error page" on the pages of common servers and frameworks (nginx, Apache, Django, Flask,
#: Rails, Express default error pages).
_ERROR_PAGE = re.compile(
    r"\b(?:40[0134]|410|42[29]|50[0234])\b|\bnot found\b|\bforbidden\b|\bunauthori[sz]ed\b|\baccess denied\b"
    r"|\bserver error\b|\binternal error\b|\bbad request\b|\bbad gateway\b|\bservice unavailable\b"
    r"|\bpage not found\b|\bsomething went wrong\b",
    re.I)
_PLACEHOLDER = re.compile(r"^\{[^{}]*\}$")
#: Resource types of a request the step itself sends and waits for (a page load, a form post, a script
#: write); images, fonts, styles and pings are the page's own and never evidence.
_OWN_TYPES = frozenset({"document", "fetch", "xhr"})
#: Kinds of list item counted on a page (:mod:`core.perception.effects` counts them), most specific first:
#: the one a step's list change is recorded in.
LIST_KINDS = ("listitem", "row", "option", "treeitem", "article", "li", "tr")


def base_path(url: str) -> str:
    """The path prefix of a base URL, without its trailing slash: ``http://h/examples/a/`` -> ``/examples/a``;
    ``http://h/`` -> ``""``."""
    return unquote(urlsplit(url or "").path).rstrip("/")


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url`` (``""`` for a URL without a host)."""
    u = urlsplit(url or "")
    return f"{u.scheme}://{u.netloc}" if u.netloc else ""


def relative_path(path: str, base: str) -> str:
    """``path`` relative to the base path ``base`` (:func:`base_path`, or a path with a trailing slash).

    ``("/examples/a/list", "/examples/a")`` -> ``"/list"``; ``("/examples/a", "/examples/a/")`` -> ``"/"``;
    a path outside ``base`` (or an empty ``base``) is returned unchanged.  A prefix counts only on a
    segment boundary: ``/examples/ab`` is not under ``/examples/a``.
    """
    b = (base or "").rstrip("/")
    p = path or "/"
    if not b:
        return p
    if p == b or p == b + "/":
        return "/"
    if p.startswith(b + "/"):
        return p[len(b):]
    return p


def same_route(recorded: str, actual: str, params: Mapping[str, str] | None = None) -> bool:
    """True when the relative route ``actual`` is the recorded one.

    Segments compare equal; a recorded placeholder (``{n}``, ``{id}``, an old file's ``{user}``) matches
    any segment; an actual segment equal to a parameter's value in this run (3+ chars) matches any
    recorded segment (the recording typed another value there).  Trailing slashes do not count.
    """
    r, a = recorded.rstrip("/").split("/"), actual.rstrip("/").split("/")
    if len(r) != len(a):
        return False
    values = {v for v in (params or {}).values() if v and len(v) >= 3}
    return all(x == y or _PLACEHOLDER.match(x) or (y in values and x != "") for x, y in zip(r, a, strict=True))


def failed_answer(requests: Iterable[RequestSeen], origin: str = "") -> str:
    """Why the step's own request failed ("" when none did).

    Parameters
    ----------
    requests : Iterable[RequestSeen]
        The requests seen from the action on (``NetworkWatch.between(t_act)``), with their status.
    origin : str
        ``scheme://host:port`` of the page; requests to other origins are not the step's (trackers,
        CDNs).  Empty: every origin counts.

    A document load, or a fetch / XHR that is not a GET (a write), answered with a status of
    :data:`ERROR_STATUS` or more is evidence; a beacon, an image or a GET poll is not.
    """
    r = failed_request(requests, origin)
    if r is None:
        return ""
    path = urlsplit(r.url).path or "/"
    return f"the page answered {r.status} to the step's request ({r.method} {path})"


def own_requests(requests: Iterable[RequestSeen], origin: str = "") -> list[RequestSeen]:
    """The step's own requests among ``requests``, in order: a document load, or a fetch / XHR that is not a
    GET / HEAD / OPTIONS (a write), to ``origin`` (empty: any), beacons left out; redirect hops each count
    (a POST answered 303, then the GET of the page it names)."""
    out = []
    for r in requests:
        if r.resource_type not in _OWN_TYPES or is_beacon(r):
            continue
        if r.resource_type != "document" and r.method.upper() in ("GET", "HEAD", "OPTIONS"):
            continue
        if origin and origin_of(r.url) != origin:
            continue
        out.append(r)
    return out


def failed_request(requests: Iterable[RequestSeen], origin: str = "") -> RequestSeen | None:
    """The first of the step's own requests (:func:`own_requests`) answered with :data:`ERROR_STATUS` or
    more, or None."""
    return next((r for r in own_requests(requests, origin) if r.status is not None and r.status >= ERROR_STATUS),
                None)


def own_status(requests: Iterable[RequestSeen], origin: str = "") -> int | None:
    """The status the recorder stores for a step (``AfterState.response_status``).

    The first error status (:data:`ERROR_STATUS` or more) among the step's own requests
    (:func:`own_requests`), else the last one's status (``201``, ``200`` after a ``303``); ``0`` when the
    step sent no request of its own; None when one of them is still unanswered (in flight, failed: the
    status is not known, nothing is stored).
    """
    own = own_requests(requests, origin)
    if any(r.status is None for r in own):
        return None
    if not own:
        return 0
    bad = [r for r in own if r.status is not None and r.status >= ERROR_STATUS]
    return int((bad[0] if bad else own[-1]).status or 0)


def answer_evidence(requests: Iterable[RequestSeen], origin: str, recorded_status: int) -> str:
    """Why the step's own request failed where the recorded one did not ("" when it did not).

    Parameters
    ----------
    requests, origin
        As for :func:`failed_answer`.
    recorded_status : int
        ``AfterState.response_status`` of the flow file (``0``: the recording sent no request of its own).

    An answer of :data:`ERROR_STATUS` or more is evidence unless it is the status recorded (the page
    answered the same then: a 404 recorded as a 404, a refused sign-in recorded as refused).
    """
    for r in own_requests(requests, origin):
        if r.status is not None and r.status >= ERROR_STATUS and r.status != recorded_status:
            path = urlsplit(r.url).path or "/"
            was = f" (recorded: {recorded_status})" if recorded_status else ""
            return f"the page answered {r.status} to the step's request ({r.method} {path}){was}"
    return ""


def list_change(recorded: AfterState, before: Mapping[str, int] | None, after: Mapping[str, int] | None) -> str:
    """Why the list the step changed did not change as recorded ("" when it did, or cannot be told).

    Parameters
    ----------
    recorded : AfterState
        Its ``list_kind`` / ``list_delta`` (nothing to check when either is empty).
    before, after : Mapping[str, int] | None
        Item counts by kind right before the action and after the step
        (:attr:`core.perception.effects.EffectSnapshot.items`); None when the page could not be read.

    Relative, never absolute: a list that held 3 items and holds 4 grew by one as the recorded 0 -> 1 did.
    """
    kind, delta = recorded.list_kind, recorded.list_delta
    if not kind or not delta or before is None or after is None or kind not in before or kind not in after:
        return ""
    got = int(after[kind]) - int(before[kind])
    if got == delta:
        return ""
    what = {"li": "list item", "tr": "table row", "listitem": "list item", "row": "row", "option": "option",
            "article": "article", "treeitem": "tree item"}.get(kind, "item")

    def change(n: int) -> str:
        if not n:
            return f"added no {what}"
        return f"{'added' if n > 0 else 'removed'} {abs(n)} {what}{'s' if abs(n) != 1 else ''}"

    return f"the step {change(got)} where the recording {change(delta)}"


def error_page(recorded: AfterState, actual: AfterState) -> str:
    """Why the page reached reads as an error page the recording was not ("" when it does not)."""
    for what, now, then in (("title", actual.title, recorded.title), ("heading", actual.heading, recorded.heading)):
        if now and _ERROR_PAGE.search(now) and not (then and _ERROR_PAGE.search(then)):
            return f"the step reached an error page ({what} {now!r})"
    return ""


def _has_password(obs: Observation | None) -> bool:
    return obs is not None and any(c.extra.get("is_password") or c.descriptor.type == "password"
                                   for c in obs.candidates)


def signin_again(before: Observation | None, after: Observation, recorded_route: str, actual_route: str) -> str:
    """Why the page reached is the sign-in page again ("" when it is not).

    Both pages show a password field and the step stayed where it was, on a
    route that is not the one recorded: the credentials were refused.
    """
    if recorded_route and _has_password(before) and _has_password(after) and before is not None:
        still = urlsplit(before.url).path == urlsplit(after.url).path
        if still and recorded_route.rstrip("/") != actual_route.rstrip("/"):
            return "the step is still on the sign-in page (the sign-in was refused)"
    return ""


@dataclass(frozen=True, slots=True)
class Landing:
    """Where a step landed, against its recording.

    Attributes
    ----------
    kind : str
        ``holds`` (every recorded signal agrees), ``drifted`` (some signals changed, the page is the
        one recorded: the step passes and the change is reported) or ``elsewhere`` (another page).
    reason : str
        One plain sentence: why it is elsewhere, or what drifted.
    drifted : tuple[str, ...]
        The signals that disagree (``route``, ``title``, ``heading``, ``landmark``, ``region``, ``target``).
    """

    kind: str
    reason: str = ""
    drifted: tuple[str, ...] = ()


def weigh_landing(recorded: AfterState, actual: AfterState, *, heading_known: bool = True,
                  recorded_base: str = "", run_base: str = "", params: Mapping[str, str] | None = None,
                  evidence: str = "", landmark_known: bool = False, regions_now: Sequence[str] | None = None,
                  regions_present: Sequence[str] = (), irreversible: bool = False,
                  title_before: str | None = None, title_constant: bool = False) -> Landing:
    """Weigh the page signals of ``recorded`` against ``actual``.

    Parameters
    ----------
    recorded, actual : AfterState
        The flow file's after-state and the one observed now (:func:`core.act.after.observed_after`);
        their ``url_pattern`` may be full paths: each is made relative to its own base.
    heading_known : bool
        False when the heading could not be read now: it does not count.
    recorded_base, run_base : str
        The base path the flow was recorded under and the one it runs under (:func:`base_path`).
    params : Mapping[str, str]
        This run's public parameter values (:func:`same_route`).
    evidence : str
        Hard evidence of another page (:func:`failed_answer`, :func:`error_page`, :func:`signin_again`):
        the step landed elsewhere whatever the signals say.
    landmark_known : bool
        True when ``actual.landmark`` was read now (the main landmark's name, :mod:`core.act.regions`);
        False: the recorded landmark does not count.
    regions_now, regions_present : Sequence[str] | None, Sequence[str]
        The region keys that changed with the step now, and every region key on the page
        (:func:`core.act.regions.changed_regions`); None: not read, the recorded region does not count.
    irreversible : bool
        The step cannot be undone: it is elsewhere only on ``evidence`` or when no recorded signal agrees.
    title_before : str | None
        The page's title right before the action, now (None: not known).  For an irreversible step a title
        that agrees and was the page's title already before the action does not count as agreeing: a site's
        constant title says nothing of where the action led (a write the server refused with its form shown
        again, under the same title, is not "done").
    title_constant : bool
        The recording's steps all landed on pages of one title (:func:`constant_title`): a title that differs
        now is the deployment's own name for itself (the database file sqlite-web names in every title), not
        another page - it does not vote.  One that agrees still does (the same app, under its own name).

    The page is elsewhere unless more of the recorded signals agree than
    disagree (a split is not enough to call it the same page: a confirmation
    shown at the same address reads as another page).  Otherwise a
    disagreement is a drift: reported, not failed - the site name that moved
    from an ``<h1>`` to a ``<div>`` while the route and the title hold.  An
    irreversible step is done whatever is judged (failing it undoes nothing,
    it stops the run): it is elsewhere only on hard evidence, or when every
    recorded signal disagrees; a split is a drift, reported.

    Signals besides ``route`` / ``title`` / ``heading``: ``landmark`` (the main landmark's name; not counted
    when it is the recorded heading: one element is one signal), ``region`` (the region the step changed on
    the page it stayed on, :func:`core.act.regions.region_moved`), ``target`` (the acted element's own
    checked state, ``AfterState.target_state``).
    """
    if evidence:
        return Landing("elsewhere", evidence)
    rec_route = relative_path(recorded.url_pattern, recorded_base) if recorded.url_pattern else ""
    act_route = relative_path(actual.url_pattern, run_base)
    votes: dict[str, bool] = {}
    why: dict[str, str] = {}
    if rec_route:
        votes["route"] = same_route(rec_route, act_route, params)
        why["route"] = f"the step reached {act_route} instead of {rec_route}" + (
            f" ({actual.heading!r})" if actual.heading else "")
    same_title = same_text(recorded.title, actual.title) if recorded.title else False
    if recorded.title and (same_title or not title_constant):  # a differing constant title: the deployment's name
        votes["title"] = same_title
        why["title"] = f"the page is titled {actual.title!r} instead of {recorded.title!r}"
    if recorded.heading and heading_known:
        votes["heading"] = same_text(recorded.heading, actual.heading)
        why["heading"] = (f"the page is headed {actual.heading!r} instead of {recorded.heading!r}" if actual.heading
                          else f"the page has no main heading (recorded {recorded.heading!r})")
    if recorded.landmark and landmark_known and not same_text(recorded.landmark, recorded.heading or ""):
        votes["landmark"] = same_text(recorded.landmark, actual.landmark)
        why["landmark"] = (f"the main part of the page is {actual.landmark!r} instead of {recorded.landmark!r}"
                           if actual.landmark else f"the page has no main part named {recorded.landmark!r}")
    if recorded.region and regions_now is not None:
        moved = region_moved(recorded.region, regions_now, regions_present)
        votes["region"] = not moved
        why["region"] = moved
    if recorded.target_state:
        votes["target"] = actual.target_state == recorded.target_state
        why["target"] = f"the step did not leave the element it acted on {recorded.target_state}"
    off = tuple(k for k, ok in votes.items() if not ok)
    if not off:
        return Landing("holds")
    agree = len(votes) - len(off)
    if irreversible and votes.get("title") and title_before is not None and same_text(recorded.title, title_before):
        agree -= 1  # the title held before the action already: no sign of where the action led
    reason = "; ".join(why[k] for k in off)
    if (len(off) >= agree and not irreversible) or agree == 0:
        # another address says it (with the heading reached); else the first text that disagrees
        return Landing("elsewhere", why["route"] if "route" in off else why[off[0]], off)
    return Landing("drifted", "the page changed since the recording: " + reason, off)


def constant_title(afters: Iterable[AfterState | None]) -> bool:
    """Whether the recorded after-states ``afters`` (a flow's steps, in order) carry one title, on at least two
    steps: a site that titles every page alike ("SQLite Web: shop.db", "Admin") - its title says nothing of
    where a step landed (:func:`weigh_landing`'s ``title_constant``)."""
    titles = [a.title for a in afters if a is not None and a.title]
    return len(titles) >= 2 and all(_norm_title(t) == _norm_title(titles[0]) for t in titles[1:])


def _norm_title(title: str) -> str:
    return " ".join(title.split()).casefold()


def judge_landing(recorded: AfterState, actual: AfterState, *, changed: list[str] | None = None,
                  appeared: list[str] | None = None, modal_titles: tuple[str, ...] = (),
                  heading_known: bool = True, recorded_base: str = "", run_base: str = "",
                  params: Mapping[str, str] | None = None, requests: Iterable[RequestSeen] = (),
                  origin: str = "", before: Observation | None = None,
                  after: Observation | None = None, items_before: Mapping[str, int] | None = None,
                  items_after: Mapping[str, int] | None = None, regions_before: PageRegions | None = None,
                  regions_after: PageRegions | None = None,
                  irreversible: bool = False, title_constant: bool = False) -> tuple[list[Mismatch], str]:
    """What of ``recorded`` does not hold, and what drifted: ``(mismatches, drift note)``.

    The page part is :func:`weigh_landing` (``elsewhere`` becomes one
    ``page`` :class:`~core.act.after.Mismatch`; ``drifted`` becomes the
    note, ``""`` when nothing drifted); dialogs, the changed field and the
    editor that appeared are :func:`core.act.after.compare_after`'s, with
    the same parameters.  ``requests`` / ``origin`` feed
    :func:`failed_answer` (:func:`answer_evidence` when the recording has the step's status);
    ``before`` / ``after`` feed :func:`signin_again`; ``items_before`` / ``items_after`` (item counts by
    kind right before the action and now) feed :func:`list_change`, a ``list`` mismatch;
    ``regions_before`` / ``regions_after`` (:func:`core.act.regions.read_regions` right before the action
    and now; None: not read) give the main landmark's name now and the regions the step changed (compared
    only when the step stayed on its page); ``irreversible`` and ``title_constant`` as for :func:`weigh_landing`.
    """
    rec_route = relative_path(recorded.url_pattern, recorded_base) if recorded.url_pattern else ""
    act_route = relative_path(actual.url_pattern, run_base)
    requests = tuple(requests)
    signals: dict = {"irreversible": irreversible, "title_before": before.title if before is not None else None,
                     "title_constant": title_constant}
    if regions_after is not None:
        actual = replace(actual, landmark=regions_after.landmark)
        signals["landmark_known"] = True
        stayed = before is None or after is None or urlsplit(before.url).path == urlsplit(after.url).path
        if regions_before is not None and stayed:
            signals["regions_now"] = changed_regions(regions_before, regions_after)[1]
            signals["regions_present"] = [k for k, _, _ in (*regions_before.regions, *regions_after.regions)]
        elif not stayed:
            signals["regions_now"] = []  # the step left the page: the region it changed there is not changed
    if recorded.response_status is not None:  # compared with what the page answered when recorded
        evidence = answer_evidence(requests, origin, recorded.response_status)
    else:  # a flow file of before: no recorded status
        evidence = failed_answer(requests, origin)
        refused = failed_request(requests, origin)
        if refused is not None and refused.status is not None and refused.status < 500 and weigh_landing(
                recorded, actual, heading_known=heading_known, recorded_base=recorded_base, run_base=run_base,
                params=params, **signals).kind == "holds":
            # every recorded signal holds: the page reached is the one recorded, whose own request was
            # refused the same way then (a wrong password's sign-in, recorded as such)
            evidence = ""
    evidence = evidence or error_page(recorded, actual)
    if not evidence and after is not None:
        evidence = signin_again(before, after, rec_route, act_route)
    landing = weigh_landing(recorded, actual, heading_known=heading_known, recorded_base=recorded_base,
                            run_base=run_base, params=params, evidence=evidence, **signals)
    rest = compare_after(replace(recorded, url_pattern="", title="", heading=""), actual, changed=changed,
                         appeared=appeared, modal_titles=modal_titles, heading_known=heading_known)
    grew = list_change(recorded, items_before, items_after) if landing.kind != "elsewhere" else ""
    out = ([Mismatch("page", landing.reason)] if landing.kind == "elsewhere" else []) + rest + (
        [Mismatch("list", grew)] if grew else [])
    return out, (landing.reason if landing.kind == "drifted" else "")
