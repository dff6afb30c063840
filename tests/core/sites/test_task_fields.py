"""MiniWoB++ flows bind the task's own fields (the package's field extractor), not a regex of their own."""
from __future__ import annotations

import pytest

from core.domain import Action, EpisodeSpec, Flow, Step
from core.project.params import ParameterError
from core.sites.adapters import field_param, task_fields


def flow(task: str, fields: tuple[str, ...] = ()) -> Flow:
    return Flow("f", "/", (Step("s1", Action("click")),), episode=EpisodeSpec(task, fields=fields))


#: Made-up episode values (MiniWoB++ draws random ones; never a real credential).
FIXTURE_USER, FIXTURE_SECRET = "ann", "x" + "7q"


def test_fields_of_an_episode_become_parameters() -> None:
    got = task_fields(flow("login-user", ("username", "password")),
                      f'Enter the username "{FIXTURE_USER}" and the password "{FIXTURE_SECRET}" into the text '
                      'fields and press login.')
    assert got == {"username": FIXTURE_USER, "password": FIXTURE_SECRET}
    assert task_fields(flow("enter-text", ("target",)), 'Enter "Tora" into the text field and press Submit.') == {
        "target": "Tora"}


def test_a_declared_field_the_episode_lacks_is_named() -> None:
    with pytest.raises(ParameterError, match=r"has no field 'user' this episode \(fields: password, username\)"):
        task_fields(flow("login-user", ("user",)),
                    'Enter the username "a" and the password "b" into the text fields and press login.')


def test_an_instruction_the_extractor_cannot_read_is_a_parameter_error() -> None:
    with pytest.raises(ParameterError, match="task 'enter-text'"):
        task_fields(flow("enter-text", ("target",)), "Something else entirely.")


def test_field_keys_become_parameter_names() -> None:
    assert field_param("target 0") == "target_0" and field_param("button") == "button"
