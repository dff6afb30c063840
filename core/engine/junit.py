"""JUnit XML of a run, as CI systems (Jenkins, GitLab, GitHub test reporters) read it.

One ``<testsuite>`` per project, one ``<testcase>`` per flow run (an episodic
flow's episodes are one case each, ``flow#seed``).  A run that did not
succeed carries one child saying where and why it stopped:

- ``<failure>`` when the app did not do what the flow expects (an assertion
  failed, a verification mismatched, the reward was denied) or the engine
  escalated to a human (``type`` is the stop kind: ``abstained``,
  ``breaker_open``, ``loop``...);
- ``<error>`` when the environment broke (browser crashed, target
  unreachable, bad parameter) - the app was not judged;
- ``<skipped>`` when the user stopped the run.

The message names the step (1-based, as the studio and the flow file show
it: ``s3 "Click Save"``) and the reason.  ``<system-out>`` lists each
executed step with its status, the locator strategy that found its target
and its time in ms, then one ``[[ATTACHMENT|/absolute/path.png]]`` line per
screenshot already on disk that the case links to (the form the Jenkins
JUnit attachments plugin and GitLab read).  A run that passed only because
steps were healed says so: ``<properties>`` with ``steadyhand.heals`` (the
count) and ``steadyhand.healed_steps`` (``s3 semantic, s5 text``), and a
``passed with N heals`` line in ``<system-out>``.

When the environment broke before every flow ran (the app unreachable,
Chromium missing), the flows that did not run are cases too, each with an
``<error>`` giving the reason (``not_run``): a CI job never reads an empty
file.  A flow ``run --maxfail`` kept from running is a case with ``<skipped>`` instead (kind ``maxfail``).
An invalid flow file (the loader refused it, or a ``{name}`` in it has no value) is an ``<error>`` case named by
the file, whose message is the error naming the file, step and field.

``run --retries``: a flow's case is its last run; each earlier run that was retried is a child of it, as
Maven Surefire writes reruns (Jenkins and GitLab read them): ``<flakyFailure>`` when the last run passed,
``<rerunFailure>`` when it did not, each with the earlier run's message and id; the case's properties say
``steadyhand.retry`` (the last run's retry number) and its ``<system-out>`` starts with ``retry N``.
The ``<testsuite>`` carries ``timestamp`` (ISO 8601, UTC) and
``hostname``.  Texts come from the run result, whose errors are already
masked (architecture rule 7).  Written with the standard library's
ElementTree, so the XML is always well formed.
"""
from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from core.domain import RunResult

from .report import KIND_EXIT, EXIT_ENVIRONMENT, EXIT_INPUT, Stop, succeeded

__all__ = ["NotRun", "junit_xml", "run_screenshots", "write_junit"]

#: A flow that did not run because the environment broke: ``(flow, error kind, reason)``.
NotRun = tuple[str, str, str]


def _case_name(result: RunResult, seed: int | None) -> str:
    return f"{result.flow}#{seed}" if seed is not None else result.flow


def _where(stop: Stop) -> str:
    if stop.index is None:
        return "before the first step"
    title = f' "{stop.title}"' if stop.title else ""
    return f"at step {stop.index + 1} ({stop.step_id}{title})"


def _steps_text(result: RunResult) -> str:
    lines = []
    for o in result.steps:
        strategy = o.resolution.strategy if o.resolution is not None else "-"
        line = f"{o.index + 1:>3}. {o.step_id:<5} {o.status:<9} {strategy:<10} {o.ms:8.0f} ms  {o.title}"
        if o.error:
            line += f"\n       {o.error}"
        lines.append(line)
    return "\n".join(lines)


def _outcome_tag(result: RunResult) -> str:
    if result.status == "stopped":
        return "skipped"
    if result.error_kind and KIND_EXIT.get(result.error_kind) in (EXIT_ENVIRONMENT, EXIT_INPUT):
        return "error"
    return "failure"


def _healed(result: RunResult) -> str:
    """``"s3 semantic, s5 text"``: the steps found by another strategy than the recorded target's exact match."""
    return ", ".join(f"{o.step_id} {o.resolution.strategy}" for o in result.steps
                     if o.status == "passed" and o.resolution is not None and o.resolution.strategy != "exact"
                     and not o.resolution.abstained)


def run_screenshots(store: Any, result: RunResult) -> list[Path]:
    """The screenshots on disk a case links to: before and after of every step that did not pass, and the last
    step's after (what the page looked like at the end); absolute paths, existing files only, in step order.

    ``store`` is an open :class:`core.store.Store`; a run it does not hold has none.
    """
    detail = store.run_detail(result.run_id)
    if detail is None:
        return []
    wanted = {o.index for o in result.steps if o.status != "passed"}
    last = max((o.index for o in result.steps), default=None)
    out: list[Path] = []
    for index in sorted(wanted | ({last} if last is not None else set())):
        for obs in detail.for_step(index)["observations"]:
            if not obs.screenshot or (index not in wanted and obs.when != "after"):
                continue
            path = store.media_path(obs.screenshot).resolve()
            if path.is_file() and path not in out:
                out.append(path)
    return out


