"""Exports of flows as ordinary test code (``steadyhand export pytest``).

``export_flow`` writes a flow as a pytest test or a plain Playwright script with
the locators Playwright's codegen would choose (:mod:`core.export.playwright_test`).
"""
from .playwright_test import ExportError, LocatorChoice, choose_locator, export_flow, param_env_var

__all__ = ["ExportError", "LocatorChoice", "choose_locator", "export_flow", "param_env_var"]
