"""Skill files: round trip, every refusal names file + field, imports are all or nothing (real SQLite)."""
from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from library_samples import SECRET, T0, open_table, popup_skill

from core.domain import Action, Anchor, ElementDescriptor
from core.domain.skill import ElementCondition, SkillAction, SkillTrigger, skill_to_mapping
from core.skills import files
from core.skills.files import (
    ALLOWED_ACTIONS, FILE_FORMAT, SkillFileError, check_skill, export_skills, import_skills, read_one_skill,
    read_skill_file, skill_file_mapping,
)


def _write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _file(*skills) -> dict:
    return skill_file_mapping(list(skills), product="demo", now=T0)


def test_export_then_read_gives_the_same_skills(tmp_path):
    anchored = popup_skill("sk-000000000002", actions=(
        SkillAction(Action("dblclick"), ElementDescriptor(tag="span", role="", text="{target.label}",
                                                          anchor=Anchor("Dates", "heading", 12.5, -40.0))),
        SkillAction(Action("input", "{when}"), ElementDescriptor(role="textbox", label="{target.label}")),
        SkillAction(Action("press", "Enter")),
    ), params=("when",), last_used_at=T0 + timedelta(days=1), created_at=T0, successes=3, failures=1)
    skills = [popup_skill(), anchored]
    path = export_skills(skills, tmp_path / "team" / "skills.json", product="demo")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == FILE_FORMAT and data["product"] == "demo" and len(data["skills"]) == 2
    assert read_skill_file(path) == skills


def test_yaml_files_are_read_too(tmp_path):
    import yaml

    path = tmp_path / "skills.yaml"
    path.write_text(yaml.safe_dump(_file(popup_skill())), encoding="utf-8")
    assert read_skill_file(path) == [popup_skill()]


def _mutated(tmp_path, mutate) -> Path:
    data = _file(popup_skill())
    mutate(data["skills"][0])
    return _write(tmp_path / "bad.json", data)


@pytest.mark.parametrize("mutate, field, expected", [
    (lambda s: s["actions"][0]["target"].update(xpath="/html/body/div[3]/button"),
     "actions[0].target.xpath", "absolute XPath is not allowed"),
    (lambda s: s["actions"][0]["target"].update(css_path="body > div:nth-child(3) > button"),
     "actions[0].target.css_path", "absolute CSS path is not allowed"),
    (lambda s: s["actions"][0]["target"].update(bbox=[10, 20, 30, 40]), "actions[0].target.bbox",
     "coordinates"),
    (lambda s: s["trigger"]["required"][0].update(coordinates=[5, 5]), "trigger.required[0].coordinates",
     "coordinates are not allowed"),
    (lambda s: s["actions"][0].update(kind="navigate"), "actions[0].kind", "not an action a skill may run"),
    (lambda s: s["actions"][0].update(kind="upload"), "actions[0].kind", "not an action a skill may run"),
    (lambda s: s["actions"][0].update(kind="eval_js"), "actions[0].kind", "not an action a skill may run"),
    (lambda s: s["actions"][0].update(value="{user}"), "actions[0].value", "placeholder {user}"),
    (lambda s: s.update(trigger={}), "trigger", "a trigger with nothing set never holds"),
    (lambda s: s.update(actions=[]), "actions", "at least one action"),
    (lambda s: s["actions"][0].update(target={}), "actions[0].target", "needs a target"),
    (lambda s: s.pop("description"), "description", "required field is missing"),
    (lambda s: s.update(script="alert(1)"), "script", "unknown field"),
    (lambda s: s.update(schema_version=2), "schema_version", "newer than this Steadyhand reads"),
    (lambda s: s.update(state="live"), "state", "expected one of proposed, approved, rejected, retired"),
    (lambda s: s.update(quality=1.5), "quality", "less than or equal to 1"),
    (lambda s: s["validation"].update(passed=9), "validation", "more than 'cases'"),
    (lambda s: s.update(id="../../etc"), "id", "letters, digits"),
    (lambda s: s["recovery"].append({"on": "any", "action": "exec"}), "recovery[0].action", "'retry', 'skip'"),
])
def test_a_bad_skill_names_file_skill_and_field(tmp_path, mutate, field, expected):
    path = _mutated(tmp_path, mutate)
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(path)
    err = exc.value
    assert err.path == str(path)
    assert err.field.startswith("skills[0]") and f"field '{field}'" in err.field, err.field
    assert expected in err.expected, err.expected
    assert str(err).count("\n") == 0 and str(err).startswith(str(path))


