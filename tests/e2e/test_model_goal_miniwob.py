"""A goal step on a page we did not write: MiniWoB++ login-user in real Chromium, decided by a scripted model.

The goal's words bind the episode's public field (the username) and leave the
secret one as ``{password}``; the task's own reward says whether it was done,
and the episode's password never reaches the model (the utterance on the page
holds it: it is masked in the page text sent).
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from core.engine.session import ProjectSession
from core.plan.scripted_server import ScriptedModelServer, last_user_text, texts_of
from core.project import load_project
from core.secrets import MASK

ROOT = Path(__file__).resolve().parents[2]


def _ids(text: str) -> dict[str, tuple[str, str]]:
    return {m.group(2): (m.group(1), m.group(3))
            for m in re.finditer(r"^(e\d+) \| [^|]+ \| '([^']*)' \| [^|]* \| ([A-J]\d+)$", text, re.M)}


def login_model(req: dict) -> str:
    text = last_user_text(req)
    ids = _ids(text)
    user = re.search(r"^Goal: Log in with username (\S+)", text, re.M).group(1)
    if re.search(r"'Username' \| enabled, empty", text):
        return json.dumps({"grid": ids["Username"][1], "element_id": ids["Username"][0], "element_desc": "Username",
                           "action": "input", "value": user, "reason": "the goal's user",
                           "fills": [{"element_id": ids["Password"][0], "value": "{password}"}]})
    return json.dumps({"grid": ids["Login"][1], "element_id": ids["Login"][0], "element_desc": "Login",
                       "action": "click", "reason": "both fields are filled"})


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    root = tmp_path_factory.mktemp("mw") / "miniwob"
    shutil.copytree(ROOT / "projects" / "miniwob", root, ignore=shutil.ignore_patterns(".steadyhand"))
    with ScriptedModelServer(rule=login_model) as srv:
        s = yaml.safe_load((root / "steadyhand.yaml").read_text())
        s["model"] = {"base_url": srv.base_url, "name": "scripted"}
        (root / "steadyhand.yaml").write_text(yaml.safe_dump(s))
        (root / "flows" / "login-goal.yaml").write_text(yaml.safe_dump({
            "schema_version": 1, "name": "login-goal", "start_url": "/miniwob/login-user.html",
            "secrets": ["password"], "episode": {"task": "login-user", "fields": ["username", "password"]},
            "steps": [{"id": "g1", "goal": "Log in with username {username} and password {password}",
                       "assertions": [{"kind": "text_absent", "expected": "Last reward: -"}],
                       "allow": [{"role": "button", "name": "Login"}]}]}))
        project = load_project(root)
        with ProjectSession(project, headless=True, use_store=False) as sess:
            yield sess, srv


@pytest.mark.parametrize("seed", [2001])
def test_goal_step_completes_a_miniwob_task(session, seed):
    sess, srv = session
    before = len(srv.requests)
    result = sess.run_flow(sess.project.flows["login-goal"], seed=seed)
    assert result.status == "passed", result.error
    assert result.reward is not None and result.reward > 0
    assert [o.source for o in result.steps] == ["model"] * 4
    usage = sess.model_usage[result.run_id]
    assert usage["calls"] == 2 and usage["cache_hits"] == 1 and usage["goals_passed"] == 1
    password = sess.driver.secret_values[-1]  # this episode's password, bound from its utterance
    sent = "\n".join(t for r in srv.requests[before:] for t in texts_of(r))
    assert password and password not in sent and MASK in sent
    assert "and password {password}" in sent
