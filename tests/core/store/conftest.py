"""Fixtures of the store tests: domain objects and PNGs to record."""
from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Callable

import pytest

# Make the repository importable when pytest is run as `.venv/bin/pytest` (the
# project is not installed in the venv).  Harmless once pyproject sets pythonpath.
_ROOT = Path(__file__).resolve().parents[3]
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from core.domain import (  # noqa: E402
    BBox, Candidate, ElementDescriptor, Observation, Resolution, ScoredCandidate,
    StateSignature, StepOutcome, Verdict,
)


def _png(width: int = 64, height: int = 48, seed: int = 0) -> bytes:
    from PIL import Image

    img = Image.new("RGB", (width, height))
    img.putdata([((x * 4 + seed) % 256, (y * 5) % 256, 180)
                 for y in range(height) for x in range(width)])
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def make_png() -> Callable[..., bytes]:
    """``make_png(width=64, height=48, seed=0)`` -> a distinct, valid PNG."""
    return _png


def _observation(url: str = "http://127.0.0.1:8000/login", title: str = "Sign in",
                 png: bytes = b"", n_candidates: int = 3, digest: str = "d" * 40,
                 labels: tuple[str, ...] = ()) -> Observation:
    labels = labels or tuple(f"Field {i}" for i in range(n_candidates))
    candidates = tuple(
        Candidate(ref=f"0:{i}", descriptor=ElementDescriptor(
            tag="input", role="textbox", name=label, bbox=BBox(10, 20 + 30 * i, 200, 24)))
        for i, label in enumerate(labels))
    sig = StateSignature(url=url, title=title, interactive_count=len(candidates), modal_count=0,
                         text_digest="t" * 40, elements_digest="e" * 40, values_digest="v" * 40,
                         loading=False, error_count=0, focus="", digest=digest)
    return Observation(url=url, title=title, viewport=(1280, 800), device_pixel_ratio=2.0,
                       scroll=(0.0, 0.0), candidates=candidates, visible_text="Sign in",
                       signature=sig, screenshot_png=png, timestamp_ms=1.7e12)


@pytest.fixture
def make_observation() -> Callable[..., Observation]:
    """``make_observation(url=..., title=..., png=b"", n_candidates=3, digest=..., labels=())``."""
    return _observation


def _resolution(strategy: str = "exact", label: str = "Sign in", score: float = 0.97,
                reason: str = "") -> Resolution:
    return Resolution(strategy=strategy, ref="0:1", score=score, margin=0.4, ms=3.5,
                      reason=reason or f"{strategy} matched",
                      top=(ScoredCandidate("0:1", score, label), ScoredCandidate("0:2", 0.5, "Other")))


@pytest.fixture
def make_resolution() -> Callable[..., Resolution]:
    return _resolution


def _verdict(kind: str = "as_expected", reason: str = "value changed") -> Verdict:
    return Verdict(kind=kind, expected="value", observed=("value",), reason=reason)  # type: ignore[arg-type]


@pytest.fixture
def make_verdict() -> Callable[..., Verdict]:
    return _verdict


def _outcome(index: int, *, status: str = "passed", title: str = "", error: str = "",
             resolution: Resolution | None = None, verdict: Verdict | None = None) -> StepOutcome:
    return StepOutcome(index=index, step_id=f"s{index + 1}", title=title or f"Step {index + 1}",
                       status=status, resolution=resolution, verdict=verdict,  # type: ignore[arg-type]
                       attempts=1, ms=120.0 + index, error=error)


@pytest.fixture
def make_outcome() -> Callable[..., StepOutcome]:
    return _outcome