@pytest.mark.parametrize("content, field, expected", [
    ('{"name": "login", "steps": []}', "field 'format'", "not a Steadyhand skill file"),
    ('[1, 2, 3]', "field 'format'", "got a list"),
    ('{"format": "other-tool", "skills": []}', "field 'format'", "got format 'other-tool'"),
    ('{"format": "steadyhand-skills", "schema_version": 7, "skills": []}', "field 'schema_version'",
     "newer than this Steadyhand reads (1); upgrade"),
    ('{"format": "steadyhand-skills", "schema_version": "1", "skills": []}', "field 'schema_version'",
     "whole number"),
    ('{"format": "steadyhand-skills", "schema_version": 1}', "field 'skills'", "required field is missing"),
    ('{"format": "steadyhand-skills", "schema_version": 1, "skills": [], "run": "x"}', "field 'run'",
     "unknown field"),
    ('{"format": "steadyhand-skills", "schema_version": 1, "skills": [3]}', "skills[0]", "expected a mapping"),
    ('{"format": "steadyhand-skills", ', "line 1", "not valid JSON"),
])
def test_a_foreign_malformed_or_newer_file_is_refused(tmp_path, content, field, expected):
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(path)
    assert exc.value.field.startswith(field) and expected in exc.value.expected, str(exc.value)


def test_yaml_aliases_are_refused_before_they_expand(tmp_path):
    lol = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join('*' + chr(97 + i) for _ in range(9))}]\n" for i in range(8))
    (tmp_path / "lol.yaml").write_text(lol, encoding="utf-8")
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(tmp_path / "lol.yaml")
    assert exc.value.field == "line 2, column 8" and "aliases" in exc.value.expected


