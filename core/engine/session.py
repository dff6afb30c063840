"""A project session: site, browser, store and executor wired together.

One session = one thread's worth of Playwright: the CLI uses it on the main
thread, the studio's engine thread uses it on its own.  A run of one flow is
an independent job (architecture rule 8): project, flow, parameters and
browser settings in; a :class:`~core.domain.RunResult` out.
"""
from __future__ import annotations

import re
import uuid
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from core.act.landing import base_path
from core.domain import Candidate, Flow, Resolution, RunResult, Step
from core.engine.events import CorrectionOffered, EngineEvent, ModelUsage
from core.engine.control import HeadlessControl, RunControl
from core.engine.executor import FlowExecutor
from core.engine.pipeline import fatal_kind
from core.engine.report import succeeded
from core.engine.skilled import skill_decider
from core.heal import HealBook
from core.perception.driver import PlaywrightDriver
from core.project import Project, ProjectError
from core.project.params import placeholders, step_texts
from core.recover.waits import WaitLearner
from core.sites.adapters import SiteAdapter, open_site
from core.secrets import MissingSecretError, Redactor, resolve_secret

__all__ = ["ProjectSession", "SessionError", "resolve_params", "check_params", "param_error"]


class SessionError(RuntimeError):
    """The session could not start (secret missing, site failed); message says why."""


