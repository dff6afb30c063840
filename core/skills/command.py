"""``steadyhand skills list | show | approve | reject | retire | edit | export | import | upkeep``.

The skill library of one project (its skill space: the project's name is
the product, K7) on the command line, with the rules of
:mod:`core.skills.library`, :mod:`core.skills.files` and
:mod:`core.skills.upkeep`.  Exit codes: 0 done; 1 an import skipped a
skill reviewed here (reported, not replaced); 2 bad input (no project, an
unknown or ambiguous id, a skill not in the state the command needs, a bad
skill file - then nothing is imported).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from core.progress import counted
from core.domain.text import printable

__all__ = ["add_skills_parser", "skills_command", "skills_subparsers"]

EXIT_OK, EXIT_SKIPPED, EXIT_INPUT = 0, 1, 2

_EXAMPLES = {
    "learn": "steadyhand skills learn projects/demo 3f2a9c",
    "list": "steadyhand skills list projects/demo --state proposed --json",
    "show": "steadyhand skills show projects/demo sk-3f2a",
    "approve": "steadyhand skills approve projects/demo sk-3f2a",
    "reject": "steadyhand skills reject projects/demo sk-3f2a --reason 'pressed Save instead of Cancel'",
    "retire": "steadyhand skills retire projects/demo sk-3f2a --reason 'the popup is gone since 2.4'",
    "edit": "steadyhand skills edit projects/demo sk-3f2a.json",
    "export": "steadyhand skills export projects/demo team-skills.json",
    "import": "steadyhand skills import projects/demo team-skills.json --replace-approved",
    "upkeep": "steadyhand skills upkeep projects/demo --dry-run",
}


def add_skills_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``skills`` and its subcommands to the ``steadyhand`` parser; returns the ``skills`` parser."""
    raw = argparse.RawDescriptionHelpFormatter
    h = sub.add_parser("skills", help="the skill library: review, retire, share (export/import) and keep skills",
                       description="Skills are learnt from failures and their corrections; a proposed skill fires "
                                   "only once approved. Retiring one stops it at the next decision.",
                       epilog="Example:\n  " + "\n  ".join(_EXAMPLES.values()), formatter_class=raw)
    subs = h.add_subparsers(dest="skills", required=True)

    def cmd(name: str, text: str, *, with_id: bool = False) -> argparse.ArgumentParser:
        c = subs.add_parser(name, help=text, description=text, epilog=f"Example:\n  {_EXAMPLES[name]}",
                            formatter_class=raw)
        c.add_argument("project", help="project folder (holds steadyhand.yaml)")
        if with_id:
            c.add_argument("id", help="skill id or a unique prefix (from `skills list`)")
        return c

    ls = cmd("list", "list the project's skills, best quality first")
    ls.add_argument("--state", choices=("proposed", "approved", "rejected", "retired"), help="only this state")
    ls.add_argument("--kind", choices=("do", "deny"), help="only this kind")
    ls.add_argument("--json", nargs="?", const="-", metavar="PATH",
                    help="JSON (a list of skills with their hit counts) to PATH, or to standard output ('-', or no PATH)")
    sh = cmd("show", "one skill: trigger, actions, scope, provenance, validation, where it fired", with_id=True)
    sh.add_argument("--json", nargs="?", const="-", metavar="PATH",
                    help="JSON (the skill and its latest uses) to PATH, or to standard output ('-', or no PATH)")
    ap = cmd("approve", "approve a proposed skill: it fires from the next decision on", with_id=True)
    ap.add_argument("--force", action="store_true",
                    help="approve although its validation did not pass (or it has none); said in its review reason")
    ap.add_argument("--irreversible-ok", action="store_true",
                    help="let it act on an irreversible step - only the steps it was learnt on")
    ap.add_argument("--restore", action="store_true",
                    help="approve a retired skill again (retired by upkeep or a person), or renew an approved one "
                         "held below the review quality (it stopped firing), under the same rules")
    for name, text in (("reject", "reject a proposed skill (a reason is required)"),
                       ("retire", "retire a skill: it stops firing at once (a reason is required)")):
        c = cmd(name, text, with_id=True)
        c.add_argument("--reason", required=True, help="why (kept with the skill)")
    ed = cmd("edit", "replace a proposed or approved skill by an edited copy (JSON or YAML; its id names it)")
    ed.add_argument("file", help="one skill (as `skills show --json` prints its 'skill', or a one-skill file)")
    ex = cmd("export", "write skills to a JSON skill file (secrets become {placeholders})")
    ex.add_argument("file", help="where to write (.json)")
    ex.add_argument("--state", action="append", choices=("proposed", "approved", "rejected", "retired"),
                    help="states to export (repeatable; default: approved)")
    ex.add_argument("--id", action="append", metavar="ID", help="only these skills (repeatable)")
    im = cmd("import", "read a skill file; all of it is checked first and nothing is stored if a part is bad")
    im.add_argument("file", help="a skill file (.json, .yaml)")
    im.add_argument("--replace-approved", action="store_true",
                    help="replace skills reviewed here (approved, rejected, retired) with the same id (else they are "
                         "reported and skipped)")
    im.add_argument("--keep-state", action="store_true",
                    help="keep the file's rejected and retired states (an approved skill there still arrives "
                         "proposed here; default: every imported skill arrives proposed)")
    up = cmd("upkeep", "the weekly review: merge alike skills, list the review area and conflicts")
    up.add_argument("--dry-run", action="store_true", help="report the merges without making them")
    up.add_argument("--json", metavar="PATH", help="also write the findings as JSON")
    h.set_defaults(skill_subcommands=subs)
    return h


