"""The project's model section: keys from a declared secret or the environment, clear errors otherwise."""
from __future__ import annotations

import pytest
import yaml

from core.plan.config import ModelSetupError, model_setup
from core.project import ProjectError, load_project


def _project(tmp_path, model: dict, secrets: dict | None = None):
    (tmp_path / "flows").mkdir(exist_ok=True)
    data = {"schema_version": 1, "name": "p", "base_url": "http://127.0.0.1:9", "model": model}
    if secrets:
        data["secrets"] = secrets
    (tmp_path / "steadyhand.yaml").write_text(yaml.safe_dump(data))
    return load_project(tmp_path)


def test_no_model_section_means_no_model(tmp_path):
    (tmp_path / "flows").mkdir()
    (tmp_path / "steadyhand.yaml").write_text("schema_version: 1\nname: p\nbase_url: http://127.0.0.1:9\n")
    assert model_setup(load_project(tmp_path)) is None


def _trusted(p, tmp_path, monkeypatch):
    """The project trusted on this (test) machine: a key from the environment takes effect only then."""
    from core.project.trust import trust_project

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    trust_project(p.root, p.settings)
    return p


def test_key_from_a_declared_secret_and_cross_check(tmp_path, monkeypatch):
    monkeypatch.setenv("STEADYHAND_SECRET_MODEL_KEY", "sk-local-1")
    monkeypatch.setenv("SECOND_API_KEY", "sk-second")
    p = _project(tmp_path, {"base_url": "http://127.0.0.1:8000/v1", "name": "qwen", "api_key_secret": "model_key",
                            "cross_check": {"base_url": "http://127.0.0.1:8001/v1", "name": "llava",
                                            "api_key_env": "SECOND_API_KEY"}},
                 secrets={"model_key": {"description": "local server key"}})
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    with pytest.raises(ModelSetupError, match="setting 'model.cross_check.api_key_env'.*steadyhand trust"):
        model_setup(p)  # not trusted on this machine: the variable is not read
    s = model_setup(_trusted(p, tmp_path, monkeypatch))
    assert s.primary.config.api_key == "sk-local-1" and s.cross_check.config.api_key == "sk-second"
    assert s.cross_check.config.role == "cross_check" and set(s.secrets) == {"sk-local-1", "sk-second"}
    assert "sk-" not in repr(s.primary.config) and s.options.grid_rows == 10 and s.options.cache_ttl_s == 300
    s.close()


def test_undeclared_secret_or_unset_env_names_the_field(tmp_path, monkeypatch):
    p = _project(tmp_path, {"base_url": "http://127.0.0.1:8000/v1", "name": "m", "api_key_secret": "nope"})
    with pytest.raises(ModelSetupError, match=r"steadyhand.yaml: field 'model.api_key_secret': secret 'nope'"):
        model_setup(p)
    monkeypatch.delenv("NO_SUCH_API_KEY", raising=False)
    p = _project(tmp_path, {"base_url": "http://127.0.0.1:8000/v1", "name": "m", "api_key_env": "NO_SUCH_API_KEY"})
    with pytest.raises(ModelSetupError, match="NO_SUCH_API_KEY is not set"):
        model_setup(_trusted(p, tmp_path, monkeypatch))


def test_bad_model_section_is_a_project_error(tmp_path):
    with pytest.raises(ProjectError, match="base_url"):
        _project(tmp_path, {"base_url": "localhost:8000", "name": "m"})


def test_goal_step_schema(tmp_path):
    from core.project.loader import flow_from_mapping, flow_to_mapping

    flow = flow_from_mapping({"name": "g", "steps": [{"id": "g1", "goal": "Sign in as {user}",
                                                      "assertions": [{"kind": "text_appears", "expected": "Hi"}],
                                                      "allow_irreversible": True}]}, tmp_path / "g.yaml")
    st = flow.steps[0]
    assert st.goal == "Sign in as {user}" and st.action.kind == "assert" and st.allow_irreversible
    assert st.title == "goal: Sign in as {user}"
    back = flow_to_mapping(flow)["steps"][0]
    assert back["goal"] == "Sign in as {user}" and "action" not in back and back["allow_irreversible"] is True
    with pytest.raises(ProjectError, match="goal step has no action"):
        flow_from_mapping({"name": "g", "steps": [{"id": "g1", "goal": "x", "action": "click",
                                                   "selector": "#a"}]}, tmp_path / "g.yaml")
    with pytest.raises(ProjectError, match="action"):
        flow_from_mapping({"name": "g", "steps": [{"id": "s1"}]}, tmp_path / "g.yaml")
