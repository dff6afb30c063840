"""The ``steadyhand`` command: init, run, record, studio, bench, import-codegen.

Exit codes (:mod:`core.exitcodes`, the one table every command uses): 0 all
flows passed; 1 a flow failed; 3 a flow escalated (needs a human) and none
failed; 2 bad input (project, flow, argument or parameter); 4 the environment
is broken (Chromium missing, target unreachable, browser failed); 130
interrupted.  A run's code comes from its results' error kinds
(:func:`core.engine.report.exit_code`).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from core.progress import counted
from core.engine.report import FlowStats, exit_code, result_label, steps_passed, summary_json, summary_text
from core.cliopts import RUN_DEFAULTS, write_json
from core.domain.resources import bundled_project, module_name, source_tree
from core.domain.text import printable
from core.exitcodes import EXIT_ENVIRONMENT, EXIT_ESCALATED, EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK

__all__ = ["main", "EXIT_OK", "EXIT_FAILED", "EXIT_INPUT", "EXIT_ESCALATED", "EXIT_ENVIRONMENT", "EXIT_INTERRUPTED"]


def _err(msg: str) -> None:
    """One error line on stderr; file names, flow names and page texts in it lose any terminal escape."""
    print(f"steadyhand: error: {printable(msg)}", file=sys.stderr)


def _writable(path: Path) -> bool:
    """True when ``path`` can be written (its folder is created when missing); ``-`` (standard output) can."""
    if str(path) == "-":
        return True
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8"):
            pass
        return True
    except OSError:
        return False


#: Environment variable that sets ``run --base-url`` (the flag wins when both are given).
BASE_URL_ENV = "STEADYHAND_BASE_URL"


def _base_url_problem(url: str | None) -> str:
    """Why ``url`` cannot be a base URL to run against ("" when it can, or when none is given)."""
    if not url:
        return ""
    from urllib.parse import urlsplit

    u = urlsplit(url)
    if u.scheme not in ("http", "https") or not u.netloc:
        return f"--base-url / {BASE_URL_ENV} expects an http(s) URL such as http://127.0.0.1:8000/app/, got {url!r}"
    return ""


def _cmd_run(args: argparse.Namespace) -> int:
    from core.engine.heap import freeze_startup
    from core.engine.session import ProjectSession, SessionError
    from core.perception.browser import BrowserLaunchError
    from core.store import StoreUnavailableError
    from core.project import ProjectError, load_project

    from core.project.loader import check_run_data_dir
    from core.cliopts import ConfigError, apply_run_defaults, keyword_matcher

    flag_base_url = args.base_url  # given on the command line (None: it may come from the environment or a file)
    try:
        notes = apply_run_defaults(args, args.project)  # STEADYHAND_* and [tool.steadyhand] (core.cliopts)
    except ConfigError as exc:
        _err(str(exc))
        return EXIT_INPUT
    try:
        project = load_project(args.project, skip_invalid=True)  # one broken flow file never stops the others
        check_run_data_dir(project.root)  # the store and screenshots stay inside the project (no link out)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    if project.settings.site and args.base_url:  # a bundled site runs on its own port: no base URL applies
        if flag_base_url:
            _err(f"this project runs its bundled {project.settings.site} site; --base-url applies only to projects "
                 "with a base_url")
            return EXIT_INPUT
        # from STEADYHAND_BASE_URL or [tool.steadyhand] (e.g. set for an exported script): not for this project
        where = next((n.rsplit(" from ", 1)[1] for n in notes if n.startswith("base-url=")), BASE_URL_ENV)
        notes = [n for n in notes if not n.startswith("base-url=")]
        print(f"steadyhand: this project runs its bundled {project.settings.site} site; the base URL "
              f"{args.base_url} from {where} is ignored", file=sys.stderr, flush=True)
        args.base_url = None
    if not args.quiet:
        for note in notes:
            print(f"steadyhand: default {note}", file=sys.stderr, flush=True)
    names = args.flow or list(project.flows)
    # the invalid flow files this run would have run: every one, or those named by --flow
    broken = (list(project.invalid.values()) if not args.flow else
              [err for n in args.flow if n not in project.flows and (err := project.invalid_flow(n)) is not None])
    if args.flow:
        names = [n for n in names if n in project.flows or project.invalid_flow(n) is None]
    elif project.invalid and project.flows:
        print(f"steadyhand: {counted(len(project.invalid), 'flow file')} invalid, not run; the other flows run",
              file=sys.stderr, flush=True)
    for err in broken:
        _err(f"invalid flow file, not run: {err}")
    if broken and not names:  # every flow asked for is invalid: reports that say so, never no file
        _write_reports(args, project, {}, [], [], {}, broken, [])
        return EXIT_INPUT
    plan = None
    if args.resume:  # continue a killed or failed run from its last checkpoint (core.engine.resume)
        from core.engine.resume import ResumeError, resume_target

        if args.no_store:
            _err("--resume reads the run from the project's store; it cannot be used with --no-store")
            return EXIT_INPUT
        if args.shard is not None:
            _err("--resume continues one run; it cannot be used with --shard")
            return EXIT_INPUT
        try:
            resumed_flow, plan = resume_target(project, args.resume)
        except ResumeError as exc:
            _err(str(exc))
            return EXIT_INPUT
        if args.flow and args.flow != [resumed_flow]:
            _err(f"--resume {args.resume}: that run is of flow {resumed_flow!r}, not {', '.join(args.flow)}")
            return EXIT_INPUT
        names = [resumed_flow]
        for note in plan.notes:
            print(f"  resume: {note}", file=sys.stderr, flush=True)
    if args.keyword is not None:
        try:
            match = keyword_matcher(args.keyword)
        except ValueError as exc:
            _err(str(exc))
            return EXIT_INPUT
        names = [n for n in names if match(n)]
        if not names:
            why = f"-k {args.keyword!r}: no flow matches (flows: {', '.join(project.flows) or 'none'})"
            _err(why)
            if args.json:  # CI reads a document saying why, never an empty file
                try:
                    write_json(args.json, {"passed": False, "flows": [], "invalid": [],
                                           "error": {"kind": "parameter", "reason": why, "not_run": []}})
                except OSError as exc:
                    _err(f"{args.json}: cannot write the JSON summary: {exc.strerror or exc}")
            return EXIT_INPUT
    unknown = [n for n in names if n not in project.flows]
    if unknown:
        _err(f"{project.root}: no flow named {', '.join(unknown)} (flows: {', '.join(project.flows) or 'none'})")
        return EXIT_INPUT
    if not names:
        _err(f"{project.root}: the project has no flows (add files under flows/)")
        return EXIT_INPUT
    if args.flow and project.invalid and not broken:
        print(f"steadyhand: note: {counted(len(project.invalid), 'other flow file')} of the project are invalid "
              f"(not asked for): {', '.join(Path(f).name for f in project.invalid)}", file=sys.stderr, flush=True)
    bad = [p for p in args.param or [] if "=" not in p or not p.split("=", 1)[0]]
    if bad:
        _err(f"--param expects NAME=VALUE, got {bad[0]!r}")
        return EXIT_INPUT
    if args.episodes < 1:
        _err(f"--episodes must be at least 1, got {args.episodes}")
        return EXIT_INPUT
    params = dict(p.split("=", 1) for p in args.param or [])
    from core.engine.session import param_error

    known = _param_names(project, names)
    strange = [n for n in params if n not in known]
    if strange:
        _err(f"--param {strange[0]}: no flow of this run has a parameter of that name "
             f"(parameters: {', '.join(sorted(known)) or 'none'})")
        return EXIT_INPUT
    if args.retries and args.no_store:
        _err("--retries reads what a failed run wrote from the project's store; it cannot be used with --no-store")
        return EXIT_INPUT

    unset = {n: err for n in names if (err := param_error(project, project.flows[n], params)) is not None}
    for err in unset.values():  # a {name} with no value: that flow file is invalid, the other flows still run
        _err(f"invalid flow file, not run: {err}")
    broken = [*broken, *unset.values()]
    names = [n for n in names if n not in unset]
    if not names:  # every flow of the run is invalid: reports that say so, never no file
        _write_reports(args, project, {}, [], [], {}, broken, [])
        return EXIT_INPUT
    base_url = args.base_url or None  # the flag, else STEADYHAND_BASE_URL, else [tool.steadyhand] (cliopts)
    problem = _base_url_problem(base_url)
    if problem:
        _err(problem)
        return EXIT_INPUT
    endpoint = (args.browser_endpoint or "").strip() or None
    if endpoint:  # a browser kept elsewhere (core.perception.remote); off this machine only as the project allows
        problem = _endpoint_problem(project, endpoint, args.on_escalation)
        if problem:
            _err(problem)
            return EXIT_INPUT
    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    if args.junit and not _writable(Path(args.junit)):
        _err(f"{args.junit}: cannot write the JUnit XML there")
        return EXIT_INPUT
    if args.html and args.no_store:
        _err("--html reads the run from the project's store; it cannot be used with --no-store")
        return EXIT_INPUT
    ep_plan: dict[str, list[int]] = {n: list(range(args.episodes if project.flows[n].episode else 1)) for n in names}
    if args.shard is not None:  # run --shard i/n: this CI job's share of the flow runs (core.engine.shard)
        from core.engine.shard import ShardError, parse_shard, shard_units

        try:
            shard = parse_shard(args.shard)
        except ShardError as exc:
            _err(str(exc))
            return EXIT_INPUT
        ep_plan = shard_units(names, {n: args.episodes for n in names if project.flows[n].episode}, shard)
        total = sum(len(v) for v in ep_plan.values())
        if not args.quiet:
            print(f"steadyhand: shard {shard}: {counted(total, 'flow run')}: "
                  f"{', '.join(ep_plan) or 'none (more shards than flow runs)'}", file=sys.stderr, flush=True)
        names = list(ep_plan)
        if not names:  # more shards than flow runs: nothing to run, valid empty reports
            return _empty_shard(args, project)
    stats: dict[str, FlowStats] = {n: FlowStats(n) for n in names}
    model_use: dict[str, dict[str, float]] = {}  # per flow: what the model cost (P9), when one is configured
    results = []
    seeds: list[int | None] = []
    from core.engine.screen import ChangeLines

    change_lines = ChangeLines()

    from core.engine.explain import escalation_lines, recovery_line
    from core.engine.skilled import skill_line

    from core.engine.events import StepFinished
    from core.progress import Progress

    total_runs = sum(len(ep_plan[n]) for n in names)
    reuses = 0  # pending heals reused, under -q
    bar = Progress(total_runs, "flows", enabled=not args.quiet)

    def say(line: str) -> None:  # printed even with -q (above the bar when there is one): never silent
        line = printable(line)  # names and page texts: no terminal escapes reach the terminal
        if bar.enabled:
            bar.log(line)
        else:
            print(line, file=sys.stderr, flush=True)

    def progress(event: object) -> None:  # screens that changed against their baseline, alerts (R1); escalations
        if isinstance(event, StepFinished):
            bar.step()
        skill = skill_line(event)  # a skill's use (K6), one line
        recovered = recovery_line(event)  # what the engine did that no step says: a popup closed, a rollback
        for line in (change_lines(event) + escalation_lines(event) + ([skill] if skill else [])
                     + ([recovered] if recovered else [])):
            bar.log(printable(line))

    from core.engine.retry import retry_refusal

    failures = 0  # flow runs that did not pass (--maxfail), retries not counted
    stopped: list[tuple[str, str, str]] = []  # flows --maxfail kept from running
    retried: list[Any] = []  # --retries: the runs that were run again, in order
    reruns: dict[str, list[Any]] = {}  # run id of a flow's last run -> its earlier runs (retried), oldest first
    retry_no: dict[str, int] = {}  # run id of a retry -> its number (1..N)
    refused: dict[str, str] = {}  # run id -> why it was not retried
    args.retry_info = (reruns, retry_no, refused)  # read by _write_reports
    control, cdp_port = None, None
    if args.on_escalation == "wait":  # a person (or a script over CDP) takes over, then hands back
        from core.engine.handback import WaitControl
        from core.perception.browser import CDP_HOST, CdpPortInUse, check_cdp_port, free_cdp_port

        cdp_port = args.cdp_port or free_cdp_port()
        try:
            check_cdp_port(cdp_port)  # taken: Chromium would bind [::1] and the endpoint printed would be another's
        except CdpPortInUse as exc:
            _err(str(exc))
            return EXIT_INPUT if args.cdp_port else EXIT_ENVIRONMENT
        control = WaitControl(project.data_dir, cdp_endpoint=f"http://{CDP_HOST}:{cdp_port}", project=args.project,
                              timeout_s=args.takeover_timeout)
    try:
        with ProjectSession(project, headless=args.headless, emit=progress,
                            use_store=not args.no_store, screenshots=not args.no_screenshots,
                            control=control, cdp_port=cdp_port, base_url=base_url,
                            browser_endpoint=endpoint, trace=args.trace or "off",
                            writes_seen=bool(args.retries)) as session, bar:
            freeze_startup()  # the process is ours: its start-up heap is not walked again (core.engine.heap)
            if control is not None:  # the endpoint Chromium really bound, checked to be this run's browser
                endpoint = session.driver.cdp_endpoint if session.driver is not None else ""
                print(f"takeover: waiting on escalations; CDP {endpoint}", file=sys.stderr, flush=True)
            for name in names:
                flow = project.flows[name]
                st = stats[name]
                st.task = flow.episode.task if flow.episode else ""
                for ep in ep_plan[name]:  # every episode, or this shard's (--shard)
                    if args.maxfail and failures >= args.maxfail:
                        break
                    seed = args.seed + ep if flow.episode else None
                    bar.start_item(f"{name}#{seed}" if flow.episode else name, None if flow.episode else len(flow.steps))
                    result = session.run_flow(flow, params=params, seed=seed, resume=plan)
                    earlier: list[Any] = []
                    for attempt in range(1, args.retries + 1):  # --retries: only a run that wrote nothing
                        book = session.writes_seen.seen.pop(result.run_id, {}) if session.writes_seen else None
                        why = retry_refusal(session.store, result, flow, tuple(project.settings.secrets), book)
                        if why:
                            if not result.passed and result.error_kind != "unreachable":
                                refused[result.run_id] = why
                                say(f"  {name}: not retried: {why}")
                            break
                        say(f"  {name}: {result_label(result)}; retry {attempt} of {args.retries} (the failed run "
                            f"wrote nothing)")
                        earlier.append(result)
                        retried.append(result)
                        result = session.run_flow(flow, params=params, seed=seed, resume=None)
                        retry_no[result.run_id] = attempt
                    if earlier:
                        reruns[result.run_id] = earlier
                    media = getattr(session.store, "media_errors", None)
                    if media:  # a full disk: said once per flow, the steps are recorded all the same
                        print(f"steadyhand: warning: {media[0]}" + (f" (and {len(media) - 1} more)" if len(media) > 1
                                                                    else "")
                              + "; the run's steps are recorded, without these screenshots", file=sys.stderr)
                        media.clear()
                    if result.error_kind == "unreachable":
                        results.append(result)
                        seeds.append(seed)
                        st.add(result)
                        raise _Unreachable(result.error)  # every other flow would say the same
                    results.append(result)
                    seeds.append(seed)
                    st.add(result)
                    failures += 0 if result.passed else 1
                    for k, v in session.model_usage.pop(result.run_id, {}).items():
                        model_use.setdefault(name, {})[k] = round(model_use.get(name, {}).get(k, 0) + v, 1)
                    gt = getattr(session.site, "ground_truth", None)
                    if gt is not None:
                        st.ground_truth = gt()
                    extra = f" reward={result.reward:+.2f}" if result.reward is not None else ""
                    tag = f"{name}#{seed}" if flow.episode else name
                    label = result_label(result)  # "passed with help" when a person acted
                    if result.by_hand:
                        label += f" (by hand: {result.by_hand})"
                    done = f"{steps_passed(result)}/{result.total_steps or len(result.steps)} steps passed"
                    bar.log(printable(f"  {tag}: {label}{extra} ({done}, "
                                      f"{result.seconds:.1f}s)"))
                    bar.advance()
                    for note in session.heal_notes.pop(result.run_id, []):  # printed even with -q: never silent
                        if args.quiet and _is_reuse_note(note):
                            reuses += 1  # -q: counted, said once after the summary
                            continue
                        say(f"    {note}")
                if args.maxfail and failures >= args.maxfail:
                    left = [n for n in names if n not in stats_run(results)]
                    stopped = [(n, "maxfail", f"stopped after {counted(failures, 'flow run')} did not pass "
                                              f"(--maxfail {args.maxfail})") for n in left]
                    if left:
                        say(f"steadyhand: stopped after {counted(failures, 'flow run')} did not pass; not run: "
                            f"{', '.join(left)}")
                    break
    except (_Unreachable, BrowserLaunchError, StoreUnavailableError, SessionError) as exc:
        # the environment broke (or a secret is missing) part way: what ran is in the table and the reports
        kind, code = (("unreachable", EXIT_ENVIRONMENT) if isinstance(exc, _Unreachable) else
                      ("browser", EXIT_ENVIRONMENT) if isinstance(exc, BrowserLaunchError) else
                      ("store", EXIT_ENVIRONMENT) if isinstance(exc, StoreUnavailableError) else
                      ("parameter", EXIT_INPUT))
        _err(str(exc))
        not_run = [(n, kind, str(exc)) for n in names if n not in stats_run(results)]
        if results:  # earlier flows ran: the summary table of them, as after a run that went through
            _print_summary(args, stats, broken, retried, reuses, model_use, not_run)
        _write_reports(args, project, stats, results, seeds, model_use, broken, not_run)
        return code
    _print_summary(args, stats, broken, retried, reuses, model_use)
    _write_reports(args, project, stats, results, seeds, model_use, broken, stopped)
    return _with_invalid(exit_code(results), broken)


class _Unreachable(Exception):
    """A flow's start page could not be reached (the app is down): the run stops, every other flow would say the
    same.  The message is the run's error."""


