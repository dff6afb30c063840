"""Where a step landed, weighed as a person would (issue 19, failure kinds 1 and 3) - pure, no browser."""
from __future__ import annotations

import pytest

from core.act.landing import (
    answer_evidence, base_path, error_page, failed_answer, judge_landing, list_change, own_status, relative_path,
    same_route, signin_again, weigh_landing,
)
from core.act.writes import RequestSeen
from core.domain import AfterState, Candidate, ElementDescriptor, Observation, StateSignature


def obs(url: str, *, password: bool = False) -> Observation:
    cands = (Candidate("0:p", ElementDescriptor(tag="input", role="textbox", type="password"),
                       extra={"is_password": True}),) if password else ()
    sig = StateSignature(url, "t", 0, 0, "", "", "", False, 0, "", "d")
    return Observation(url, "t", (1280, 800), 1.0, (0, 0), cands, "", sig)


@pytest.mark.parametrize("url, want", [
    ("http://h/examples/a/", "/examples/a"), ("http://h/", ""), ("http://h", ""), ("", ""),
    ("http://h/app/index.html", "/app/index.html"),
])
def test_base_path(url: str, want: str) -> None:
    assert base_path(url) == want


@pytest.mark.parametrize("path, base, want", [
    ("/examples/a/", "/examples/a", "/"), ("/examples/a", "/examples/a/", "/"),
    ("/examples/a/list", "/examples/a", "/list"), ("/examples/ab", "/examples/a", "/examples/ab"),
    ("/list", "", "/list"), ("/other", "/examples/a", "/other"),
])
def test_relative_path(path: str, base: str, want: str) -> None:
    assert relative_path(path, base) == want


def test_routes_compare_by_segment_with_placeholders_and_this_runs_parameters() -> None:
    assert same_route("/list/", "/list")
    assert same_route("/u/{n}", "/u/{n}") and same_route("/u/{user}", "/u/bob")  # an old file's placeholder
    assert same_route("/u/admin", "/u/bob", {"user": "bob"})  # recorded with another value of the parameter
    assert not same_route("/u/admin", "/u/bob")
    assert not same_route("/list", "/list/new")


def test_a_flow_recorded_under_one_prefix_holds_under_another() -> None:
    recorded = AfterState(url_pattern="/examples/a/", title="Todos", heading="todos")  # an old file: full path
    actual = AfterState(url_pattern="/examples/b/", title="Todos", heading="todos")
    assert weigh_landing(recorded, actual, recorded_base="/examples/a/", run_base="/examples/b/").kind == "holds"
    relative = AfterState(url_pattern="/", title="Todos", heading="todos")  # a new file: relative
    assert weigh_landing(relative, actual, recorded_base="/examples/a/", run_base="/examples/b").kind == "holds"
    # without the bases the route alone disagrees: a change, reported (title and heading say it is the page)
    got = weigh_landing(recorded, actual)
    assert (got.kind, got.drifted) == ("drifted", ("route",)) and "/examples/b/ instead of /examples/a/" in got.reason


def test_one_drifted_signal_of_three_is_a_change_not_another_page() -> None:
    recorded = AfterState(url_pattern="/admin/", title="Site overview | Acme", heading="Acme administration")
    actual = AfterState(url_pattern="/admin/", title="Site overview | Acme", heading="Site overview")
    got = weigh_landing(recorded, actual)
    assert got.kind == "drifted" and got.drifted == ("heading",)
    assert "headed 'Site overview' instead of 'Acme administration'" in got.reason
    mism, note = judge_landing(recorded, actual)
    assert mism == [] and note.startswith("the page changed since the recording")