def test_missing_binary_and_huge_files_are_refused(tmp_path, monkeypatch):
    with pytest.raises(SkillFileError, match="file not found"):
        read_skill_file(tmp_path / "none.json")
    (tmp_path / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SkillFileError, match="UTF-8"):
        read_skill_file(tmp_path / "bin.json")
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 4096)
    big = export_skills([popup_skill()], tmp_path / "big.json")
    big.write_text(big.read_text(encoding="utf-8") + " " * 4096, encoding="utf-8")
    with pytest.raises(SkillFileError, match="more than a skill file may have"):
        read_skill_file(big)
    with pytest.raises(SkillFileError, match="export the skills in parts"):
        export_skills([popup_skill(f"sk-{i}") for i in range(5)], tmp_path / "parts.json")
    assert not (tmp_path / "parts.json").exists()
    monkeypatch.setattr(files, "MAX_SKILLS", 2)
    with pytest.raises(SkillFileError, match="more than one file may hold"):
        export_skills([popup_skill(f"sk-{i}") for i in range(3)], tmp_path / "parts.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    with pytest.raises(SkillFileError):
        read_skill_file(tmp_path / "deep.json")


def test_a_foreign_key_with_a_line_break_is_named_on_one_line(tmp_path):
    path = _mutated(tmp_path, lambda s: s["trigger"].update({"\nx" + "y" * 100: None}))
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(path)
    assert "\n" not in str(exc.value) and exc.value.field.endswith('field \'trigger."\\nx' + "y" * 38 + '..."\'')


def test_the_same_id_twice_is_refused(tmp_path):
    path = _write(tmp_path / "twice.json", _file(popup_skill(), popup_skill()))
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(path)
    assert exc.value.field == "skills[1] 'sk-000000000001', field 'id'"


def test_a_secret_in_clear_is_refused_in_any_field_and_form(tmp_path):
    secret = SECRET
    for where in ("description", "value", "trigger", "urlencoded"):
        s = popup_skill()
        if where == "description":
            s = replace(s, description=f"type {secret} then cancel")
        elif where == "value":
            s = replace(s, actions=(SkillAction(Action("input", secret), ElementDescriptor(role="textbox",
                                                                                           label="Password")),))
        elif where == "trigger":
            s = replace(s, trigger=SkillTrigger(required=(ElementCondition(text=secret),)))
        else:
            secret = SECRET + "!"
            s = replace(s, trigger=replace(s.trigger, url_pattern=f"*?pw={quote(secret)}*"))
        path = _write(tmp_path / f"{where}.json", _file(s))
        with pytest.raises(SkillFileError, match="declared secret in clear") as exc:
            read_skill_file(path, secrets=[secret])
        assert secret not in str(exc.value)
        assert read_skill_file(path)  # the same file is fine for a project without that secret


def test_export_turns_secret_values_into_placeholders(tmp_path):
    s = popup_skill(actions=(SkillAction(Action("input", SECRET), ElementDescriptor(role="textbox",
                                                                                              label="Password")),),
                    description=f"retype the password {SECRET} after the popup")
    path = export_skills([s], tmp_path / "out.json", secrets={"password": SECRET})
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    data = json.loads(text)["skills"][0]
    assert data["actions"][0]["value"] == "{password}" and data["params"] == ["password"]
    with pytest.raises(SkillFileError, match=r"actions\[0\]\.value.*secret parameter \{password\}"):
        read_skill_file(path, secrets=[SECRET])  # a skill never types a secret: the file is not imported


def test_check_skill_applies_the_file_rules_to_a_stored_skill():
    assert check_skill(popup_skill()) == ""
    bad = replace(popup_skill(), actions=(SkillAction(Action("navigate", "https://example.org")),))
    assert "actions[0].kind" in check_skill(bad)
    hidden = replace(popup_skill(), actions=(SkillAction(Action("click"), ElementDescriptor(role="button",
                                                                                           xpath="/html/body")),))
    assert check_skill(hidden) == ""  # a stored skill's descriptor never carries its xpath into the file shape
    assert "navigate" not in ALLOWED_ACTIONS and "upload" not in ALLOWED_ACTIONS and "click" in ALLOWED_ACTIONS


def test_read_one_skill_takes_a_bare_skill_or_show_json(tmp_path):
    bare = _write(tmp_path / "one.json", skill_to_mapping(popup_skill()))
    assert read_one_skill(bare) == popup_skill()
    shown = _write(tmp_path / "shown.json", {"skill": skill_to_mapping(popup_skill()), "uses": []})
    assert read_one_skill(shown) == popup_skill()
    import yaml

    (tmp_path / "one.yaml").write_text(yaml.safe_dump(skill_to_mapping(popup_skill())), encoding="utf-8")
    assert read_one_skill(tmp_path / "one.yaml") == popup_skill()
    bad = skill_to_mapping(popup_skill())
    bad["actions"][0]["target"]["css_path"] = "div > button"
    (tmp_path / "bad.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    with pytest.raises(SkillFileError) as exc:
        read_one_skill(tmp_path / "bad.yaml")
    assert exc.value.field == "field 'actions[0].target.css_path'"
    two = _write(tmp_path / "two.json", _file(popup_skill(), popup_skill("sk-000000000002")))
    with pytest.raises(SkillFileError, match="exactly one skill"):
        read_one_skill(two)


# --- import through the real store ---------------------------------------------------------------------


def test_import_is_all_or_nothing(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        good, bad = popup_skill("sk-000000000001"), skill_to_mapping(popup_skill("sk-000000000002"))
        bad["actions"][0]["target"]["xpath"] = "//button[2]"
        data = _file(good)
        data["skills"].append(bad)
        path = _write(tmp_path / "mixed.json", data)
        with pytest.raises(SkillFileError, match=r"skills\[1\] 'sk-000000000002'"):
            import_skills(table, path, product="demo")
        assert table.list() == []


def test_import_never_overwrites_an_approved_skill_without_asking(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        table.put(popup_skill(state="approved", description="ours"))
        theirs = popup_skill(description="theirs", state="approved", irreversible_ok=True)
        new = popup_skill("sk-000000000009", product="elsewhere")
        path = _write(tmp_path / "theirs.json", _file(theirs, new))
        report = import_skills(table, path, product="demo")
        assert report.added == ("sk-000000000009",) and [sid for sid, _ in report.skipped] == ["sk-000000000001"]
        assert table.get("sk-000000000001").description == "ours"
        arrived = table.get("sk-000000000009")
        assert arrived.state == "proposed" and arrived.scope.product == "demo"
        assert arrived.provenance.source == "import" and report.moved_from == ("elsewhere",)
        assert table.created_since("demo", T0 - timedelta(days=3650)) == 1  # the approved one; imports do not count

        report = import_skills(table, path, product="demo", replace_approved=True)
        assert report.replaced == ("sk-000000000001", "sk-000000000009") and not report.skipped
        replaced = table.get("sk-000000000001")
        assert replaced.description == "theirs" and replaced.state == "proposed"  # waits for our review

        import_skills(table, path, product="demo", replace_approved=True, keep_state=True)
        kept = table.get("sk-000000000001")
        assert kept.state == "proposed" and not kept.irreversible_ok  # approved there is proposed here

        table.set_state("sk-000000000009", "rejected", reason="pressed Save")
        report = import_skills(table, path, product="demo")
        assert dict(report.skipped)["sk-000000000009"].startswith("a rejected skill has this id (pressed Save)")
        assert table.get("sk-000000000009").state == "rejected"  # a shared file does not bring it back


# --- fuzzing: one clear SkillFileError, never a traceback, never a partial import -----------------------

_json = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True)
                     | st.text(max_size=12), lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=8), c,
                                                                                              max_size=3), max_leaves=8)