def _print_summary(args: argparse.Namespace, stats: dict[str, Any], broken: Sequence[Any], retried: Sequence[Any],
                   reuses: int, model_use: dict[str, dict[str, float]],
                   not_run: Sequence[tuple[str, str, str]] = ()) -> None:
    """The run's summary table (standard output; standard error under ``--json -``) of the flows that ran, then
    the invalid flow files, the flows a broken environment kept from running (``not_run``: flow, kind, reason),
    the retries, the pending heals reused and the model's use."""
    out = sys.stderr if args.json == "-" else sys.stdout  # --json -: standard output holds the JSON alone
    ran = [st for st in stats.values() if st.episodes]  # --maxfail: the flows not run are not in the table
    print("\n".join(printable(line) for line in summary_text(ran).split("\n")), file=out)
    for err in broken:  # beside the table too: the summary is where a reader looks
        print(printable(f"  invalid flow file, not run: {err}"), file=out)
    if not_run:
        print(printable(f"  not run ({not_run[0][1]}): {', '.join(flow for flow, _, _ in not_run)}"), file=out)
    if retried:
        print(f"  {len(retried)} retr{'y' if len(retried) == 1 else 'ies'} (--retries): the runs before each are in "
              f"the reports, marked as retried", file=out)
    if reuses:
        print(f"  {reuses} pending heal{'' if reuses == 1 else 's'} reused, not yet reviewed: steadyhand heals list {args.project}", file=out)
    from core.plan.usage import usage_lines

    for line in usage_lines(model_use):
        print(line, file=out)