def test_most_signals_disagreeing_or_a_route_split_is_another_page() -> None:
    recorded = AfterState(url_pattern="/admin/", title="Site overview", heading="Acme administration")
    two_off = AfterState(url_pattern="/admin/", title="Confirm", heading="Are you sure?")
    assert weigh_landing(recorded, two_off).kind == "elsewhere"
    route_split = AfterState(url_pattern="/login", heading="Acme administration")
    assert weigh_landing(AfterState(url_pattern="/admin/", heading="Acme administration"), route_split).kind == \
        "elsewhere"
    # route and heading only, the heading differs: a split is not the same page (a confirmation at one address)
    assert weigh_landing(AfterState(url_pattern="/admin/", heading="Acme administration"),
                         AfterState(url_pattern="/admin/", heading="Confirm deletion")).kind == "elsewhere"
    # one signal recorded and it disagrees: elsewhere, as before
    assert weigh_landing(AfterState(heading="My requests"), AfterState(heading="Are you sure?")).kind == "elsewhere"
    # an unreadable heading does not vote
    assert weigh_landing(AfterState(heading="My requests"), AfterState(heading=""), heading_known=False).kind == "holds"


def test_hard_evidence_is_elsewhere_whatever_the_signals_say() -> None:
    same = AfterState(url_pattern="/admin/", title="Acme", heading="Acme")
    assert weigh_landing(same, same, evidence="the page answered 500").kind == "elsewhere"
    reqs = [RequestSeen(1.0, "POST", "http://h/login", "document", status=500)]
    mism, note = judge_landing(same, same, requests=reqs, origin="http://h")
    assert [m.code for m in mism] == ["page"] and "500" in mism[0].reason and "POST /login" in mism[0].reason
    assert note == ""
    # a refusal (4xx) on a page that is not the one recorded: elsewhere
    refused = [RequestSeen(1.0, "POST", "http://h/login", "document", status=403)]
    mism, _ = judge_landing(same, AfterState(url_pattern="/login/", title="Acme", heading="Sign in"),
                            requests=refused, origin="http://h")
    assert [m.code for m in mism] == ["page"] and "403" in mism[0].reason


def test_a_refusal_the_recording_landed_on_too_is_not_another_page() -> None:
    """A wrong password's sign-in recorded as such: the route, title and heading all hold, the 401 is the
    refusal the recording saw too (the demo's lockout flow)."""
    signin = AfterState(url_pattern="/login", title="LeaveDesk", heading="Sign in")
    refused = [RequestSeen(1.0, "POST", "http://h/api/login", "fetch", status=401)]
    mism, note = judge_landing(signin, signin, requests=refused, origin="http://h")
    assert mism == [] and note == ""


def test_failed_answer_counts_only_the_steps_own_requests() -> None:
    def r(method: str, url: str, kind: str, status: int | None, keep: bool = False) -> RequestSeen:
        return RequestSeen(1.0, method, url, kind, keep, status)

    assert failed_answer([r("GET", "http://h/favicon.ico", "image", 404)], "http://h") == ""
    assert failed_answer([r("GET", "http://h/api/poll", "fetch", 500)], "http://h") == ""  # a read
    assert failed_answer([r("POST", "http://h/log", "fetch", 500, keep=True)], "http://h") == ""  # a beacon
    assert failed_answer([r("POST", "http://cdn/x", "xhr", 500)], "http://h") == ""  # another origin
    assert failed_answer([r("GET", "http://h/next", "document", 200)], "http://h") == ""
    assert failed_answer([r("GET", "http://h/x", "document", None)], "http://h") == ""  # no answer yet
    assert "422" in failed_answer([r("PUT", "http://h/api/items/3", "fetch", 422)], "http://h")
    assert "404" in failed_answer([r("GET", "http://h/gone", "document", 404)], "http://h")


def test_an_error_page_the_recording_was_not() -> None:
    assert error_page(AfterState(title="Books"), AfterState(title="404 Not Found"))
    assert error_page(AfterState(heading="Books"), AfterState(heading="Server Error (500)"))
    assert error_page(AfterState(title="Page not found"), AfterState(title="Page not found")) == ""  # recorded so
    assert error_page(AfterState(title="Books"), AfterState(title="Bookstore 4040 editions")) == ""


