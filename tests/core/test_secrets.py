"""Secret resolution, redaction of text, masking of screenshot regions."""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[2]
if str(_ROOT) not in sys.path:  # the project is not installed in the venv
    sys.path.insert(0, str(_ROOT))

import keyring  # noqa: E402
import keyring.backend  # noqa: E402
from PIL import Image  # noqa: E402

from core.domain import BBox  # noqa: E402
from core.secrets import (  # noqa: E402
    MASK, MissingSecretError, Redactor, css_boxes_to_device, env_var_name, mask_boxes_png,
    resolve_secret,
)


class MemoryKeyring(keyring.backend.KeyringBackend):
    """An in-memory keyring backend."""

    priority = 1  # type: ignore[assignment]

    def __init__(self, data: dict[tuple[str, str], str] | None = None) -> None:
        super().__init__()
        self.data = dict(data or {})
        self.asked: list[tuple[str, str]] = []

    def get_password(self, service: str, username: str) -> str | None:
        self.asked.append((service, username))
        return self.data.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.data[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.data.pop((service, username), None)


class BrokenKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("the keyring is locked")


@pytest.fixture
def use_keyring():
    """``use_keyring(backend)`` installs a keyring backend for the test, then restores."""
    before = keyring.get_keyring()
    yield keyring.set_keyring
    keyring.set_keyring(before)


@pytest.fixture(autouse=True)
def _no_secret_env(monkeypatch):
    for name in ("PASSWORD", "API_KEY", "DB_PASS"):
        monkeypatch.delenv(f"STEADYHAND_SECRET_{name}", raising=False)


# -- resolve_secret ---------------------------------------------------------------------


def test_env_var_name():
    assert env_var_name("password") == "STEADYHAND_SECRET_PASSWORD"
    assert env_var_name("api-key") == "STEADYHAND_SECRET_API_KEY"
    assert env_var_name("db.pass") == "STEADYHAND_SECRET_DB_PASS"


def test_environment_comes_first(monkeypatch, use_keyring):
    use_keyring(MemoryKeyring({("steadyhand:demo", "password"): "from-keyring"}))
    monkeypatch.setenv("STEADYHAND_SECRET_PASSWORD", "from-env")
    assert resolve_secret("password", project="demo", default="dflt") == "from-env"
    monkeypatch.setenv("STEADYHAND_SECRET_API_KEY", "k-123")
    assert resolve_secret("api-key", project="demo") == "k-123"


def test_keyring_comes_second(monkeypatch, use_keyring):
    backend = MemoryKeyring({("steadyhand:demo", "password"): "from-keyring"})
    use_keyring(backend)
    monkeypatch.setenv("STEADYHAND_SECRET_PASSWORD", "")  # empty counts as unset
    assert resolve_secret("password", project="demo", default="dflt") == "from-keyring"
    assert backend.asked == [("steadyhand:demo", "password")]
    # Another project's keyring service does not have it.
    assert resolve_secret("password", project="other", default="dflt") == "dflt"


def test_default_comes_last(use_keyring):
    use_keyring(MemoryKeyring())
    assert resolve_secret("password", project="demo", default="dflt") == "dflt"
    assert resolve_secret("password", project="demo", default="") == ""


@pytest.mark.parametrize("backend", [BrokenKeyring, None])
def test_keyring_errors_count_as_not_found(use_keyring, backend):
    if backend is None:
        from keyring.backends import fail

        use_keyring(fail.Keyring())  # "no backend": raises NoKeyringError
    else:
        use_keyring(backend())
    assert resolve_secret("password", project="demo", default="dflt") == "dflt"
    with pytest.raises(MissingSecretError):
        resolve_secret("password", project="demo")


def test_missing_secret_error_names_the_secret_and_the_variable(use_keyring):
    use_keyring(MemoryKeyring())
    with pytest.raises(MissingSecretError) as info:
        resolve_secret("db.pass", project="shop")
    err = info.value
    assert isinstance(err, LookupError)
    assert (err.name, err.project, err.env_var) == ("db.pass", "shop", "STEADYHAND_SECRET_DB_PASS")
    message = str(err)
    assert "'db.pass'" in message and "STEADYHAND_SECRET_DB_PASS" in message
    assert "steadyhand:shop" in message


# -- Redactor ---------------------------------------------------------------------------


def test_redactor_masks_every_occurrence():
    r = Redactor(["hunter2", "s3cr3t-token"])
    assert r.text("user typed hunter2, then hunter2") == f"user typed {MASK}, then {MASK}"
    assert r.text("Bearer s3cr3t-token!") == f"Bearer {MASK}!"
    assert r.text("nothing here") == "nothing here"
    assert r.text("") == "" and r.text(None) is None
    assert r.contains_secret("xhunter2x") and not r.contains_secret("hunter")


def test_redactor_short_values_only_as_whole_words():
    r = Redactor(["ab", "7", ""])
    assert r.text("a cab about 17 apples") == "a cab about 17 apples"
    assert r.text('the password "ab" and 7 apples') == f'the password "{MASK}" and {MASK} apples'
    assert r.text("ab") == MASK and r.text("7") == MASK
    assert len(r) == 2  # the empty value is ignored


def test_redactor_overlapping_and_encoded_secrets():
    r = Redactor(["abcdef", "defghi", "p@ss word"])
    assert r.text("xxabcdefghiyy") == f"xx{MASK}yy"  # one mask, no fragment left
    assert r.text("/login?pw=p%40ss%20word&x=1") == f"/login?pw={MASK}&x=1"
    assert r.text("pw=p%40ss+word") == f"pw={MASK}"


def test_redactor_mapping_is_recursive():
    r = Redactor(["hunter2"])
    data = {"user": "alice", "hunter2": ["pw hunter2", ("hunter2", 3)],
            "nested": {"deep": [{"v": "hunter2"}]}, "n": 5, "none": None, "ok": True}
    assert r.mapping(data) == {
        "user": "alice", MASK: [f"pw {MASK}", (MASK, 3)],
        "nested": {"deep": [{"v": MASK}]}, "n": 5, "none": None, "ok": True}
    assert data["nested"]["deep"][0]["v"] == "hunter2"  # input untouched


def test_redactor_is_immutable_and_never_shows_values():
    r = Redactor(["hunter2"])
    assert "hunter2" not in repr(r) and "hunter2" not in str(r)
    with pytest.raises(AttributeError):
        r._values = frozenset()  # type: ignore[misc]
    wider = r.extended(["swordfish"])
    assert wider.text("hunter2 swordfish") == f"{MASK} {MASK}"
    assert r.text("swordfish") == "swordfish"
    assert not Redactor([]) and Redactor([]).text("x") == "x"


# -- mask_boxes_png -----------------------------------------------------------------------


def _pattern_png(width: int = 60, height: int = 40, mode: str = "RGB") -> bytes:
    img = Image.new("RGB", (width, height))
    img.putdata([(x * 4 % 256, y * 6 % 256, 200) for y in range(height) for x in range(width)])
    if mode != "RGB":
        img = img.convert(mode)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _pixels(png: bytes) -> tuple[Image.Image, dict[tuple[int, int], tuple[int, ...]]]:
    img = Image.open(io.BytesIO(png))
    img.load()
    w, h = img.size
    return img, {(x, y): img.getpixel((x, y)) for y in range(h) for x in range(w)}


def test_mask_paints_inside_the_box_and_nothing_outside():
    png = _pattern_png()
    masked = mask_boxes_png(png, [(10.5, 5.2, 20.0, 10.0)])  # device px; widened to whole px
    assert masked != png
    _, before = _pixels(png)
    img, after = _pixels(masked)
    assert img.size == (60, 40)
    inside = {(x, y) for x in range(10, 31) for y in range(5, 16)}  # floor(10.5)..ceil(30.5)
    for xy, px in after.items():
        if xy in inside:
            assert px[:3] == (0, 0, 0), xy
        else:
            assert px == before[xy], xy


def test_mask_clips_to_the_image_and_keeps_alpha():
    png = _pattern_png(mode="RGBA")
    masked = mask_boxes_png(png, [(50, 30, 100, 100), (-5, -5, 8, 8)], color=(255, 0, 0))
    img, after = _pixels(masked)
    assert img.mode == "RGBA" and img.size == (60, 40)
    assert after[(59, 39)] == (255, 0, 0, 255) and after[(50, 30)] == (255, 0, 0, 255)
    assert after[(0, 0)] == (255, 0, 0, 255) and after[(2, 2)] == (255, 0, 0, 255)
    _, before = _pixels(png)
    assert after[(3, 3)] == before[(3, 3)] and after[(49, 29)] == before[(49, 29)]


def test_mask_without_boxes_returns_the_input():
    png = _pattern_png()
    assert mask_boxes_png(png, []) is png
    assert mask_boxes_png(png, [(5, 5, 0, 10), (5, 5, 10, -1)]) is png


def test_css_boxes_to_device_scales_by_the_pixel_ratio():
    boxes = css_boxes_to_device([BBox(10, 20, 30, 4.5), (1, 2, 3, 4)], 2.0)
    assert boxes == [(20.0, 40.0, 60.0, 9.0), (2.0, 4.0, 6.0, 8.0)]
    png = _pattern_png()
    masked = mask_boxes_png(png, css_boxes_to_device([BBox(5, 5, 5, 5)], 2.0))
    _, after = _pixels(masked)
    assert after[(10, 10)][:3] == (0, 0, 0) and after[(19, 19)][:3] == (0, 0, 0)
    assert after[(20, 20)][:3] != (0, 0, 0) and after[(9, 9)][:3] != (0, 0, 0)


def test_password_fields_are_recognised_by_name_in_many_languages_and_by_short_locators() -> None:
    from core.secrets import looks_like_password

    for text in ("Password", "Mot de passe", "Contraseña", "Passwort", "密码", "パスワード", "Пароль", "كلمة المرور",
                 "#pw", "pwdInput", "input[name=passwd]", "One-time code (OTP)", "PIN"):
        assert looks_like_password(text), text
    for text in ("User name", "Search", "Spinner", "Passenger name", "Company", "E-mail", "", "#username"):
        assert not looks_like_password(text), text