def _endpoint_problem(project: Any, url: str, on_escalation: str) -> str:
    """Why ``run --browser-endpoint url`` cannot be used for ``project`` ("" when it can): not a ws/http URL,
    a host off this machine the project does not allow (:func:`core.project.trust.endpoint_refusal`), or
    ``--on-escalation wait`` (whose takeover port belongs to a browser launched here)."""
    from core.perception.remote import EndpointError, endpoint_host, endpoint_kind, endpoint_label
    from core.project.trust import endpoint_refusal

    try:
        endpoint_kind(url)
    except EndpointError as exc:
        return str(exc)
    if on_escalation == "wait":
        return (f"--browser-endpoint {endpoint_label(url)}: --on-escalation wait opens a takeover port on a browser "
                "launched here; with a remote browser use --on-escalation stop")
    return endpoint_refusal(project.root, project.settings, endpoint_host(url), endpoint_label(url))


def _empty_shard(args: argparse.Namespace, project: Any) -> int:
    """``run --shard i/n`` whose shard has no flow run: the summary says so, ``--json`` / ``--junit`` / ``--html``
    are written without a case (valid documents a CI job can merge), and the shard passes (0)."""
    out = sys.stderr if args.json == "-" else sys.stdout
    print(f"shard {args.shard}: no flow run of this project falls in this shard", file=out)
    _write_reports(args, project, {}, [], [], {}, [], [])
    if args.html:
        from core.engine.html_report import write_html_index

        try:
            print(f"report: {write_html_index(Path(args.html), project.name, [])}", file=sys.stderr)
        except OSError as exc:
            _err(f"{args.html}: cannot write the HTML index: {exc.strerror or exc}")
    return EXIT_OK


def _param_names(project: Any, names: Sequence[str]) -> set[str]:
    """Every parameter name a ``--param`` may set for the flows ``names``: the project's and each flow's params
    and secrets, the ``{name}`` placeholders of their texts, and an episodic flow's task fields."""
    from core.project.params import placeholders, step_texts

    known = set(project.settings.params) | set(project.settings.secrets)
    for name in names:
        flow = project.flows[name]
        known |= set(flow.params) | set(flow.secrets) | set(placeholders(flow.start_url or ""))
        for st in flow.steps:
            for _, text in step_texts(st):
                known |= set(placeholders(text))
        if flow.episode:
            known |= {"utterance"} | set(flow.episode.fields)
            known |= set(re.compile(flow.episode.utterance_regex).groupindex)
    return known


def stats_run(results: Sequence[Any]) -> set[str]:
    """Names of the flows that have a run among ``results``."""
    return {r.flow for r in results}


def _write_reports(args: argparse.Namespace, project: Any, stats: dict[str, Any], results: Sequence[Any],
                   seeds: Sequence[int | None], model_use: dict[str, dict[str, float]], broken: Sequence[Any],
                   not_run: Sequence[tuple[str, str, str]]) -> None:
    """``--json``, ``--junit`` and ``--html`` of a run, also when the environment broke before every flow ran:
    then each flow not run is in the JSON (``"passed": false``, its ``error_kind`` and reason, and a top-level
    ``"error"``) and an ``<error>`` case of the JUnit, so a CI job never reads an empty file.  A report that
    cannot be written is said on stderr and the others are still written."""
    from core.plan.usage import judged_share

    if args.json:
        doc = summary_json([st for name, st in stats.items() if name in stats_run(results)])
        for entry in doc["flows"]:
            if entry["flow"] in model_use:
                use = model_use[entry["flow"]]
                entry["model"] = {**use, "judged_share": round(judged_share(use), 3)}
        reruns, retry_no, refused = getattr(args, "retry_info", ({}, {}, {}))
        from core.engine.trace import trace_file

        for entry in doc["flows"]:  # every run of each flow (retries marked with their number), with its trace
            finals = [r for r in results if r.flow == entry["flow"]]
            entry["runs"] = []
            for f in finals:
                for r in (*reruns.get(f.run_id, ()), f):
                    trace = trace_file(project.data_dir, r.run_id)
                    entry["runs"].append({"run_id": r.run_id, "status": r.status, "error_kind": r.error_kind,
                                          "retry": retry_no.get(r.run_id, 0), "retried": r in reruns.get(f.run_id, ()),
                                          "trace": str(trace) if trace is not None else None,
                                          **({"not_retried": refused[r.run_id]} if r.run_id in refused else {})})
            entry["retries"] = sum(1 for run in entry["runs"] if run["retry"])
            entry["trace"] = entry["runs"][-1]["trace"] if entry["runs"] else None  # the last run's
        for flow, kind, reason in not_run:
            doc["flows"].append({"flow": flow, "passed": False, "error_kind": kind, "steps": 0, "heals": 0,
                                 "invalid_actions": 0, "seconds": 0.0, "steps_passed": 0,
                                 "steps_total": len(project.flows[flow].steps) if flow in project.flows else 0,
                                 "heals_by_strategy": {}, "abstentions": 0, "by_hand": 0, "result": "not run",
                                 "skipped": kind == "maxfail",
                                 "stop": {"kind": kind, "reason": f"not run: {reason}", "step": None}})
        if not_run:
            doc["passed"] = False
        broke = [x for x in not_run if x[1] != "maxfail"]  # --maxfail's flows are skipped, not an error
        if broke:
            doc["error"] = {"kind": broke[0][1], "reason": broke[0][2], "not_run": [flow for flow, _, _ in broke]}
        doc["invalid"] = [{"file": err.path, "location": err.location, "error": err.detail} for err in broken]
        if broken:
            doc["passed"] = False

        try:
            write_json(args.json, doc)
        except OSError as exc:
            _err(f"{args.json}: cannot write the JSON summary: {exc.strerror or exc}")
    if args.junit:
        from core.engine.junit import run_screenshots, write_junit

        shots: dict[str, list[Path]] = {}
        if results and not args.no_store:
            from core.store import Store, StoreError

            try:
                store = Store.open(project.data_dir / "store.sqlite", read_only=True)
            except (StoreError, OSError):
                store = None
            if store is not None:
                try:
                    shots = {r.run_id: run_screenshots(store, r) for r in results}
                finally:
                    store.close()
        from core.engine.trace import trace_file

        for r in results:  # the run's trace, an attachment as the screenshots are (opened by playwright show-trace)
            trace = trace_file(project.data_dir, r.run_id)
            if trace is not None:
                shots[r.run_id] = [*shots.get(r.run_id, ()), trace]
        try:
            reruns, retry_no, _ = getattr(args, "retry_info", ({}, {}, {}))
            write_junit(Path(args.junit), results, suite=project.name, seeds=seeds, not_run=not_run,
                        screenshots=shots, reruns=reruns, retry_no=retry_no,
                        invalid=[(_invalid_name(project, err), str(err)) for err in broken])
        except OSError as exc:
            _err(f"{args.junit}: cannot write the JUnit XML: {exc.strerror or exc}")
    if args.html and (results or not_run or broken):
        from core.engine.html_report import environment_facts
        from core.perception.browser import BrowserLaunchError, find_chromium

        try:
            chromium = find_chromium(project.engine_settings.browser.executable_path)
        except BrowserLaunchError:
            chromium = None
        env = environment_facts(chromium, headless=args.headless,
                                base_url=args.base_url or os.environ.get(BASE_URL_ENV, "").strip()
                                or project.settings.base_url or "")
        reruns, retry_no, _ = getattr(args, "retry_info", ({}, {}, {}))
        every = [r for f in results for r in (*reruns.get(f.run_id, ()), f)]  # in run order, retries marked
        marks = {**{r.run_id: "retried" for rs in reruns.values() for r in rs},
                 **{rid: f"retry {n}" for rid, n in retry_no.items()}}
        invalid = [(_invalid_name(project, err), str(err)) for err in broken]
        for path in _write_html_reports(project, every, Path(args.html), env, not_run, marks, invalid):
            print(f"report: {path}", file=sys.stderr)


def _invalid_name(project: Any, err: Any) -> str:
    """The name an invalid flow file's case or row goes by in the JUnit and the HTML: its path relative to the
    project (``flows/broken.yaml``), else as the loader gave it."""
    try:
        return Path(err.path).resolve().relative_to(Path(project.root).resolve()).as_posix()
    except (ValueError, OSError):
        return str(err.path)


def _is_reuse_note(note: str) -> bool:
    """A note that a pending (unreviewed) heal was reused (:meth:`core.heal.book.HealBook.after_run`); other
    notes - a flow file filled in, a failure to record - are printed even with ``-q``."""
    return note.startswith("pending heal #") and " reused at step " in note


def _with_invalid(code: int, broken: Sequence[Any]) -> int:
    """A run with an invalid flow file never exits 0: ``EXIT_INPUT`` (2) when the flows that ran passed, else
    their own code (failed 1, escalated 3, environment 4 say more about what ran)."""
    return EXIT_INPUT if broken and code == EXIT_OK else code


def _html_target(path: Path, flow: str, n: int, total: int) -> Path:
    """Where the ``n``-th (1-based) run's HTML report goes: ``path`` itself when the command has one run, else
    ``<stem>-<flow>-<n><suffix>`` beside it, the flow name made a safe file name (no ``/``, ``..`` or control
    characters: letters, digits, ``_``, ``-`` and ``.`` kept, anything else ``_``, at most 80 characters)."""
    if total <= 1:
        return path
    safe = re.sub(r"[^\w.-]+", "_", flow, flags=re.ASCII).strip("._")[:80] or "flow"
    return path.with_name(f"{path.stem}-{safe}-{n}{path.suffix}")


