"""The project's ``model:`` section made into clients (primary and cross-check, P10).

The key comes from a declared secret (``api_key_secret:``, resolved like
every secret: environment ``STEADYHAND_SECRET_<NAME>``, keyring, default) or
from an environment variable (``api_key_env:``); it is never written in the
project file.  Without a ``model:`` section there is no model and nothing
changes: every decider but the model's keeps working.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from core.plan.model import ModelClient, ModelConfig
from core.project import Project
from core.project.loader import SETTINGS_FILE
from core.project.schema import ModelEndpointModel, ModelModel
from core.secrets import MissingSecretError, Redactor, resolve_secret

__all__ = ["ModelSetupError", "ModelSetup", "model_setup", "api_key_of"]


class ModelSetupError(ValueError):
    """The ``model:`` section cannot be used (a key that is not set); the message names the file and field."""


@dataclass
class ModelSetup:
    """The clients and options of a project's ``model:`` section.

    Attributes
    ----------
    primary : ModelClient
        The model that decides.
    cross_check : ModelClient | None
        The second model that confirms key results (P10), when configured.
    options : ModelModel
        Grid size, screenshot width, cache TTL, tie-break, judge alarm share.
    """

    primary: ModelClient
    cross_check: ModelClient | None
    options: ModelModel

    def close(self) -> None:
        """Close both clients; never raises."""
        self.primary.close()
        if self.cross_check is not None:
            self.cross_check.close()

    @property
    def secrets(self) -> tuple[str, ...]:
        """The API keys (to be masked wherever text is written)."""
        keys = [self.primary.config.api_key]
        if self.cross_check is not None:
            keys.append(self.cross_check.config.api_key)
        return tuple(k for k in keys if k)


def api_key_of(project: Project, endpoint: ModelEndpointModel, where: str) -> str:
    """The API key of one endpoint ("" when none is configured).

    Raises
    ------
    ModelSetupError
        When the named secret is not declared or has no value, or the named
        environment variable is unset.
    """
    path = project.root / SETTINGS_FILE
    if endpoint.api_key_secret:
        name = endpoint.api_key_secret
        spec = project.settings.secrets.get(name)
        if spec is None:
            raise ModelSetupError(f"{path}: field '{where}.api_key_secret': secret {name!r} is not declared under "
                                  "'secrets:'")
        try:
            return resolve_secret(name, project=project.name, default=spec.default)
        except MissingSecretError as exc:
            raise ModelSetupError(f"{path}: field '{where}.api_key_secret': {exc}") from None
    if endpoint.api_key_env:
        value = os.environ.get(endpoint.api_key_env, "")
        if not value:
            raise ModelSetupError(f"{path}: field '{where}.api_key_env': environment variable "
                                  f"{endpoint.api_key_env} is not set")
        return value
    return ""


def _config(project: Project, e: ModelEndpointModel, where: str, role: str) -> ModelConfig:
    return ModelConfig(e.base_url, e.name, api_key_of(project, e, where), timeout_s=e.timeout_s, retries=e.retries,
                       max_tokens=e.max_tokens, role=role)


def model_setup(project: Project, redactor: Redactor | None = None) -> ModelSetup | None:
    """The project's model clients, or None when it has no ``model:`` section.

    Raises
    ------
    ModelSetupError
        When a key cannot be found, or a setting that needs trust is used in a project not trusted on this
        machine (:mod:`core.project.trust`; names the file, the field and the command that trusts it).
    """
    m = project.settings.model
    if m is None:
        return None
    from core.project.trust import TrustError, require_trust

    try:  # a key from the environment, a server off this machine: only in a project trusted here (issue 21)
        require_trust(project.root, project.settings, "model.base_url", "model.api_key_env",
                      "model.cross_check.base_url", "model.cross_check.api_key_env")
    except TrustError as exc:
        raise ModelSetupError(str(exc)) from None
    primary = _config(project, m, "model", "primary")
    cross = _config(project, m.cross_check, "model.cross_check", "cross_check") if m.cross_check else None
    keys = [k for k in (primary.api_key, cross.api_key if cross else "") if k]
    red = (redactor or Redactor(())).extended(keys)
    return ModelSetup(ModelClient(primary, redactor=red), ModelClient(cross, redactor=red) if cross else None, m)
