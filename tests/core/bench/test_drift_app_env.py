"""A drift app's environment is made again when its pins change (core/bench/drift_app_env.py).

Real virtual environments with a requirement pip satisfies without the network (pip itself)."""
from __future__ import annotations

import ensurepip

from core.bench.drift_app_env import REQUIREMENTS_FILE, ensure_app_venv, installed, made_with
from core.bench.drift_apps import AppVersion


def test_an_environment_is_made_once_and_again_when_its_requirements_change(tmp_path) -> None:
    pip = ensurepip.version()
    first = AppVersion("pip", "pip-env", "pip", pip, ("pip",))
    said: list[str] = []
    env = ensure_app_venv(first, tmp_path, log=said.append)
    assert installed(first, tmp_path) == pip
    assert made_with(first, tmp_path) == ("pip",)
    assert (env / REQUIREMENTS_FILE).read_text(encoding="utf-8") == "pip\n"
    assert len(said) == 1 and "creating" in said[0]

    ensure_app_venv(first, tmp_path, log=said.append)  # the same release and pins: left as it is
    assert len(said) == 1

    pinned = AppVersion("pip", "pip-env", "pip", pip, ("pip", "pip>=1"))  # a pin added
    ensure_app_venv(pinned, tmp_path, log=said.append)
    assert len(said) == 2 and made_with(pinned, tmp_path) == ("pip", "pip>=1")

    (env / REQUIREMENTS_FILE).unlink()  # an environment made before environments said their pins
    assert made_with(pinned, tmp_path) is None
    ensure_app_venv(pinned, tmp_path, log=said.append)
    assert len(said) == 3 and made_with(pinned, tmp_path) == ("pip", "pip>=1")
