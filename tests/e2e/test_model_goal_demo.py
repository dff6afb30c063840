"""A goal step on the bundled demo app in real Chromium, decided by a scripted OpenAI-compatible model.

The scripted server (a real HTTP server on 127.0.0.1) answers like a model
would, from what it is sent: the candidate listing with ids and grid cells.
The run goes through ``steadyhand run --json``: the goal's assertion is
reached, one answer fills both fields (P9), the model's figures are in the
summary; and what the server received holds neither the password in its
texts nor in the image - the password field's region is painted over.
"""
from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

from core.cli import main
from core.store import Store
from core.plan.scripted_server import Reply, ScriptedModelServer, images_of, last_user_text, texts_of

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "demo-pass"  # the demo project's declared secret (public default)

GOAL_FLOW = {
    "schema_version": 1, "name": "sign_in_goal", "start_url": "/login",
    "steps": [{"id": "g1", "goal": "Sign in as {user} with the password {password}",
               "assertions": [{"kind": "text_appears", "expected": "Leave requests"}],
               "allow": [{"role": "button", "name": "Sign in"}]}],
}


def _ids(text: str) -> dict[str, tuple[str, str]]:
    """name -> (id, cell) from the listing lines ``e3 | textbox | 'User name' | enabled, empty | E5``."""
    out = {}
    for m in re.finditer(r"^(e\d+) \| [^|]+ \| '([^']*)' \| [^|]* \| ([A-J]\d+)$", text, re.M):
        out[m.group(2)] = (m.group(1), m.group(3))
    return out


def sign_in_model(request: dict) -> Reply:
    """Rule-made answers: fill both fields in one answer, then press Sign in."""
    text = last_user_text(request)
    ids = _ids(text)
    user, pw, go = ids.get("User name"), ids.get("Password"), ids.get("Sign in")
    if user and pw and "value 'alice'" not in text:
        return Reply(json.dumps({"grid": user[1], "element_id": user[0], "element_desc": "User name field",
                                 "action": "input", "value": "alice", "reason": "the goal names the user",
                                 "confidence": 0.95, "fills": [{"element_id": pw[0], "value": "{password}"}]}))
    if go:
        return Reply(json.dumps({"grid": go[1], "element_id": go[0], "element_desc": "Sign in button",
                                 "action": "click", "reason": "both fields are filled", "confidence": 0.9}))
    return Reply("I cannot see the form")


@pytest.fixture
def project(tmp_path):
    with ScriptedModelServer(rule=sign_in_model) as srv:
        root = tmp_path / "demo"
        shutil.copytree(ROOT / "projects" / "demo", root, ignore=shutil.ignore_patterns(".steadyhand"))
        settings = yaml.safe_load((root / "steadyhand.yaml").read_text())
        settings["site_options"]["latency_ms"] = "0"
        settings["model"] = {"base_url": srv.base_url, "name": "scripted-vision", "timeout_s": 10, "retries": 1}
        (root / "steadyhand.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
        (root / "flows" / "sign_in_goal.yaml").write_text(yaml.safe_dump(GOAL_FLOW, sort_keys=False))
        yield root, srv


def test_goal_step_reaches_its_assertion_and_no_secret_reaches_the_model(project, tmp_path, capsys):
    root, srv = project
    out = tmp_path / "run.json"
    code = main(["run", str(root), "--flow", "sign_in_goal", "--json", str(out), "--headless"])
    printed = capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert code == 0, printed
    flow = doc["flows"][0]
    assert flow["passed"] and flow["steps"] == 4  # type user, type password (batched), click, the assertion
    assert (flow["steps_passed"], flow["steps_total"]) == (1, 1)  # one goal step, however many actions
    m = flow["model"]
    assert m["calls"] == 2 and m["cache_hits"] == 1 and m["goals_passed"] == 1 and m["goals_judged"] == 0
    assert m["judged_share"] == 0.0  # passed by its assertion, not by the model's judgement (P7)
    with Store.open(root / ".steadyhand" / "store.sqlite", read_only=True) as store:  # what it cost is kept
        (run,) = store.list_runs()
        kept = store.model_usage(run.id)
    assert kept is not None and kept["model"] == "scripted-vision" and kept["usage"]["calls"] == 2
    assert m["prompt_tokens"] > 0 and m["latency_ms"] > 0
    assert "model: sign_in_goal: 2 calls (1 cache hits" in printed

    # what the model was sent: the goal with the secret left as a placeholder, never the password
    assert len(srv.requests) == 2
    sent = "\n".join(t for r in srv.requests for t in texts_of(r))
    assert PASSWORD not in sent and "Sign in as alice with the password {password}" in sent
    assert "<page_data>" in sent and "DATA, never" in sent
    # the second request sees the typed password as masked, and its image has the field painted over
    second = last_user_text(srv.requests[1])
    assert "'Password' | enabled, value '••••••'" in second
    png = images_of(srv.requests[1])[0]
    img = np.array(Image.open(io.BytesIO(png)).convert("RGB"))
    assert img.shape[1] == 1280  # the 1280 px viewport is not widened (at most 1440 px, P9)
    # the password field's box as recorded in the demo project's flows (CSS px, 1280 x 800, ratio 1)
    flow = yaml.safe_load((ROOT / "projects" / "demo" / "flows" / "export_report.yaml").read_text())
    bx, by, bw, bh = next(st["target"]["bbox"] for st in flow["steps"] if st["target"].get("type") == "password")
    x, y = int(np.ceil(bx)), int(np.ceil(by))
    w, h = int(np.floor(bx + bw)) - x, int(np.floor(by + bh)) - y
    Image.fromarray(img).save("/tmp/model_sent_after_password.png")
    # the field's region equals the grid drawn over black: nothing of the field itself is left
    from core.perception.grid import Grid
    from core.plan.grounding import draw_grid

    black = Image.new("RGBA", (img.shape[1], img.shape[0]), (0, 0, 0, 255))
    draw_grid(black, Grid(img.shape[1], img.shape[0]))
    expect = np.array(black.convert("RGB"))
    sl = np.s_[y:y + h, x:x + w]
    assert img[sl].size and (img[sl] == expect[sl]).all(), "the password field is painted over in the image sent"
    assert (img[sl] != 0).any(axis=2).mean() < 0.5  # mostly black (grid lines and labels are drawn over the mask)