def _write_html_reports(project: Any, results: Sequence[Any], path: Path, environment: dict[str, str] | None = None,
                        not_run: Sequence[tuple[str, str, str]] = (), marks: dict[str, str] | None = None,
                        invalid: Sequence[tuple[str, str]] = ()) -> list[Path]:
    """The HTML reports of an invocation: one run's report at ``path``; for several runs (or flows the broken
    environment kept from running) an index at ``path`` (the same name however many flows ran) linking
    ``<stem>-<flow>-<n>.html`` beside it, each linking back, and listing each flow not run with the reason.
    ``marks``: run id -> ``"retried"`` / ``"retry N"`` (``--retries``), added to the run's label in the index.
    ``invalid``: ``(file, error)`` of each invalid flow file not run: a row of the index each (so there is an
    index, and its headline does not say every run passed)."""
    from core.engine.html_report import IndexEntry, ReportError, index_entry, write_html_index, write_html_report
    from core.store import Store, StoreError

    several = len(results) + len(not_run) > 1 or not results or bool(marks) or bool(invalid)
    written: list[Path] = []
    entries = []
    store = None
    if results:
        try:
            store = Store.open(project.data_dir / "store.sqlite", read_only=True)
        except (StoreError, OSError) as exc:
            _err(f"no HTML report: {exc}")
            return written
    try:
        for n, r in enumerate(results):
            target = _html_target(path, r.flow, n + 1, 2 if several else 1)
            try:
                written.append(write_html_report(store, r.run_id, target, total_steps=r.total_steps or None,
                                                 environment=environment, index_href=path.name if several else ""))
                entries.append(index_entry(r, target.name))
            except (ReportError, OSError) as exc:
                _err(f"{target}: no HTML report for {r.flow}: {exc}")
                entries.append(index_entry(r, ""))
            if (marks or {}).get(r.run_id):
                entries[-1]["label"] = f"{entries[-1].get('label', '')} ({marks[r.run_id]})"
                entries[-1]["retried"] = marks[r.run_id] == "retried"  # a later run of the flow replaced it
    finally:
        if store is not None:
            store.close()
    for flow, kind, reason in not_run:
        total = len(project.flows[flow].steps) if flow in project.flows else 0
        entries.append(IndexEntry(flow=flow, status="error", label=f"not run ({kind})", steps=f"0 of {total}",
                                  heals=0, seconds="0.0 s", href="", stop_n=None, stop_href="", reason=reason))
    for file, error in invalid:
        entries.append(IndexEntry(flow=file, status="error", label="invalid flow file, not run", steps="0 of 0",
                                  heals=0, seconds="0.0 s", href="", stop_n=None, stop_href="", reason=error))
    if several:
        try:
            written.insert(0, write_html_index(path, project.name, entries, environment=environment,
                                               base_url=(environment or {}).get("base URL", "")))
        except OSError as exc:
            _err(f"{path}: cannot write the HTML index: {exc.strerror or exc}")
    return written


def _cmd_report(args: argparse.Namespace) -> int:
    """``steadyhand report RUN_ID [--project P] -o FILE.html``: 0 written, 2 bad input (unknown run, no store)."""
    from core.engine.html_report import ReportError, write_html_report
    from core.project import ProjectError, load_project
    from core.store import RunIdError, Store, StoreError, store_present

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    db = project.data_dir / "store.sqlite"
    if not store_present(db):
        _err(f"{db}: no store yet (run a flow first)")
        return EXIT_INPUT
    try:
        store = Store.open(db, read_only=True)
    except (StoreError, OSError) as exc:
        _err(str(exc))
        return EXIT_INPUT
    try:
        flow = None
        try:
            run_id = store.resolve_run_id(args.run_id)  # a full id or any unique prefix (the 8 characters shown)
            run = store.get_run(run_id)
            flow = project.flows.get(run.flow) if run is not None else None
            path = write_html_report(store, run_id, Path(args.output),
                                     total_steps=len(flow.steps) if flow is not None else None)
        except RunIdError as exc:
            _err(str(exc))
            return EXIT_INPUT
        except ReportError as exc:
            _err(str(exc))
            return EXIT_INPUT
        except OSError as exc:
            _err(f"{args.output}: cannot write the report: {exc.strerror or exc}")
            return EXIT_INPUT
    finally:
        store.close()
    print(f"report: {path}")
    return EXIT_OK


def _cmd_audit(args: argparse.Namespace) -> int:
    """``steadyhand audit``: 0 nothing found, 1 a secret was found somewhere, 2 bad input."""
    from core.engine.audit import audit_project
    from core.project import ProjectError, load_project

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    extra = [Path(p) for p in args.also or []]
    missing = [p for p in extra if not p.exists()]
    if missing:
        _err(f"--also {missing[0]}: no such file or folder")
        return EXIT_INPUT
    report = audit_project(project, extra=extra)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.clean else EXIT_FAILED


def _cmd_trust(args: argparse.Namespace) -> int:
    """``steadyhand trust [PROJECT] [--revoke | --list]``: 0 done, 2 bad input (no project, unreadable trust file)."""
    from core.project import ProjectError, load_project
    from core.project.trust import guarded_settings, revoke_trust, trust_file, trust_project, trusted_projects

    try:
        if args.list:
            entries = trusted_projects()
            for e in entries:
                what = ", ".join(f"{k}={_plain(v)}" for k, v in sorted(e.settings.items())) or "no setting that needs trust"
                print(f"{_plain(e.root)}  (trusted {e.trusted_at}: {what})")
            print(f"{counted(len(entries), 'trusted project')} in {trust_file()}")
            return EXIT_OK
        if not args.project:
            _err("give a PROJECT folder to trust (or --revoke it), or --list")
            return EXIT_INPUT
        if args.revoke:
            root = Path(args.project).expanduser().resolve()
            done = revoke_trust(root)
            print(f"{_plain(str(root))}: {'no longer trusted' if done else 'was not trusted'}")
            return EXIT_OK
        project = load_project(args.project, skip_invalid=True)
        entry = trust_project(project.root, project.settings)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except OSError as exc:
        _err(f"{trust_file()}: cannot write the list of trusted projects: {exc.strerror or exc}")
        return EXIT_INPUT
    print(f"trusted {_plain(entry.root)} on this machine (kept in {trust_file()})")
    for name, value in sorted(guarded_settings(project.settings).items()):
        print(f"  {name}: {_plain(value)}")
    print("  a change to these settings needs trusting again")
    return EXIT_OK


def _plain(text: str) -> str:
    """``text`` without control characters (a value from a project file, printed on a terminal)."""
    return "".join(c if c.isprintable() else "?" for c in text)


def _cmd_demo(args: argparse.Namespace) -> int:
    """``steadyhand demo [DIR] [run options]``: the bundled demo project copied to DIR once, then run."""
    import shutil

    target = Path(args.project)
    if not (target / "steadyhand.yaml").is_file():
        if target.exists() and any(target.iterdir()):
            _err(f"{target}: not empty and not a project; give another folder (steadyhand demo DIR)")
            return EXIT_INPUT
        source = bundled_project("demo")
        try:
            shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".steadyhand"))
        except OSError as exc:
            _err(f"{target}: cannot copy the demo project there: {exc.strerror or exc}")
            return EXIT_INPUT
        print(f"steadyhand: the demo project is in {target} (record into it: steadyhand record --project "
              f"{target} --flow NAME)", file=sys.stderr, flush=True)
    return _cmd_run(args)


def _cmd_studio(args: argparse.Namespace) -> int:
    from core.project import ProjectError
    from core.project.lenient import load_project_lenient

    try:
        load_project_lenient(args.project)  # an invalid flow file is marked in the studio, not refused here
    except ProjectError as exc:
        if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
            _err(str(exc))
            return EXIT_INPUT
        # with a desktop the studio says it in a dialog (and on stderr), then exits with 2
    if importlib.util.find_spec("PySide6") is None:
        _err("the studio needs PySide6, an optional part: pip install 'steadyhand[studio]'")
        return EXIT_ENVIRONMENT
    app = importlib.import_module(module_name("studio.app"))  # a front end of core, never imported by it
    if args.screenshot and not args.quit_after_run:
        _err("--screenshot: needs --quit-after-run (the screenshot is taken when the run ends)")
        return EXIT_INPUT
    if (sys.platform.startswith("linux") and not os.environ.get("QT_QPA_PLATFORM")
            and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))):
        # Qt would abort (SIGABRT, exit 134) blaming a missing xcb library and suggesting a reinstall
        _err(f"the studio needs a display and there is none (DISPLAY and WAYLAND_DISPLAY are unset). Replay "
             f"without one: steadyhand run {args.project} --headless; or open the studio on a virtual display: "
             f"xvfb-run -a steadyhand studio {args.project} (Xvfb: apt-get install xvfb)")
        return EXIT_ENVIRONMENT
    return int(app.main(Path(args.project), run=args.run or args.quit_after_run, headed=args.headed,
                        screenshot=Path(args.screenshot) if args.screenshot else None,
                        quit_after_run=args.quit_after_run))


def _bench_output(args: argparse.Namespace, table: str, report: Any) -> int:
    """Print a benchmark's table; write ``report.to_json_dict()`` to ``--json`` when given. Exit 0: figures are the output."""

    print(table, file=sys.stderr if args.json == "-" else sys.stdout, flush=True)
    if args.json:
        write_json(args.json, report.to_json_dict())
    return EXIT_OK


