"""Site adapters: how a project's target is served and prepared for each flow.

* ``demo``: the bundled demo app (``core.sites.demo``), reset to its known
  state and given a fresh browser context before every flow.
* ``miniwob``: the MiniWoB++ tasks shipped in the PyPI package ``miniwob``,
  served from the installed package folder on loopback; each flow run is one
  episode (``Math.seedrandom(seed)``, ``core.startEpisodeReal()``, wait for
  ``WOB_TASK_READY``, read ``core.getUtterance()``, read
  ``WOB_RAW_REWARD_GLOBAL`` / ``WOB_DONE_GLOBAL`` afterwards).
* an external ``base_url``: nothing served, nothing reset.
"""
from __future__ import annotations

import re
import time
from datetime import date
from pathlib import Path
from typing import Any, Mapping

from core.domain import Flow
from core.project.params import ParameterError
from core.project import Project, ProjectError

__all__ = ["SiteAdapter", "ExternalSite", "DemoAdapter", "MiniwobAdapter", "open_site", "miniwob_html_root"]


class SiteAdapter:
    """Base: an external site (nothing to serve or reset)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def before_flow(self, flow: Flow, driver: Any) -> None:
        """Prepare the target before ``flow`` starts (reset state, fresh context)."""

    def start_episode(self, flow: Flow, driver: Any, seed: int | None) -> Mapping[str, str]:
        """Start an episode of an episodic flow; returns parameters bound from it."""
        return {}

    def after_flow(self, flow: Flow, driver: Any) -> float | None:
        """Read the episode's raw reward (None for non-episodic sites)."""
        return None

    def close(self) -> None:
        """Stop serving."""


ExternalSite = SiteAdapter


def demo_options(project: Project) -> dict[str, Any]:
    """The demo site's keyword arguments from ``site_options`` of the project file.

    Raises
    ------
    core.project.ProjectError
        An unknown option (``variantt``), a date that is not ``YYYY-MM-DD``,
        a latency that is not a whole number of ms from 0 to 60000, or an
        unknown variant - naming ``steadyhand.yaml``, the field and what was
        expected.
    """
    from core.sites.demo import SERVED_VARIANTS as VARIANTS

    where = project.root / "steadyhand.yaml"
    opts = project.settings.site_options
    known = ("today", "latency_ms", "variant")
    for key in opts:
        if key not in known:
            raise ProjectError(where, f"unknown demo site option {key!r}; expected one of {', '.join(known)}",
                               location=f"site_options.{key}")
    kwargs: dict[str, Any] = {}
    if "today" in opts:
        try:
            kwargs["today"] = date.fromisoformat(str(opts["today"]))
        except ValueError:
            raise ProjectError(where, f"expected a date YYYY-MM-DD, got {opts['today']!r}",
                               location="site_options.today") from None
    if "latency_ms" in opts:
        try:
            kwargs["latency_ms"] = int(str(opts["latency_ms"]))
        except ValueError:
            kwargs["latency_ms"] = -1
        if not 0 <= kwargs["latency_ms"] <= 60000:
            raise ProjectError(where, f"expected a whole number of ms from 0 to 60000, got {opts['latency_ms']!r}",
                               location="site_options.latency_ms")
    if "variant" in opts:
        if opts["variant"] not in VARIANTS:
            raise ProjectError(where, f"unknown variant {opts['variant']!r}; expected one of {', '.join(VARIANTS)} "
                                      f"(docs/variants.md)", location="site_options.variant")
        kwargs["variant"] = opts["variant"]
    return kwargs


#: The bundled demo app's own database (the app under test's data, users' passwords included), in the data folder.
DEMO_APP_DB = "demo-app.sqlite"


def site_data_files(project: Project) -> list[Path]:
    """Files that hold the data of the app under test itself (not Steadyhand's): the demo app's database.

    An audit of Steadyhand's records leaves them out: the app keeps its
    users' passwords as it likes.  Empty for sites that are not bundled.
    """
    if project.settings.site != "demo":
        return []
    db = project.data_dir / DEMO_APP_DB
    return [db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]


class DemoAdapter(SiteAdapter):
    """The bundled demo app, reset before every flow."""

    def __init__(self, project: Project) -> None:
        from core.sites.demo import DemoSite

        kwargs = demo_options(project)
        self.site = DemoSite(project.data_dir / DEMO_APP_DB, **kwargs)
        self.site.start()
        super().__init__(self.site.base_url)

    def before_flow(self, flow: Flow, driver: Any) -> None:
        self.site.reset()
        driver.new_context_page()

    def ground_truth(self) -> dict[str, Any]:
        """The demo server's own log since the last reset (activations, writes, duplicates).

        For harnesses and reports only: the engine never reads the ground truth.
        """
        return self.site.ground_truth_report()

    def close(self) -> None:
        self.site.stop()


