"""Pydantic schemas of project and flow files (validation at the edges only).

The in-memory model stays the frozen dataclasses of :mod:`core.domain`;
these models exist to validate files and to publish JSON Schemas
(``resources/schemas/``).  Every default of the settings sections is read
from :mod:`core.domain.settings`; the bounds live here.  All sections are
optional, so project files written before a section existed still load.
"""
from __future__ import annotations

import re
from typing import Literal, Optional
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from core.domain.flow import ACTION_KINDS, DEFAULT_SCROLL_PX
from core.domain.settings import EngineSettings
from core.domain.skill import SkillSettings
from core.domain.text import has_controls, printable

#: Longest scroll a step may hold (CSS px): 100000, far beyond any screen, a bound against a corrupt file.
MAX_SCROLL_PX = 100_000

__all__ = [
    "SCHEMA_VERSION", "ViewportModel", "BrowserModel", "SecretModel", "BreakerModel", "LocatorModel", "WaitModel",
    "ProjectModel", "ModelEndpointModel", "ModelModel", "SkillsModel", "AssertionModel", "AfterStateModel", "CompensationModel", "StepModel", "EpisodeModel", "FlowModel",
]

#: Names ``model.api_key_env`` may give: ``STEADYHAND_*`` or ``*_API_KEY`` (capitals, digits, ``_``), so that a
#: project file cannot have any other environment variable (``AWS_SECRET_ACCESS_KEY``) sent to a server.
API_KEY_ENV = re.compile(r"^(STEADYHAND_[A-Z0-9_]+|[A-Z][A-Z0-9_]*_API_KEY)$")

#: A URL's scheme (RFC 3986: a letter, then letters, digits, ``+``, ``-``, ``.``, then ``:``).
_SCHEME = re.compile(r"^\s*([A-Za-z][A-Za-z0-9+.-]*):")


def _http_url(v: str) -> str:
    """``v`` when it is an http(s) URL with a host; else ``ValueError`` (no ``file:``, ``data:``, ``javascript:``)."""
    u = urlsplit(v.strip())
    if u.scheme.lower() not in ("http", "https") or not u.netloc:
        raise ValueError(f"only http and https URLs are allowed (such as http://127.0.0.1:8000/), got {v!r}")
    return v


def _http_or_path(v: str) -> str:
    """``v`` when it is a path (``/login``, ``{param}/x``) or an http(s) URL; else ``ValueError``."""
    if _SCHEME.match(v) or v.strip().startswith("//"):
        _http_url(v if not v.strip().startswith("//") else "http:" + v.strip())
    return v


#: Current schema version of project and flow files.
SCHEMA_VERSION = 1

# The defaults of every setting come from the frozen dataclasses of core.domain.settings (one place each).
_ENGINE = EngineSettings()
_BROWSER, _BREAKER, _LOCATOR, _WAITS = _ENGINE.browser, _ENGINE.breaker, _ENGINE.locator, _ENGINE.waits


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ViewportModel(_Strict):
    width: int = Field(_BROWSER.viewport_width, ge=200, le=7680, description="CSS px")
    height: int = Field(_BROWSER.viewport_height, ge=200, le=4320, description="CSS px")


class BrowserModel(_Strict):
    headless: bool = _BROWSER.headless
    executable_path: Optional[str] = Field(_BROWSER.executable_path,
                                           description="Chromium binary; env STEADYHAND_CHROMIUM overrides")
    viewport: ViewportModel = Field(default_factory=ViewportModel)
    device_scale_factor: float = Field(_BROWSER.device_scale_factor, gt=0, le=4)
    slow_mo_ms: int = Field(_BROWSER.slow_mo_ms, ge=0, le=5000)
    locale: str = _BROWSER.locale
    timezone: str = _BROWSER.timezone
    action_timeout_ms: int = Field(_BROWSER.action_timeout_ms, ge=100, le=120000, description="per action, ms")
    navigation_timeout_ms: int = Field(_BROWSER.navigation_timeout_ms, ge=100, le=300000, description="ms")
    endpoint_hosts: tuple[str, ...] = Field(_BROWSER.endpoint_hosts, max_length=100,
                                      description="hosts off this machine that `run --browser-endpoint` may reach "
                                                  "(a Playwright server, a Selenium Grid node); needs trust")


