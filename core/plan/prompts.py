"""Versioned prompt templates (``resources/prompts/<name>.v<N>.md``).

A template has a ``## system`` and a ``## user`` section; ``{{name}}`` marks a
value.  Values are substituted in one pass, so a value holding ``{{...}}`` or
braces (page text) stays literal text.  A prompt is chosen by name and
version: changing a prompt is a new file, so a run says which one it used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping

from ..domain.resources import resource_path

__all__ = ["PROMPTS_DIR", "Prompt", "load_prompt", "PromptError"]

#: Where the templates live.
PROMPTS_DIR = resource_path("prompts")
_VAR = re.compile(r"\{\{(\w+)\}\}")


class PromptError(LookupError):
    """A template is missing, lacks a section, or a value was not given (names the file)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """One template: ``name``, ``version`` and the two sections' text."""

    name: str
    version: int
    system: str
    user: str
    path: str

    @property
    def id(self) -> str:
        """``"ground.v1"``."""
        return f"{self.name}.v{self.version}"

    def render(self, values: Mapping[str, object]) -> tuple[str, str]:
        """(system, user) with every ``{{name}}`` replaced.

        Raises
        ------
        PromptError
            When the template names a value that is not given.
        """
        def sub(text: str) -> str:
            def one(m: re.Match[str]) -> str:
                if m.group(1) not in values:
                    raise PromptError(f"{self.path}: value {{{{{m.group(1)}}}}} is not given")
                return str(values[m.group(1)])
            return _VAR.sub(one, text)
        return sub(self.system), sub(self.user)


@lru_cache(maxsize=32)
def load_prompt(name: str, version: int = 1) -> Prompt:
    """The template ``resources/prompts/<name>.v<version>.md``.

    Raises
    ------
    PromptError
        When the file is missing or has no ``## system`` / ``## user`` section.
    """
    path = PROMPTS_DIR / f"{name}.v{version}.md"
    if not path.is_file():
        raise PromptError(f"{path}: prompt template not found")
    text = path.read_text(encoding="utf-8")
    parts = re.split(r"^## (system|user)\s*$", text, flags=re.M)
    sections = {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}
    if "system" not in sections or "user" not in sections:
        raise PromptError(f"{path}: a prompt needs a '## system' and a '## user' section")
    return Prompt(name, version, sections["system"].strip(), sections["user"].strip(), str(path))
