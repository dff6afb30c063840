"""``steadyhand bench diff``: what the step image difference (:mod:`core.state.diff`) costs per step.

Synthetic screenshots drawn with OpenCV (a flat page with a header and a
table of text, anti-aliased), PNG encoded, in four cases: one changed line
at dpr 1, a new page at dpr 1 (navigation), one changed line at dpr 2, and a
4K viewport (3840 x 2160 device px at dpr 1, shrunk to the work bound).
Each case is timed ``repeat`` times with fresh PNG bytes (nothing cached:
in a run the after-shot is new each step), median and worst reported in
ms, with the share of PNG decoding and the regions found.  Figures are the
output (exit 0); nothing is asserted.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass

from core.state.diff import image_diff

__all__ = ["DiffCase", "DiffReport", "run_diff_benchmark", "format_report"]


@dataclass(frozen=True, slots=True)
class DiffCase:
    """One case: name, size in device px, dpr, median / worst ms of a diff, median decode ms, regions found."""

    name: str
    width: int
    height: int
    dpr: float
    median_ms: float
    worst_ms: float
    decode_ms: float
    regions: int


@dataclass(frozen=True, slots=True)
class DiffReport:
    cases: tuple[DiffCase, ...]
    repeat: int

    def to_json_dict(self) -> dict[str, object]:
        return {"repeat": self.repeat, "cases": [asdict(c) for c in self.cases]}


def _page(w: int, h: int, dpr: float, *, variant: int):  # -> np.ndarray
    import cv2
    import numpy as np

    img = np.full((int(h * dpr), int(w * dpr), 3), 246, np.uint8)
    s = dpr
    cv2.rectangle(img, (0, 0), (int(w * s), int(48 * s)), (80, 50, 20), -1)
    rows = 28 if variant == 0 else 18
    for i in range(rows):
        y = int((80 + 24 * i) * s)
        for j in range(6):
            x = int((40 + 200 * j + (variant * 60)) * s)
            cv2.putText(img, f"row {i} col {j}", (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.45 * s, (60, 60, 60),
                        max(1, int(s)), cv2.LINE_AA)
    return img


def _png(img) -> bytes:  # noqa: ANN001
    import cv2

    ok, buf = cv2.imencode(".png", img)
    assert ok
    return buf.tobytes()


def _case(name: str, w: int, h: int, dpr: float, *, navigate: bool, repeat: int) -> DiffCase:
    import cv2
    import numpy as np

    before = _page(w, h, dpr, variant=0)
    after = _page(w, h, dpr, variant=1) if navigate else before.copy()
    if not navigate:
        cv2.putText(after, "Saved: request LR-0042", (int(40 * dpr), int(60 * dpr + 24 * 5 * dpr)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5 * dpr, (20, 120, 20), max(1, int(dpr)), cv2.LINE_AA)
    times, decodes, regions = [], [], 0
    for i in range(repeat):
        # fresh bytes each time (one changed pixel in a corner), so the decode cache never answers
        a, b = before.copy(), after.copy()
        a[-1, -1] = (i % 250, 0, 0)
        b[-1, -1] = (i % 250, 0, 0)
        pa, pb = _png(a), _png(b)
        t = time.perf_counter()
        cv2.imdecode(np.frombuffer(pa, np.uint8), cv2.IMREAD_COLOR)
        decodes.append((time.perf_counter() - t) * 1000.0 * 2)
        a[-1, -2] = (1, 2, 3)  # new bytes again: the decode above must not be cached for the diff
        b[-1, -2] = (1, 2, 3)
        pa, pb = _png(a), _png(b)
        t = time.perf_counter()
        d = image_diff(pa, pb, device_pixel_ratio=dpr)
        times.append((time.perf_counter() - t) * 1000.0)
        regions = len(d.regions)
    return DiffCase(name, int(w * dpr), int(h * dpr), dpr, round(statistics.median(times), 1),
                    round(max(times), 1), round(statistics.median(decodes), 1), regions)


def run_diff_benchmark(repeat: int = 10) -> DiffReport:
    """Time :func:`core.state.diff.image_diff` on the four cases, ``repeat`` times each."""
    repeat = max(1, int(repeat))
    cases = (
        _case("one line changed, 1280x800 dpr 1", 1280, 800, 1.0, navigate=False, repeat=repeat),
        _case("new page, 1280x800 dpr 1", 1280, 800, 1.0, navigate=True, repeat=repeat),
        _case("one line changed, 1280x800 dpr 2", 1280, 800, 2.0, navigate=False, repeat=repeat),
        _case("new page, 3840x2160 dpr 1", 3840, 2160, 1.0, navigate=True, repeat=repeat),
    )
    return DiffReport(cases, repeat)


def format_report(report: DiffReport) -> str:
    lines = [f"step image difference, {report.repeat} runs per case (ms; decode = both PNGs)",
             f"{'case':<36} {'device px':>11} {'median':>7} {'worst':>7} {'decode':>7} {'regions':>7}"]
    for c in report.cases:
        lines.append(f"{c.name:<36} {f'{c.width}x{c.height}':>11} {c.median_ms:>7.1f} {c.worst_ms:>7.1f} "
                     f"{c.decode_ms:>7.1f} {c.regions:>7}")
    return "\n".join(lines)
