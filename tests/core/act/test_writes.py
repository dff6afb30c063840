"""Which requests are the user's writes (S6): beacons, keepalive, other hosts and background excluded - pure."""
from __future__ import annotations

from core.act.writes import Background, RequestSeen, is_beacon, request_key, server_writes

APP = "http://127.0.0.1:8000"


def req(method: str, path: str, rtype: str = "fetch", *, keepalive: bool = False, status: int | None = None,
        host: str = APP) -> RequestSeen:
    return RequestSeen(1.0, method, host + path, rtype, keepalive, status)


def test_writes_by_fetch_xhr_form_and_document_to_the_app_are_writes() -> None:
    window = [req("POST", "/api/save"), req("PUT", "/api/x", "xhr"), req("DELETE", "/r/1", "document"),
              req("PATCH", "/p", "other")]
    assert server_writes(window, origin=APP) == window


def test_reads_beacons_keepalive_reports_and_other_hosts_are_not() -> None:
    window = [req("GET", "/api/list"), req("POST", "/collect", "ping"), req("POST", "/t", keepalive=True),
              req("POST", "/csp", "cspviolationreport"), req("POST", "/x", host="http://analytics.test"),
              req("POST", "/style.css", "stylesheet")]
    assert server_writes(window, origin=APP) == []
    assert is_beacon(window[1]) and is_beacon(window[2]) and not is_beacon(window[0])


def test_background_endpoints_are_not_writes_whatever_their_query() -> None:
    bg = Background()
    bg.idle([req("POST", "/poll?t=1")])
    assert req("POST", "/poll?t=2") in bg and len(bg) == 1
    assert server_writes([req("POST", "/poll?t=3"), req("POST", "/save")], origin=APP, background=bg) == [
        req("POST", "/save")]
    assert request_key(req("POST", "/poll?t=9")) == ("POST", APP, "/poll")


def test_background_is_bounded() -> None:
    bg = Background()
    bg.idle(req("POST", f"/p{i}") for i in range(Background.LIMIT + 50))
    assert len(bg) == Background.LIMIT and req("POST", "/p0") not in bg


def test_a_write_shows_method_path_and_status_never_its_query() -> None:
    w = req("POST", "/api/save?token=abc", status=201)
    assert w.shown == "POST /api/save 201" and w.succeeded is True
    assert req("POST", "/x", status=500).succeeded is False and req("POST", "/x").succeeded is None