def _cmd_bench_locate(args: argparse.Namespace) -> int:
    from core.bench.dataset import DatasetError, open_dataset
    from core.bench.similo import format_report, run_similo_benchmark

    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    if args.folds and args.folds < 2:
        _err(f"--folds must be at least 2, got {args.folds}")
        return EXIT_INPUT

    try:
        with open_dataset(Path(args.dataset)) as folder:
            report = run_similo_benchmark(folder, folds=args.folds)
    except DatasetError as exc:
        _err(str(exc))
        return EXIT_INPUT
    return _bench_output(args, format_report(report), report)


def _cmd_baselines(args: argparse.Namespace) -> int:
    """``steadyhand baselines list|reset``: the R1 screen baselines of a project's store."""
    from core.store import Store, StoreError, store_path, store_present

    root = Path(args.project)
    if not (root / "steadyhand.yaml").is_file():
        _err(f"{root}: not a project folder (no steadyhand.yaml)")
        return EXIT_INPUT
    if not store_present(store_path(root)):
        print("no baselines (no run of this project was recorded yet)")
        return EXIT_OK
    try:
        store = Store.open(store_path(root))
    except StoreError as exc:
        _err(str(exc))
        return EXIT_INPUT
    with store:
        if args.baselines == "reset":
            n = store.reset_baselines(flow=args.flow, step_id=args.step)
            print(f"{counted(n, 'baseline')} forgotten; the next passing run takes new ones (flow files untouched)")
            return EXIT_OK
        rows = store.baselines(alerts_only=args.alerts)
        if not rows:
            print("no baselines" + (" with an alert" if args.alerts else ""))
        for b in rows:
            state = f"ALERT: {b.alert_reason}" if b.alert else f"ok (refreshed {b.refreshed}x)"
            print(f"{b.flow} step {b.step_id}: {state}")
    return EXIT_OK


def _cmd_bench_table(args: argparse.Namespace) -> int:
    """``steadyhand bench table``: observe / resolve ms per target on an N-row table (exit 0: figures are the output)."""
    from core.bench.table import format_report, run_table_benchmark

    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    if args.rows < 1 or args.repeat < 1:
        _err("--rows and --repeat must be at least 1")
        return EXIT_INPUT
    report = run_table_benchmark(args.rows, repeat=args.repeat)
    return _bench_output(args, format_report(report), report)


def _cmd_bench_diff(args: argparse.Namespace) -> int:
    """``steadyhand bench diff``: ms per step image difference (exit 0: figures are the output)."""
    from core.bench.diff import format_report, run_diff_benchmark

    report = run_diff_benchmark(args.repeat)
    return _bench_output(args, format_report(report), report)


