"""Secrets: resolve them, and keep them out of text and screenshots (architecture rule 7).

Three small tools:

* :func:`resolve_secret` looks a named secret up in the environment
  (``STEADYHAND_SECRET_<NAME>``), then in the system keyring (service
  ``steadyhand:<project>``, user ``<name>``), then in a default, and raises
  :class:`MissingSecretError` otherwise.
* :class:`Redactor` masks every occurrence of known secret values in text
  and in nested JSON-like structures.  The store passes every text field it
  writes through one.
* :func:`mask_boxes_png` paints solid rectangles over regions of a PNG
  screenshot (password fields).  Boxes are in **device pixels** (screenshot
  pixels = CSS px * device pixel ratio); :func:`css_boxes_to_device`
  converts element boxes from CSS px.
"""
from __future__ import annotations

import io
import json
import math
import os
import re
from typing import Any, Iterable, Sequence
from urllib.parse import quote, quote_plus

__all__ = [
    "MASK", "MASKS_CHUNK", "ENV_PREFIX", "MIN_SUBSTRING_LENGTH", "MissingSecretError", "env_var_name",
    "keyring_service", "resolve_secret", "Redactor", "mask_boxes_png", "css_boxes_to_device",
    "PASSWORD_NAMES", "SECRET_TOKENS", "looks_like_password",
]

#: "Password" in the languages a page names its fields in (lower case, NFKC), found anywhere in a field's
#: accessible name, label, placeholder or locator: a field named so is a secret field whatever else it says.
#: Sources: the word each language's login forms use (browser and OS translations of "Password").
PASSWORD_NAMES = (
    "password", "passwort", "kennwort", "mot de passe", "contraseña", "contrasena", "senha", "palavra-passe",
    "wachtwoord", "hasło", "haslo", "heslo", "jelszó", "jelszo", "parola", "parolă", "lösenord", "losenord",
    "adgangskode", "passord", "salasana", "salasõna", "slaptažodis", "şifre", "lozinka", "geslo", "пароль",
    "лозинка", "гасло", "κωδικός", "סיסמה", "كلمة المرور", "كلمة السر", "رمز عبور", "पासवर्ड", "密码", "密碼",
    "口令", "パスワード", "비밀번호", "암호", "รหัสผ่าน", "mật khẩu", "kata sandi", "kata laluan",
)
#: Whole words (lower case) that mark a secret field in a locator or a name (``#pw``, ``pwdInput``, ``otp``).
SECRET_TOKENS = frozenset({
    "password", "passwd", "pwd", "pw", "pass", "passcode", "passphrase", "pin", "pincode", "secret", "token",
    "otp", "mdp",
})


def looks_like_password(*texts: str) -> bool:
    """True when any of ``texts`` (a field's accessible name, label, placeholder, id, CSS selector...) names a
    password or another secret: a :data:`PASSWORD_NAMES` entry anywhere in it, or a :data:`SECRET_TOKENS` word
    (camelCase and punctuation split words: ``pwdInput`` -> ``pwd``, ``#pw`` -> ``pw``)."""
    import unicodedata

    for text in texts:
        if not text:
            continue
        low = unicodedata.normalize("NFKC", text).lower()
        if any(name in low for name in PASSWORD_NAMES):
            return True
        split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", unicodedata.normalize("NFKC", text)).lower()
        if any(w in SECRET_TOKENS for w in re.split(r"[\W_]+", split) if w):
            return True
    return False

#: What a masked secret looks like, in text, in the store and in logs.
MASK = "••••••"
#: PNG text chunk listing the regions :func:`mask_boxes_png` painted, device px ``[[x0, y0, x1, y1], ...]``.
MASKS_CHUNK = "steadyhand:masks"
#: Prefix of the environment variables that carry secrets.
ENV_PREFIX = "STEADYHAND_SECRET_"
#: Secret values shorter than this (chars) are masked only when a whole
#: string equals them; masking every "a" inside other text would destroy
#: the text and reveal nothing useful about the secret anyway.
MIN_SUBSTRING_LENGTH = 3

_ENV_UNSAFE = re.compile(r"[^A-Z0-9_]")


class MissingSecretError(LookupError):
    """A secret could be found neither in the environment, the keyring nor a default.

    Attributes
    ----------
    name : str
        The secret's name as declared in the project or flow.
    project : str
        The project it was looked up for.
    env_var : str
        The environment variable that would have provided it.
    """

    def __init__(self, name: str, project: str, env_var: str) -> None:
        self.name = name
        self.project = project
        self.env_var = env_var
        super().__init__(
            f"Secret {name!r} of project {project!r} is not set: set the environment variable "
            f"{env_var}, or store it in the system keyring (service {keyring_service(project)!r}, "
            f"user {name!r})."
        )

    def __str__(self) -> str:  # LookupError would otherwise print the args tuple
        return str(self.args[0])