class SecretModel(_Strict):
    default: Optional[str] = Field(None, description="public demo value only; real secrets come from env or keyring")
    description: str = ""


class BreakerModel(_Strict):
    threshold: int = Field(_BREAKER.threshold, ge=1, le=50,
                           description="consecutive failures that open the breaker")
    read_only_threshold: int = Field(_BREAKER.read_only_threshold, ge=1, le=50,
                                     description="read-only actions tolerate more")
    write_threshold: int = Field(_BREAKER.write_threshold, ge=1, le=50,
                                 description="writes (irreversible steps) tolerate fewer")
    recovery_timeout_s: float = Field(_BREAKER.recovery_timeout_s, ge=0,
                                      description="open -> half_open after this, s")
    max_failed_probes: int = Field(_BREAKER.max_failed_probes, ge=1, le=50,
                                   description="failed half-open probes in a row before retry is no longer offered")
    loop_repeats: int = Field(_BREAKER.loop_repeats, ge=1, le=50,
                              description="the same action on the same state this often in the window is a loop")
    loop_window: int = Field(_BREAKER.loop_window, ge=1, le=100, description="attempts looked back on")
    stagnation_rounds: int = Field(_BREAKER.stagnation_rounds, ge=1, le=50,
                                   description="rounds in a row without a real state change that stop")

    @model_validator(mode="after")
    def _window_holds_repeats(self) -> "BreakerModel":
        if self.loop_window < self.loop_repeats:
            raise ValueError(f"loop_window ({self.loop_window}) must be >= loop_repeats ({self.loop_repeats})")
        return self


class LocatorModel(_Strict):
    margin: float = Field(_LOCATOR.margin, ge=0, le=1, description="best must lead runner-up by this")
    fuzzy_threshold: float = Field(_LOCATOR.fuzzy_threshold, ge=0, le=1, description="least fuzzy ratio of a name that counts as a match, 0..1")
    position_tolerance_px: float = Field(_LOCATOR.position_tolerance_px, ge=0, description="CSS px")


class WaitModel(_Strict):
    retries: int = Field(_WAITS.retries, ge=0, le=10, description="extra attempts of a failed reversible step")
    retry_delay_ms: int = Field(_WAITS.retry_delay_ms, ge=0, le=10000, description="pause before a retry, ms")
    settle_max_ms: int = Field(_WAITS.settle_max_ms, ge=0, le=10000,
                               description="upper bound of the after-action wait when nothing is pending, ms")
    quiet_ms: int = Field(_WAITS.quiet_ms, ge=10, le=5000, description="no DOM mutation for this long is quiet, ms")
    loading_max_ms: int = Field(_WAITS.loading_max_ms, ge=100, le=300000,
                                description="longest wait while loading, ms; doubled for submits")
    assertion_timeout_ms: int = Field(_WAITS.assertion_timeout_ms, ge=0, le=120000,
                                      description="how long an assertion is polled, ms")
    settle_learned_max_ms: int = Field(_WAITS.settle_learned_max_ms, ge=0, le=60000,
                                       description="most the learnt idle wait grows to, ms")
    submit_factor: float = Field(_WAITS.submit_factor, ge=1, le=10,
                                 description="submits wait this many times longer")
    learn_alpha: float = Field(_WAITS.learn_alpha, gt=0, le=1, description="weight of a new settle-time sample")