def skills_subparsers(skills_parser: argparse.ArgumentParser) -> argparse._SubParsersAction:
    """The subcommands of ``skills`` (from :func:`add_skills_parser`), for another module to add one.

    A subcommand added there sets ``skills_handler=<function(args) -> exit code>`` with
    ``set_defaults``; :func:`skills_command` hands it the arguments.
    """
    return skills_parser.get_default("skill_subcommands")


def _emit_json(target: str, text: str) -> None:
    """``--json [PATH]`` of ``list`` / ``show``: ``text`` (a JSON document, secrets already masked) on stdout for
    ``-``, else written to the file PATH (its folder created), like every command's ``--json PATH``."""
    if target == "-":
        print(text)
        return
    Path(target).parent.mkdir(parents=True, exist_ok=True)
    Path(target).write_text(text + "\n", encoding="utf-8")


def _err(msg: str) -> int:
    print(f"steadyhand: error: {msg}", file=sys.stderr)
    return EXIT_INPUT


def _resolve_id(table: Any, product: str, prefix: str) -> str:
    if table.get(prefix) is not None:
        return prefix
    hits = [s.id for s in table.list(product=product) if s.id.startswith(prefix)]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise KeyError(f"no skill {prefix!r} in this project (steadyhand skills list)")
    raise KeyError(f"{prefix!r} names {len(hits)} skills ({', '.join(hits[:5])}); give more of the id")


def _row(s: Any, counts: dict[str, int]) -> str:
    hits = counts.get("passed", 0)
    tried = sum(counts.get(k, 0) for k in ("passed", "failed", "precondition"))
    last = s.last_used_at.strftime("%Y-%m-%d %H:%M") if s.last_used_at else "never"
    scope = "/".join(x for x in (s.scope.task_type, s.scope.url_prefix, s.scope.component) if x) or "-"
    return (f"{s.id:<16} {s.state:<9} {s.kind:<4} q={s.quality:.2f} hits {hits}/{tried} last {last:<16} "
            f"scope {printable(scope)}  {printable(s.description)}")


_FIELD_WORDS = {"name": "accessible name", "label": "label", "text": "text", "placeholder": "placeholder",
                "test_id": "test id"}


def _condition(c: Any) -> str:
    """What a trigger condition asks of the page, in words: ``a button with accessible name 'Cancel', in a
    dialog``; a ``{target.label}`` placeholder reads ``label '{target.label}' (the flow step's field's)``."""
    parts = []
    for f, word in _FIELD_WORDS.items():
        v = getattr(c, f)
        if v:
            whose = ""
            for ph in re.findall(r"\{(target|step)\.(\w+)\}", v):
                whose = f" (the {_FIELD_WORDS.get(ph[1], ph[1])} of the flow step's field)" if ph[0] == "target" \
                    else " (of the flow step)"
            parts.append(f"{word} {v!r}{whose}")
    role = f"a {c.role}" if c.role else "an element"
    return f"{role}{' with ' + ', '.join(parts) if parts else ''}" + (", in a dialog" if c.in_dialog else "")


