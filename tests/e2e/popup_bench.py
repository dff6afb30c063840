"""What the engine and an approved skill press on popups of each kind: a small measurement (issue 25 items 3, 4, 6).

``python tests/e2e/popup_bench.py [--runs N] [--json PATH]`` (from the repository, ``PYTHONPATH`` set to it)
runs the order flow of :mod:`test_popups_no_choice` over every popup kind of that test (pages of our own and
sweetalert2 11.26.25, vendored), each ``N`` times (default 1) through
:class:`~core.engine.session.ProjectSession`, with and without the approved "That's ok" skill where the kind
is about it, and prints one row per kind: runs passed / escalated, what was pressed in the popup (the
server's own record of POSTs), wrong presses (an option of a choice, a destructive or paying control),
skill uses by outcome.  Nothing here is asserted; the tests assert.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from core.store import Store  # noqa: E402
from core.store.skills import SkillTable  # noqa: E402
from test_popups_no_choice import Site, _run  # noqa: E402

#: (kind, with the skill, POST paths that are wrong presses there: an answer the person did not give).
CASES: tuple[tuple[str, bool, tuple[str, ...]], ...] = (
    ("consent", False, ("/api/consent/accept", "/api/consent/reject")),
    ("whatsnew", False, ()),
    ("fade", False, ()),
    ("consent_ok", True, ()),
    ("consent_fade", True, ()),
    ("upsell", True, ("/api/trial",)),
    ("destructive", True, ("/api/delete", "/api/cancel")),
    ("swal_whatsnew", False, ()),
    ("swal_consent", False, ("/api/swal/confirm", "/api/swal/deny")),
    ("swal_delete", False, ("/api/swal/confirm",)),
)


def measure(runs: int = 1) -> list[dict[str, object]]:
    """One row per case: ``{"kind", "skill", "runs", "passed", "escalated", "pressed", "wrong", "uses"}``."""
    site = Site()
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind, skill, wrong in CASES:
                row: dict[str, object] = {"kind": kind, "skill": skill, "runs": runs, "passed": 0, "escalated": 0}
                pressed: Counter[str] = Counter()
                uses: Counter[str] = Counter()
                for i in range(runs):
                    where = Path(tmp) / f"{kind}-{i}"
                    result, _person, _events = _run(where, site, kind, skill=skill)
                    row["passed"] = int(row["passed"]) + (result.status == "passed")  # type: ignore[arg-type]
                    row["escalated"] = int(row["escalated"]) + (result.status == "escalated")  # type: ignore[arg-type]
                    pressed.update({p: n for p, n in site.posts.items() if p != "/api/finish"})
                    if skill:
                        store = Store.open(where / kind / ".steadyhand" / "store.sqlite")
                        try:
                            uses.update(u.outcome for u in SkillTable(store).uses(skill_id="sk-00000000c00c"))
                        finally:
                            store.close()
                row["pressed"] = dict(pressed)
                row["wrong"] = sum(n for p, n in pressed.items() if p in wrong)
                row["uses"] = dict(uses)
                rows.append(row)
    finally:
        site.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    rows = measure(args.runs)
    print("| kind | skill | passed | escalated | pressed in the popup | wrong presses | skill uses |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        pressed = ", ".join(f"{p.rsplit('/', 1)[-1]} x{n}" for p, n in sorted(r["pressed"].items())) or "-"  # type: ignore[union-attr]
        uses = ", ".join(f"{k} x{n}" for k, n in sorted(r["uses"].items())) or "-"  # type: ignore[union-attr]
        print(f"| {r['kind']} | {'yes' if r['skill'] else 'no'} | {r['passed']}/{r['runs']} | {r['escalated']} | "
              f"{pressed} | {r['wrong']} | {uses} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
