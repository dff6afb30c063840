"""The secrets audit finds a declared secret's value wherever it leaked, in the forms it leaks in, and says where."""
from __future__ import annotations

import io
import json
from pathlib import Path

import yaml
from PIL import Image
from PIL.PngImagePlugin import PngInfo
from sqlalchemy import create_engine, text

from core.engine.audit import audit_paths, audit_project
from core.project import load_project
from core.secrets import MASKS_CHUNK, mask_boxes_png

SECRET = "s3cr3t+pass@word"


def png(size=(40, 20), color=(255, 255, 255), chunks: dict[str, str] | None = None) -> bytes:
    img = Image.new("RGB", size, color)
    info = PngInfo()
    for k, v in (chunks or {}).items():
        info.add_text(k, v)
    buf = io.BytesIO()
    img.save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()


def test_a_clean_folder_is_clean_and_counted(tmp_path: Path) -> None:
    (tmp_path / "flow.yaml").write_text("value: '{password}'\n")
    (tmp_path / "shot.png").write_bytes(mask_boxes_png(png(), [(2, 2, 10, 5)]))
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    assert report.clean and report.files == 2 and report.screenshots == 1 and report.masked_regions == 1
    assert report.lines()[-1].endswith("for 1 secret: nothing found.")


def test_every_leaked_form_is_found_and_named(tmp_path: Path) -> None:
    from urllib.parse import quote, quote_plus

    (tmp_path / "log.txt").write_text(f"typed {SECRET}\n")
    (tmp_path / "req.har").write_text(f"POST /login?p={quote(SECRET, safe='')}")
    (tmp_path / "form.txt").write_text(f"p={quote_plus(SECRET)}")
    (tmp_path / "doc.json").write_text(json.dumps({"v": "x\"" + SECRET}))
    (tmp_path / "ok.txt").write_text("nothing here")
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    got = {f.where: f.form for f in report.findings}
    assert got == {"log.txt": "clear", "req.har": "url-encoded", "form.txt": "url-encoded"} | {"doc.json": "clear"}
    assert all(f.secret == "password" and SECRET not in str(f) for f in report.findings)


def test_a_store_cell_is_named_by_table_column_and_row(tmp_path: Path) -> None:
    db = tmp_path / "store.sqlite"
    engine = create_engine(f"sqlite:///{db}")
    with engine.begin() as c:
        c.execute(text("create table steps (id integer primary key, error text)"))
        c.execute(text("insert into steps (error) values ('fine'), (:v)"), {"v": f"typed {SECRET} into Password"})
    engine.dispose()
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    assert [str(f) for f in report.findings] == ["store.sqlite: steps.error, row 2: secret 'password' (clear)"]


def test_a_masked_region_that_is_not_solid_and_a_text_chunk_are_found(tmp_path: Path) -> None:
    img = Image.new("RGB", (40, 20), (0, 0, 0))
    img.putpixel((5, 3), (250, 250, 250))  # a glyph shows through the mask
    info = PngInfo()
    info.add_text(MASKS_CHUNK, json.dumps([[2, 2, 12, 7]]))
    info.add_text("Comment", f"typed {SECRET}")
    img.save(tmp_path / "shot.png", pnginfo=info)
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    forms = sorted(f.form for f in report.findings)
    assert forms == ["clear", "unmasked region"]  # the chunk (its bytes are plain in the file: one finding)
    assert any("masked region 2,2-12,7" in f.where for f in report.findings)