def miniwob_html_root() -> Path:
    """Folder of the MiniWoB++ html shipped in the installed ``miniwob`` package.

    Raises
    ------
    RuntimeError
        When the package is not installed.
    """
    try:
        import importlib.util

        spec = importlib.util.find_spec("miniwob")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        raise RuntimeError("the 'miniwob' package is not installed (pip install miniwob)")
    return Path(spec.origin).parent / "html"


def field_param(key: str) -> str:
    """A task field's parameter name: ``"target 0"`` -> ``"target_0"``."""
    return re.sub(r"\W+", "_", key.strip()) or "field"


def task_fields(flow: Flow, utterance: str) -> dict[str, str]:
    """The episode's fields by parameter name, from MiniWoB++'s own field extractor for the task.

    Raises
    ------
    ParameterError
        When a field the flow declares is not among the episode's fields, or
        the extractor cannot read the instruction (names the flow, the task
        and the fields it has).
    """
    if flow.episode is None:
        return {}
    from miniwob.fields import get_field_extractor

    try:
        extractor = get_field_extractor(flow.episode.task)
    except KeyError:
        if flow.episode.fields:
            raise ParameterError(f"{flow.name}: MiniWoB++ has no field extractor for task {flow.episode.task!r}; "
                                 "bind its parameters with utterance_regex instead") from None
        return {}
    try:
        fields = {field_param(k): str(v) for k, v in extractor(utterance)}
    except ValueError as exc:
        raise ParameterError(f"{flow.name}: task {flow.episode.task!r}: {exc}") from None
    missing = [f for f in flow.episode.fields if f not in fields]
    if missing:
        raise ParameterError(f"{flow.name}: task {flow.episode.task!r} has no field {missing[0]!r} this episode "
                             f"(fields: {', '.join(sorted(fields)) or 'none'})")
    return fields


class MiniwobAdapter(SiteAdapter):
    """MiniWoB++ tasks from the installed package; each flow run is one episode."""

    #: Episode limit fallback in ms (core.EPISODE_MAX_TIME default is 10 s).
    READY_TIMEOUT_S = 5.0

    def __init__(self, project: Project) -> None:
        from core.sites.server import StaticSite

        self.server = StaticSite(miniwob_html_root())
        self.server.start()
        self.seed = 0
        super().__init__(self.server.base_url)

    def before_flow(self, flow: Flow, driver: Any) -> None:
        driver.new_context_page()

    def start_episode(self, flow: Flow, driver: Any, seed: int | None) -> Mapping[str, str]:
        """Seed, start the episode, wait until ready, bind the utterance.

        Raises
        ------
        ParameterError
            When the utterance does not match the flow's ``utterance_regex``.
        """
        page = driver.page
        if seed is None:
            seed = self.seed
        page.evaluate("s => { Math.seedrandom(s); core.startEpisodeReal(); }", str(seed))
        deadline = time.monotonic() + self.READY_TIMEOUT_S
        while not page.evaluate("() => typeof WOB_TASK_READY === 'undefined' || WOB_TASK_READY === true"):
            if time.monotonic() > deadline:
                raise ParameterError(f"{flow.name}: the task did not become ready within {self.READY_TIMEOUT_S:.0f} s")
            time.sleep(0.02)
        utterance = str(page.evaluate("() => core.getUtterance()"))
        self.last_utterance = utterance
        self.episode_ms = int(page.evaluate("() => core.EPISODE_MAX_TIME"))
        params = {"utterance": utterance, **task_fields(flow, utterance)}
        if flow.episode and flow.episode.utterance_regex:
            m = re.search(flow.episode.utterance_regex, utterance)
            if not m:
                raise ParameterError(f"{flow.name}: utterance {utterance!r} does not match "
                                     f"utterance_regex {flow.episode.utterance_regex!r}")
            params.update({k: v for k, v in m.groupdict().items() if v is not None})
        return params

    def after_flow(self, flow: Flow, driver: Any) -> float | None:
        """Raw reward of the episode; waits up to 1 s for the episode to end."""
        page = driver.page
        deadline = time.monotonic() + 1.0
        try:
            while not page.evaluate("() => WOB_DONE_GLOBAL === true") and time.monotonic() < deadline:
                time.sleep(0.05)
            done = bool(page.evaluate("() => WOB_DONE_GLOBAL === true"))
            raw = float(page.evaluate("() => WOB_RAW_REWARD_GLOBAL"))
        except Exception:
            return -1.0
        return raw if done else -1.0

    def close(self) -> None:
        self.server.stop()


def open_site(project: Project) -> SiteAdapter:
    """Start serving the project's target and return its adapter."""
    site = project.settings.site
    if site == "demo":
        return DemoAdapter(project)
    if site == "miniwob":
        return MiniwobAdapter(project)
    assert project.settings.base_url
    return SiteAdapter(project.settings.base_url)
