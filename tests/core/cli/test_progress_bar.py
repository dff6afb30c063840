"""core.progress: a rich bar on a terminal, plain lines without one escape code elsewhere."""
from __future__ import annotations

import io

import pytest

from core.progress import Progress, use_bar


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_in_a_pipe_have_no_escape_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEADYHAND_PROGRESS", raising=False)
    out = io.StringIO()
    with Progress(2, "flows", stream=out) as bar:
        assert not bar.bar
        bar.start_item("login", steps=3)
        bar.step()
        bar.log("  login: passed (3 steps, 1.0s)")
        bar.advance()
        bar.start_item("export", steps=2)
        bar.advance()
    text = out.getvalue()
    assert text == "[1/2] login\n  login: passed (3 steps, 1.0s)\n[2/2] export\n"
    assert "\x1b" not in text and bar.done == 2


def test_a_terminal_gets_a_bar_and_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = _Tty()
    with Progress(3, "tasks", stream=out, bar=True, advance_on=lambda line: line.startswith("task")) as bar:
        bar("setting up")
        bar("task a: done")
        bar("task b: done")
    text = out.getvalue()
    assert "\x1b[" in text  # drawn with escape codes (cursor moves, colours)
    assert "setting up" in text and "task b: done" in text
    assert "2/3" in text and bar.done == 2


def test_quiet_draws_nothing() -> None:
    out = _Tty()
    with Progress(1, "flows", stream=out, bar=True, enabled=False) as bar:
        bar.start_item("login", steps=2)
        bar.log("hidden")
        bar.advance()
    assert out.getvalue() == ""


def test_use_bar_needs_two_terminals_and_obeys_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STEADYHAND_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr("sys.stdout", _Tty())
    assert use_bar(_Tty()) is True
    assert use_bar(io.StringIO()) is False
    monkeypatch.setattr("sys.stdout", io.StringIO())  # stdout piped: plain, even on a terminal's stderr
    assert use_bar(_Tty()) is False
    monkeypatch.setattr("sys.stdout", _Tty())
    monkeypatch.setenv("TERM", "dumb")
    assert use_bar(_Tty()) is False
    monkeypatch.setenv("STEADYHAND_PROGRESS", "bar")
    assert use_bar(io.StringIO()) is True
    monkeypatch.setenv("STEADYHAND_PROGRESS", "plain")
    assert use_bar(_Tty()) is False