class ModelEndpointModel(_Strict):
    base_url: str = Field(min_length=1, description="OpenAI-compatible root, e.g. http://127.0.0.1:8000/v1")
    name: str = Field(min_length=1, description="model name the server knows")
    api_key_secret: Optional[str] = Field(None, description="name of a declared secret holding the key")
    api_key_env: Optional[str] = Field(None, description="environment variable holding the key: its name ends in "
                                                         "_API_KEY or starts with STEADYHAND_ (needs trust)")
    timeout_s: float = Field(30.0, gt=0, le=600, description="per call, s")
    retries: int = Field(2, ge=0, le=5, description="extra attempts, 300 ms apart")
    max_tokens: int = Field(512, ge=16, le=32768, description="completion limit per call")

    @field_validator("base_url")
    @classmethod
    def _http(cls, v: str) -> str:
        return _http_url(v)

    @field_validator("api_key_env")
    @classmethod
    def _key_variable(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and not API_KEY_ENV.match(v):
            raise ValueError(f"{v!r} is not a model key variable: the name ends in _API_KEY or starts with "
                             "STEADYHAND_ (e.g. OPENAI_API_KEY), so no other environment variable can be sent")
        return v


class ModelModel(ModelEndpointModel):
    cross_check: Optional[ModelEndpointModel] = Field(None, description="second model for key assertions")
    grid_rows: int = Field(10, ge=1, le=26, description="grid rows A..")
    grid_cols: int = Field(10, ge=1, le=50, description="grid columns 1..")
    screenshot_width: int = Field(1440, ge=320, le=4096, description="image width sent, px")
    cache_ttl_s: float = Field(300.0, ge=0, le=86400, description="decision cache by state + goal, s")
    tie_break: bool = Field(True, description="ask the model among tied SEMANTIC candidates")
    judge_alarm_share: float = Field(0.3, ge=0, le=1, description="alarm when more goals pass by judgement")


_SKILLS = SkillSettings()


class SkillsModel(_Strict):
    """The ``skills:`` section: upkeep of the skill library; defaults from core.domain.skill.SkillSettings."""

    success_delta: float = Field(_SKILLS.success_delta, ge=0, le=1, description="quality + per success")
    failure_delta: float = Field(_SKILLS.failure_delta, ge=-1, le=0, description="quality + per failure")
    review_quality: float = Field(_SKILLS.review_quality, ge=0, le=1,
                                  description="below this quality a skill goes to the review area")
    review_unused_days: int = Field(_SKILLS.review_unused_days, ge=1, le=3650,
                                    description="unused this many days: review area")
    merge_similarity: float = Field(_SKILLS.merge_similarity, ge=0.5, le=1,
                                    description="action-type sequences more similar than this merge")
    daily_proposals: int = Field(_SKILLS.daily_proposals, ge=0, le=10000,
                                 description="most new proposals per product in 24 h")
    validation_threshold: float = Field(_SKILLS.validation_threshold, ge=0, le=1,
                                 description="validation pass rate a candidate needs to reach review and an approval without --force")


class ProjectModel(_Strict):
    schema_version: int = Field(SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
    name: str = Field(min_length=1)
    description: str = ""

    @field_validator("name", "description")
    @classmethod
    def _printable(cls, v: str) -> str:
        return printable(v)
    site: Optional[str] = Field(None, description="bundled site served on loopback: 'demo' or 'miniwob'")
    site_options: dict[str, str] = Field(default_factory=dict)
    base_url: Optional[str] = Field(None, description="external base URL when no bundled site")
    browser: BrowserModel = Field(default_factory=BrowserModel)
    params: dict[str, str] = Field(default_factory=dict)
    secrets: dict[str, SecretModel] = Field(default_factory=dict)
    breaker: BreakerModel = Field(default_factory=BreakerModel)
    locator: LocatorModel = Field(default_factory=LocatorModel)
    waits: WaitModel = Field(default_factory=WaitModel)
    max_steps: int = Field(_ENGINE.max_steps, ge=1, le=1000,
                           description="steps a run may take beyond the flow's own (hand-backs, loops); "
                                       "not a limit on a flow file's length")
    model: Optional[ModelModel] = Field(None, description="optional OpenAI-compatible model for goal steps and recovery")
    skills: SkillsModel = Field(default_factory=SkillsModel, description="skill library upkeep")
    evidence: Literal["full", "failures", "off"] = Field(
        _ENGINE.evidence, description="screenshots and image differences of a run: 'full' for every step, "
                                      "'failures' (default) only for steps that fail or need a heal, 'off' none")

    @field_validator("base_url")
    @classmethod
    def _http_base(cls, v: Optional[str]) -> Optional[str]:
        return None if v is None else _http_url(v)

    @field_validator("site")
    @classmethod
    def _known_site(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in ("demo", "miniwob"):
            raise ValueError("must be 'demo' or 'miniwob'")
        return v


class AssertionModel(_Strict):
    kind: Literal[
        "visible", "hidden", "text_equals", "text_contains", "enabled", "disabled",
        "value", "count", "text_appears", "text_absent", "url_contains",
    ]
    expected: str = ""
    selector: str = ""


class EvidenceModel(_Strict):
    state_before: str = Field("", description="light signature digest before the action, as recorded")
    state_after: str = Field("", description="light signature digest after the action, as recorded")
    observed: list[str] = Field(default_factory=list, description="deltas observed while recording")


class AfterStateModel(_Strict):
    url_pattern: str = Field("", description="path after the step, ids generalised ({n}, {uuid}, {id}, {param})")
    title: str = Field("", description="document title after the step")
    heading: str = Field("", description="main heading (h1) after the step")
    dialog: Optional[bool] = Field(None, description="a dialog is open after the step")
    dialog_name: str = Field("", description="the open dialog's name")
    field_changed: str = Field("", description="label of the form control the step changed")
    field_appeared: str = Field("", description="label of an editable field the step made appear (an inline editor)")
    response_status: Optional[int] = Field(None, ge=0, le=599, description="HTTP status of the step's own request "
                                           "when recorded (0: it sent none; absent: not recorded)")
    list_kind: str = Field("", description="kind of list item (li, tr, row, option...) whose count the step changed")
    list_delta: int = Field(0, description="items of list_kind the step added (negative: removed), compared relative")
    landmark: str = Field("", description="name of the main landmark (its aria-label, else its first heading)")
    region: str = Field("", description="regions the step changed on the same page, by role and name ('region: Todos')")
    target_state: str = Field("", description="the acted element's own state the step set: checked or unchecked")
    download: bool = Field(False, description="the step started a download (exported inside expect_download)")


class CompensationModel(_Strict):
    name: str = ""
    action: str = Field(json_schema_extra={"enum": list(ACTION_KINDS)}, description="one of the closed action space")
    value: str = ""
    direction: Literal["down", "up", "left", "right"] = "down"
    distance: int = Field(DEFAULT_SCROLL_PX, ge=0, le=MAX_SCROLL_PX, description="CSS px")
    timeout_ms: int = Field(0, ge=0, le=120000, description="ms; 0 = the project's browser.action_timeout_ms")
    selector: str = ""
    target: dict = Field(default_factory=dict)

    @field_validator("action")
    @classmethod
    def _closed_action(cls, v: str) -> str:
        if v not in ACTION_KINDS:
            raise ValueError(f"unknown action {v!r}; expected one of {', '.join(ACTION_KINDS)}")
        return v

    @model_validator(mode="after")
    def _http_navigation(self) -> "CompensationModel":
        if self.action == "navigate":
            _http_or_path(self.value)
        return self


def _one_line(v: str) -> str:
    """A name or description as printed: terminal escapes and control characters removed."""
    return printable(v)


class AllowModel(_Strict):
    role: str = Field(min_length=1, max_length=100, description="the control's ARIA role (button, link, menuitem...)")
    name: str = Field(min_length=1, max_length=500, description="the control's accessible name, exactly as shown "
                                                               "(spaces collapsed, case ignored)")


class StepModel(_Strict):
    model_config = ConfigDict(extra="forbid",
                              json_schema_extra={"anyOf": [{"required": ["action"]}, {"required": ["goal"]}]})

    id: str = Field(min_length=1)
    name: str = ""
    action: Optional[str] = Field(None, json_schema_extra={"enum": list(ACTION_KINDS)},
                                  description="one of the closed action space; required unless the step is a goal")
    value: str = ""
    direction: Literal["down", "up", "left", "right"] = "down"
    distance: int = Field(DEFAULT_SCROLL_PX, ge=0, le=MAX_SCROLL_PX, description="CSS px")
    timeout_ms: int = Field(0, ge=0, le=120000, description="ms; 0 = the project's browser.action_timeout_ms")
    selector: str = ""
    target: dict = Field(default_factory=dict)
    assertions: list[AssertionModel] = Field(default_factory=list)
    goal: str = Field("", description="a goal in words: the model chooses the actions until the assertions hold; "
                                      "without assertions the model judges")
    allow_irreversible: bool = Field(False, description="a goal step may do irreversible actions the model "
                                                        "chooses without a person's approval")
    allow: list[AllowModel] = Field(default_factory=list, max_length=100,
                                    description="controls a goal step's model may act on without a person's "
                                                "approval, each by role and accessible name; nothing else is "
                                                "allowed by the goal's words")
    key: bool = Field(False, description="a key goal: its result is confirmed by the cross-check model")
    expect: Literal["auto", "navigation", "value", "overlay_open", "overlay_close", "content", "none", "any"] = "auto"
    reversible: Optional[bool] = Field(None, description="declared reversibility; absent: the action's "
                                       "default, made irreversible at replay when the action wrote to the server")
    compensations: list[CompensationModel] = Field(default_factory=list,
                                                   description="actions that undo the step")
    read_only: bool = False
    optional: bool = False
    after: Optional[AfterStateModel] = Field(None, description="where the step lands: part of its expectation")
    recorded: Optional[EvidenceModel] = None

    @field_validator("name")
    @classmethod
    def _printable_name(cls, v: str) -> str:
        return _one_line(v)

    @field_validator("action")
    @classmethod
    def _closed_action(cls, v: Optional[str]) -> Optional[str]:
        if v is not None and v not in ACTION_KINDS:
            raise ValueError(f"unknown action {v!r}; expected one of {', '.join(ACTION_KINDS)}")
        return v

    @model_validator(mode="after")
    def _http_navigation(self) -> "StepModel":
        if self.action == "navigate":
            _http_or_path(self.value)
        return self

    @model_validator(mode="after")
    def _goal_is_targetless(self) -> "StepModel":
        if not self.goal:
            if self.allow:
                raise ValueError("field 'allow' belongs to a goal step (it names controls the model may use)")
            if self.action is None:
                raise ValueError("field 'action' is required (or 'goal' for a goal step)")
            return self
        if self.action not in (None, "assert") or self.selector or self.target:
            raise ValueError("a goal step has no action, selector or target of its own (the model chooses them)")
        self.action = "assert"
        return self


class EpisodeModel(_Strict):
    task: str = Field(min_length=1)
    fields: list[str] = Field(default_factory=list, description="task fields used as {parameters}")
    utterance_regex: str = ""

    @field_validator("fields")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        bad = [f for f in v if not f or not f.replace("_", "a").isalnum()]
        if bad:
            raise ValueError(f"field names are letters, digits and _, got {bad[0]!r}")
        return v


class FlowModel(_Strict):
    schema_version: int = Field(SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
    name: str = Field(min_length=1, max_length=200)
    description: str = ""
    start_url: str = "/"
    base_path: str = Field("", max_length=1000,
                           description="path of the base URL the flow was recorded under ('/examples/a/'); "
                                       "the steps' after.url_pattern are relative to it")
    params: dict[str, str] = Field(default_factory=dict)
    secrets: list[str] = Field(default_factory=list)
    episode: Optional[EpisodeModel] = None
    steps: list[StepModel] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _printable_name(cls, v: str) -> str:
        if has_controls(v):
            raise ValueError("control characters or terminal escapes are not allowed in a flow name")
        return v

    @field_validator("description")
    @classmethod
    def _printable_description(cls, v: str) -> str:
        return _one_line(v)

    @field_validator("start_url")
    @classmethod
    def _http_start(cls, v: str) -> str:
        return _http_or_path(v)


def json_schemas() -> dict[str, dict]:
    """JSON Schemas of the project and flow files, by published file name."""
    return {
        "project.schema.json": ProjectModel.model_json_schema(),
        "flow.schema.json": FlowModel.model_json_schema(),
    }


if __name__ == "__main__":  # python -m core.project.schema  -> rewrites resources/schemas/
    import json
    from pathlib import Path

    out = Path(__file__).resolve().parents[2] / "resources" / "schemas"
    out.mkdir(parents=True, exist_ok=True)
    for name, schema in json_schemas().items():
        (out / name).write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(out / name)
