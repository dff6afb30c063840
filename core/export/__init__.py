"""Exports of flows as ordinary test code (``steadyhand export pytest``).

``export_flow`` writes a flow as a pytest-playwright test or a plain Playwright
script with the locators Playwright's codegen would choose, and ``conftest_source``
the ``conftest.py`` the tests of one folder share (:mod:`core.export.playwright_test`).
"""
from .playwright_test import (CONFTEST_MARK, ExportError, LocatorChoice, choose_locator, conftest_source, export_flow,
                              param_env_var)

__all__ = ["CONFTEST_MARK", "ExportError", "LocatorChoice", "choose_locator", "conftest_source", "export_flow",
           "param_env_var"]
