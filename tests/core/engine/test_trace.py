"""core.engine.trace: secret values are removed from a trace zip in every form, or the zip is refused."""
from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path
from urllib.parse import quote_plus

from core.cliopts import RUN_CHOICES
from core.engine.trace import TRACE_MODES, scrub_trace

SECRET = 'p@ss "wörd"/1'


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def _all(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def test_every_text_form_of_a_secret_is_masked_and_the_lines_stay_json(tmp_path: Path) -> None:
    fill = json.dumps({"method": "fill", "params": {"value": SECRET}}) + "\n"
    path = _zip(tmp_path / "t.zip", {
        "trace.trace": fill.encode(),
        "trace.network": json.dumps({"postData": "user=ada&password=" + quote_plus(SECRET)}).encode(),
        "resources/abc.html": f'<input value="{SECRET.replace(chr(34), "&quot;")}">'.encode(),
        "screencast/f.jpeg": b"\xff\xd8 no text here",
    })
    assert scrub_trace(path, [SECRET]) == ""
    files = _all(path)
    for name, data in files.items():
        assert SECRET.encode() not in data and quote_plus(SECRET).encode() not in data, name
    assert json.loads(files["trace.trace"])["params"]["value"] == "••••••"
    assert files["screencast/f.jpeg"] == b"\xff\xd8 no text here"


def test_a_secret_left_in_base64_or_an_image_or_too_short_is_refused(tmp_path: Path) -> None:
    header = base64.b64encode(f"ada:{SECRET}".encode())
    assert "still in trace.network" in scrub_trace(_zip(tmp_path / "a.zip", {"trace.network": header}), [SECRET])
    assert "still in s.jpeg" in scrub_trace(_zip(tmp_path / "b.zip", {"s.jpeg": SECRET.encode()}), [SECRET])
    assert "shorter than" in scrub_trace(_zip(tmp_path / "c.zip", {"trace.trace": b"{}"}), ["ab"])
    assert scrub_trace(_zip(tmp_path / "d.zip", {"trace.trace": b"{}"}), []) == ""


def test_the_option_offers_the_modes_the_engine_knows() -> None:
    assert RUN_CHOICES["trace"] == TRACE_MODES
