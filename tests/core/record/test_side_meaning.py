"""Selenium IDE imports keep what a test means, or refuse (core.record.side; files built here, nothing run)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.project import ProjectError
from core.record.side import hints_of, import_side, last_step


def _side(tmp_path: Path, *tests: tuple[str, list[dict]]) -> Path:
    doc = {"id": "p", "version": "2.0", "name": "P", "url": "http://127.0.0.1:8000",
           "tests": [{"id": name, "name": name, "commands": cmds} for name, cmds in tests]}
    path = tmp_path / "p.side"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _c(command: str, target: str = "", value: str = "", targets: list | None = None) -> dict:
    return {"id": command, "command": command, "target": target, "value": value, "targets": targets or []}


#: The right value of the declared secret (a test value, not a real secret).
RIGHT_VALUE = "Right-Value-17"

LOGIN = [_c("open", "/login"), _c("type", "id=username", "ada")]


def test_a_wrong_password_stays_a_different_secret_from_the_right_one(tmp_path: Path) -> None:
    right = ("right password", [*LOGIN, _c("type", "id=password", RIGHT_VALUE), _c("click", "id=signin")])
    wrong = ("wrong password", [*LOGIN, _c("type", "id=password", "not-the-one"), _c("click", "id=signin")])
    again = ("right again", [*LOGIN, _c("type", "id=password", RIGHT_VALUE), _c("click", "id=signin")])
    imports = import_side(_side(tmp_path, wrong, right, again), secret_names=("password",),
                          secret_values={"password": RIGHT_VALUE})
    typed = [next(s.action.value for s in imp.flow.steps if s.selector == '[id="password"]') for imp in imports]
    assert typed == ["{password_2}", "{password}", "{password}"]
    assert [imp.flow.secrets for imp in imports] == [("password_2",), ("password",), ("password",)]
    notes = "\n".join(imports[0].notes)
    assert "STEADYHAND_SECRET_PASSWORD_2" in notes and "a secret of its own" in notes
    assert "not-the-one" not in notes and RIGHT_VALUE not in "\n".join(n for i in imports for n in i.notes)


def test_when_the_declared_secrets_value_is_unknown_no_typed_value_is_guessed_to_be_it(tmp_path: Path) -> None:
    """A project made with ``init --secret password`` (no default, STEADYHAND_SECRET_PASSWORD unset): the first
    test types a wrong password, another the right one. Binding the first to {password} made the wrong-password
    test type the real password; now neither value is taken for {password}, each gets a name of its own, and the
    note names what to set."""
    wrong = ("wrong password", [*LOGIN, _c("type", "id=password", "wrong-pass-1"), _c("click", "id=signin")])
    right = ("right password", [*LOGIN, _c("type", "id=password", "demo-pass"), _c("click", "id=signin")])
    again = ("right again", [*LOGIN, _c("type", "id=password", "demo-pass"), _c("click", "id=signin")])
    imports = import_side(_side(tmp_path, wrong, right, again), secret_names=("password",))
    typed = [next(s.action.value for s in imp.flow.steps if s.selector == '[id="password"]') for imp in imports]
    assert typed == ["{password_1}", "{password_2}", "{password_2}"]
    assert not any("password" in imp.flow.secrets for imp in imports)
    notes = "\n".join(n for imp in imports for n in imp.notes)
    assert "not the declared {password}: the file types 2 different values into its fields" in notes
    assert "STEADYHAND_SECRET_PASSWORD_1" in notes and "STEADYHAND_SECRET_PASSWORD_2" in notes
    assert "set STEADYHAND_SECRET_PASSWORD and import again" in notes
    assert "wrong-pass-1" not in notes and "demo-pass" not in notes
    one, = import_side(_side(tmp_path, right), secret_names=("password",))  # one value: the recorded login's
    assert one.flow.steps[1].action.value == "{password}" and one.flow.secrets == ("password",)


def test_a_value_equal_to_a_declared_secret_takes_that_secret(tmp_path: Path) -> None:
    t = ("t", [*LOGIN, _c("type", "id=password", "wrong-one"), _c("type", "id=pin", "1234-5678")])
    imp, = import_side(_side(tmp_path, t), secret_names=("password", "pin"), secret_values={"pin": "1234-5678"})
    values = [s.action.value for s in imp.flow.steps if s.action.kind == "input"]
    assert values == ["ada", "{password}", "{pin}"]  # the known pin value binds "pin"; the other takes "password"


def test_the_element_id_comes_from_the_element_never_from_an_ancestor() -> None:
    assert last_step("//div[@id='login']/form/input[@name='u']") == "input[@name='u']"
    assert last_step("(//form[@id='f']//button)[2]") == "button"
    h = hints_of(["xpath=//div[@id='login-box']/input[2]"])
    assert not h.id and h.tag != "div"
    h = hints_of(["xpath=//div[@id='login-box']//button[contains(.,'Sign in')]"])
    assert (h.tag, h.text) == ("button", "Sign in") and not h.id
    h = hints_of(["xpath=//form/input[@id='username']"])
    assert h.id == "username"


def test_store_of_a_literal_becomes_a_parameter_with_its_default(tmp_path: Path) -> None:
    t = ("t", [_c("open", "/login"), _c("store", "ada", "who"), _c("type", "id=username", "${who}"),
               _c("type", "id=note", "hello ${greeting}")])
    imp, = import_side(_side(tmp_path, t))
    assert imp.flow.params == {"who": "ada"}
    assert [s.action.value for s in imp.flow.steps] == ["{who}", "hello {greeting}"]
    assert any("run --param greeting=VALUE" in n for n in imp.notes)


def test_a_variable_filled_at_run_time_is_refused_not_typed_literally(tmp_path: Path) -> None:
    t = ("uses heading", [_c("open", "/"), _c("storeText", "css=h1", "heading"), _c("type", "id=q", "${heading}")])
    with pytest.raises(ProjectError, match=r"\$\{heading\} is filled at run time by command 2"):
        import_side(_side(tmp_path, t))


def test_a_test_with_nothing_to_import_is_refused(tmp_path: Path) -> None:
    t = ("only pauses", [_c("open", "/"), _c("pause", "1000"), _c("executeScript", "return 1")])
    with pytest.raises(ProjectError, match="'only pauses': nothing to import .*executeScript"):
        import_side(_side(tmp_path, t))


def test_a_project_without_declared_secrets_gets_the_plain_name_password(tmp_path: Path) -> None:
    """A public .side login (one password typed once): no `_2` suffix and no talk of other secret fields."""
    t = ("login", [*LOGIN, _c("type", "name=password", "1219"), _c("sendKeys", "name=password", "${KEY_ENTER}")])
    imp, = import_side(_side(tmp_path, t), secret_names=())
    assert [s.action.value for s in imp.flow.steps if s.action.kind == "input"] == ["ada", "{password}"]
    assert imp.flow.secrets == ("password",)
    notes = "\n".join(imp.notes)
    assert "STEADYHAND_SECRET_PASSWORD " in notes and "a secret of its own" not in notes and "1219" not in notes


def test_a_click_that_opens_a_window_says_the_flow_stays_on_the_page(tmp_path: Path) -> None:
    """Selenium IDE records ``opensWindow`` on a click to a new tab (seen in a public .side); it is listed."""
    link = _c("click", "linkText=Docs", targets=[["linkText=Docs", "linkText"]])
    t = ("search", [_c("open", "/"), {**link, "opensWindow": True, "windowHandleName": "win1"},
                    _c("selectWindow", "handle=${win1}")])
    imp, = import_side(_side(tmp_path, t))
    assert [s.action.kind for s in imp.flow.steps] == ["click"]
    notes = "\n".join(imp.notes)
    assert "command 2 (click): opens a new window" in notes and "command 3 (selectWindow)" in notes


def test_the_side_files_own_site_outside_the_base_url_is_said_and_another_site_stays_absolute(tmp_path: Path) -> None:
    """The .side was recorded on http://127.0.0.1:8000; the project's base URL is another site. Its pages are
    opened at the same paths under the base URL (a file recorded on a developer's server), which the import used
    to do silently: the report says so now. A URL of a third site stays absolute with a note, as import-codegen
    keeps a URL that is not under the base URL. Under the base URL nothing is said."""
    t = ("t", [_c("open", "/login"), _c("open", "http://other.example/help"), _c("click", "id=go")])
    imp, = import_side(_side(tmp_path, t), base_url="http://shop.example:9000/")
    assert imp.flow.start_url == "/login"
    assert imp.flow.steps[0].action.value == "http://other.example/help"
    notes = "\n".join(imp.notes)
    assert "http://127.0.0.1:8000 is not under the project's base URL http://shop.example:9000/" in notes
    assert "http://other.example/help is not under the project's base URL" in notes and "kept absolute" in notes
    same, = import_side(_side(tmp_path, ("t", [_c("open", "/login"), _c("click", "id=go")])),
                        base_url="http://127.0.0.1:8000/")
    assert same.flow.start_url == "/login" and not any("base URL" in n for n in same.notes)


def test_a_click_that_only_focuses_the_field_typed_next_is_dropped_with_a_note(tmp_path: Path) -> None:
    """Selenium IDE records ``click`` then ``type`` on the same field: the click is dropped (as import-codegen does);
    a click followed by typing elsewhere, by a non-typing command, or opening a window stays."""
    t = ("form", [_c("open", "/"), _c("click", "id=username"), _c("type", "id=username", "ada"),
                  _c("click", "id=menu"), _c("type", "id=other", "x"),
                  _c("click", "id=agree"), _c("check", "id=agree"),
                  _c("click", "id=note"), _c("sendKeys", "id=note", "hello"),
                  {**_c("click", "id=q"), "opensWindow": True}, _c("type", "id=q", "y")])
    imp, = import_side(_side(tmp_path, t))
    assert [(s.action.kind, s.selector) for s in imp.flow.steps] == [
        ("input", '[id="username"]'), ("click", '[id="menu"]'), ("input", '[id="other"]'),
        ("click", '[id="agree"]'), ("check", '[id="agree"]'), ("input", '[id="note"]'),
        ("click", '[id="q"]'), ("input", '[id="q"]')]
    assert ("form: dropped 2 clicks that only focus a field before typing (commands 2, 8); replay types into "
            "the field directly") in imp.notes


def test_a_command_under_an_if_or_in_a_loop_is_refused_never_run_always(tmp_path: Path) -> None:
    """``if ${x} == 1 ... click ... end`` became an always-run click; the test is refused now, naming the command."""
    cond = ("exports", [_c("open", "/"), _c("store", "1", "x"), _c("if", "${x} == 1"),
                        _c("click", "id=export-report"), _c("end"), _c("click", "id=home")])
    with pytest.raises(ProjectError, match=r"test 'exports', command 4 \(click\) runs only when the condition of "
                                           r"command 3 \(if\)"):
        import_side(_side(tmp_path, cond))
    loop = ("loop", [_c("open", "/"), _c("times", "3"), _c("echo", "x"), _c("click", "id=next"), _c("end")])
    with pytest.raises(ProjectError, match=r"command 4 \(click\) runs repeatedly under command 2 \(times\)"):
        import_side(_side(tmp_path, loop))
    other = ("fine", [_c("open", "/"), _c("click", "id=home")])  # the others import with --test
    imp, = import_side(_side(tmp_path, cond, other), test="fine")
    assert [s.action.kind for s in imp.flow.steps] == ["click"]


def test_a_variable_stored_by_execute_script_is_refused_like_store_text(tmp_path: Path) -> None:
    t = ("scripted", [_c("open", "/"), _c("executeScript", "return document.title", "title"),
                      _c("type", "id=q", "${title}")])
    with pytest.raises(ProjectError, match=r"'scripted', command 3 \(type\): \$\{title\} is filled at run time by "
                                           r"command 2 \(executeScript\)"):
        import_side(_side(tmp_path, t))


def test_importing_one_test_names_its_secrets_as_the_whole_file_does(tmp_path: Path) -> None:
    """``--test "wrong password"`` alone used to see one value and take {password} for the wrong password."""
    wrong = ("wrong password", [*LOGIN, _c("type", "id=password", "wrong-pass-1")])
    right = ("right password", [*LOGIN, _c("type", "id=password", "demo-pass")])
    imp, = import_side(_side(tmp_path, right, wrong), secret_names=("password",), test="wrong password")
    assert imp.flow.steps[1].action.value == "{password_2}" and imp.flow.secrets == ("password_2",)
    both = import_side(_side(tmp_path, right, wrong), secret_names=("password",))
    assert [i.flow.steps[1].action.value for i in both] == ["{password_1}", "{password_2}"]