def junit_xml(results: Sequence[RunResult], *, suite: str, seeds: Sequence[int | None] | None = None,
              not_run: Sequence[NotRun] = (), screenshots: Mapping[str, Sequence[Path]] | None = None,
              timestamp: datetime | None = None, hostname: str | None = None,
              reruns: Mapping[str, Sequence[RunResult]] | None = None, retry_no: Mapping[str, int] | None = None,
              invalid: Sequence[tuple[str, str]] = ()) -> str:
    """The JUnit XML document of ``results`` as text (UTF-8, with an XML declaration).

    Parameters
    ----------
    results : sequence of RunResult
        The runs, in the order they ran.
    suite : str
        The test suite's name (the project's name).
    seeds : sequence of int or None, optional
        The episode seed of each run (None for a flow that is not episodic);
        it makes episode cases distinct.  Defaults to None for every run.
    not_run : sequence of (flow, error kind, reason)
        Flows the broken environment kept from running: one ``<error>`` case each, after the runs.
    screenshots : mapping run id -> paths
        Screenshots on disk to attach to each run's case (:func:`run_screenshots`).
    timestamp, hostname
        Of the ``<testsuite>``; default now (UTC) and :func:`socket.gethostname`.
    reruns : mapping run id -> earlier runs
        ``run --retries``: the runs retried before each run of ``results`` (oldest first).
    retry_no : mapping run id -> int
        The retry number of each run that was a retry (1..N).
    invalid : sequence of (file, error)
        Invalid flow files (the loader's error naming the file, step and field; a ``{name}`` with no value):
        one ``<error type="invalid">`` case each, named by the file, after the others.
    """
    reruns, retry_no = reruns or {}, retry_no or {}
    seeds = list(seeds) if seeds is not None else [None] * len(results)
    if len(seeds) != len(results):
        raise ValueError(f"seeds: expected {len(results)} values, got {len(seeds)}")
    screenshots = screenshots or {}
    counts = {"failure": 0, "error": 0, "skipped": 0}
    cases = []
    for result, seed in zip(results, seeds, strict=True):
        case = ET.Element("testcase", classname=suite, name=_case_name(result, seed), time=f"{result.seconds:.3f}")
        healed = _healed(result)
        retry = retry_no.get(result.run_id, 0)
        if result.heals or healed or retry:
            props = ET.SubElement(case, "properties")
            if result.heals or healed:
                ET.SubElement(props, "property", name="steadyhand.heals", value=str(result.heals))
            if healed:
                ET.SubElement(props, "property", name="steadyhand.healed_steps", value=healed)
            if retry:
                ET.SubElement(props, "property", name="steadyhand.retry", value=str(retry))
        if not succeeded(result):
            stop = Stop.of(result)
            tag = _outcome_tag(result)
            counts[tag] += 1
            message = f"{result.status} {_where(stop)}: {stop.reason or stop.kind}"
            child = ET.SubElement(case, tag, message=message)
            if tag != "skipped":
                child.set("type", stop.kind or result.status)
                child.text = message
        for earlier in reruns.get(result.run_id, ()):
            stop = Stop.of(earlier)
            message = f"{earlier.status} {_where(stop)}: {stop.reason or stop.kind} (run id {earlier.run_id}, retried)"
            rerun = ET.SubElement(case, "flakyFailure" if succeeded(result) else "rerunFailure", message=message,
                                  type=stop.kind or earlier.status)
            rerun.text = message
        out = ET.SubElement(case, "system-out")
        heals = f", {result.heals} healed" if result.heals else ""
        marked = (f"passed with {result.heals} heal{'' if result.heals == 1 else 's'}: {healed or 'see the steps'}\n"
                  if succeeded(result) and result.heals else "")
        attach = "".join(f"[[ATTACHMENT|{p}]]\n" for p in screenshots.get(result.run_id, ()))
        marked = (f"retry {retry} (the run before it did not pass and wrote nothing)\n" if retry else "") + marked
        out.text = (f"{marked}{len(result.steps)} of {result.total_steps or len(result.steps)} steps run{heals}; "
                    f"run id {result.run_id}\n{_steps_text(result)}\n{attach}")
        cases.append(case)
    for flow, kind, reason in not_run:
        case = ET.Element("testcase", classname=suite, name=flow, time="0.000")
        message = f"not run: {reason}"
        if kind == "maxfail":  # run --maxfail / -x stopped before this flow: skipped, not an error
            ET.SubElement(case, "skipped", message=message)
            counts["skipped"] += 1
        else:
            err = ET.SubElement(case, "error", message=message, type=kind or "environment")
            err.text = message
            counts["error"] += 1
        cases.append(case)
    for file, error in invalid:
        case = ET.Element("testcase", classname=suite, name=file, time="0.000")
        message = f"invalid flow file, not run: {error}"
        err = ET.SubElement(case, "error", message=message, type="invalid")
        err.text = message
        counts["error"] += 1
        cases.append(case)
    stamp = (timestamp or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0, tzinfo=None)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(counts["failure"]),
                       errors=str(counts["error"]), skipped=str(counts["skipped"]),
                       time=f"{sum(r.seconds for r in results):.3f}", timestamp=stamp.isoformat(),
                       hostname=hostname if hostname is not None else socket.gethostname())
    ts.extend(cases)
    root.set("tests", ts.get("tests", "0"))
    root.set("failures", ts.get("failures", "0"))
    root.set("errors", ts.get("errors", "0"))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, results: Iterable[RunResult], *, suite: str,
                seeds: Sequence[int | None] | None = None, not_run: Sequence[NotRun] = (),
                screenshots: Mapping[str, Sequence[Path]] | None = None,
                reruns: Mapping[str, Sequence[RunResult]] | None = None,
                retry_no: Mapping[str, int] | None = None, invalid: Sequence[tuple[str, str]] = ()) -> Path:
    """Write :func:`junit_xml` to ``path`` atomically (a temporary file renamed over it); returns the path.

    Raises
    ------
    OSError
        When the folder cannot be created or the file written.
    """
    text = junit_xml(list(results), suite=suite, seeds=seeds, not_run=not_run, screenshots=screenshots,
                     reruns=reruns, retry_no=retry_no, invalid=invalid)
    from core.project.loader import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return path
