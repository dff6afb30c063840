"""Frozen dataclasses, one per concept; they import nothing else of the project."""
from .element import Anchor, BBox, Candidate, ElementDescriptor, GROUND_TRUTH_ATTRIBUTES, Scope
from .flow import ACTION_KINDS, Action, AfterState, Assertion, EpisodeSpec, Flow, Step, StepEvidence
from .escalation import (
    BreakerContext, BreakerFailure, Checkpoint, Escalation, EscalationAnswerKind, EscalationCandidate, EscalationKind,
    FieldValue,
)
from .settings import BreakerSettings, BrowserSettings, EngineSettings, LocatorConfig, UntrustedValue, WaitSettings
from .observation import (
    PASSED_WITH_HELP, ErrorKind, LevelTrace, Observation, Resolution, RunResult, ScoredCandidate, StateSignature,
    StepOutcome, StepStatus, TextBox, Verdict, run_label,
)

__all__ = [
    "Anchor", "BBox", "Candidate", "ElementDescriptor", "GROUND_TRUTH_ATTRIBUTES", "Scope",
    "ACTION_KINDS", "Action", "AfterState", "Assertion", "EpisodeSpec", "Flow", "Step", "StepEvidence",
    "ErrorKind", "LevelTrace", "Observation", "Resolution", "RunResult", "ScoredCandidate", "StateSignature",
    "PASSED_WITH_HELP", "run_label", "TextBox", "StepOutcome", "StepStatus", "Verdict", "BreakerContext", "BreakerFailure", "Checkpoint", "FieldValue", "Escalation",
    "EscalationAnswerKind", "EscalationCandidate", "EscalationKind",
    "BreakerSettings", "BrowserSettings", "EngineSettings", "LocatorConfig", "WaitSettings", "UntrustedValue",
]