def test_the_sign_in_page_again() -> None:
    before, after = obs("http://h/login", password=True), obs("http://h/login", password=True)
    assert signin_again(before, after, "/admin/", "/login")
    assert signin_again(before, obs("http://h/admin/"), "/admin/", "/admin/") == ""  # signed in
    assert signin_again(before, after, "/login", "/login") == ""  # recorded staying there
    assert signin_again(obs("http://h/x"), after, "/admin/", "/login") == ""  # no sign-in before
    mism, _ = judge_landing(AfterState(url_pattern="/admin/", title="Admin"), AfterState(url_pattern="/login",
                                                                                         title="Admin"),
                            before=before, after=after)
    assert "sign-in" in mism[0].reason


def test_dialogs_and_fields_are_still_compared() -> None:
    mism, _ = judge_landing(AfterState(dialog=True, dialog_name="Edit"), AfterState(dialog=False))
    assert [m.code for m in mism] == ["dialog_missing"]
    mism, _ = judge_landing(AfterState(field_changed="Done"), AfterState(), changed=["Starred"])
    assert [m.code for m in mism] == ["field"]


def _req(method: str, url: str, kind: str, status: int | None) -> RequestSeen:
    return RequestSeen(1.0, method, url, kind, False, status)


def test_own_status_is_the_first_error_else_the_last_answer_of_the_steps_own_requests() -> None:
    h = "http://h"
    assert own_status([], h) == 0  # no request of its own
    assert own_status([_req("GET", "http://h/api/poll", "fetch", 500), _req("GET", "http://h/a.png", "image", 404)],
                      h) == 0  # reads and images are not the step's
    assert own_status([_req("POST", "http://h/login", "document", 303), _req("GET", "http://h/admin/", "document",
                                                                             200)], h) == 200
    assert own_status([_req("POST", "http://h/api/n", "fetch", 201)], h) == 201
    assert own_status([_req("POST", "http://h/api/n", "fetch", 422), _req("GET", "http://h/x", "document", 200)],
                      h) == 422
    assert own_status([_req("POST", "http://h/api/n", "fetch", None)], h) is None  # unanswered: unknown
    assert own_status([_req("POST", "http://other/api", "xhr", 500)], h) == 0  # another origin


def test_a_status_is_evidence_only_where_the_recording_answered_otherwise() -> None:
    page = AfterState(url_pattern="/notes/", title="Notes", heading="Team notes", response_status=201)
    refused = [_req("POST", "http://h/api/notes", "fetch", 422)]
    assert "422" in answer_evidence(refused, "http://h", 201) and "(recorded: 201)" in answer_evidence(
        refused, "http://h", 201)
    mism, _ = judge_landing(page, page, requests=refused, origin="http://h")  # every signal holds: still refused
    assert [m.code for m in mism] == ["page"] and "answered 422" in mism[0].reason
    # a 404 recorded as a 404 is the page answering as it did, even with a drifted heading
    lookup = AfterState(url_pattern="/notes/", title="Notes", heading="Team notes", response_status=404)
    mism, note = judge_landing(lookup, AfterState(url_pattern="/notes/", title="Notes", heading="Notes board"),
                               requests=[_req("POST", "http://h/api/find", "fetch", 404)], origin="http://h")
    assert mism == [] and "headed 'Notes board'" in note
    # 0 recorded (no request of its own): any error answer now is evidence
    assert "500" in answer_evidence([_req("POST", "http://h/api", "xhr", 500)], "http://h", 0)
    # a flow file of before (no status): a 4xx with every signal holding is still excused
    old = AfterState(url_pattern="/notes/", title="Notes", heading="Team notes")
    assert judge_landing(old, old, requests=refused, origin="http://h")[0] == []