def _paths(d, prefix=()):
    yield prefix
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _paths(v, prefix + (i,))


_BASE = _file(popup_skill(), popup_skill("sk-000000000002"))
_ALL_PATHS = [p for p in _paths(_BASE) if p]


@pytest.fixture(scope="module")
def fuzz_table(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    store, table = open_table(root)
    with store:
        yield root, table


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.sampled_from(_ALL_PATHS), st.one_of(st.just("<delete>"), _json)), min_size=1,
                      max_size=3))
def test_fuzzed_skill_files_fail_cleanly_or_import_whole(fuzz_table, edits):
    root, table = fuzz_table
    data = json.loads(json.dumps(_BASE))
    for path, value in edits:
        node = data
        try:
            for k in path[:-1]:
                node = node[k]
            if value == "<delete>":
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    f = root / "fuzz.json"
    f.write_text(json.dumps(data), encoding="utf-8")
    for s in table.list():
        table.delete(s.id)
    try:
        report = import_skills(table, f, product="demo")
    except SkillFileError as exc:
        assert str(exc).startswith(str(f)) and "\n" not in str(exc) and exc.expected
        assert table.list() == []
    else:
        assert len(table.list()) == len(report.added) == len(data["skills"])


# --- what a file may not bring: kinds the runtime does not run, secrets typed, trust in its own record ------

_REVIEW = Path(__file__).resolve().parents[2] / "fixtures" / "skills_review"


@pytest.mark.parametrize("kind", ["back", "navigate", "upload", "assert", "screenshot"])
def test_a_kind_the_skill_runtime_does_not_run_is_refused(tmp_path, kind):
    s = replace(popup_skill(), actions=(SkillAction(Action(kind)),))
    path = _write(tmp_path / "k.json", _file(s))
    with pytest.raises(SkillFileError, match=rf"actions\[0\]\.kind.*{kind!r} is not an action a skill may run"):
        read_skill_file(path)
    assert "back" not in ALLOWED_ACTIONS and "assert" not in ALLOWED_ACTIONS


