"""LoopbackServer / StaticSite: binding, MIME types, traversal, routes, quiet logging."""
from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from core.sites import LoopbackServer, Request, Response, StaticSite, content_type_for


@pytest.fixture
def root(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "css").mkdir(parents=True)
    (site / "empty").mkdir()
    (site / "docs").mkdir()
    (site / "index.html").write_text("<!doctype html><title>Home</title>", encoding="utf-8")
    (site / "css" / "app.css").write_text("body{}", encoding="utf-8")
    (site / "app.js").write_text("var x=1;", encoding="utf-8")
    (site / "data.json").write_text("{}", encoding="utf-8")
    (site / "logo.svg").write_text("<svg/>", encoding="utf-8")
    (site / "blob.xyz123").write_bytes(b"\x00\x01")
    (site / "docs" / "index.html").write_text("docs", encoding="utf-8")
    (site / ".hidden").write_text("hidden", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("TOP SECRET", encoding="utf-8")
    (site / "escape.txt").symlink_to(tmp_path / "secret.txt")
    return site


def raw_get(srv: LoopbackServer, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """Send ``path`` verbatim (no client-side normalisation of ``..``)."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    conn.putrequest(method, path, skip_host=False, skip_accept_encoding=True)
    conn.endheaders()
    resp = conn.getresponse()
    body = resp.read()
    headers = {k.lower(): v for k, v in resp.getheaders()}
    conn.close()
    return resp.status, headers, body


def test_binds_loopback_on_a_free_port_and_stops(root: Path) -> None:
    srv = StaticSite(root)
    with pytest.raises(RuntimeError):
        _ = srv.base_url
    with srv:
        assert srv.running
        assert srv.base_url.startswith("http://127.0.0.1:")
        assert srv.port > 0
        assert srv.start() is srv  # idempotent
        port = srv.port
        assert urllib.request.urlopen(srv.url("/"), timeout=10).status == 200
    assert not srv.running
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    srv.stop()  # idempotent


def test_two_servers_get_different_ports(root: Path) -> None:
    with StaticSite(root) as a, StaticSite(root) as b:
        assert a.port != b.port


@pytest.mark.parametrize("path, ctype", [
    ("/", "text/html; charset=utf-8"),
    ("/index.html", "text/html; charset=utf-8"),
    ("/css/app.css", "text/css; charset=utf-8"),
    ("/app.js", "text/javascript; charset=utf-8"),
    ("/data.json", "application/json"),
    ("/logo.svg", "image/svg+xml"),
    ("/blob.xyz123", "application/octet-stream"),
])
def test_static_files_have_their_mime_type(root: Path, path: str, ctype: str) -> None:
    with StaticSite(root) as srv:
        status, headers, body = raw_get(srv, path)
    assert status == 200
    assert headers["content-type"] == ctype
    assert headers["cache-control"] == "no-store"
    assert body == (root / (path.strip("/") or "index.html")).read_bytes()


def test_content_type_for_is_host_independent() -> None:
    assert content_type_for("a/b.JS") == "text/javascript; charset=utf-8"
    assert content_type_for(Path("x.woff2")) == "font/woff2"


def test_directories_are_never_listed(root: Path) -> None:
    with StaticSite(root) as srv:
        status, _, body = raw_get(srv, "/empty/")
        assert status == 404
        assert b"empty" not in body
        assert raw_get(srv, "/docs/")[2] == b"docs"  # an index file is served
        assert raw_get(srv, "/docs")[2] == b"docs"


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/css/../../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt",
    "/css/%2e%2e/%2e%2e/secret.txt", "/escape.txt", "/.hidden", "/..\\secret.txt", "//etc/passwd",
    "/%00", "/nope.html",
])
def test_path_traversal_and_hidden_files_are_refused(root: Path, path: str) -> None:
    with StaticSite(root) as srv:
        status, _, body = raw_get(srv, path)
    assert status == 404
    assert b"TOP SECRET" not in body and b"hidden" not in body


def test_head_sends_headers_only(root: Path) -> None:
    with StaticSite(root) as srv:
        status, headers, body = raw_get(srv, "/css/app.css", method="HEAD")
    assert status == 200
    assert headers["content-length"] == str(len("body{}"))
    assert body == b""


def test_mount_prefix(root: Path) -> None:
    with StaticSite(root, mount="/static/") as srv:
        assert raw_get(srv, "/static/css/app.css")[0] == 200
        assert raw_get(srv, "/css/app.css")[0] == 404


def test_routes_take_params_and_precede_static_files(root: Path) -> None:
    seen: list[Request] = []

    def item(req: Request) -> Response:
        seen.append(req)
        return Response.json({"id": req.params["item_id"], "q": req.arg("q"), "body": req.json()})

    with StaticSite(root) as srv:
        srv.route("POST", "/api/items/{item_id}", item)
        srv.route("GET", "/index.html", lambda req: Response.text("routed"))
        data = json.dumps({"a": 1}).encode()
        req = urllib.request.Request(srv.url("/api/items/42?q=x"), data=data, method="POST",
                                     headers={"Content-Type": "application/json", "Cookie": "k=v"})
        resp = urllib.request.urlopen(req, timeout=10)
        assert json.loads(resp.read()) == {"id": "42", "q": "x", "body": {"a": 1}}
        assert seen[0].cookies == {"k": "v"}
        assert raw_get(srv, "/index.html")[2] == b"routed"
        status, headers, _ = raw_get(srv, "/api/items/42")
        assert status == 405 and headers["allow"] == "POST"
        assert raw_get(srv, "/api/items/42/more")[0] == 404


def test_a_failing_handler_gets_500_and_the_server_survives(root: Path) -> None:
    def boom(req: Request) -> Response:
        raise ValueError("bug")

    with LoopbackServer() as srv:
        srv.route("GET", "/boom", boom)
        srv.route("GET", "/ok", lambda req: Response.json({"ok": True}))
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(srv.url("/boom"), timeout=10)
        assert info.value.code == 500
        assert json.loads(info.value.read())["error"] == "Internal error: ValueError"
        assert json.loads(urllib.request.urlopen(srv.url("/ok"), timeout=10).read()) == {"ok": True}


def test_serving_is_quiet(root: Path, capfd: pytest.CaptureFixture[str]) -> None:
    with StaticSite(root) as srv:
        raw_get(srv, "/")
        raw_get(srv, "/missing")
        raw_get(srv, "/../secret.txt")
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)  # a client that hangs up
        s.sendall(b"GET / HTTP/1.0\r\n")
        s.close()
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)  # garbage request line
        s.sendall(b"\x16\x03\x01garbage\r\n\r\n")
        s.recv(1024)
        s.close()
        raw_get(srv, "/")
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_large_bodies_are_refused() -> None:
    with LoopbackServer() as srv:
        srv.route("POST", "/x", lambda req: Response.empty())
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
        conn.putrequest("POST", "/x")
        conn.putheader("Content-Length", str(5_000_000))
        conn.endheaders()
        assert conn.getresponse().status == 413
        conn.close()


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        StaticSite(tmp_path / "missing")


def test_a_taken_port_raises_oserror_and_does_not_exit(root: Path) -> None:
    with StaticSite(root) as first:
        second = StaticSite(root, port=first.port)
        with pytest.raises(OSError):
            second.start()
        assert not second.running and first.running