def test_a_list_change_is_compared_relative_to_what_the_list_held() -> None:
    grew = AfterState(url_pattern="/", list_kind="li", list_delta=1)
    assert list_change(grew, {"li": 0}, {"li": 1}) == ""
    assert list_change(grew, {"li": 3}, {"li": 4}) == ""  # other data, the same change
    assert list_change(grew, {"li": 3}, {"li": 3}) == "the step added no list item where the recording added 1 list item"
    assert list_change(grew, {"li": 3}, {"li": 5}) == "the step added 2 list items where the recording added 1 list item"
    assert list_change(grew, None, {"li": 5}) == "" and list_change(grew, {"tr": 1}, {"tr": 2}) == ""  # unknown
    assert list_change(AfterState(url_pattern="/"), {"li": 0}, {"li": 9}) == ""  # nothing recorded
    shrank = AfterState(list_kind="tr", list_delta=-1)
    assert "removed 1 table row" in list_change(shrank, {"tr": 2}, {"tr": 3})
    mism, _ = judge_landing(grew, AfterState(url_pattern="/"), items_before={"li": 2}, items_after={"li": 2})
    assert [m.code for m in mism] == ["list"]


def test_a_title_the_page_had_before_the_action_does_not_make_an_irreversible_step_done() -> None:
    """A write refused with its form shown again: another route and heading, the site's constant title.
    The title agreed before the action already, so nothing agrees: elsewhere (it was "drifted": a false pass)."""
    recorded = AfterState(url_pattern="/items/", title="Shop", heading="Items")
    form_again = AfterState(url_pattern="/items/new", title="Shop", heading="New item")
    assert weigh_landing(recorded, form_again, irreversible=True).kind == "drifted"  # title not known before
    assert weigh_landing(recorded, form_again, irreversible=True, title_before="Shop").kind == "elsewhere"
    # a title the action brought (another before it) still counts
    assert weigh_landing(recorded, form_again, irreversible=True, title_before="Basket").kind == "drifted"
    # the page reached is the recorded one: the constant title changes nothing
    assert weigh_landing(recorded, AfterState(url_pattern="/items/", title="Shop", heading="Items"),
                         irreversible=True, title_before="Shop").kind == "holds"
    moved = AfterState(url_pattern="/items/", title="Shop", heading="Inventory")  # renamed heading, route holds
    assert weigh_landing(recorded, moved, irreversible=True, title_before="Shop").kind == "drifted"
    # a reversible step is weighed as before (a split is another page either way)
    assert weigh_landing(recorded, form_again, title_before="Shop").kind == "elsewhere"


def test_a_title_every_recorded_step_shares_does_not_vote() -> None:
    from core.act.landing import constant_title

    shop = [AfterState(url_pattern="/", title="SQLite Web: shop.db"), None,
            AfterState(url_pattern="/customers/", title="SQLite Web:  shop.db")]
    assert constant_title(shop) is True
    assert constant_title(shop[:1]) is False  # one step tells nothing
    assert constant_title([*shop, AfterState(url_pattern="/q/", title="Query - SQLite Web: shop.db")]) is False
    recorded = AfterState(url_pattern="/customers/", title="SQLite Web: shop.db")
    elsewhere_db = AfterState(url_pattern="/customers/", title="SQLite Web: customers.db")
    assert weigh_landing(recorded, elsewhere_db).kind == "elsewhere"  # a split, when the title votes
    assert weigh_landing(recorded, elsewhere_db, title_constant=True).kind == "holds"
    # an agreeing constant title still votes: a renamed heading on the recorded route is a drift, not a split
    headed = AfterState(url_pattern="/notes/", title="Team", heading="Team notes")
    assert weigh_landing(headed, AfterState(url_pattern="/notes/", title="Team", heading="Notes board"),
                         title_constant=True).kind == "drifted"
    # the route still decides
    assert weigh_landing(recorded, AfterState(url_pattern="/customers/insert/", title="SQLite Web: shop.db"),
                         title_constant=True, irreversible=True, title_before="SQLite Web: shop.db").kind == "elsewhere"