def _show(s: Any, uses: list[Any]) -> str:
    t = s.trigger
    lines = [f"{printable(s.id)} [{s.state}{', ' + printable(s.review_reason) if s.review_reason else ''}] {s.kind}: "
             f"{printable(s.description)}",
             f"  quality {s.quality:.2f}, {counted(s.successes, 'success', 'successes')}, {counted(s.failures, 'failure')}; "
             f"irreversible steps: {'yes, ' + ', '.join(s.provenance.step_ids) if s.irreversible_ok else 'no'}",
             "  trigger:"]
    if t.popup:  # a skill of a popup kind: no element named, the popup's meaning and the person's choice
        from .kinds import kind_skill_words

        lines.append(f"    {printable(kind_skill_words(s))}")
    lines += [f"    present: {_condition(c)}" for c in t.required]
    lines += [f"    absent:  {_condition(c)}" for c in t.absent]
    for label, val in (("url", t.url_pattern), ("title", t.title), ("dialog", "" if t.dialog is None else
                       ("open" if t.dialog else "none")), ("dialog name", t.dialog_name),
                       ("step action", t.step_action)):
        if val:
            lines.append(f"    {label}: {val}")
    if t.step_target is not None:
        lines.append(f"    the flow step's field is {_condition(t.step_target)}")
    lines.append("  actions:")
    for i, a in enumerate(s.actions, 1):
        tgt = a.target.label_text or a.target.role or "-"
        val = f" {a.action.value!r}" if a.action.value else ""
        on = f"the popup's control that means {a.choice!r}" if a.choice else \
            f"{a.target.role or 'element'} {tgt!r}"
        lines.append(f"    {i}. {a.action.kind}{val} on {on}"
                     + (f"  ({a.note})" if a.note else ""))
    for v in s.verify:
        lines.append(f"  verify: {v.kind}" + (f" {v.element.describe()}" if v.element else "")
                     + (f" {v.expected!r}" if v.expected else ""))
    sc, p, va = s.scope, s.provenance, s.validation
    lines.append(f"  scope: product {sc.product!r}" + "".join(f", {k} {getattr(sc, k)!r}" for k in
                 ("task_type", "url_prefix", "title", "component") if getattr(sc, k)))
    lines.append(f"  from: {p.source} run {p.run_id or '-'} flow {p.flow or '-'} steps {', '.join(p.step_ids) or '-'}"
                 + (f", correction #{p.correction_id}" if p.correction_id else "")
                 + (f", heal #{p.heal_id}" if p.heal_id else "")
                 + (f", cause {p.cause} ({p.cause_confidence:.0%})" if p.cause else ""))
    lines.append(f"  validation: {va.passed}/{va.cases} passed, failure "
                 f"{'reproduced' if va.reproduced else 'not reproduced'}"
                 + "".join(f"\n    - {r}" for r in va.reasons))
    if uses:
        lines.append("  fired:")
        lines += [f"    {u.at:%Y-%m-%d %H:%M} run {u.run_id} {u.flow} step {u.step_index + 1} ({u.step_id}): "
                  f"{u.outcome}" + (f" - {u.reason}" if u.reason else "") for u in uses[:20]]
    else:
        lines.append("  fired: never")
    return "\n".join(lines)


def _use_json(u: Any) -> dict[str, Any]:
    return {"run_id": u.run_id, "flow": u.flow, "step_index": u.step_index, "step_id": u.step_id,
            "outcome": u.outcome, "reason": u.reason, "ms": u.ms, "at": u.at.isoformat() if u.at else None}


