"""The step image difference (core.state.diff) on synthetic screenshots."""
from __future__ import annotations

import cv2
import numpy as np
import pytest

from core.domain import BBox
from core.state.diff import MAX_WORK_PIXELS, THRESHOLD, DiffError, image_diff


def _png(img: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


def _page(w: int = 400, h: int = 300, dpr: float = 1.0) -> np.ndarray:
    """A light page with a header bar and some grey text lines, in device px."""
    img = np.full((int(h * dpr), int(w * dpr), 3), 245, np.uint8)
    s = dpr
    cv2.rectangle(img, (0, 0), (int(w * s), int(40 * s)), (90, 60, 30), -1)
    for i in range(5):
        y = int((70 + 20 * i) * s)
        cv2.rectangle(img, (int(20 * s), y), (int(300 * s), y + int(6 * s)), (120, 120, 120), -1)
    return img


def _box(img: np.ndarray, x: int, y: int, w: int, h: int, dpr: float = 1.0, color=(40, 160, 40)) -> np.ndarray:
    out = img.copy()
    cv2.rectangle(out, (int(x * dpr), int(y * dpr)), (int((x + w) * dpr) - 1, int((y + h) * dpr) - 1), color, -1)
    return out


def _close(a: BBox, b: tuple[float, float, float, float], tol: float = 1.5) -> bool:
    return all(abs(p - q) <= tol for p, q in zip((a.x, a.y, a.width, a.height), b, strict=True))


def test_identical_screenshots_have_no_region() -> None:
    png = _png(_page())
    d = image_diff(png, png)
    assert d.regions == () and d.changed_ratio == 0.0 and not d.changed
    assert (d.width, d.height) == (400, 300)


def test_a_moved_box_gives_its_old_and_new_place_in_css_px() -> None:
    base = _page()
    before, after = _box(base, 40, 200, 60, 30), _box(base, 250, 200, 60, 30)
    d = image_diff(_png(before), _png(after))
    assert len(d.regions) == 2, d.regions
    got = sorted(d.regions, key=lambda b: b.x)
    assert _close(got[0], (40, 200, 60, 30)) and _close(got[1], (250, 200, 60, 30)), got
    assert 0 < d.changed_ratio < 0.05


def test_noise_under_the_threshold_is_no_change() -> None:
    rng = np.random.default_rng(7)
    base = _page()
    noise = rng.integers(-(THRESHOLD - 2), THRESHOLD - 2, size=base.shape)
    noisy = np.clip(base.astype(int) + noise, 0, 255).astype(np.uint8)
    d = image_diff(_png(base), _png(noisy))
    assert d.regions == () and d.changed_ratio == 0.0
    # the same noise with one real change: only that change is reported
    d2 = image_diff(_png(base), _png(_box(noisy, 100, 230, 80, 20)))
    assert len(d2.regions) == 1 and _close(d2.regions[0], (100, 230, 80, 20)), d2.regions


def test_dpr_2_regions_are_css_px() -> None:
    base = _page(dpr=2.0)
    before, after = base, _box(base, 120, 150, 50, 25, dpr=2.0)
    d = image_diff(_png(before), _png(after), device_pixel_ratio=2.0)
    assert (d.width, d.height) == (400, 300) and d.device_pixel_ratio == 2.0
    assert len(d.regions) == 1 and _close(d.regions[0], (120, 150, 50, 25)), d.regions


def test_a_colour_change_at_the_same_brightness_counts() -> None:
    base = _page()
    red, green = _box(base, 50, 220, 40, 40, color=(0, 0, 200)), _box(base, 50, 220, 40, 40, color=(0, 100, 0))
    assert abs(int(cv2.cvtColor(red, cv2.COLOR_BGR2GRAY)[230, 60]) - int(cv2.cvtColor(green, cv2.COLOR_BGR2GRAY)[230, 60])) < THRESHOLD
    d = image_diff(_png(red), _png(green))
    assert len(d.regions) == 1 and _close(d.regions[0], (50, 220, 40, 40))


def test_secret_fields_are_left_out() -> None:
    base = _page()
    after = _box(_box(base, 30, 220, 120, 24, color=(0, 0, 0)), 250, 220, 60, 20)
    d = image_diff(_png(base), _png(after), masks=[BBox(30, 220, 120, 24)])
    assert len(d.regions) == 1 and _close(d.regions[0], (250, 220, 60, 20)), d.regions


def test_a_large_screenshot_is_shrunk_and_regions_stay_in_css_px() -> None:
    w, h = 3000, 2000  # CSS px at dpr 1: more than MAX_WORK_PIXELS
    assert w * h > MAX_WORK_PIXELS
    base = np.full((h, w, 3), 250, np.uint8)
    d = image_diff(_png(base), _png(_box(base, 1000, 900, 200, 100)))
    assert (d.width, d.height) == (w, h)
    assert len(d.regions) == 1 and _close(d.regions[0], (1000, 900, 200, 100), tol=4.0), d.regions


def test_sizes_that_differ_compare_the_common_part() -> None:
    a, b = _page(400, 300), _page(420, 300)
    d = image_diff(_png(a), _png(b))
    assert "sizes differ" in d.note
    assert any(_close(r, (400, 0, 20, 300)) for r in d.regions), d.regions


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(DiffError, match="before screenshot is empty"):
        image_diff(b"", _png(_page()))
    with pytest.raises(DiffError, match="after screenshot is not a readable image"):
        image_diff(_png(_page()), b"not a png")
    with pytest.raises(ValueError, match="device_pixel_ratio"):
        image_diff(_png(_page()), _png(_page()), device_pixel_ratio=0)


def test_a_page_that_changed_all_over_gives_few_coarse_regions() -> None:
    from core.state.diff import MAX_REGIONS

    base = _page(1200, 800)
    after = base.copy()
    for i in range(20):  # a new page: 200 words all over it
        for j in range(10):
            cv2.rectangle(after, (30 + 110 * j, 60 + 36 * i), (30 + 110 * j + 60, 60 + 36 * i + 10), (30, 30, 30), -1)
    d = image_diff(_png(base), _png(after))
    # 200 changed words become a few coarse blocks (not one box per word, not the cap), and they cover
    # every word that changed
    assert 1 <= len(d.regions) <= MAX_REGIONS // 2 and not d.truncated, len(d.regions)
    for i in range(20):
        for j in range(10):
            x, y = 30 + 110 * j + 30, 60 + 36 * i + 5  # the middle of word (i, j)
            assert any(r.x <= x <= r.x + r.width and r.y <= y <= r.y + r.height for r in d.regions), (i, j)
    for i in range(20):  # every word lies in a region (as a few blocks, not 200 boxes)
        for j in range(10):
            cx, cy = 30 + 110 * j + 30, 60 + 36 * i + 5
            assert any(r.x <= cx <= r.x + r.width and r.y <= cy <= r.y + r.height for r in d.regions), (cx, cy)
    for i, a in enumerate(d.regions):  # and no two regions overlap
        for b in d.regions[i + 1:]:
            assert a.intersection_area(b) == 0, (a, b)
