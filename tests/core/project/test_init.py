"""`steadyhand init`: a project for any web app, validated by the loader, without touching the network."""
from __future__ import annotations

import socket

import pytest
import yaml

from core.cli import main
from core.project import load_project
from core.project.init import InitError, check_base_url, init_project, project_settings


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to resolve a name or open a connection fails the test."""
    def refuse(*_a, **_k):
        raise AssertionError("init reached for the network")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


def test_init_writes_a_project_the_loader_accepts(tmp_path, no_network, capsys):
    folder = tmp_path / "shop"
    code = main(["init", str(folder), "--url", "https://shop.example.invalid:8443/admin", "--secret", "password",
                 "--secret", "api_key", "--secret", "password", "--param", "user=ada", "--param", "q=a=b"])
    out = capsys.readouterr().out
    assert code == 0, out
    project = load_project(folder)
    assert project.name == "shop"  # the folder's name
    assert project.settings.base_url == "https://shop.example.invalid:8443/admin/"
    assert dict(project.settings.params) == {"user": "ada", "q": "a=b"}
    assert list(project.settings.secrets) == ["password", "api_key"]
    assert all(s.default is None for s in project.settings.secrets.values())
    assert "STEADYHAND_SECRET_API_KEY" in project.settings.secrets["api_key"].description
    assert dict(project.flows) == {} and (folder / "flows").is_dir()
    data = yaml.safe_load((folder / "steadyhand.yaml").read_text(encoding="utf-8"))
    assert list(data) == ["schema_version", "name", "base_url", "browser", "params", "secrets"]
    assert data["browser"] == {"headless": True, "viewport": {"width": 1280, "height": 800}, "locale": "en-US",
                               "timezone": "UTC", "action_timeout_ms": 5000, "navigation_timeout_ms": 15000}
    assert project.engine_settings.browser.viewport_width == 1280
    assert f"steadyhand record --project {folder} --flow NAME" in out
    assert "STEADYHAND_SECRET_PASSWORD" in out


def test_init_refuses_to_overwrite_without_force(tmp_path, capsys):
    folder = tmp_path / "app"
    assert main(["init", str(folder), "--url", "http://127.0.0.1:8000", "--name", "First"]) == 0
    (folder / "flows" / "keep.yaml").write_text("name: keep\nsteps: []\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["init", str(folder), "--url", "http://127.0.0.1:9000", "--name", "Second"]) == 2
    err = capsys.readouterr().err
    assert "steadyhand.yaml: a project is already there; pass --force" in err and "Traceback" not in err
    assert load_project(folder).name == "First"
    assert main(["init", str(folder), "--url", "http://127.0.0.1:9000", "--name", "Second", "--force"]) == 0
    project = load_project(folder)
    assert (project.name, project.settings.base_url) == ("Second", "http://127.0.0.1:9000")
    assert list(project.flows) == ["keep"]  # flows are never touched


@pytest.mark.parametrize("url, said", [
    ("ftp://files.example/", "expected an http:// or https:// URL"),
    ("127.0.0.1:8000", "expected an http:// or https:// URL"),
    ("file:///etc/passwd", "expected an http:// or https:// URL"),
    ("http://", "the URL has no host"),
    ("http://127.0.0.1:99999/", "not a valid URL"),
    ("https://ada:pw@shop.example/", "keep user names and passwords out of the URL"),
    ("https://shop.example/?page=1", "takes no query or fragment"),
    ("https://shop.example/#top", "takes no query or fragment"),
])
def test_init_rejects_a_url_that_is_not_an_http_base(tmp_path, capsys, url, said):
    assert main(["init", str(tmp_path / "p"), "--url", url]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("args, said", [
    (["--param", "user"], "--param expects NAME=VALUE"),
    (["--param", "=x"], "--param expects NAME=VALUE"),
    (["--param", "user name=x"], "--param 'user name'"),
    (["--secret", "api-key"], "--secret 'api-key'"),
    (["--secret", "user", "--param", "user=ada"], "both a --param and a --secret"),
    (["--name", "  "], "the project needs a name"),
])
def test_init_rejects_bad_names(tmp_path, capsys, args, said):
    assert main(["init", str(tmp_path / "p"), "--url", "http://127.0.0.1:8000", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert not (tmp_path / "p" / "steadyhand.yaml").exists()


def test_init_refuses_a_file_where_the_folder_should_be(tmp_path, capsys):
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    assert main(["init", str(tmp_path / "taken"), "--url", "http://127.0.0.1:8000"]) == 2
    assert "not a folder" in capsys.readouterr().err


def test_base_url_forms():
    assert check_base_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000"
    assert check_base_url("http://127.0.0.1:8000/") == "http://127.0.0.1:8000"
    assert check_base_url(" HTTPS://Shop.Example/app ") == "https://shop.example/app/"
    assert check_base_url("http://[::1]:8080/a/b/") == "http://[::1]:8080/a/b/"
    with pytest.raises(InitError):
        check_base_url("")


def test_project_settings_is_the_mapping_written(tmp_path):
    data = project_settings("http://127.0.0.1:8000", name="T", secrets=("pw",), params={"user": "ada"})
    project = init_project(tmp_path / "t", url="http://127.0.0.1:8000", name="T", secrets=("pw",),
                           params={"user": "ada"})
    assert yaml.safe_load((project.root / "steadyhand.yaml").read_text(encoding="utf-8")) == data