def skills_command(args: argparse.Namespace) -> int:
    """Run one ``skills`` subcommand; prints to stdout, errors to stderr (one line)."""
    handler = getattr(args, "skills_handler", None)
    if handler is not None:  # a subcommand another module added (skills_subparsers)
        return int(handler(args))
    from dataclasses import replace

    from core.domain.skill import skill_to_mapping
    from core.project import ProjectError
    from core.store import StoreError, store_path, store_present
    from core.store.skills import SkillConflictError, SkillTable

    from . import library
    from .files import SkillFileError, export_skills, import_skills, read_one_skill
    from .upkeep import run_upkeep

    root = Path(args.project)
    if not (root / "steadyhand.yaml").is_file():
        return _err(f"{root}: not a project folder (no steadyhand.yaml)")
    try:
        ctx = library.review_context(root)  # the studio's review uses the same context
    except ProjectError as exc:
        return _err(str(exc))
    product, settings, secrets = ctx.product, ctx.settings, dict(ctx.secrets)
    writes = args.skills not in ("list", "show", "export")
    if not store_present(store_path(root)) and not writes:
        if args.skills == "list":
            if args.json:
                _emit_json(args.json, "[]")
            else:
                print("no skills (no run of this project was recorded yet)")
            return EXIT_OK
        return _err(f"no skill {getattr(args, 'id', '')!r} in {root} (no run was recorded yet)"
                    if args.skills == "show" else f"{root}: no skills to export (no store yet)")
    try:
        store = ctx.open_store(read_only=not writes)
    except (StoreError, OSError) as exc:
        return _err(str(exc))
    with store:
        table = SkillTable(store)
        try:
            if args.skills == "list":
                skills = table.list(product=product, state=args.state, kind=args.kind)
                counts = table.use_counts()
                if args.json:
                    _emit_json(args.json, ctx.hide(json.dumps([{**skill_to_mapping(s), "uses": counts.get(s.id, {})}
                                                               for s in skills], indent=2, ensure_ascii=False)))
                else:
                    print(ctx.hide("\n".join(_row(s, counts.get(s.id, {})) for s in skills) or "no skills"))
            elif args.skills == "show":
                sid = _resolve_id(table, product, args.id)
                s, uses = table.get(sid), table.uses(skill_id=sid, limit=50)
                if args.json:  # a secret stored in clear before it was declared is masked too
                    _emit_json(args.json, ctx.hide(json.dumps({"skill": skill_to_mapping(s),
                                                               "uses": [_use_json(u) for u in uses]},
                                                              indent=2, ensure_ascii=False)))
                else:
                    print(ctx.hide(_show(s, uses)))
            elif args.skills == "approve":
                s = ctx.approve(table, _resolve_id(table, product, args.id), force=args.force,
                                irreversible_ok=args.irreversible_ok, restore=args.restore)
                print(ctx.hide(f"approved {s.id}: fires from the next decision on" +
                               (f" ({s.review_reason})" if s.review_reason else "")))
            elif args.skills == "reject":
                s = library.reject(table, _resolve_id(table, product, args.id), args.reason)
                print(f"rejected {s.id}: {s.review_reason}")
            elif args.skills == "retire":
                s = library.retire(table, _resolve_id(table, product, args.id), args.reason)
                print(f"retired {s.id}: it no longer fires ({s.review_reason})")
            elif args.skills == "edit":
                edited = read_one_skill(Path(args.file), secrets=secrets.values(), secret_names=ctx.names)
                sid = _resolve_id(table, product, edited.id)
                s = ctx.edit(table, replace(edited, id=sid))
                print(f"edited {s.id}: now {s.state}" + (f" ({s.review_reason})" if s.review_reason else ""))
            elif args.skills == "export":
                states = args.state or ["approved"]
                skills = [s for s in table.list(product=product) if s.state in states]
                if args.id:
                    wanted = {_resolve_id(table, product, i) for i in args.id}
                    skills = [s for s in skills if s.id in wanted]
                path = export_skills(skills, Path(args.file), product=product, secrets=secrets)
                print(f"exported {counted(len(skills), 'skill')} of {product!r} to {path}")
            elif args.skills == "import":
                report = import_skills(table, Path(args.file), product=product,
                                       replace_approved=args.replace_approved, keep_state=args.keep_state,
                                       secrets=secrets.values(), secret_names=ctx.names)
                print("\n".join(report.lines()))
                return EXIT_SKIPPED if report.skipped else EXIT_OK
            elif args.skills == "upkeep":
                rep = run_upkeep(table, product, settings, apply=not args.dry_run)
                print("\n".join(rep.lines()))
                if args.json:
                    Path(args.json).write_text(json.dumps(rep.to_json_dict(), indent=2) + "\n", encoding="utf-8")
        except SkillFileError as exc:
            return _err(f"{exc} (nothing imported)" if args.skills == "import" else str(exc))
        except KeyError as exc:
            return _err(str(exc.args[0]) if exc.args else "unknown skill")
        except (SkillConflictError, ValueError) as exc:
            return _err(str(exc))
    return EXIT_OK
