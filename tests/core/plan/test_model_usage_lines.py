"""The model's lines in the run summary, and the P7 alarm."""
from __future__ import annotations

from core.plan.usage import judged_share, usage_lines


def test_lines_and_alarm():
    assert usage_lines({}) == []
    ok = {"calls": 2, "cache_hits": 1, "rule_decisions": 0, "errors": 0, "prompt_tokens": 900,
          "completion_tokens": 40, "latency_ms": 12.3, "goals_passed": 4, "goals_judged": 1}
    lines = usage_lines({"sign_in": ok})
    assert lines == ["model: sign_in: 2 calls (1 cache hits, 0 by rules, 0 failed), 900+40 tokens, 12 ms"]
    assert judged_share(ok) == 0.25
    bad = {**ok, "goals_judged": 2, "goals_passed": 5}  # 40 % judged by the model
    lines = usage_lines({"sign_in": bad})
    assert len(lines) == 2 and "ALARM 40% of the goals passed by the model's judgement" in lines[1]
    assert "(above 30%): write assertions" in lines[1] and "P7" not in lines[1]  # it said "(above 30%, P7)"
    assert judged_share({"goals_passed": 0}) == 0.0
