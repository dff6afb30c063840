"""The desktop entry (packaging/steadyhand.desktop) and the icons (packaging/icons/) of the bundle."""
from __future__ import annotations

import configparser
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "packaging" / "steadyhand.desktop"
ICONS = ROOT / "packaging" / "icons"
#: The freedesktop menu spec's main categories (an entry names at least one).
MAIN_CATEGORIES = {"AudioVideo", "Audio", "Video", "Development", "Education", "Game", "Graphics", "Network",
                   "Office", "Science", "Settings", "System", "Utility"}


def _make_icons():  # packaging/ is not a package: load the script as a module
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "packaging" / "make_icons.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def entry_problems(text: str) -> list[str]:
    """What is wrong with a desktop entry's text for Steadyhand (empty when nothing): keys of the freedesktop spec."""
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        return [f"unreadable: {exc}"]
    if not parser.has_section("Desktop Entry"):
        return ["no [Desktop Entry] group"]
    e = parser["Desktop Entry"]
    problems = [f"missing {k}" for k in ("Type", "Name", "Exec", "Icon", "Categories", "MimeType") if not e.get(k)]
    if e.get("Type") != "Application":
        problems.append("Type is not Application")
    exec_ = e.get("Exec", "").split()
    if exec_[:2] != ["steadyhand", "studio"]:
        problems.append("Exec does not start the studio (steadyhand studio)")
    if not {"%f", "%F", "%u", "%U"} & set(exec_):
        problems.append("Exec takes no project folder (%f) although MimeType says it opens folders")
    cats = e.get("Categories", "")
    if not cats.endswith(";") or not MAIN_CATEGORIES & set(cats.split(";")):
        problems.append("Categories names no main category or lacks the final ';'")
    if "inode/directory" not in e.get("MimeType", "").split(";"):
        problems.append("MimeType does not say it opens folders (inode/directory)")
    if e.get("Icon") and e["Icon"] != _make_icons().ICON_NAME:
        problems.append(f"Icon {e['Icon']} is not the icon make_icons.py draws")
    return problems


def test_the_desktop_entry_has_the_keys_of_the_spec() -> None:
    assert entry_problems(ENTRY.read_text(encoding="utf-8")) == []


def test_the_check_catches_a_broken_entry() -> None:
    good = ENTRY.read_text(encoding="utf-8")
    assert entry_problems(good.replace("Exec=steadyhand studio %f", "Exec=steadyhand studio")) == [
        "Exec takes no project folder (%f) although MimeType says it opens folders"]
    assert "missing Icon" in entry_problems("\n".join(x for x in good.splitlines() if not x.startswith("Icon=")))
    assert entry_problems("Name=x\n") and entry_problems(good.replace("Development;", "Devel;"))


def test_desktop_file_validate_accepts_it() -> None:
    assert shutil.which("desktop-file-validate"), "desktop-file-validate missing: packaging/setup.sh installs it"
    res = subprocess.run(["desktop-file-validate", str(ENTRY)], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0 and res.stdout.strip() == "", res.stdout + res.stderr


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name}: not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_an_icon_exists_at_every_declared_size_and_is_a_valid_png_of_it() -> None:
    sizes = _make_icons().SIZES
    assert sizes[0] == 16 and sizes[-1] == 256
    for size in sizes:
        path = ICONS / f"steadyhand-{size}.png"
        assert _png_size(path) == (size, size), path.name
        with Image.open(path) as img:
            img.verify()  # checksums of every chunk
        with Image.open(path) as img:
            assert img.mode == "RGBA" and img.getpixel((0, 0))[3] == 0  # transparent corner (rounded tile)
            assert img.getpixel((size // 2, size // 2))[3] == 255


def test_the_svg_is_square_svg() -> None:
    root = ET.parse(ICONS / "steadyhand.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    _, _, w, h = (float(v) for v in root.get("viewBox", "").split())
    assert w == h > 0


def test_the_pngs_are_the_svg_as_make_icons_draws_it(tmp_path: Path) -> None:
    """An edit of the SVG without running make_icons.py leaves stale PNGs: this fails then."""
    res = subprocess.run([sys.executable, str(ROOT / "packaging" / "make_icons.py"), "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert res.returncode == 0, res.stderr  # its own process: its QGuiApplication never meets the studio tests'
    written = [Path(line) for line in res.stdout.split()]
    assert {p.name for p in written} == {p.name for p in ICONS.iterdir()}
    assert (tmp_path / "steadyhand.svg").read_text(encoding="utf-8") == (ICONS / "steadyhand.svg").read_text(
        encoding="utf-8")
    for fresh in written[1:]:
        with Image.open(fresh) as a, Image.open(ICONS / fresh.name) as b:
            assert a.size == b.size and a.convert("RGBA").tobytes() == b.convert("RGBA").tobytes(), fresh.name