def test_short_values_and_links_are_reported_not_searched(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("ab ab ab")
    (tmp_path / "out").symlink_to("/etc")
    report = audit_paths([tmp_path], {"pin": "ab"}, root=tmp_path)
    assert report.clean and report.not_audited == ["pin"] and report.skipped_links == ["out"]
    assert "pin: shorter than 3 characters, not audited" in report.lines()


def test_a_project_is_audited_for_its_declared_secrets(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({
        "schema_version": 1, "name": "Audited", "base_url": "http://127.0.0.1:9",
        "secrets": {"password": {"default": "public-demo"}, "token": {}, "pin": {}}}))
    monkeypatch.setenv("STEADYHAND_SECRET_TOKEN", SECRET)
    monkeypatch.delenv("STEADYHAND_SECRET_PIN", raising=False)
    monkeypatch.delenv("STEADYHAND_SECRET_PASSWORD", raising=False)
    data = tmp_path / ".steadyhand"
    data.mkdir()
    (data / "notes.txt").write_text(f"token={SECRET} and public-demo")
    report = audit_project(load_project(tmp_path))
    # the default declared in the project file is not a leak; the same value anywhere else is
    assert sorted((f.where, f.secret) for f in report.findings) == [
        (".steadyhand/notes.txt", "password"), (".steadyhand/notes.txt", "token")]
    assert report.unresolved == ["pin"]


def test_digests_and_other_encodings_of_a_secret_are_found(tmp_path: Path) -> None:
    """Issue 21 item 5: an unsalted digest of a password is as good as the password to a word list."""
    import base64
    import hashlib
    from urllib.parse import quote

    raw = SECRET.encode()
    leaks = {"sha256.txt": (hashlib.sha256(raw).hexdigest(), "sha256 digest"),
             "sha1.txt": (base64.b64encode(hashlib.sha1(raw).digest()).decode(), "sha1 digest"),
             "md5.txt": (hashlib.md5(raw).hexdigest().upper(), "md5 digest"),
             "sha512.txt": (base64.urlsafe_b64encode(hashlib.sha512(raw).digest()).decode().rstrip("="),
                            "sha512 digest"),
             "twice.txt": (quote(quote(SECRET, safe=""), safe=""), "url-encoded twice"),
             "hex.txt": (raw.hex(), "hex"),
             "basic.txt": ("Basic " + base64.b64encode(b"alice:" + raw).decode(), "base64"),
             "jwt.txt": (base64.urlsafe_b64encode(b'{"p":"' + raw + b'"}').decode().rstrip("="), "base64")}
    for name, (text_, _) in leaks.items():
        (tmp_path / name).write_text(f"x {text_} y")
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    assert {f.where: f.form for f in report.findings} == {name: form for name, (_, form) in leaks.items()}
    assert all(SECRET not in line for line in report.lines())


def test_a_password_typed_in_clear_is_looked_for_by_type_and_by_name_in_any_language(tmp_path: Path) -> None:
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump({"schema_version": 1, "name": "Clear",
                                                              "base_url": "http://127.0.0.1:9"}))
    steps = [
        {"id": "s1", "action": "input", "value": "by-type-pass", "selector": "#a",
         "target": {"role": "textbox", "type": "password"}},
        {"id": "s2", "action": "input", "value": "mot-de-passe-en-clair", "selector": "#b",
         "target": {"role": "textbox", "name": "Mot de passe"}},
        {"id": "s3", "action": "input", "value": "mima-zai-zheli", "selector": "#c",
         "target": {"role": "textbox", "label": "密码"}},
        {"id": "s4", "action": "input", "value": "via-css-pw", "selector": "#pw"},
        {"id": "s5", "action": "input", "value": "ada lovelace", "selector": "#user",
         "target": {"role": "textbox", "name": "User name"}},
        {"id": "s6", "action": "input", "value": "{password}", "selector": "#d",
         "target": {"role": "textbox", "type": "password"}},
    ]
    (tmp_path / "flows" / "f.yaml").write_text(yaml.safe_dump({"name": "f", "start_url": "/", "steps": steps,
                                                              "secrets": ["password"]}))
    (tmp_path / "export.txt").write_text("typed mot-de-passe-en-clair")
    report = audit_project(load_project(tmp_path))
    found = sorted((f.where, f.secret.split(" (flow")[0]) for f in report.findings)
    assert ("flows/f.yaml", "clear value typed into 'Mot de passe'") in found
    assert ("export.txt", "clear value typed into 'Mot de passe'") in found
    assert {s for _, s in found} == {"clear value typed into '#a'", "clear value typed into 'Mot de passe'",
                                     "clear value typed into '密码'", "clear value typed into '#pw'"}
    assert not report.clean


def test_a_secret_inside_a_compressed_zip_member_is_found_and_named(tmp_path: Path) -> None:
    """A Playwright trace is a deflated zip: its bytes never hold the value, its members do."""
    import zipfile

    trace = tmp_path / "traces" / "run.zip"
    trace.parent.mkdir()
    with zipfile.ZipFile(trace, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("trace.trace", json.dumps({"params": {"value": SECRET}}) + "\n" + "x" * 4000)
        z.writestr("resources/page.html", "<p>nothing here</p>")
    assert SECRET.encode() not in trace.read_bytes()
    report = audit_paths([tmp_path], {"password": SECRET}, root=tmp_path)
    assert [(f.where, f.secret) for f in report.findings] == [("traces/run.zip: trace.trace", "password")]
    assert not report.clean
