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
and its time in ms.  Texts come from the run result, whose errors are
already masked (architecture rule 7).  Written with the standard library's
ElementTree, so the XML is always well formed.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable, Sequence

from core.domain import RunResult

from .report import KIND_EXIT, EXIT_ENVIRONMENT, EXIT_INPUT, Stop, succeeded

__all__ = ["junit_xml", "write_junit"]


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


def junit_xml(results: Sequence[RunResult], *, suite: str, seeds: Sequence[int | None] | None = None) -> str:
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
    """
    seeds = list(seeds) if seeds is not None else [None] * len(results)
    if len(seeds) != len(results):
        raise ValueError(f"seeds: expected {len(results)} values, got {len(seeds)}")
    counts = {"failure": 0, "error": 0, "skipped": 0}
    cases = []
    for result, seed in zip(results, seeds, strict=True):
        case = ET.Element("testcase", classname=suite, name=_case_name(result, seed), time=f"{result.seconds:.3f}")
        if not succeeded(result):
            stop = Stop.of(result)
            tag = _outcome_tag(result)
            counts[tag] += 1
            message = f"{result.status} {_where(stop)}: {stop.reason or stop.kind}"
            child = ET.SubElement(case, tag, message=message)
            if tag != "skipped":
                child.set("type", stop.kind or result.status)
                child.text = message
        out = ET.SubElement(case, "system-out")
        heals = f", {result.heals} healed" if result.heals else ""
        out.text = (f"{len(result.steps)} of {result.total_steps or len(result.steps)} steps run{heals}; "
                    f"run id {result.run_id}\n{_steps_text(result)}\n")
        cases.append(case)
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)), failures=str(counts["failure"]),
                       errors=str(counts["error"]), skipped=str(counts["skipped"]),
                       time=f"{sum(r.seconds for r in results):.3f}")
    ts.extend(cases)
    root.set("tests", ts.get("tests", "0"))
    root.set("failures", ts.get("failures", "0"))
    root.set("errors", ts.get("errors", "0"))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, results: Iterable[RunResult], *, suite: str,
                seeds: Sequence[int | None] | None = None) -> Path:
    """Write :func:`junit_xml` to ``path`` atomically (a temporary file renamed over it); returns the path.

    Raises
    ------
    OSError
        When the folder cannot be created or the file written.
    """
    text = junit_xml(list(results), suite=suite, seeds=seeds)
    from core.project.loader import write_atomic

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text.encode("utf-8"))
    return path