def resolve_params(project: Project, flow: Flow, overrides: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Parameters for a flow run and the list of secret values.

    Order of precedence: run overrides > flow params > project params;
    secrets (project-declared and flow-declared) come from the environment
    or keyring (:func:`core.secrets.resolve_secret`).

    Raises
    ------
    SessionError
        When a declared secret has no value.
    """
    params: dict[str, str] = {**project.settings.params, **flow.params, **overrides}
    secret_values: list[str] = []
    names = list(project.settings.secrets) + [s for s in flow.secrets if s not in project.settings.secrets]
    episode_bound = (set(re.compile(flow.episode.utterance_regex).groupindex) | set(flow.episode.fields)
                     if flow.episode else set())
    for name in names:
        if name in episode_bound:
            continue  # bound from the episode's utterance; masked when bound
        if name in overrides:
            secret_values.append(overrides[name])
            continue
        spec = project.settings.secrets.get(name)
        try:
            value = resolve_secret(name, project=project.name, default=spec.default if spec else None)
        except MissingSecretError as exc:
            raise SessionError(str(exc)) from None
        params[name] = value
        secret_values.append(value)
    return params, secret_values


def check_params(project: Project, flow: Flow, overrides: Mapping[str, str]) -> str:
    """Return "" when every ``{name}`` of the flow has a source, else a message naming file, step and field
    (the text of :func:`param_error`)."""
    err = param_error(project, flow, overrides)
    return str(err) if err is not None else ""


def param_error(project: Project, flow: Flow, overrides: Mapping[str, str]) -> ProjectError | None:
    """``None`` when every ``{name}`` of the flow has a source, else the flow file's error (a
    :class:`core.project.ProjectError`: ``path`` the flow file, ``location`` the step and field, ``detail``
    ``parameter {name} has no value (known: ...)``), as an invalid flow file is reported.

    Texts checked: the start URL, and of each step its value, selector, the
    text fields of its target descriptor and its assertions' expected texts
    and selectors (:func:`core.project.params.step_texts`).  Sources: project
    and flow params, declared secrets, run overrides, and for an episodic
    flow ``utterance``, the task's declared ``fields`` and the groups of its
    ``utterance_regex``.
    """
    known = set(project.settings.params) | set(flow.params) | set(project.settings.secrets) | set(flow.secrets)
    known |= set(overrides)
    if flow.episode:
        known |= {"utterance"} | set(flow.episode.fields)
        known |= set(re.compile(flow.episode.utterance_regex).groupindex)
    texts = [("start_url", flow.start_url, "")]
    for i, st in enumerate(flow.steps):
        texts += [(fieldname, text, f"step {st.id!r} (#{i + 1}), ") for fieldname, text in step_texts(st)]
    for fieldname, text, where in texts:
        for name in placeholders(text):
            if name not in known:
                return ProjectError(flow.source or flow.name,
                                    f"parameter {{{name}}} has no value (known: {', '.join(sorted(known)) or 'none'})",
                                    location=f"{where}field '{fieldname}'")
    return None


class ProjectSession:
    """Owns the bundled site, the browser and the store for one project.

    Parameters
    ----------
    project : Project
        The loaded project.
    emit : Callable[[EngineEvent], None]
        Event sink (called on the owning thread).
    headless : bool | None
        Override the project's browser setting.
    control : RunControl | None
        Pause / escalation policy; headless by default.
    use_store : bool
        Record runs in ``<project>/.steadyhand/store.sqlite``.
    cdp_port : int | None
        Open Chromium's remote-debugging port on 127.0.0.1 (a takeover by a
        script over CDP, :mod:`core.engine.handback`); None: no port.
    base_url : str | None
        Run against this base URL instead of the project's ``base_url`` (another host or path prefix,
        ``steadyhand run --base-url``); flows recorded under the project's keep their recorded
        after-states, judged relative to each base (issue 19).  None: the project's.
    evidence : str | None
        ``"full"``, ``"failures"`` or ``"off"`` (:mod:`core.engine.fastpath`);
        None: the project's ``evidence:`` (``failures`` by default).
    browser_endpoint : str | None
        Connect to this browser instead of launching Chromium (``run --browser-endpoint``: a Playwright
        server's ``ws://`` URL or a Chromium DevTools URL, :mod:`core.perception.remote`); the caller has
        checked that the project may reach it (:func:`core.project.trust.endpoint_refusal`).  None: launch.
    screencast : bool
        Stream the page as :class:`~core.engine.events.ScreencastFrame` events while a flow runs
        (:mod:`core.engine.plugins.screencast`): for a front end that watches (the studio); False for
        ``steadyhand run``, which never pays for it.
    writes_seen : bool
        Keep what each step that acted was seen to write (:mod:`core.engine.plugins.writes_seen`), which
        ``run --retries`` reads to tell a failed run that wrote nothing; False: not read (it costs a page read
        per step that acted).
    trace : str
        ``"off"``, ``"on"`` or ``"retain-on-failure"``: a Playwright trace of each flow run kept at
        ``.steadyhand/traces/<run id>.zip`` (:mod:`core.engine.trace`, ``steadyhand run --trace``).
    """

    def __init__(self, project: Project, *, emit: Callable[[EngineEvent], None] = lambda e: None,
                 headless: bool | None = None, control: RunControl | None = None, use_store: bool = True,
                 screenshots: bool = True, cdp_port: int | None = None, base_url: str | None = None,
                 evidence: str | None = None, screencast: bool = False, browser_endpoint: str | None = None,
                 trace: str = "off", writes_seen: bool = False) -> None:
        from core.engine.trace import RunTrace

        self.project = project
        #: The Playwright trace of each flow run (:class:`core.engine.trace.RunTrace`); ``mode`` "off" records none.
        self.trace = RunTrace(trace, project.data_dir)
        #: What each step that acted was seen to write, per run id (:mod:`core.engine.plugins.writes_seen`),
        #: when asked for (``run --retries``): None otherwise.
        self.writes_seen: Any = None
        self._writes_seen_wanted = writes_seen
        self.browser_endpoint = browser_endpoint or ""
        #: The screencast of the page (:class:`core.engine.plugins.screencast.ScreencastPlugin`), when watched.
        self.screencast: Any = None
        self._screencast_wanted = screencast
        self.base_url = base_url or None
        #: The path of the base URL the project's flows were recorded under, for the flow files that do not
        #: say (written before ``base_path`` was kept): the project's own base URL, never the override.
        self.recorded_base = ""
        self.cdp_port = cdp_port
        self.emit = emit
        self.headless = headless
        self.control = control or HeadlessControl()
        self.use_store = use_store
        self.screenshots = screenshots
        #: The evidence level of the session's runs (core.engine.fastpath): the project's unless given.
        self.evidence = evidence or project.engine_settings.evidence
        self.site: SiteAdapter | None = None
        self.driver: PlaywrightDriver | None = None
        self.store: Any = None
        self.redactor = Redactor(())
        self._secret_values: list[str] = []
        self._captured: list[tuple[Step, Candidate]] = []
        #: Settle times learnt from the pages, shared by the session's flows (S7).
        self.wait_learner = WaitLearner(project.engine_settings.waits)
        self._healed: list[tuple[int, Step, Candidate, Resolution]] = []
        self.heals: HealBook | None = None
        #: Per run id: what the run did to heal proposals and flow files ("heal proposed #3: ...",
        #: "pending heal #3 reused ...", "filled in #4: ..."); the CLI prints them, the studio may show them.
        self.heal_notes: dict[str, list[str]] = {}
        #: The optional model (:class:`core.plan.agent.ModelAgent`), None without a ``model:`` section.
        self.model: Any = None
        #: Per run id: what the model cost in that run (:class:`core.engine.events.ModelUsage` counters).
        self.model_usage: dict[str, dict[str, float]] = {}
        #: Run ids for which a takeover correction was stored (``CorrectionOffered`` with an id): only those
        #: runs are learnt from (:meth:`_learn`).
        self._corrected: set[str] = set()

    def __enter__(self) -> "ProjectSession":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Start the site, the store and the browser.

        Raises
        ------
        core.perception.browser.BrowserLaunchError, SessionError
        """
        from core.project import ProjectError
        from core.store import StoreError, StoreUnavailableError

        if self.base_url and self.project.settings.site:
            raise SessionError(f"{self.project.root}: another base URL applies to a project with 'base_url', not to "
                               f"the bundled site {self.project.settings.site!r}")
        try:
            self.site = SiteAdapter(self.base_url) if self.base_url else open_site(self.project)
        except ProjectError as exc:  # the site options of the project file are wrong
            raise SessionError(str(exc)) from None
        self.recorded_base = base_path(self.project.settings.base_url or self.site.base_url) + "/"
        secrets: list[str] = []
        for flow in self.project.flows.values():
            secrets.extend(resolve_params(self.project, flow, {})[1])
        self._secret_values = list(secrets)
        self.redactor = Redactor(self._secret_values)
        if self.use_store:
            from core.store import Store

            try:
                self.store = Store.open(self.project.data_dir / "store.sqlite", redactor=self.redactor)
            except StoreUnavailableError:  # a shared store's server is down: the environment, exit code 4
                self.site.close()
                raise
            except (StoreError, ProjectError) as exc:  # ProjectError: a symbolic link leads out of the project
                self.site.close()
                raise SessionError(str(exc)) from None
            self.heals = HealBook(self.store, project_root=self.project.root, project_name=self.project.name)
        run = self.project.engine_settings
        self.driver = PlaywrightDriver(run.browser, base_url=self.site.base_url, redactor=self.redactor,
                                       headless=self.headless, waits=run.waits)
        self.driver.secret_values = list(self._secret_values)
        if self.cdp_port:  # refused when in use; bound on 127.0.0.1 and checked to be this browser's
            self.driver.cdp_port = int(self.cdp_port)
        self.driver.endpoint = self.browser_endpoint  # connect there instead of launching (core.perception.remote)
        try:
            self.driver.open()
        except Exception:
            self.close()
            raise
        self._open_model()

    def _open_model(self) -> None:
        """The project's model, when it has a ``model:`` section (:mod:`core.plan.agent`).

        Raises
        ------
        SessionError
            When its key cannot be found (names the file and field).
        """
        from core.plan.agent import ModelAgent
        from core.plan.config import ModelSetupError, model_setup

        try:
            setup = model_setup(self.project, self.redactor)
        except ModelSetupError as exc:
            self.close()
            raise SessionError(str(exc)) from None
        if setup is None:
            return
        self._add_secrets(list(setup.secrets))
        driver = self.driver
        check = getattr(driver, "check_now", None) or driver.check_assertion  # once, no polling: acting is next
        self.model = ModelAgent(setup, redactor=lambda: self.redactor,
                                check_assertion=lambda a: check(a, None, a.expected),
                                secret_names=lambda: set(self.project.settings.secrets))

    def close(self) -> None:
        """Close browser, store and site; never raises."""
        if self.model is not None:
            self.model.setup.close()
            self.model = None
        for obj in (self.driver, self.store, self.site):
            if obj is None:
                continue
            try:
                obj.close()  # type: ignore[union-attr]
            except Exception:
                pass
        self.driver = self.store = self.site = None
        self.heals = None

    def _executor(self, resume: Any = None) -> FlowExecutor:
        assert self.driver is not None
        cls = FlowExecutor
        if resume is not None:  # a core.engine.resume.ResumePlan: the run continues an earlier one
            from core.engine.resume import ResumeExecutor

            cls = ResumeExecutor
        ex = cls(self.driver, emit=self._emit_run, control=self.control, store=self.store,
                          settings=self.project.engine_settings, screenshots=self.screenshots,
                          project_name=self.project.name,
                          on_descriptor_captured=lambda f, s, c: self._captured.append((s, c)),
                          on_step_healed=lambda f, i, s, c, r: self._healed.append((i, s, c, r)),
                          pending_heals=self.heals,
                          wait_learner=self.wait_learner, evidence=self.evidence,
                          deciders=(self.model.decider,) if self.model is not None else (),
                          extra_plugins=self._screencast_plugins() + self._writes_seen_plugins())
        skills = skill_decider(self.store, self.project.name, self.emit, redact=lambda t: self.redactor.text(t),
                               settings=getattr(self.project.settings, "skills", None),
                               locator=ex.settings.locator, secrets=tuple(self.project.settings.secrets))
        if skills is not None:  # the project's approved skills decide first (K6), read afresh each run
            ex.chain = ex.chain.with_decider(skills)
        if self.model is not None and self.model.options.tie_break:
            ex.tie_breaker = self.model.tie_break
        if resume is not None:
            ex.plan = resume  # type: ignore[attr-defined]
        return ex

    def _emit_run(self, event: EngineEvent) -> None:
        """The executor's event sink: :attr:`emit`, noting the runs a correction was stored for."""
        if isinstance(event, CorrectionOffered) and event.correction_id:
            self._corrected.add(event.run_id)
        self.emit(event)

    def _writes_seen_plugins(self) -> tuple[object, ...]:
        """The writes-seen book (one per session) when the session was asked for it."""
        if not self._writes_seen_wanted:
            return ()
        if self.writes_seen is None:
            from core.engine.plugins.writes_seen import WritesSeenPlugin

            self.writes_seen = WritesSeenPlugin(self.driver)
        self.writes_seen.driver = self.driver
        return (self.writes_seen,)

    def _screencast_plugins(self) -> tuple[object, ...]:
        """The screencast plugin (one per session, built on first use) when the session was asked for it."""
        if not self._screencast_wanted:
            return ()
        if self.screencast is None:
            from core.engine.plugins.screencast import ScreencastPlugin

            self.screencast = ScreencastPlugin(self.driver, self.emit, redact=lambda t: self.redactor.text(t))
        self.screencast.driver = self.driver  # a revived browser is a new driver state; the same object today
        return (self.screencast,)

    def _store_back(self, flow: Flow, result: RunResult) -> None:
        """After a run: heal proposals, reuse counts and filled-in descriptors (:class:`core.heal.HealBook`).

        Heals are proposed, never written: a step healed by any level but
        exact leaves a proposal (``steadyhand heals ...`` reviews it).  The
        descriptors of selector-only steps are filled in at once after a run
        that passed (and earned a positive reward, for an episode) - and each
        fill is reported in :attr:`heal_notes` and kept in the store as
        "filled in", so nothing rewrites a flow file silently.  Nothing is
        written without the store (``--no-store``); what the page showed is
        escaped, so its braces stay literal text.  The flow file is the
        user's: a failure here never fails the run (it becomes a note).
        """
        captured, self._captured = self._captured, []
        healed, self._healed = self._healed, []
        if self.heals is None or not self.use_store:
            return
        try:
            notes = self.heals.after_run(flow, result, passed=succeeded(result), healed=healed, captured=captured)
        except Exception as exc:  # noqa: BLE001 - never fail a run over the proposals
            notes = [f"heal proposals not recorded: {type(exc).__name__}: {exc}"]
        if notes:
            self.heal_notes[result.run_id] = [self.redactor.text(n) for n in notes]

    def run_flow(self, flow: Flow, *, params: Mapping[str, str] | None = None, seed: int | None = None,
                 resume: Any = None) -> RunResult:
        """Run one flow (one episode for episodic flows) and return its result.

        ``resume`` (a :class:`core.engine.resume.ResumePlan`) continues an earlier run of the flow instead.
        """
        assert self.site is not None and self.driver is not None
        all_params, secret_values = resolve_params(self.project, flow, params or {})
        self._add_secrets(secret_values)
        executor = self._executor(resume)
        try:
            self._revive_browser()
            if resume is not None:  # a resumed run goes on with the app as the earlier run left it: no reset
                self.driver.new_context_page()
            else:
                self.site.before_flow(flow, self.driver)
        except Exception as exc:  # noqa: BLE001 - one flow's broken browser is that flow's error, never a crash
            kind, message = fatal_kind(exc)
            result = RunResult(run_id=uuid.uuid4().hex, flow=flow.name, status="error", steps=(), heals=0,
                               invalid_actions=0, seconds=0.0, error=self.redactor.text(message),
                               error_kind=kind)  # type: ignore[arg-type]
            executor.finish(result)
            return result
        setup = (lambda: self._start_episode(flow, seed)) if flow.episode else None
        before = self.model.counters() if self.model is not None else None
        # a flow file that does not say which base it was recorded under was recorded under the project's
        ran = flow if flow.base_path else replace(flow, base_path=self.recorded_base)
        self.trace.begin(self.driver, flow, list(self.project.settings.secrets) + list(flow.secrets))
        result = None
        try:
            result = executor.run_flow(ran, params=all_params, setup=setup)
        finally:
            if self.screencast is not None:
                self.screencast.stop()  # also when the flow ended by an error or a stop
            # the trace is stopped also when the run raised (then kept under no run id: discarded)
            self.trace.end(result.run_id if result is not None else "", succeeded(result) if result is not None
                           else False, self._secret_values)
        for note in self.trace.notes.pop(result.run_id, []):
            self.heal_notes.setdefault(result.run_id, []).append(self.redactor.text(note))
        if self.model is not None and before is not None:
            self._model_usage(result.run_id, flow.name, before)
        reward = self.site.after_flow(flow, self.driver) if flow.episode else None
        if reward is not None:
            result = replace(result, reward=reward)
        self._store_back(flow, result)
        self._learn(flow, result)
        executor.finish(result)
        return result

    def _learn(self, flow: Flow, result: RunResult) -> None:
        """After a run with a takeover correction: its failures become skill proposals (K2-K5,
        :func:`core.skills.learn.learn_from_run`), announced as ``SkillProposed`` / ``SkillDropped``.
        Never fails the run (a failure here becomes a heal note).  A run without a stored correction (no
        ``CorrectionOffered`` with an id, :meth:`_emit_run`) asks the store nothing."""
        corrected = result.run_id in self._corrected
        self._corrected.discard(result.run_id)
        if self.store is None or not self.use_store or not corrected:
            return
        from core.engine.events import SkillDropped, SkillProposed
        from core.skills.learn import learn_from_run

        try:
            report = learn_from_run(self.store, self.project.name, result.run_id, flow=flow,
                                    settings=getattr(self.project.settings, "skills", None),
                                    model=self.model.setup.primary if self.model is not None else None)
        except Exception as exc:  # noqa: BLE001 - never fail a run over learning
            self.heal_notes.setdefault(result.run_id, []).append(
                self.redactor.text(f"skills not learnt: {type(exc).__name__}: {exc}"))
            return
        for s in report.proposed:
            self.emit(SkillProposed(result.run_id, flow.name, s.id, self.redactor.text(s.description),
                                    s.validation.pass_rate, s.validation.cases))
        for d in report.dropped:
            self.emit(SkillDropped(result.run_id, flow.name, self.redactor.text(d.reason), d.step_index))

    def _model_usage(self, run_id: str, flow: str, before: Mapping[str, float]) -> None:
        """Keep and announce what the model cost in one run (calls, tokens, latency, cache hits, P7/P9 figures)."""
        now = self.model.counters()
        usage = {k: (round(now[k] - before.get(k, 0), 1) if k == "latency_ms" else int(now[k] - before.get(k, 0)))
                 for k in now}
        self.model_usage[run_id] = usage
        share, alarm = self.model.judge_stats()
        if self.store is not None and usage.get("calls", 0) + usage.get("rule_decisions", 0) + usage.get("cache_hits", 0):
            try:
                self.store.record_model_usage(run_id, flow, self.model.setup.primary.config.model, usage,
                                              round(share, 3), alarm)
            except Exception:  # noqa: BLE001 - recording is best effort, like every store write of a run
                pass
        self.emit(ModelUsage(run_id, flow, self.model.setup.primary.config.model, usage, round(share, 3), alarm))

    def _revive_browser(self) -> None:
        """A run of one flow is an independent job: after a browser crash the next flow gets a new browser.

        Raises
        ------
        core.perception.browser.BrowserLaunchError
            When Chromium cannot be started again.
        """
        assert self.driver is not None
        if self.driver.is_alive():
            return
        self.driver.close()
        self.driver.open()

    def _start_episode(self, flow: Flow, seed: int | None) -> Mapping[str, str]:
        assert self.site is not None and self.driver is not None
        bound = dict(self.site.start_episode(flow, self.driver, seed))
        self._add_secrets([v for k, v in bound.items() if k in flow.secrets or k in self.project.settings.secrets])
        return bound

    def _add_secrets(self, values: Sequence[str]) -> None:
        new = [v for v in values if v and v not in self._secret_values]
        if not new:
            return
        self._secret_values.extend(new)
        self.redactor = Redactor(self._secret_values)
        if self.driver is not None:
            self.driver.redactor = self.redactor
            self.driver.secret_values = list(self._secret_values)
        if self.store is not None:
            self.store.add_secrets(new)

    def run(self, flows: Sequence[str] = (), *, params: Mapping[str, str] | None = None) -> list[RunResult]:
        """Run the named flows (all when empty) in file order."""
        names = list(flows) or list(self.project.flows)
        return [self.run_flow(self.project.flows[n], params=params) for n in names]