def env_var_name(name: str) -> str:
    """Environment variable that carries the secret ``name``.

    ``STEADYHAND_SECRET_`` + the name in upper case, every character other
    than ``A-Z``, ``0-9`` and ``_`` replaced by ``_`` (``"api-key"`` ->
    ``STEADYHAND_SECRET_API_KEY``), so that every name maps to a variable a
    shell can set.
    """
    return ENV_PREFIX + _ENV_UNSAFE.sub("_", name.upper())


def keyring_service(project: str) -> str:
    """Keyring service name of a project's secrets: ``"steadyhand:<project>"``."""
    return f"steadyhand:{project}"


def _from_keyring(project: str, name: str) -> str | None:
    """The keyring's value, or None when absent or when the keyring is unusable.

    Any failure - the ``keyring`` package missing, no backend (the "fail"
    backend raises ``NoKeyringError``), a locked or broken backend - counts
    as "not found": a headless CI runner has no keyring and must fall back
    to the environment or the default.
    """
    try:
        import keyring  # local import: optional at run time, slow to import

        value = keyring.get_password(keyring_service(project), name)
    except Exception:  # noqa: BLE001 - any backend error means "not found"
        return None
    return value if isinstance(value, str) and value != "" else None


def resolve_secret(name: str, *, project: str, default: str | None = None) -> str:
    """Find the value of a named secret.

    Looked up in order: the environment variable :func:`env_var_name`
    (an empty value counts as unset), the system keyring (service
    ``steadyhand:<project>``, user ``name``; backend errors count as not
    found), then ``default``.

    Parameters
    ----------
    name : str
        Secret name as declared in ``steadyhand.yaml`` or the flow.
    project : str
        Project name (selects the keyring service).
    default : str | None
        Value used when neither source has one.

    Returns
    -------
    str
        The secret value.

    Raises
    ------
    MissingSecretError
        When no source has a value; the message names the secret and the
        environment variable to set.
    """
    env_var = env_var_name(name)
    value = os.environ.get(env_var)
    if value:
        return value
    value = _from_keyring(project, name)
    if value is not None:
        return value
    if default is not None:
        return default
    raise MissingSecretError(name, project, env_var)


class Redactor:
    """Masks known secret values in text and in nested structures.

    Immutable after construction (use :meth:`extended` to add values).
    Values of at least :data:`MIN_SUBSTRING_LENGTH` chars are masked
    wherever they occur, together with their URL-encoded forms (a password
    in a query string); shorter non-empty values are masked only as whole
    words (delimited by non-alphanumerics), so "UT" is masked in
    'password "UT"' but not in "UTC".  Overlapping occurrences of several secrets
    are merged into one :data:`MASK`.  ``repr`` never shows the values.

    Parameters
    ----------
    secrets : Iterable[str]
        Secret values (not names).  Empty strings and non-strings are ignored.
    """

    __slots__ = ("_long", "_short", "_values")

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        values = frozenset(s for s in secrets if isinstance(s, str) and s)
        needles: set[str] = set()
        for v in values:
            if len(v) >= MIN_SUBSTRING_LENGTH:
                needles.update((v, quote(v, safe=""), quote_plus(v)))
        object.__setattr__(self, "_values", values)
        # Longest first: the masked span of a longer secret covers a shorter one.
        object.__setattr__(self, "_long", tuple(sorted(needles, key=lambda n: (-len(n), n))))
        object.__setattr__(self, "_short", frozenset(v for v in values if len(v) < MIN_SUBSTRING_LENGTH))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Redactor is immutable; use extended()")

    def __repr__(self) -> str:
        return f"Redactor(<{len(self._values)} secrets>)"

    def __len__(self) -> int:
        return len(self._values)

    def __bool__(self) -> bool:
        return bool(self._values)

    def extended(self, secrets: Iterable[str]) -> "Redactor":
        """A new redactor that masks these values as well as the current ones."""
        return Redactor(self._values | frozenset(secrets))

    def text(self, s: str) -> str:
        """``s`` with every occurrence of a secret replaced by :data:`MASK`.

        Non-string input (``None``) is returned unchanged.
        """
        if not isinstance(s, str) or not s or not self._values:
            return s
        if s in self._short or s in self._values:
            return MASK
        spans: list[tuple[int, int]] = []
        for needle in self._long:
            start = s.find(needle)
            while start != -1:
                spans.append((start, start + len(needle)))
                start = s.find(needle, start + 1)  # overlapping occurrences too
        for short in self._short:
            # short values are masked as whole words only ("UT" in 'password "UT"', not in "UTC")
            for m in re.finditer(r"(?<![0-9A-Za-z])" + re.escape(short) + r"(?![0-9A-Za-z])", s):
                spans.append((m.start(), m.end()))
        if not spans:
            return s
        spans.sort()
        out: list[str] = []
        pos = 0
        cur_start, cur_end = spans[0]
        for a, b in spans[1:]:
            if a <= cur_end:
                cur_end = max(cur_end, b)
                continue
            out += [s[pos:cur_start], MASK]
            pos, (cur_start, cur_end) = cur_end, (a, b)
        out += [s[pos:cur_start], MASK, s[cur_end:]]
        return "".join(out)

    def mapping(self, d: Any) -> Any:
        """Redact a JSON-like structure recursively.

        Dict keys and values, list and tuple items are redacted; strings go
        through :meth:`text`; other scalars are returned as they are.
        Containers are copied (dicts stay dicts, lists lists, tuples tuples).
        """
        if isinstance(d, str):
            return self.text(d)
        if isinstance(d, dict) or (hasattr(d, "items") and hasattr(d, "keys")):
            return {self.mapping(k): self.mapping(v) for k, v in d.items()}
        if isinstance(d, list):
            return [self.mapping(v) for v in d]
        if isinstance(d, tuple):
            return tuple(self.mapping(v) for v in d)
        if isinstance(d, (set, frozenset)):
            return [self.mapping(v) for v in sorted(d, key=repr)]
        return d

    def contains_secret(self, s: str) -> bool:
        """True when :meth:`text` would change ``s``."""
        return isinstance(s, str) and self.text(s) != s