def _cmd_bench_record(args: argparse.Namespace) -> int:
    """``steadyhand bench record``: recorder memory under minutes of scripted activity (exit 0: figures are the output)."""
    from core.bench.record_memory import BenchSetupError, format_report, run_record_memory_benchmark

    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    from core.progress import Progress

    samples = int(args.minutes * 60 // args.sample_s) + 2 if args.sample_s > 0 else None  # the first and the last too
    try:
        with Progress(samples, "memory samples", advance_on=lambda line: line.startswith("  t=")) as bar:
            report = run_record_memory_benchmark(args.project, args.minutes, args.rate, args.sample_s, progress=bar)
    except BenchSetupError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT if exc.kind == "environment" else EXIT_INPUT
    return _bench_output(args, format_report(report), report)


def _cmd_bench_drift(args: argparse.Namespace) -> int:
    """``steadyhand bench drift``: a flow recorded on datasette 0.59.4 replayed on later releases (core.bench.drift)."""
    from core.bench.drift import DriftEnvError, DriftSetupError, format_report, run_drift
    from core.bench.drift_record import record_flow

    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    import re

    from core.progress import Progress

    if args.app == "todomvc":
        return _bench_drift_todomvc(args, progress)
    if args.app != "datasette":
        return _bench_drift_apps(args, progress)
    from core.bench.drift_env import VERSIONS

    versions = list(args.versions or VERSIONS)
    try:
        if args.record:
            print(f"recorded {record_flow(Path(args.project), log=progress)}")
            return EXIT_OK
        if args.fixtures:
            from core.bench.drift_fixtures import capture_fixtures

            print(f"captured {capture_fixtures(Path(args.fixtures), versions, log=progress)}")
            return EXIT_OK
        from core.bench.drift_apps import PREFIX

        prefixes = ("",) if args.no_prefix else ("", PREFIX)
        with Progress(len(versions) * len(prefixes), "replays",
                      advance_on=lambda line: re.match(r"drift: \S+: \d+/\d+ passed", line) is not None) as bar:
            report = run_drift(args.project, versions, isolated=not args.chained_only, prefixes=prefixes,
                               script=not args.no_script, progress=bar)
    except DriftSetupError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except DriftEnvError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT
    return _bench_output(args, format_report(report), report)


def _bench_drift_todomvc(args: argparse.Namespace, progress) -> int:
    """``steadyhand bench drift --app todomvc``: one flow on TodoMVC's implementations (core.bench.drift_todomvc)."""

    from core.bench.drift import DriftEnvError, DriftSetupError
    from core.bench.drift_todomvc import PREFIX, format_todomvc, run_todomvc

    # the default is the bundled project wherever the command runs (it is only read: no store, no screenshots)
    project = Path(args.project) if args.project != "projects/datasette" else bundled_project("todomvc")
    try:
        report = run_todomvc(project, args.versions or (), prefixes=("",) if args.no_prefix else ("", PREFIX),
                             script=not args.no_script, progress=progress)
    except DriftSetupError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except DriftEnvError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT
    print(format_todomvc(report), flush=True, file=sys.stderr if args.json == "-" else sys.stdout)
    if args.json:
        write_json(args.json, report.to_json_dict())
    return EXIT_OK


def _bench_drift_apps(args: argparse.Namespace, progress) -> int:
    """``steadyhand bench drift --app fab|flask-admin|gradio|apps``: flows on third-party apps (core.bench.drift_app_run)."""

    from core.bench.drift import DriftEnvError, DriftSetupError
    from core.bench.drift_app_run import format_app_report, record_app_flow, run_app_drift
    from core.bench.drift_apps import APPS, PREFIX

    keys = list(APPS) if args.app == "apps" else [args.app]
    known = [v.label for key in keys for v in APPS[key].versions]
    unknown = [v for v in args.versions or [] if v not in known]
    if unknown:  # a label no release has used to be dropped: a typo ran every release of the app
        _err(f"--versions: no release {', '.join(map(repr, unknown))} of {args.app}; the releases are: "
             f"{' '.join(known)}")
        return EXIT_INPUT
    if args.versions:  # --app apps --versions 4.0.0: only the apps that have one of them
        keys = [k for k in keys if any(v.label in args.versions for v in APPS[k].versions)]
    try:
        if args.record:
            for key in keys:
                print(f"recorded {record_app_flow(APPS[key], log=progress)}")
            return EXIT_OK
        reports = []
        for key in keys:
            spec = APPS[key]
            labels = [v for v in args.versions or [] if v in {x.label for x in spec.versions}]
            bases = ("",) if args.no_prefix else ("", PREFIX)
            report = run_app_drift(spec, labels, bases=bases, script=not args.no_script, progress=progress)
            print(format_app_report(report) + "\n", flush=True, file=sys.stderr if args.json == "-" else sys.stdout)
            reports.append(report)
    except DriftSetupError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except DriftEnvError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT
    if args.json:
        write_json(args.json, {"apps": [r.to_json_dict() for r in reports]})
    return EXIT_OK


def _cmd_bench_tweaks(args: argparse.Namespace) -> int:
    """``steadyhand bench tweaks``: demo flows on every UI-tweak variant vs a plain script (exit 0: figures are the output)."""
    from core.bench.tweaks import BenchSetupError, format_report, run_tweaks_benchmark

    if args.json and not _writable(Path(args.json)):
        _err(f"{args.json}: cannot write the JSON summary there")
        return EXIT_INPUT
    from core.bench.tweaks import DEFAULT_VARIANTS
    from core.progress import Progress
    from core.project import ProjectError, load_project

    try:
        flows = args.flows or list(load_project(args.project).flows)
    except ProjectError:
        flows = []  # the bench says what is wrong with the project
    total = len(args.variants or DEFAULT_VARIANTS) * len(flows) * 2 or None  # Steadyhand and the plain script
    try:
        with Progress(total, "flow runs", advance_on=lambda line: line.startswith(("  steadyhand ", "  script "))
                      ) as bar:
            report = run_tweaks_benchmark(args.project, variants=args.variants, flows=args.flows,
                                          latency_ms=args.latency_ms, progress=bar)
    except BenchSetupError as exc:
        _err(str(exc))
        return EXIT_ENVIRONMENT if exc.kind == "environment" else EXIT_INPUT
    return _bench_output(args, format_report(report), report)

def _cmd_bench_studio(args: argparse.Namespace) -> int:
    """``steadyhand bench studio``: the studio replays a project offscreen (its own process: core never loads Qt)."""
    import subprocess

    root = source_tree()  # a checkout: the child imports from it; installed: importable already
    cmd = [sys.executable, "-m", module_name("studio.bench"), "--project", str(Path(args.project).resolve()),
           "--timeout-s", str(args.timeout_s)]
    if args.flows:
        cmd += ["--flows", *args.flows]
    if args.json:
        cmd += ["--json", args.json if args.json == "-" else str(Path(args.json).resolve())]
    if args.grab:
        cmd += ["--grab", str(Path(args.grab).resolve())]
    cmd += ["--moving"] if args.moving else []
    cmd += ["--no-recording"] if args.no_recording else []
    cmd += ["--why"] if args.why else []
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    if root is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    return subprocess.run(cmd, cwd=root, env=env, check=False).returncode


def _nested_guard(path: str | Path, fn, *a, **kw):  # type: ignore[no-untyped-def]
    """``fn(*a, **kw)``; input nested past Python's stack while it is read becomes a ProjectError naming ``path``."""
    from core.project import ProjectError

    try:
        return fn(*a, **kw)
    except (RecursionError, MemoryError):
        raise ProjectError(path, "not readable: nested too deeply") from None


def _cmd_import_codegen(args: argparse.Namespace) -> int:
    """``steadyhand import-codegen SCRIPT --project P --flow NAME [--force]``: a codegen script becomes a flow file."""
    from urllib.parse import urlsplit

    from core.project import FLOWS_DIR, ProjectError, load_project, save_flow
    from core.project.loader import check_size
    from core.project.paths import flow_file
    from core.record.codegen import import_codegen
    from core.record.save import valid_flow_name
    from core.secrets import env_var_name

    try:
        project = load_project(args.project, skip_invalid=True)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    if not valid_flow_name(args.flow):
        _err(f"--flow {args.flow!r}: use letters, digits, '_' and '-' (it becomes the file name)")
        return EXIT_INPUT
    rel = f"{FLOWS_DIR}/{args.flow}.yaml"
    try:
        path = flow_file(project.root, args.flow)  # not out of the project through a symbolic link either
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    existing = project.flows.get(args.flow)
    if existing is not None and Path(existing.source).resolve() != path.resolve():
        _err(f"{existing.source}: already defines flow {args.flow!r}; choose another --flow name")
        return EXIT_INPUT
    if path.exists() and not args.force:
        _err(f"{path}: the flow file already exists; pass --force to overwrite it")
        return EXIT_INPUT
    try:
        check_size(args.script, what="codegen script")
        source = Path(args.script).read_text(encoding="utf-8")
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    except (OSError, UnicodeDecodeError) as exc:
        _err(f"{args.script}: cannot read the script: {getattr(exc, 'strerror', None) or exc}")
        return EXIT_INPUT
    # Known secret values, without side effects: the environment and the declared defaults (the keyring is
    # not asked: it may prompt to unlock).  A typed literal equal to one becomes its {name}.
    values = {name: value for name, spec in project.settings.secrets.items()
              if (value := os.environ.get(env_var_name(name)) or spec.default)}
    base_url = project.settings.base_url or ""
    options = dict(flow_name=args.flow, filename=args.script, secret_names=tuple(project.settings.secrets),
                   secret_values=values)
    origin = ""
    try:
        result = _nested_guard(args.script, import_codegen, source, base_url=base_url, **options)
        start = urlsplit(result.flow.start_url)
        if project.settings.site and start.hostname in ("127.0.0.1", "localhost", "::1"):
            # the bundled site is served on a loopback port chosen at run time: the recorded origin is that site
            origin = f"{start.scheme}://{start.netloc}"
            result = _nested_guard(args.script, import_codegen, source, base_url=origin, **options)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    try:
        save_flow(result.flow, path)
    except ProjectError as exc:  # the loader would refuse it: nothing written
        _err(str(exc))
        return EXIT_INPUT
    except OSError as exc:
        _err(f"{path}: cannot write the flow file: {exc.strerror or exc}")
        return EXIT_INPUT
    if origin:
        print(f"  note: URLs on {origin} were made relative (the bundled site {project.settings.site!r} gets its "
              f"port at run time)")
    for note in result.notes:
        print(f"  note: {note}")
    print(f"imported {len(result.flow.steps)} steps into {rel}; run `steadyhand run {args.project} --flow {args.flow}` "
          f"to replay (the first run captures full element descriptors)")
    return EXIT_OK


def _cmd_import_side(args: argparse.Namespace) -> int:
    """``steadyhand import-side FILE --project P [--test NAME] [--prefix P] [--force]``: 0 imported, 2 bad input."""
    from core.project import FLOWS_DIR, ProjectError, load_project, save_flow
    from core.record.side import import_side
    from core.secrets import env_var_name

    try:
        project = load_project(args.project, skip_invalid=True)
        values = {name: value for name, spec in project.settings.secrets.items()
                  if (value := os.environ.get(env_var_name(name)) or spec.default)}
        imports = _nested_guard(args.file, import_side, Path(args.file), base_url=project.settings.base_url or "",
                                test=args.test, flow_prefix=args.prefix or "",
                                secret_names=tuple(project.settings.secrets), secret_values=values)
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    if not imports:
        _err(f"{args.file}: the project has no tests")
        return EXIT_INPUT
    from core.project.paths import flow_file

    try:  # a --prefix or a test name must not lead out of the flows folder
        targets = [(imp, flow_file(project.root, imp.flow.name, option="--prefix/test name")) for imp in imports]
    except ProjectError as exc:
        _err(str(exc))
        return EXIT_INPUT
    for imp, path in targets:
        existing = project.flows.get(imp.flow.name)
        if existing is not None and Path(existing.source).resolve() != path.resolve():
            _err(f"{existing.source}: already defines flow {imp.flow.name!r}; pass --prefix to name them apart")
            return EXIT_INPUT
        if path.exists() and not args.force:
            _err(f"{path}: the flow file already exists; pass --force to overwrite it")
            return EXIT_INPUT
    for imp, path in targets:
        try:
            save_flow(imp.flow, path)
        except ProjectError as exc:  # the loader would refuse it: nothing written
            _err(str(exc))
            return EXIT_INPUT
        except OSError as exc:
            _err(f"{path}: cannot write the flow file: {exc.strerror or exc}")
            return EXIT_INPUT
        for note in imp.notes:
            print(f"  note: {note}")
        print(f"imported {len(imp.flow.steps)} steps into {FLOWS_DIR}/{imp.flow.name}.yaml")
    print(f"run `steadyhand run {args.project}` to replay (the first run captures full element descriptors)")
    return EXIT_OK


def _cmd_init(args: argparse.Namespace) -> int:
    """``steadyhand init DIR --url URL``: a project for any web app, ready for ``record`` (0 made, 2 bad input)."""
    from core.project import ProjectError
    from core.project.init import InitError, init_project

    bad = [p for p in args.param or [] if "=" not in p or not p.split("=", 1)[0]]
    if bad:
        _err(f"--param expects NAME=VALUE, got {bad[0]!r}")
        return EXIT_INPUT
    try:
        project = init_project(args.dir, url=args.url, name=args.name or "", secrets=args.secret or (),
                               params=dict(p.split("=", 1) for p in args.param or []), force=args.force)
    except (InitError, ProjectError) as exc:
        _err(str(exc))
        return EXIT_INPUT
    print(f"Created {project.root / 'steadyhand.yaml'} for {project.settings.base_url} (project "
          f"{project.name!r}) and {project.root / 'flows'}/")
    for name in project.settings.secrets:
        print(f"  secret {name!r}: set {_env_var(name)} (or the keyring) before recording and replaying")
    print(f"Next: steadyhand record --project {args.dir} --flow NAME [START_URL]")
    return EXIT_OK


def _env_var(name: str) -> str:
    from core.secrets import env_var_name

    return env_var_name(name)


def _version() -> str:
    """The installed distribution's version, or the source tree's (pyproject.toml) when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("steadyhand")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


#: ``--help`` examples of every command and subcommand (path -> one or more command lines), filled in as the
#: parser's epilog when its module gave none with "Example:" (tests/core/test_cli_help.py walks the tree).
_EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("steadyhand run projects/demo --headless", "steadyhand --version"),
    "demo": ("steadyhand demo --headless", "steadyhand demo /tmp/leavedesk -k leave --headed"),
    "completion": ("steadyhand completion bash", "steadyhand completion zsh"),
    "run": ("steadyhand run projects/demo --flow leave_request --headless --junit junit.xml",
            "steadyhand run projects/demo -k 'leave and not lockout' -x --retries 1 --json - --headless",
            "steadyhand run projects/miniwob --episodes 5 --json /tmp/summary.json"),
    "report": ("steadyhand report 3f2a9c --project projects/demo -o run.html",),
    "skills learn": ("steadyhand skills learn projects/demo 3f2a9c",),
    "bench faults": ("steadyhand bench faults --json /tmp/faults.json", "steadyhand bench faults --quick"),
    "bench learn": ("steadyhand bench learn --json /tmp/learn.json",
                    "steadyhand bench learn --flows export_report --versions v1=baseline v2=focus-popup"),
    "audit": ("steadyhand audit projects/demo --also tests/test_login.py --also junit.xml",),
    "trust": ("steadyhand trust projects/demo", "steadyhand trust --list", "steadyhand trust projects/demo --revoke"),
    "handback": ("steadyhand handback projects/demo --as replace",
                 "steadyhand handback projects/demo --as done --run 3f2a9c --continue-from 5"),
    "corrections": ("steadyhand corrections list projects/demo",),
    "corrections list": ("steadyhand corrections list projects/demo --all",),
    "corrections show": ("steadyhand corrections show projects/demo 1",),
    "corrections accept": ("steadyhand corrections accept projects/demo 1",),
    "corrections reject": ("steadyhand corrections reject projects/demo 1 --reason 'a one-off dialog'",),
    "studio": ("steadyhand studio projects/demo --run",),
    "init": ("steadyhand init projects/shop --url http://127.0.0.1:8000 --secret password --param user=alice",),
    "record": ("steadyhand record --project projects/demo --flow my_flow /login",),
    "heals": ("steadyhand heals list projects/demo",),
    "heals list": ("steadyhand heals list projects/demo --all",),
    "heals show": ("steadyhand heals show projects/demo 1",),
    "heals accept": ("steadyhand heals accept projects/demo 1",),
    "heals reject": ("steadyhand heals reject projects/demo 1 --reason 'the old button is back'",),
    "history": ("steadyhand history list projects/demo --flow sort_table",),
    "history list": ("steadyhand history list projects/demo --flow sort_table --limit 5",),
    "history compare": ("steadyhand history compare projects/demo 3f2a9c 8b1d07",),
    "history graph": ("steadyhand history graph projects/demo leave_request --json /tmp/graph.json",),
    "baselines": ("steadyhand baselines list projects/demo --alerts",),
    "baselines list": ("steadyhand baselines list projects/demo --alerts",),
    "baselines reset": ("steadyhand baselines reset projects/demo --flow export_report",),
    "bench": ("steadyhand bench table --rows 500",),
    "bench locate": ("steadyhand bench locate --dataset resources/benchmarks/similo-dev.tar.xz --folds 5",),
    "bench record": ("steadyhand bench record --minutes 2 --rate 5 --json /tmp/record.json",),
    "bench drift": ("steadyhand bench drift --versions 0.65.5 1.0a41 --json /tmp/drift.json",
                    "steadyhand bench drift --app fab --json /tmp/drift-fab.json"),
    "bench tweaks": ("steadyhand bench tweaks --variants baseline popup --json /tmp/tweaks.json",),
    "bench ab": ("steadyhand bench ab --episodes 3 --json /tmp/ab.json",),
    "bench table": ("steadyhand bench table --rows 1000 --repeat 3 --json /tmp/table.json",),
    "bench diff": ("steadyhand bench diff --repeat 10",),
    "bench studio": ("steadyhand bench studio --flows sort_table --json /tmp/studio.json",),
    "bench overhead": ("steadyhand bench overhead --rounds 3 --json /tmp/overhead.json",
                       "steadyhand bench overhead --flows sort_table --rounds 1 --sizes 100 --evidence full"),
    "export": ("steadyhand export pytest projects/demo --flow leave_request -o test_leave.py",),
    "export pytest": ("steadyhand export pytest projects/demo --flow leave_request -o test_leave.py",
                      "steadyhand export pytest projects/demo --flow sort_table -o sort.py --style script"),
    "explore": ("steadyhand explore projects/demo --budget 40 --goal 'Request submitted appears' --save explored",),
    "import-side": ("steadyhand import-side smoke.side --project projects/site --prefix side_",),
    "import-codegen": ("steadyhand import-codegen my_script.py --project projects/demo --flow imported",),
}


def parser_tree(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
                ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` with its subcommand path (``()`` for the root, ``("bench", "table")``)."""
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found += parser_tree(child, path + (name,))
    return found


class _ExampleFormatter(argparse.HelpFormatter):
    """argparse's formatter, but an "Example:" epilog keeps its lines as written (one command per line)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("Example:"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def _add_examples(parser: argparse.ArgumentParser) -> None:
    """Give every parser without an "Example:" epilog its lines of :data:`_EXAMPLES` (kept as written)."""
    for path, p in parser_tree(parser):
        lines = _EXAMPLES.get(" ".join(path))
        if lines and "Example:" not in (p.epilog or ""):
            p.epilog = "Example:\n" + "\n".join(f"  {line}" for line in lines)
            p.formatter_class = _ExampleFormatter


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="steadyhand", description="Build, replay and debug self-healing GUI agents.")
    p.add_argument("--version", action="version", version=f"steadyhand {_version()}")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="replay a project's flows (headless-capable)")
    r.add_argument("project", help="project folder (holds steadyhand.yaml)")
    from core.cliopts import add_run_options, completion_script

    add_run_options(r)
    r.set_defaults(func=_cmd_run)

    dm = sub.add_parser("demo", help="copy the bundled demo project (LeaveDesk) into a folder and replay it",
                        description="Copy the demo project that ships with Steadyhand into DIR (once: a DIR that "
                                    "already holds a steadyhand.yaml is used as it is) and run it, with every "
                                    "option of `run`. Then record into it: steadyhand record --project DIR "
                                    "--flow NAME.")
    dm.add_argument("project", metavar="DIR", nargs="?", default="steadyhand-demo",
                    help="where the demo project goes (default: ./steadyhand-demo)")
    add_run_options(dm)
    dm.set_defaults(func=_cmd_demo)

    cp = sub.add_parser("completion", help="print a shell completion script (bash, zsh)",
                        description='Print the completion script of the steadyhand command. Load it with '
                                    'eval "$(steadyhand completion bash)" in ~/.bashrc (zsh: completion zsh in '
                                    '~/.zshrc). Flow names complete after --flow and -k once the project is typed.')
    cp.add_argument("shell", choices=("bash", "zsh"), help="the shell")
    cp.set_defaults(func=lambda a: print(completion_script(p, a.shell), end="") or EXIT_OK)

    rp = sub.add_parser("report", help="one self-contained HTML file of a stored run",
                        description="Write a stored run as one HTML file (steps, verdicts, before/after screenshots "
                                    "with the changed regions, heals with old and new descriptors, the breaker's "
                                    "history, timings; secrets masked). RUN_ID may be a unique prefix.")
    rp.add_argument("run_id", metavar="RUN_ID", help="the run's id or a unique prefix (steadyhand history list)")
    rp.add_argument("--project", default=".", help="project folder (default: the current folder)")
    rp.add_argument("-o", "--output", required=True, metavar="FILE.html", help="where to write the report")
    rp.set_defaults(func=_cmd_report)

    a = sub.add_parser("audit", help="look for the declared secrets' values in the project's files, store and screenshots",
                       description="Scan the project folder (flows, the store, screenshots and their masked regions, "
                                   "recording journals, anything archived there) and any --also paths (exports, "
                                   "reports) for the declared secrets' values, in clear, URL-encoded, JSON- or "
                                   "HTML-escaped, hex, base64, or as an unsalted digest (MD5, SHA-1, SHA-2, SHA-3). Exit 0: nothing found; 1: something found; 2: bad input.")
    a.add_argument("project", help="project folder (holds steadyhand.yaml)")
    a.add_argument("--also", action="append", metavar="PATH", help="a file or folder outside the project to scan too")
    a.set_defaults(func=_cmd_audit)

    t = sub.add_parser("trust", help="let a project's settings that run a program or reach the environment take effect",
                       description="A project is untrusted until you trust it on this machine: browser.executable_path "
                                   "(runs a program), browser.endpoint_hosts (hosts off this machine that run "
                                   "--browser-endpoint may send every page and typed value to), model.api_key_env "
                                   "(sends an environment variable) and a model.base_url off this machine take "
                                   "effect only in a trusted project. Trust is "
                                   "kept outside the project ($XDG_CONFIG_HOME/steadyhand/trusted.json) with a digest "
                                   "of those settings: a changed setting needs trusting again. Exit 0: done; 2: bad "
                                   "input.")
    t.add_argument("project", nargs="?", help="project folder (holds steadyhand.yaml)")
    tg = t.add_mutually_exclusive_group()
    tg.add_argument("--revoke", action="store_true", help="stop trusting PROJECT")
    tg.add_argument("--list", action="store_true", help="list the trusted projects")
    t.set_defaults(func=_cmd_trust)
    from core.engine.handback import add_handback_parser, handback_command
    from core.heal.corrections_command import add_corrections_parser, corrections_command

    add_handback_parser(sub).set_defaults(func=handback_command)
    add_corrections_parser(sub).set_defaults(func=corrections_command)

    s = sub.add_parser("studio", help="open the studio on a project")
    s.add_argument("project", help="project folder (holds steadyhand.yaml)")
    s.add_argument("--run", action="store_true", help="start replaying all flows at once")
    s.add_argument("--headed", action="store_true", help="show the Chromium window too (replays and recordings)")
    s.add_argument("--quit-after-run", action="store_true",
                   help="replay all flows, then close with the exit code `run` would give (3 when not done in 15 min)")
    s.add_argument("--screenshot", metavar="PNG", help="with --quit-after-run: save the window here at the run's end")
    s.set_defaults(func=_cmd_studio)

    i = sub.add_parser("init", help="start a project for any web app (writes steadyhand.yaml and flows/)",
                       description="Write DIR/steadyhand.yaml for the web app at URL (base URL, browser defaults, "
                                   "declared secrets and parameters) and an empty DIR/flows/, ready for "
                                   "`steadyhand record --project DIR --flow NAME`. The URL is not visited.")
    i.add_argument("dir", help="project folder (created when missing)")
    i.add_argument("--url", required=True, help="base URL of the app (http:// or https://)")
    i.add_argument("--name", help="project name (default: the folder's name)")
    i.add_argument("--secret", action="append", metavar="NAME",
                   help="declare a secret (repeatable); its value comes from STEADYHAND_SECRET_<NAME> or the keyring")
    i.add_argument("--param", action="append", metavar="NAME=VALUE", help="a project parameter (repeatable)")
    i.add_argument("--force", action="store_true", help="replace an existing steadyhand.yaml")
    i.set_defaults(func=_cmd_init)

    from core.record.command import add_record_parser, record_command

    add_record_parser(sub).set_defaults(func=record_command)

    from core.heal.command import add_heals_parser, heals_command

    add_heals_parser(sub).set_defaults(func=heals_command)
    from core.skills.command import add_skills_parser, skills_command

    add_skills_parser(sub).set_defaults(func=skills_command)
    from core.store.command import add_history_parser, history_command

    add_history_parser(sub).set_defaults(func=history_command)
    bs = sub.add_parser("baselines", help="the screen baselines of change detection: list them, or forget them after a real change",
                        description="List the screen baselines of a project's store and their alerts, or "
                                    "forget some so the next passing run takes new ones.")
    basub = bs.add_subparsers(dest="baselines", required=True)
    bls = basub.add_parser("list", help="every baseline and its alert")
    bls.add_argument("project", help="project folder (holds steadyhand.yaml)")
    bls.add_argument("--alerts", action="store_true", help="only baselines with an alert")
    brs = basub.add_parser("reset", help="forget baselines; the next passing run takes new ones")
    brs.add_argument("project", help="project folder (holds steadyhand.yaml)")
    brs.add_argument("--flow", help="only this flow's")
    brs.add_argument("--step", help="only this step id's (with --flow)")
    bs.set_defaults(func=_cmd_baselines)

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench", required=True)
    bl = bsub.add_parser("locate", help="locator accuracy on a Similo-format dataset")
    bl.add_argument("--dataset", required=True,
                    help="folder or .tar.xz (the dev half ships as resources/benchmarks/similo-dev.tar.xz)")
    bl.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    bl.add_argument("--folds", type=int, default=0, metavar="K",
                    help="also report the figures per fold of K site groups (K >= 2; nothing is tuned per fold)")
    bl.set_defaults(func=_cmd_bench_locate)
    br = bsub.add_parser("record", help="recorder memory while a script drives the demo app for minutes")
    br.add_argument("--minutes", type=float, default=10.0, help="how long to drive (default 10)")
    br.add_argument("--rate", type=float, default=5.0, help="user events per second (default 5)")
    br.add_argument("--project", default="projects/demo", help="a project on the bundled demo site (default projects/demo)")
    br.add_argument("--sample-s", type=float, default=10.0, help="seconds between memory samples (default 10)")
    br.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    br.set_defaults(func=_cmd_bench_record)
    from core.bench.drift_env import VERSIONS as _DRIFT_VERSIONS

    bd = bsub.add_parser("drift", help="a flow recorded on datasette 0.59.4 replayed on later releases")
    bd.add_argument("--versions", nargs="+", default=None, metavar="V",
                    help=f"releases (datasette default: {' '.join(_DRIFT_VERSIONS)}; with --app, labels as in the "
                         f"table, default all; venvs under "
                         f"~/.cache/steadyhand/drift)")
    bd.add_argument("--project", default="projects/datasette", help="project holding the books_tour flow")
    bd.add_argument("--record", action="store_true", help="record books_tour anew on 0.59.4 (then exit)")
    bd.add_argument("--fixtures", metavar="DIR",
                    help="save each release's pages of the steps that drift as static fixtures (then exit)")
    bd.add_argument("--chained-only", action="store_true",
                    help="only the whole flow, not also each step alone from its intended state")
    bd.add_argument("--app", choices=("datasette", "fab", "flask-admin", "gradio", "apps", "todomvc"), default="datasette",
                    help="datasette (default), fab (Flask-AppBuilder 3.4.5, 4.0.0, 4.5.4), flask-admin (1.6.1 "
                         "bootstrap3/4, 2.2.1), gradio (a form app on Gradio 3.50.2, 4.44.1, 5.50.0) or apps (all "
                         "three): a flow recorded on the oldest release, replayed on each at / and under /staging, "
                         "beside the flow exported as a pytest file; todomvc: a flow recorded on one TodoMVC "
                         "implementation (npm todomvc 0.1.1) replayed on the others (--versions: their names)")
    bd.add_argument("--no-prefix", action="store_true", help="replay only at the server's root, not also under /staging")
    bd.add_argument("--no-script", action="store_true", help="skip the runs of the flow exported as a pytest file")
    bd.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    bd.set_defaults(func=_cmd_bench_drift)

    from core.export.command import add_export_parser, export_command

    add_export_parser(sub).set_defaults(func=export_command)
    from core.engine.explore_cli import add_explore_parser

    add_explore_parser(sub)

    bt = bsub.add_parser("tweaks", help="every demo flow on every UI-tweak variant, against a plain Playwright script",
                         description="Replay every demo flow on every UI-tweak variant of the demo app, and the "
                                     "same flows as plain Playwright scripts, and print who got through.")
    bt.add_argument("--variants", nargs="+", metavar="VARIANT", help="variants to run (default: all but 'tweaked')")
    bt.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to run (default: all of the project)")
    bt.add_argument("--project", default="projects/demo", help="a project on the bundled demo site (default projects/demo)")
    bt.add_argument("--latency-ms", type=int, default=200, help="demo submit latency for both sides, ms (default 200)")
    bt.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    bt.set_defaults(func=_cmd_bench_tweaks)

    from core.bench.ab import add_ab_parser

    add_ab_parser(bsub)
    from core.bench.faults import add_faults_parser

    add_faults_parser(bsub)

    from core.bench.overhead import add_overhead_parser

    add_overhead_parser(bsub)
    from core.bench.learn import add_learn_parser

    add_learn_parser(bsub)

    bt = bsub.add_parser("table", help="observe and locate times per target on a long table")
    bt.add_argument("--rows", type=int, default=1000, help="rows of the table (default 1000)")
    bt.add_argument("--repeat", type=int, default=3, help="observations per target, median reported (default 3)")
    bt.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    bt.set_defaults(func=_cmd_bench_table)

    isd = sub.add_parser("import-side", help="turn a Selenium IDE project (.side) into flow files, one per test",
                         description="Read a Selenium IDE .side file (never run it) and write one flow per test "
                                     "into the project's flows/. Unsupported commands are listed with the reason.")
    isd.add_argument("file", help="the .side file")
    isd.add_argument("--project", required=True, help="project folder (holds steadyhand.yaml)")
    isd.add_argument("--test", help="import only the test of this name")
    isd.add_argument("--prefix", help="prefix of the flow names (default: none)")
    isd.add_argument("--force", action="store_true", help="overwrite existing flow files")
    isd.set_defaults(func=_cmd_import_side)
    bd = bsub.add_parser("diff", help="ms per step image difference (before/after screenshots, OpenCV)")
    bd.add_argument("--repeat", type=int, default=10, help="runs per case, median reported (default 10)")
    bd.add_argument("--json", metavar="PATH", help="also write the figures as JSON to PATH")
    bd.set_defaults(func=_cmd_bench_diff)
    bst = bsub.add_parser("studio", help="the studio replays a project offscreen while a recording goes: longest GUI "
                                          "stall (ms) and live-view frames per second",
                          description="Replay a project in the studio offscreen while a recording goes, and print the "
                                      "longest GUI stall (ms) and the live view's frames per second, received and "
                                      "painted.")
    bst.add_argument("--project", default="projects/demo", help="project to replay (default projects/demo)")
    bst.add_argument("--flows", nargs="+", metavar="FLOW", help="flows to replay (default: all of the project)")
    bst.add_argument("--timeout-s", type=float, default=600.0, help="give up after this many seconds (default 600)")
    bst.add_argument("--json", metavar="PATH", help='write {"stall_ms", "fps", "fps_received", "steps", ...}')
    bst.add_argument("--moving", action="store_true",
                     help="replay a flow on a page that repaints all the time (served on 127.0.0.1) instead")
    bst.add_argument("--no-recording", action="store_true", help="no recording at the same time as the run")
    bst.add_argument("--grab", metavar="PNG", help="save a picture of the studio during the run here")
    bst.add_argument("--why", action="store_true",
                     help="sample what the GUI thread does during each stall (longer than 40 ms) and print it")
    bst.set_defaults(func=_cmd_bench_studio)

    ic = sub.add_parser("import-codegen", help="turn a Playwright codegen script (Python) into a flow file")
    ic.add_argument("script", help="script written by `playwright codegen --target python`")
    ic.add_argument("--project", required=True, help="project folder (holds steadyhand.yaml)")
    ic.add_argument("--flow", required=True, help="flow name; written to flows/NAME.yaml")
    ic.add_argument("--force", action="store_true", help="overwrite an existing flow file")
    ic.set_defaults(func=_cmd_import_codegen)
    from core.skills.learn_command import add_learn_command

    add_learn_command(sub)  # `skills learn` (joins the `skills` group registered above, if any)
    _add_examples(p)
    for parser in (r, dm):
        parser.epilog = (parser.epilog or "Example:") + "\n\n" + _defaults_text() + "\n\n" + _exit_codes_text()
    return p


def _defaults_text() -> str:
    """The "Defaults:" block of ``run --help``: where an option not given takes its value (core.cliopts)."""
    import textwrap

    text = ("An option not given takes STEADYHAND_<OPTION> from the environment (STEADYHAND_RETRIES=2, "
            "STEADYHAND_HEADLESS=0), else the [tool.steadyhand] table of the nearest pyproject.toml at or above "
            "the project (retries = 2, headless = false, base-url = \"http://...\"). Settings: "
            + ", ".join(RUN_DEFAULTS) + ".")
    return "Defaults:\n" + "\n".join("  " + line for line in textwrap.wrap(text, 100))


def _exit_codes_text() -> str:
    """The "Exit codes:" block of ``run --help``, from :data:`core.exitcodes.EXIT_CODES` (one place)."""
    from core.exitcodes import EXIT_CODES

    return "Exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, (_, meaning) in EXIT_CODES.items())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``steadyhand`` console command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    from core.store.database import StoreError, StoreUnavailableError

    try:
        return int(args.func(args))
    except StoreUnavailableError as exc:  # a shared store's server that is down: the environment, not the input
        _err(str(exc))
        return EXIT_ENVIRONMENT
    except StoreError as exc:  # a store that cannot be read (newer, damaged, a cell edited by hand): one line
        _err(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `steadyhand ... | head`: the reader left; nothing more to say, and no traceback
        _quiet_stdout()
        return EXIT_OK


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # a stdout without a file descriptor (captured in tests)
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