def test_the_reviewers_select_then_back_file_is_refused():
    with pytest.raises(SkillFileError, match=r"sel\.json at skills\[0\] 'sk-5e5e5e5e5e5e', field 'actions\[1\]\.kind'"):
        read_skill_file(_REVIEW / "sel.json")


def test_a_skill_typing_a_secret_parameter_is_refused_and_says_why():
    with pytest.raises(SkillFileError) as exc:
        read_skill_file(_REVIEW / "leak.json")  # {password}: reads like a secret even where none is declared
    assert exc.value.field == "skills[0] 'sk-1e1e1e1e1e1e', field 'actions[1].value'"
    assert "types the secret parameter {password}" in exc.value.expected and "any field" in exc.value.expected
    s = replace(popup_skill(), params=("shipping_code",),
                actions=(SkillAction(Action("input", "{shipping_code}"), ElementDescriptor(role="textbox",
                                                                                          label="Code")),))
    assert check_skill(s) == ""  # a plain parameter is typed
    assert "secret parameter {shipping_code}" in check_skill(s, secret_names=["shipping_code"])  # declared secret


def test_an_import_trusts_no_validation_quality_or_counter_of_the_file(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        data = json.loads((_REVIEW / "own.json").read_text(encoding="utf-8"))
        data["skills"][0].update(successes=40, failures=0, last_used_at="2026-11-30T10:00:00+00:00")
        path = _write(tmp_path / "own.json", data)
        report = import_skills(table, path, product="demo", keep_state=True)
        s = table.get("sk-aaaaaaaaaaa1")
        assert report.added == ("sk-aaaaaaaaaaa1",) and s.state == "proposed"  # approved there, proposed here
        assert (s.validation.cases, s.validation.passed, s.validation.reproduced) == (0, 0, False)
        assert s.validation.reasons == (files.NOT_VALIDATED_HERE,)
        assert (s.successes, s.failures, s.last_used_at, s.quality) == (0, 0, None, files.IMPORTED_QUALITY)
        from core.skills.library import approval_problem, approve
        from core.store.skills import SkillConflictError
        assert "not validated here" in approval_problem(s)
        with pytest.raises(SkillConflictError, match="not validated here"):
            approve(table, s.id)
        done = approve(table, s.id, force=True)
        assert done.state == "approved" and "not validated here" in done.review_reason


def test_keep_state_keeps_a_rejection_but_never_an_approval(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        ok, no = popup_skill("sk-000000000001", state="approved"), popup_skill("sk-000000000002", state="rejected",
                                                                              review_reason="presses Save")
        import_skills(table, _write(tmp_path / "t.json", _file(ok, no)), product="demo", keep_state=True)
        assert table.get("sk-000000000001").state == "proposed"
        assert (table.get("sk-000000000002").state, table.get("sk-000000000002").review_reason) == (
            "rejected", "kept from t.json: presses Save")


def test_replacing_an_approved_skill_proposes_it_again_and_says_what_changed(tmp_path):
    store, table = open_table(tmp_path)
    with store:
        table.put(replace(popup_skill("sk-cccccccccc01", state="approved"),
                          actions=(SkillAction(Action("click"), ElementDescriptor(role="button", name="OK")),)))
        report = import_skills(table, _REVIEW / "bad2-over.json", product="demo", replace_approved=True,
                               keep_state=True)
        s = table.get("sk-cccccccccc01")
        assert s.state == "proposed" and not s.irreversible_ok and s.actions[0].target.name == "Delete"
        line = next(x for x in report.lines() if x.startswith("replaced sk-cccccccccc01"))
        assert "approved here, now proposed, and needs a new approval" in line
        assert "click on button 'OK' -> click on button 'Delete'" in line