Box = tuple[float, float, float, float]


def css_boxes_to_device(boxes_css_px: Iterable[Any], device_pixel_ratio: float) -> list[Box]:
    """Convert boxes from CSS px (viewport) to device px (screenshot).

    Parameters
    ----------
    boxes_css_px : Iterable[BBox | tuple[x, y, w, h]]
        Boxes in CSS px relative to the viewport's top-left corner
        (``core.domain.BBox`` or 4-tuples).
    device_pixel_ratio : float
        Device pixels per CSS pixel of the screenshot.

    Returns
    -------
    list[tuple[float, float, float, float]]
        ``(x, y, w, h)`` in device px.
    """
    out: list[Box] = []
    for b in boxes_css_px:
        x, y, w, h = (b.x, b.y, b.width, b.height) if hasattr(b, "width") else b
        r = float(device_pixel_ratio)
        out.append((x * r, y * r, w * r, h * r))
    return out


def mask_boxes_png(
    png: bytes,
    boxes_device_px: Sequence[Box],
    *,
    color: tuple[int, int, int] = (0, 0, 0),
    pad: int = 0,
) -> bytes:
    """Paint solid rectangles over regions of a PNG (password fields).

    Parameters
    ----------
    png : bytes
        The screenshot, PNG encoded.
    boxes_device_px : Sequence[tuple[x, y, w, h]]
        Regions in **device pixels** (screenshot pixels, i.e. CSS px times
        the device pixel ratio; see :func:`css_boxes_to_device`), origin at
        the image's top-left corner.  Fractional edges are widened outward
        to whole pixels so no partially covered pixel stays visible; boxes
        are clipped to the image; empty boxes are ignored.
    color : tuple[int, int, int]
        RGB fill colour (opaque).
    pad : int
        Extra device px added on every side (covers focus rings).

    Returns
    -------
    bytes
        The masked PNG (same size and mode family), or ``png`` itself when
        there is nothing to mask.  Its ``steadyhand:masks`` text chunk
        (:data:`MASKS_CHUNK`) lists the painted regions, so an audit can
        check that each one is solid.
    """
    rects: list[tuple[int, int, int, int]] = []
    for x, y, w, h in boxes_device_px:
        if w <= 0 or h <= 0:
            continue
        rects.append((math.floor(x) - pad, math.floor(y) - pad,
                      math.ceil(x + w) + pad, math.ceil(y + h) + pad))
    if not rects:
        return png

    from PIL import Image, ImageDraw  # local import: Pillow is heavy

    with Image.open(io.BytesIO(png)) as src:
        img = src.convert("RGBA" if src.mode in ("RGBA", "LA", "P", "PA") else "RGB")
    fill = (*color, 255) if img.mode == "RGBA" else tuple(color)
    draw = ImageDraw.Draw(img)
    width, height = img.size
    for x0, y0, x1, y1 in rects:
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(width, x1), min(height, y1)
        if x1 > x0 and y1 > y0:
            # PIL's rectangle includes its end coordinates.
            draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=fill)
    from PIL.PngImagePlugin import PngInfo

    done = []
    for x0, y0, x1, y1 in rects:
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(width, x1), min(height, y1)
        if x1 > x0 and y1 > y0:
            done.append([x0, y0, x1, y1])
    info = PngInfo()
    info.add_text(MASKS_CHUNK, json.dumps(done))  # what was masked, for `steadyhand audit`
    buf = io.BytesIO()
    img.save(buf, format="PNG", pnginfo=info)
    return buf.getvalue()
