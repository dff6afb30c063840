"""normalize_text: volatile text becomes placeholders (S2, P4)."""
from __future__ import annotations

import pytest

from core.state.normalize import normalize_text


@pytest.mark.parametrize(("text", "expected"), [
    ("order 123e4567-e89b-12d3-a456-426614174000 placed", "order <uuid> placed"),
    ("ORDER 123E4567-E89B-12D3-A456-426614174000", "ORDER <uuid>"),
    ("saved at 2024-05-01T12:34:56Z.", "saved at <timestamp>."),
    ("saved at 2024-05-01 12:34:56.123+02:00 ok", "saved at <timestamp> ok"),
    ("saved at 2024-05-01T12:34", "saved at <timestamp>"),
    ("now 9:05 PM", "now <time>"),
    ("now 21:05:33", "now <time>"),
    ("epoch 1714567890 and 1714567890123", "epoch <epoch> and <epoch>"),
    ("csrf a1B2c3D4e5F6g7H8i9J0k1L2m3 end", "csrf <token> end"),
    ("jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9", "jwt <token>"),
    ("commit deadbeefcafebabe1234", "commit <hex>"),
])
def test_volatile_parts_become_placeholders(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


@pytest.mark.parametrize("text", [
    "Order #12345 costs 12.50",
    "version 1.2.3",
    "call 555-123-4567",
    "Sign in",
    "internationalization",  # long but no digit: a word, not a token
])
def test_stable_text_is_kept(text: str) -> None:
    assert normalize_text(text) == text


def test_whitespace_is_collapsed_and_stripped() -> None:
    assert normalize_text("  Hello \n\t  world  ") == "Hello world"


def test_two_renderings_differing_only_in_volatile_parts_normalize_equal() -> None:
    a = "Report 3f2b1c9e-0000-4a4a-9b9b-1234567890ab generated 2024-05-01T10:00:00Z at 10:00 token=Zx9aQ2w8Er7tY6uI5oP4aS3d"
    b = "Report 9a8b7c6d-1111-4b4b-8c8c-abcdefabcdef generated 2025-12-31T23:59:59Z at 23:59 token=Qw1eR2tY3uI4oP5aS6dF7gH8"
    assert a != b
    assert normalize_text(a) == normalize_text(b)


def test_idempotent() -> None:
    text = "id 123e4567-e89b-12d3-a456-426614174000 at 12:30 on 2024-05-01T12:30:00Z"
    once = normalize_text(text)
    assert normalize_text(once) == once
