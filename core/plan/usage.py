"""The model's figures in a run summary (calls, tokens, latency, cache hits; the P7 judge share)."""
from __future__ import annotations

from typing import Mapping

__all__ = ["usage_lines", "judged_share"]


def judged_share(u: Mapping[str, float]) -> float:
    """Share (0..1) of the goals passed by the model's judgement rather than an assertion (P7)."""
    passed = u.get("goals_passed", 0)
    return u.get("goals_judged", 0) / passed if passed else 0.0


def usage_lines(by_flow: Mapping[str, Mapping[str, float]], alarm_share: float = 0.3) -> list[str]:
    """One line per flow that used the model; [] when none did.

    ``model: leave_goal: 3 calls (1 cache hit, 2 by rules), 5120+210 tokens, 840 ms``; a judged share above
    ``alarm_share`` (0.3, P7) adds an alarm line.
    """
    out = []
    for flow, u in by_flow.items():
        line = (f"model: {flow}: {int(u.get('calls', 0))} calls ({int(u.get('cache_hits', 0))} cache hits, "
                f"{int(u.get('rule_decisions', 0))} by rules, {int(u.get('errors', 0))} failed), "
                f"{int(u.get('prompt_tokens', 0))}+{int(u.get('completion_tokens', 0))} tokens, "
                f"{u.get('latency_ms', 0):.0f} ms")
        out.append(line)
        share = judged_share(u)
        if share > alarm_share:
            out.append(f"model: {flow}: ALARM {share:.0%} of the goals passed by the model's judgement, not by an "
                       f"assertion (above {alarm_share:.0%}): write assertions for them")
    return out
